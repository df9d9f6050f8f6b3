// The sweep generators (sweep/phaze_space.hpp, sweep/dfmodel_space.hpp, sweep/registry.hpp):
// points in the documented order, each equal to the library call it stands for, made here
// independently (PHAZE: evaluate_architecture with options built from the same numbers; DFModel:
// the setup file rewritten with the swept figures, read back and run); bad space files give
// errors naming the file, the field and the reason.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "devplace/dfmodel/setup.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/dfmodel/setup.ipp"  // dfmodel::read_setup_json's definition (compiled mode: devplace::core)
#endif
#include "devplace/io/llm_json.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/llm/search.hpp"
#include "devplace/phaze/workload.hpp"
#include "devplace/sweep/registry.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sweep/registry.ipp"  // every generator's definition (compiled mode: devplace::core)
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif

using namespace devplace;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path generator_dir(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("devplace_test_sweep_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(2); }

const fs::path examples = fs::path(DEVPLACE_SOURCE_DIR) / "examples";

/// A three-layer graph with layer ids (linear + gelu, linear, linear).
json tiny_graph() {
  auto node = [](int id, const char* op, double param, int layer) {
    return json{{"id", id}, {"op", op}, {"fwd_ms", 1}, {"bwd_ms", 2}, {"param_bytes", param}, {"out_bytes", 1 << 20}, {"layer", layer}};
  };
  return {{"format", "devplace.graph/1"},
          {"nodes", {node(0, "linear", 1 << 22, 0), node(1, "gelu", 0, 0), node(2, "linear", 1 << 22, 1), node(3, "linear", 1 << 23, 2)}},
          {"edges", {{{"src", 0}, {"dst", 1}, {"bytes", 1 << 20}}, {{"src", 1}, {"dst", 2}, {"bytes", 1 << 20}},
                     {{"src", 2}, {"dst", 3}, {"bytes", 1 << 20}}}}};
}

json configs() {
  return json::array({{{"num_tc", 8}, {"num_vc", 2}, {"width", 128}, {"depth", 128}, {"GLB_Buffer", 134217728}, {"area", 3.0}},
                      {{"num_tc", 2}, {"num_vc", 512}, {"width", 256}, {"depth", 256}, {"GLB_Buffer", 33554432}, {"area", 2.0}},
                      {{"num_tc", 1}, {"num_vc", 1}, {"width", 2}, {"depth", 2}, {"GLB_Buffer", 2097152}, {"area", 1.0}}});
}

std::string error_of(const fs::path& space) {
  try {
    (void)sweep::prepare(sweep::read_space_file(space));
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("sweep: the registry names each generator once") {
  std::set<std::string> names;
  for (const auto& g : sweep::generators()) {
    CHECK(names.insert(std::string(g.name)).second);
    CHECK(sweep::find_generator(g.name) == &g);
    CHECK(static_cast<bool>(g.prepare));
  }
  CHECK(names.count("phaze") == 1);
  CHECK(names.count("dfmodel") == 1);
  CHECK(sweep::find_generator("no-such") == nullptr);
}

TEST_CASE("sweep: phaze points are evaluate_architecture in graph, K, configuration order") {
  const auto dir = generator_dir("phaze");
  write(dir / "tiny.json", tiny_graph());
  write(dir / "space.json", {{"format", "devplace.sweep.space/1"}, {"generator", "phaze"},
                             {"space", {{"configurations", configs()}, {"graphs", {"tiny.json"}}, {"devices", {2, 8}},
                                        {"batch", 16}, {"micro_batches", {1, 2}}, {"hbm_gib", {0.01, 16}}}}});
  const auto s = sweep::prepare(sweep::read_space_file(dir / "space.json"));
  REQUIRE(s.size == 6);
  const auto g = io::read_graph(dir / "tiny.json");
  const auto split = phaze::workload_layers(g, 24);
  std::size_t i = 0, solved = 0;
  for (std::size_t K : {2, 8})
    for (std::size_t c = 0; c < 3; ++c, ++i) {
      const auto in = s.inputs(i);
      CHECK(in["graph"] == "tiny.json");
      CHECK(in["devices"] == K);
      CHECK(in["configuration"] == c);
      CHECK(in["accelerator"]["num_tc"] == configs()[c]["num_tc"]);
      const auto cfg = phaze::core_config{.num_tc = configs()[c]["num_tc"], .num_vc = configs()[c]["num_vc"],
                                          .pe_x = configs()[c]["width"], .pe_y = configs()[c]["depth"],
                                          .glb_bytes = configs()[c]["GLB_Buffer"], .area = configs()[c]["area"]};
      phaze::architecture_options o;
      o.placement.devices = K;
      o.placement.global_batch = 16;
      o.micro_batches = {1, 2};
      o.hbm_bytes = {0.01 * double(1ull << 30), 16.0 * double(1ull << 30)};
      const auto want = phaze::evaluate_architecture(g, split, cfg, o);
      const auto got = s.evaluate(i);
      CHECK(got.status == to_string(want.plan.status));
      if (want.plan.has_solution()) {
        ++solved;
        CHECK(got.result["samples_per_s"].get<double>() == want.samples_per_s);
        CHECK(got.result["p"] == want.plan.pipeline_stages());
        CHECK(got.result["d"] == want.plan.data_parallel);
        CHECK(got.result["hbm_bytes"].get<double>() == want.hbm_bytes);
      } else {
        CHECK(got.result.empty());
      }
    }
  CHECK(solved == 6);
  // Too little HBM everywhere: every point is infeasible, a status and no result.
  write(dir / "small.json", {{"format", "devplace.sweep.space/1"}, {"generator", "phaze"},
                             {"space", {{"configurations", configs()}, {"graphs", {"tiny.json"}}, {"devices", {2}},
                                        {"batch", 16}, {"hbm_gib", {1e-6}}}}});
  const auto t = sweep::prepare(sweep::read_space_file(dir / "small.json"));
  for (std::size_t k = 0; k < t.size; ++k) {
    CHECK(t.evaluate(k).status == "infeasible");
    CHECK(t.evaluate(k).result.empty());
  }
}

TEST_CASE("sweep: dfmodel points are the setup with the swept figures, link bandwidth before DRAM") {
  const auto dir = generator_dir("dfmodel");
  const auto setup_file = examples / "dfmodel" / "table6" / "dfmodel_4x2.json";
  write(dir / "space.json", {{"format", "devplace.sweep.space/1"}, {"generator", "dfmodel"},
                             {"space", {{"setups", {setup_file.string()}}, {"link_gbps", {25, 100}}, {"dram_gbps", {50, 200}}}}});
  const auto s = sweep::prepare(sweep::read_space_file(dir / "space.json"));
  REQUIRE(s.size == 4);
  std::ifstream in(setup_file);
  const json doc = json::parse(in);
  std::size_t i = 0;
  for (double link : {25.0, 100.0})
    for (double dram : {50.0, 200.0}) {
      const auto inputs = s.inputs(i);
      CHECK(inputs["link_gbps"].get<double>() == link);
      CHECK(inputs["dram_gbps"].get<double>() == dram);
      CHECK_FALSE(inputs.contains("chips"));
      json d = doc;
      for (auto& x : d["system"]["network"]) x["link_gbps"] = link;
      d["system"]["memory"]["dram_gbps"] = dram;
      write(dir / "point.json", d);
      const auto want = dfmodel::run_setup(dfmodel::read_setup_json(dir / "point.json"));
      const auto got = s.evaluate(i++);
      CHECK(got.status == to_string(want.mapping.status));
      REQUIRE(got.result.contains("final_s"));
      CHECK(got.result["final_s"].get<double>() == want.mapping.final_s);
      CHECK(got.result["cost"].get<double>() == want.mapping.cost);
    }
}

TEST_CASE("sweep: dfmodel chips size the free dimension, and chips that cannot be arranged are infeasible") {
  const auto dir = generator_dir("dfmodel_chips");
  std::ifstream in(examples / "dfmodel" / "table6" / "dfmodel_4x2.json");
  json d = json::parse(in);
  d["system"]["network"][0]["size"] = 0;  // x free, y = 2
  d["system"]["chips"] = 8;
  d["mode"].erase("pin");
  write(dir / "free.json", d);
  write(dir / "space.json", {{"format", "devplace.sweep.space/1"}, {"generator", "dfmodel"},
                             {"space", {{"setups", {"free.json"}}, {"chips", {8, 7}}}}});
  const auto s = sweep::prepare(sweep::read_space_file(dir / "space.json"));
  REQUIRE(s.size == 2);
  CHECK(s.inputs(1)["chips"] == 7);
  const auto want = dfmodel::run_setup(dfmodel::read_setup_json(dir / "free.json"));
  const auto got = s.evaluate(0);
  CHECK(got.status == to_string(want.mapping.status));
  if (got.result.contains("final_s")) CHECK(got.result["final_s"].get<double>() == want.mapping.final_s);
  CHECK(s.evaluate(1).status == "infeasible");
}

TEST_CASE("sweep: bad space files name the file, the field and the reason") {
  const auto dir = generator_dir("bad");
  write(dir / "tiny.json", tiny_graph());
  auto space = [&](const char* name, const char* gen, json body) {
    write(dir / name, {{"format", "devplace.sweep.space/1"}, {"generator", gen}, {"space", std::move(body)}});
    return dir / name;
  };
  const json ok{{"configurations", configs()}, {"graphs", {"tiny.json"}}};
  CHECK(error_of(space("g.json", "nope", ok)).find("g.json: /generator: unknown generator 'nope' (expected one of phaze, dfmodel, llm)") !=
        std::string::npos);
  json typo = ok;
  typo["device"] = {8};
  CHECK(error_of(space("t.json", "phaze", typo)).find("t.json: /space/device: unknown field") != std::string::npos);
  json both = ok;
  both["cores"] = "cores.json";
  CHECK(error_of(space("b.json", "phaze", both)).find("/space: expected exactly one of 'cores'") != std::string::npos);
  json empty = ok;
  empty["graphs"] = json::array();
  CHECK(error_of(space("e.json", "phaze", empty)).find("e.json: /space/graphs: expected at least one value") != std::string::npos);
  json zero = ok;
  zero["devices"] = {8, 0};
  CHECK(error_of(space("z.json", "phaze", zero)).find("/space/devices/1: expected an integer >= 1, got 0") != std::string::npos);
  json odd = ok;
  odd["batch"] = 3;
  odd["micro_batches"] = {2};
  CHECK(error_of(space("o.json", "phaze", odd)).find("/space/micro_batches: no micro-batch size divides") != std::string::npos);
  json bad_cfg = ok;
  bad_cfg["configurations"][1]["width"] = 3;
  CHECK(error_of(space("c.json", "phaze", bad_cfg)).find("/space/configurations/1/width: expected a power of two") != std::string::npos);
  json fixed{{"setups", {(examples / "dfmodel" / "table6" / "dfmodel_4x2.json").string()}}, {"chips", {8}}};
  CHECK(error_of(space("f.json", "dfmodel", fixed)).find("f.json: /space/chips: setup") != std::string::npos);
  write(dir / "fmt.json", {{"format", "devplace.sweep/9"}, {"generator", "phaze"}, {"space", ok}});
  CHECK(error_of(dir / "fmt.json").find("fmt.json: /format: unknown format") != std::string::npos);
}

TEST_CASE("sweep: the llm generator's points are the searches they stand for, system-major") {
  const auto dir = generator_dir("llm");
  write(dir / "space.json", {{"format", "devplace.sweep.space/1"}, {"generator", "llm"},
                             {"space", {{"systems", {(examples / "llm" / "dgx_a100_80g.json").string(),
                                                     (examples / "llm" / "dgx_h100_80g.json").string()}},
                                        {"models", {(examples / "llm" / "gpt3_175b.json").string()}},
                                        {"gpus", {64, 128}}, {"global_batch", {256}}, {"dtype", "fp16"}}}});
  const auto s = sweep::prepare(sweep::read_space_file(dir / "space.json"));
  REQUIRE(s.size == 4);
  const auto m = io::read_llm_model(examples / "llm" / "gpt3_175b.json");
  std::size_t i = 0;
  for (const char* sys : {"dgx_a100_80g.json", "dgx_h100_80g.json"})
    for (std::int64_t gpus : {64, 128}) {
      CAPTURE(i);
      const auto in = s.inputs(i);
      CHECK(in["gpus"] == gpus);
      CHECK(in["system"].get<std::string>().find(sys) != std::string::npos);
      llm::search_space sp;
      sp.gpus = gpus;
      sp.global_batch = 256;
      sp.dtype = llm::dtype::fp16;
      const auto direct = llm::search_executions(m, io::read_llm_system(examples / "llm" / sys), sp);
      const auto r = s.evaluate(i);
      CHECK(r.status == std::string(to_string(direct.status)));
      REQUIRE_FALSE(direct.top.empty());
      CHECK(r.result["iteration_s"].get<double>() == direct.top.front().eval.iteration_s);
      CHECK(r.result["execution"] == io::to_json(direct.top.front().exec));
      ++i;
    }
  write(dir / "bad.json", {{"format", "devplace.sweep.space/1"}, {"generator", "llm"},
                           {"space", {{"systems", {(examples / "llm" / "dgx_a100_80g.json").string()}},
                                      {"models", {(examples / "llm" / "gpt3_175b.json").string()}},
                                      {"gpus", {64}}, {"global_batch", {256}}, {"dtype", "fp4"}}}});
  CHECK_THROWS_WITH_AS((void)sweep::prepare(sweep::read_space_file(dir / "bad.json")),
                       doctest::Contains("/space/dtype: expected fp16, bf16 or fp8, got 'fp4'"), io::input_error);
}
