// The LLM evaluation against the measured Megatron runs of Korthikanti et al. 2022 (Table 5,
// Figures 1 and 7), read with their executions from ../shared (skipped when it is missing), on the
// shipped DGX A100 system file: one system for every row, nothing set per row.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "devplace/io/llm_json.hpp"
#include "devplace/llm/evaluate.hpp"
#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

namespace {

const fs::path calculon = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "calculon";
const fs::path a100 = fs::path(DEVPLACE_SOURCE_DIR) / "examples" / "llm" / "dgx_a100_80g.json";

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, '|')) {
    const auto b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
  }
  return out;  // out[0] is the text before the first '|'
}

/// The rows of REFERENCE_RESULTS.md's section whose heading starts with `heading`: model -> cells.
std::map<std::string, std::vector<std::string>> table(const std::string& heading) {
  std::ifstream in(calculon / "REFERENCE_RESULTS.md");
  std::map<std::string, std::vector<std::string>> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) inside = line.rfind("## " + heading, 0) == 0;
    else if (inside && line.rfind("| ", 0) == 0) {
      auto c = cells(line);
      if (c.size() > 2 && c[1] != "model" && c[1].find("---") == std::string::npos) rows[c[1]] = c;
    }
  }
  return rows;
}

llm::evaluation run(const std::string& model, const std::string& exec) {
  return llm::evaluate(io::read_llm_model(calculon / "models" / (model + ".json")), io::read_llm_system(a100),
                       io::read_llm_execution(calculon / "validation" / "seqsel" / (exec + ".json")));
}

}  // namespace

TEST_CASE("llm: Korthikanti Table 5, the published iteration times within 3 %") {
  if (!test::require_path(calculon / "REFERENCE_RESULTS.md")) return;
  const auto rows = table("Table 5");
  int checked = 0;
  for (const auto& [name, c] : rows) {
    for (const auto& [mode, col] : {std::pair{"full", 3}, std::pair{"seqsel", 6}}) {
      if (c.size() <= std::size_t(col) || c[col].find("held out") != std::string::npos) continue;
      const double measured = std::stod(c[col]);
      const auto r = run(name, "tab5/" + name + "_" + mode);
      CAPTURE(name);
      CAPTURE(mode);
      CAPTURE(r.iteration_s);
      CHECK(std::abs(r.iteration_s - measured) / measured < 0.03);
      ++checked;
    }
  }
  CHECK(checked == 4);
}

TEST_CASE("llm: Korthikanti Figure 1, weights + gradients + optimizer and activations within 5 %") {
  if (!test::require_path(calculon / "REFERENCE_RESULTS.md")) return;
  const auto rows = table("Figure 1");
  constexpr double gib = double(1ull << 30);
  REQUIRE(rows.size() == 4);
  for (const auto& [name, c] : rows) {
    CAPTURE(name);
    // The figure reports the transformer layers of the first pipeline stage.
    const auto none = run(name, "fig1/" + name + "_none");
    const auto seqsel = run(name, "fig1/" + name + "_seqsel");
    const double states = none.memory[0].layer_states() / gib;
    CHECK(std::abs(states - std::stod(c[2])) / std::stod(c[2]) < 0.05);
    CHECK(std::abs(none.memory[0].layer_activations / gib - std::stod(c[4])) / std::stod(c[4]) < 0.05);
    CHECK(std::abs(seqsel.memory[0].layer_activations / gib - std::stod(c[6])) / std::stod(c[6]) < 0.05);
  }
}

TEST_CASE("llm: Korthikanti Figure 7, activation memory relative to none within 5 points") {
  if (!test::require_path(calculon / "REFERENCE_RESULTS.md")) return;
  const auto rows = table("Figure 7");
  REQUIRE(rows.size() == 4);
  for (const auto& [name, c] : rows) {
    const double none = run(name, "fig7/" + name + "_none").memory[0].layer_activations;
    int col = 3;
    for (const char* mode : {"seq", "sel", "seqsel", "full"}) {
      const double pct = 100 * run(name, "fig7/" + name + "_" + mode).memory[0].layer_activations / none;
      CAPTURE(name);
      CAPTURE(mode);
      CHECK(std::abs(pct - std::stod(c[col])) < 5.0);
      ++col;
    }
  }
}

TEST_CASE("llm: every Calculon input file reads, and every shipped execution evaluates") {
  if (!test::require_path(calculon / "models")) return;
  int files = 0;
  for (const auto& f : fs::directory_iterator(calculon / "models")) {
    const auto m = io::read_llm_model(f.path());
    CHECK(m.layers > 0);
    CHECK(m.vocab == 51200);
    ++files;
  }
  for (const auto& f : fs::directory_iterator(calculon / "systems")) {
    const auto s = io::read_llm_system(f.path());
    CHECK(s.tiers.size() == 2);
    CHECK(s.gpu.hbm_gib == doctest::Approx(80).epsilon(0.08));  // a100_80e writes bytes in the GiB field
    ++files;
  }
  for (const auto& dir : fs::directory_iterator(calculon / "validation" / "seqsel"))
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const std::string stem = f.path().stem().string();
      const auto e = io::read_llm_execution(f.path());
      const auto m = io::read_llm_model(calculon / "models" / (stem.substr(0, stem.rfind('_')) + ".json"));
      const auto r = llm::evaluate(m, io::read_llm_system(a100), e);
      CHECK(r.iteration_s > 0);
      ++files;
    }
  CHECK(files == 13 + 3 + 36);
}
