// The devplace.dfmodel.setup/1 reader: errors name the file, the JSON pointer and the reason.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "devplace/dfmodel/setup.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/dfmodel/setup.ipp"  // the setup reader's and result_json's definitions (compiled mode: devplace::core)
#endif

namespace df = devplace::dfmodel;

TEST_CASE("setup JSON: bad values are one line with the pointer") {
  const auto src = std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples/dfmodel/table6/dfmodel_4x2.json";
  std::ifstream in(src);
  const auto doc = nlohmann::json::parse(in);
  const auto dir = std::filesystem::temp_directory_path() / "devplace_dfmodel_json";
  std::filesystem::create_directories(dir);
  auto check = [&](const char* ptr, const nlohmann::json& value, const std::string& want) {
    auto d = doc;
    d[nlohmann::json::json_pointer(ptr)] = value;
    const auto f = dir / "s.json";
    std::ofstream(f) << d.dump();
    CHECK_THROWS_WITH_AS((void)df::read_setup_json(f), doctest::Contains(want.c_str()), devplace::io::input_error);
  };
  check("/system/network/1/parallelism", "TP", "/system/network/1/parallelism: TP is already carried by dimension 0");
  check("/system/memory/dram_gbps", 0, "/system/memory/dram_gbps: expected a number > 0, got 0");
  check("/mode/pin/FFN1", 7, "/mode/pin/FFN1: config must be < configs (4)");
  check("/mode/execution", "fast", "/mode/execution: unknown value 'fast'");
  check("/workload/llm/global_batch", 2303, "/workload/llm/global_batch: must be a multiple of micro_batch");
  check("/format", "devplace.dfmodel.setup/2", "/format: unknown format");
  auto d = doc;
  d["mode"]["pin"]["Nope"] = 0;
  std::ofstream(dir / "p.json") << d.dump();
  CHECK_THROWS_WITH_AS((void)df::read_setup_json(dir / "p.json"), doctest::Contains("/mode/pin/Nope: no kernel of this name"),
                       devplace::io::input_error);
}

TEST_CASE("public functions reject bad arguments with std::invalid_argument") {
  const auto w = df::gpt3_layer({});
  const auto sh = df::shard_exhaustive(w);
  df::system s;
  s.net = df::ring(8, 50);
  CHECK_THROWS_AS((void)df::evaluate_mapping(w, sh, s, {}, {0, 1}, 1), std::invalid_argument);
  CHECK_THROWS_AS((void)df::optimise_mapping(w, sh, s, {.compute_util = 2}), std::invalid_argument);
  CHECK_THROWS_AS((void)df::gpt3_layer({.hidden = 0}), std::invalid_argument);
  s.acc.cores = 0;
  CHECK_THROWS_AS((void)df::optimise_mapping(w, sh, s, {}), std::invalid_argument);
}
