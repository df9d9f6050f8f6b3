#pragma once
/// \file io/llm_result_json.hpp
/// The result of an LLM evaluation as JSON (`devplace.llm-result/1`, docs/llm.md): the iteration
/// time and its breakdown, tokens/s/GPU, model and hardware TFLOP/s per GPU, memory per GPU by
/// kind (the stage with the most, and every stage) and whether it fits.
#include <nlohmann/json.hpp>

#include "devplace/io/llm_json.hpp"
#include "devplace/llm/evaluate.hpp"

namespace devplace::io {

inline constexpr const char* llm_result_format = "devplace.llm-result/1";

/// Memory of one stage in GiB by kind.
template <int = 0>
nlohmann::json memory_json(const llm::stage_memory& s) {
  constexpr double gib = double(1ull << 30);
  return {{"weights", s.weights() / gib},         {"gradients", s.gradients() / gib},
          {"optimizer", s.optimizer() / gib},     {"activations", s.activations() / gib},
          {"layer_states", s.layer_states() / gib}, {"layer_activations", s.layer_activations / gib},
          {"total", s.total() / gib}};
}

template <int = 0>
nlohmann::json to_json(const llm::evaluation& r) {
  const auto& b = r.breakdown;
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    auto j = memory_json(r.memory[i]);
    j["stage"] = i;
    j["time_per_micro_batch_s"] = r.stage_s[i];
    stages.push_back(j);
  }
  return {{"format", llm_result_format},
          {"iteration_s", r.iteration_s},
          {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
          {"model_tflops_per_gpu", r.model_tflops_per_gpu},
          {"hardware_tflops_per_gpu", r.hardware_tflops_per_gpu},
          {"memory_gib_per_gpu", r.memory_gib_per_gpu},
          {"fits", r.fits},
          {"gpus", r.gpus},
          {"micro_batches", r.micro_batches},
          {"breakdown",
           {{"compute_s", b.compute_s}, {"tp_exposed_s", b.tp_exposed_s}, {"cp_exposed_s", b.cp_exposed_s},
            {"pp_exposed_s", b.pp_exposed_s}, {"bubble_s", b.bubble_s}, {"dp_exposed_s", b.dp_exposed_s},
            {"optimizer_s", b.optimizer_s}, {"recompute_s", b.recompute_s}}},
          {"memory", memory_json(r.peak_memory)},
          {"stages", stages}};
}

}  // namespace devplace::io
