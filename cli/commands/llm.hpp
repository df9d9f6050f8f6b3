#pragma once
// devplace llm evaluate --model M --system S --execution E [--out R]
// Evaluates one LLM training execution (docs/llm.md): iteration time with its breakdown,
// tokens/s/GPU, model TFLOP/s per GPU, memory per GPU by kind and whether it fits. M, S and E are
// devplace.llm-model/1, devplace.llm-system/1 and devplace.llm-execution/1 files, or Calculon's.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands/common.hpp"
#include "devplace/io/llm_result_json.hpp"

namespace devplace::cli {

inline void print_llm_evaluation(const llm::evaluation& r) {
  const auto& b = r.breakdown;
  std::printf("iteration       %.4f s on %lld GPUs, %lld micro-batches\n", r.iteration_s,
              static_cast<long long>(r.gpus), static_cast<long long>(r.micro_batches));
  std::printf("breakdown       compute %.4f (recompute %.4f), TP %.4f, CP %.4f, PP %.4f, bubble %.4f, DP %.4f, "
              "optimizer %.4f s\n",
              b.compute_s, b.recompute_s, b.tp_exposed_s, b.cp_exposed_s, b.pp_exposed_s, b.bubble_s, b.dp_exposed_s,
              b.optimizer_s);
  std::printf("throughput      %.1f tokens/s/GPU, %.1f model TFLOP/s/GPU, %.1f hardware TFLOP/s/GPU\n",
              r.tokens_per_s_per_gpu, r.model_tflops_per_gpu, r.hardware_tflops_per_gpu);
  constexpr double gib = double(1ull << 30);
  const auto& m = r.peak_memory;
  std::printf("memory          %.2f GiB per GPU (weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f): %s\n",
              r.memory_gib_per_gpu, m.weights() / gib, m.gradients() / gib, m.optimizer() / gib,
              m.activations() / gib, r.fits ? "fits" : "does not fit");
}

inline void register_llm(CLI::App& app) {
  auto* llm_cmd = app.add_subcommand("llm", "LLM training on GPU clusters: evaluate an execution");
  llm_cmd->require_subcommand(1);
  struct args_t {
    std::string model, system, execution, out;
  };
  auto args = std::make_shared<args_t>();
  auto* ev = llm_cmd->add_subcommand("evaluate", "Iteration time, throughput and memory of one execution");
  ev->add_option("--model", args->model, "Model (devplace.llm-model/1 or Calculon's model JSON)")->required();
  ev->add_option("--system", args->system, "System (devplace.llm-system/1 or Calculon's system JSON)")->required();
  ev->add_option("--execution", args->execution, "Execution (devplace.llm-execution/1 or Calculon's)")->required();
  ev->add_option("--out", args->out, "Write the result (devplace.llm-result/1 JSON)");
  ev->callback([args] {
    require_writable({args->out});
    const auto m = io::read_llm_model(args->model);
    const auto s = io::read_llm_system(args->system);
    const auto e = io::read_llm_execution(args->execution);
    llm::evaluation r;
    try {
      r = llm::evaluate(m, s, e);
    } catch (const std::invalid_argument& x) {
      throw failure(args->execution + ": " + x.what());
    }
    print_llm_evaluation(r);
    if (!args->out.empty()) {
      auto j = io::to_json(r);
      j["model"] = io::to_json(m);
      j["execution"] = io::to_json(e);
      j["system"] = s.name;
      io::atomic_write(args->out, j.dump(2) + "\n");
    }
  });
}

}  // namespace devplace::cli
