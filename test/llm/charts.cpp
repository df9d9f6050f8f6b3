// The LLM pictures and trace: the trace's slices add up to the iteration, end to end; the charts
// name every execution and every kind that takes time.
#include <doctest/doctest.h>

#include <filesystem>

#include "devplace/io/llm_json.hpp"
#include "devplace/viz/llm_charts.hpp"

using namespace devplace;

TEST_CASE("llm charts: the breakdown trace covers the iteration end to end, and the charts name what they draw") {
  const std::filesystem::path dir = std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples" / "llm";
  const auto m = io::read_llm_model(dir / "gpt3_175b.json");
  const auto hw = io::read_llm_system(dir / "dgx_a100_80g.json");
  auto e = io::read_llm_execution(dir / "gpt3_175b_seqsel.json");
  const auto r = llm::evaluate(m, hw, e);
  const auto doc = nlohmann::json::parse(viz::llm_breakdown_trace(r, "GPT-3"));
  double end = 0, sum = 0;
  int slices = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] != "X") continue;
    CHECK(ev["ts"].get<double>() == doctest::Approx(end));  // end to end
    CHECK(ev["dur"].get<double>() > 0);
    end = ev["ts"].get<double>() + ev["dur"].get<double>();
    sum += ev["dur"].get<double>();
    ++slices;
  }
  CHECK(sum == doctest::Approx(r.iteration_s * 1e6).epsilon(1e-9));
  CHECK(slices >= 4);  // compute, exposed TP, PP sends, bubble at least
  e.recompute = llm::recompute::full;
  const auto full = llm::evaluate(m, hw, e);
  const std::string svg = viz::llm_time_chart({{"seqsel", r}, {"full", full}}, "GPT-3 175B");
  for (const char* s : {"seqsel", "full", "compute", "bubble", "exposed TP", "GPT-3 175B"}) {
    CAPTURE(s);
    CHECK(svg.find(s) != std::string::npos);
  }
  const std::string mem = viz::llm_memory_chart({{"seqsel", r}}, "GPT-3 175B");
  for (const char* s : {"weights", "gradients", "optimizer states", "activations", "GiB"}) {
    CAPTURE(s);
    CHECK(mem.find(s) != std::string::npos);
  }
  CHECK(viz::execution_label(e) == "tp 8 pp 8 dp 1 vp 3 mb 1 full +SP");
}
