// The LLM formats: round trips and one-line errors naming the file, the field and the reason.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "devplace/io/llm_json.hpp"
#include "devplace/llm/evaluate.hpp"

using namespace devplace;
using json = nlohmann::json;

namespace {
json own_model() {
  return {{"format", "devplace.llm-model/1"}, {"hidden", 4096}, {"ffn", 14336}, {"ffn_kind", "swiglu"},
          {"layers", 32}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128}, {"seq", 8192}, {"vocab", 128256},
          {"tied_embeddings", false}};
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("llm io: the own model format round-trips") {
  const auto m = io::llm_model_from_json(own_model(), "m.json");
  CHECK(m.kv_heads == 8);
  CHECK(m.ffn_kind == llm::ffn_kind::swiglu);
  CHECK_FALSE(m.tied_embeddings);
  const auto back = io::llm_model_from_json(io::to_json(m), "m.json");
  CHECK(back.hidden == m.hidden);
  CHECK(back.vocab == m.vocab);
  CHECK(back.ffn_kind == m.ffn_kind);
  // Llama-3 8B: 8.03 billion parameters (Meta's model card).
  CHECK(llm::total_params(m) == doctest::Approx(8.03e9).epsilon(0.005));
}

TEST_CASE("llm io: errors name the file, the field and the reason") {
  auto j = own_model();
  j["ffn_kind"] = "relu";
  CHECK(error_of([&] { (void)io::llm_model_from_json(j, "m.json"); }) ==
        "m.json: /ffn_kind: unknown MLP kind 'relu' (expected gelu, swiglu or squared_relu)");
  j = own_model();
  j.erase("heads");
  CHECK(error_of([&] { (void)io::llm_model_from_json(j, "m.json"); }) == "m.json: /heads: missing required field");
  j = own_model();
  j["hiden"] = 5;
  CHECK(error_of([&] { (void)io::llm_model_from_json(j, "m.json"); }) == "m.json: /hiden: unknown field");
  j = own_model();
  j["kv_heads"] = 5;
  CHECK(error_of([&] { (void)io::llm_model_from_json(j, "m.json"); }).rfind("m.json: /kv_heads: must divide heads", 0) == 0);
  json e = {{"format", "devplace.llm-execution/1"}, {"tp", 8}, {"pp", 1}, {"dp", 1}, {"cp", 1}, {"vp", 1},
            {"micro_batch", 1}, {"global_batch", 8}, {"recompute", "some"}, {"sequence_parallel", true},
            {"distributed_optimizer", false}, {"dp_overlap", false}, {"tp_overlap", false}, {"dtype", "bf16"}};
  CHECK(error_of([&] { (void)io::llm_execution_from_json(e, "e.json"); }) ==
        "e.json: /recompute: unknown mode 'some' (expected none, selective or full)");
  e["recompute"] = "selective";
  e["tp"] = 0;
  CHECK(error_of([&] { (void)io::llm_execution_from_json(e, "e.json"); }) == "e.json: /tp: expected an integer >= 1, got 0");
  e["tp"] = 8;
  const auto ex = io::llm_execution_from_json(e, "e.json");
  CHECK(io::llm_execution_from_json(io::to_json(ex), "e.json").recompute == llm::recompute::selective);
  CHECK(error_of([] { (void)io::read_llm_system("/nonexistent/s.json"); }) == "/nonexistent/s.json: /: cannot open the file");
}

TEST_CASE("llm io: the shipped DGX systems read and describe the datasheets' figures") {
  const std::filesystem::path dir = std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples" / "llm";
  const auto a = io::read_llm_system(dir / "dgx_a100_80g.json");
  CHECK(a.gpu.mat(llm::dtype::bf16).tflops == 312);
  CHECK(a.tiers.size() == 2);
  CHECK(a.tiers[0].size == 8);
  const auto h = io::read_llm_system(dir / "dgx_h100_80g.json");
  CHECK(h.gpu.mat(llm::dtype::fp8).tflops == 1979);
  CHECK(h.gpu.hbm_gbps == 3352);
}
