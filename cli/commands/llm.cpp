// devplace llm evaluate --model M --system S --execution E [--out R]
//   Evaluates one LLM training execution (docs/llm.md): iteration time with its breakdown,
//   tokens/s/GPU, model TFLOP/s per GPU, memory per GPU by kind and whether it fits. M, S and E
//   are devplace.llm-model/1, devplace.llm-system/1 and devplace.llm-execution/1 files, or
//   Calculon's.
// devplace llm plan --model M --system S --gpus N --global-batch B [--dtype D] [--top K] [--out R]
//   Searches every execution on at most N GPUs for the fastest that fits, proved optimal over the
//   space by bounds (docs/llm.md, "Search").
// devplace llm balance --model M --system S --execution E [--out E2]
//   The uneven layer split of E (vp = 1) that minimises the slowest stage; writes E with
//   layers_per_stage.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/llm_result_json.hpp"
#include "devplace/llm/balance.hpp"
#include "devplace/llm/search.hpp"
#include "devplace/viz/llm_charts.hpp"

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

inline llm::dtype parse_llm_dtype(const std::string& s) {
  if (s == "fp16") return llm::dtype::fp16;
  if (s == "bf16") return llm::dtype::bf16;
  if (s == "fp8") return llm::dtype::fp8;
  throw failure("--dtype: expected fp16, bf16 or fp8, got '" + s + "'");
}

/// The options of devplace llm plan.
struct llm_plan_args {
  std::string model, system, dtype = "bf16", out, svg;
  std::int64_t gpus = 0, batch = 0, max_cp = 1, max_tp = 0, max_pp = 0, max_vp = 0, max_mb = 0;
  std::vector<std::string> recompute;
  std::size_t top = 1;
  bool exact = false;
  double time_limit = 0;
};

/// devplace llm plan: the search, the table of the best executions, and the optional files.
inline void run_llm_plan(const llm_plan_args& a) {
  require_writable({a.out});
  const auto m = io::read_llm_model(a.model);
  const auto s = io::read_llm_system(a.system);
  llm::search_space sp;
  sp.gpus = a.gpus;
  sp.exact_gpus = a.exact;
  sp.global_batch = a.batch;
  sp.dtype = parse_llm_dtype(a.dtype);
  sp.max_cp = a.max_cp;
  sp.max_tp = a.max_tp;
  sp.max_pp = a.max_pp;
  sp.max_vp = a.max_vp;
  sp.max_micro_batch = a.max_mb;
  if (!a.recompute.empty()) {
    sp.recompute.clear();
    for (const auto& r : a.recompute) {
      sp.recompute.push_back(r == "none" ? llm::recompute::none
                             : r == "selective" ? llm::recompute::selective : llm::recompute::full);
    }
  }
  llm::search_options o;
  o.top_k = a.top;
  o.time_limit_s = a.time_limit;
  const bool tty = isatty(fileno(stderr)) != 0;
  if (tty) o.progress = [](double f) { std::fprintf(stderr, "\rsearching: %3.0f %% of the bounds passed", 100 * f); };
  llm::search_result r;
  try {
    r = llm::search_executions(m, s, sp, o);
  } catch (const std::invalid_argument& x) {
    throw failure(x.what());
  }
  if (tty) std::fprintf(stderr, "\r%50s\r", "");
  std::printf("status          %s in %.3f s: %llu groups, %llu (group, micro-batch) bounds, %llu evaluated, %llu executions (%llu did not fit), %llu groups whose states do not fit\n",
              std::string(to_string(r.status)).c_str(), r.seconds, static_cast<unsigned long long>(r.groups),
              static_cast<unsigned long long>(r.pairs), static_cast<unsigned long long>(r.pairs_evaluated),
              static_cast<unsigned long long>(r.evaluated), static_cast<unsigned long long>(r.did_not_fit),
              static_cast<unsigned long long>(r.pruned_memory));
  if (r.top.empty()) throw failure("no execution of " + m.name + " on " + std::to_string(a.gpus) + " GPUs fits in memory");
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    const auto& e = r.top[i].exec;
    std::printf("%2zu  %.4f s  tp %lld pp %lld dp %lld cp %lld vp %lld mb %lld, recompute %s%s%s%s%s\n", i + 1,
                r.top[i].eval.iteration_s, static_cast<long long>(e.tp), static_cast<long long>(e.pp),
                static_cast<long long>(e.dp), static_cast<long long>(e.cp), static_cast<long long>(e.vp),
                static_cast<long long>(e.micro_batch), std::string(llm::to_string(e.recompute)).c_str(),
                e.sequence_parallel ? ", sequence parallel" : "", e.distributed_optimizer ? ", distributed optimizer" : "",
                e.dp_overlap ? ", DP overlap" : "", e.tp_overlap ? ", TP overlap" : "");
  }
  std::printf("best:\n");
  print_llm_evaluation(r.top.front().eval);
  if (!a.svg.empty()) {
    std::vector<viz::labelled_evaluation> rows;
    for (std::size_t i = 0; i < r.top.size(); ++i) {
      rows.push_back({std::to_string(i + 1) + ": " + viz::execution_label(r.top[i].exec), r.top[i].eval});
    }
    const std::string title = m.name + " on " + std::to_string(a.gpus) + " GPUs, batch " + std::to_string(a.batch);
    std::filesystem::create_directories(a.svg);
    io::atomic_write(std::filesystem::path(a.svg) / "time.svg", viz::llm_time_chart(rows, title));
    io::atomic_write(std::filesystem::path(a.svg) / "memory.svg", viz::llm_memory_chart(rows, title));
    std::printf("written         %s/time.svg, %s/memory.svg\n", a.svg.c_str(), a.svg.c_str());
  }
  if (!a.out.empty()) {
    auto j = io::to_json(r.top.front().eval);
    j["status"] = std::string(to_string(r.status));
    j["execution"] = io::to_json(r.top.front().exec);
    j["model"] = io::to_json(m);
    j["system"] = s.name;
    nlohmann::json top = nlohmann::json::array();
    for (const auto& t : r.top) top.push_back({{"iteration_s", t.eval.iteration_s}, {"execution", io::to_json(t.exec)}});
    j["top"] = top;
    j["search"] = {{"seconds", r.seconds}, {"groups", r.groups}, {"bounds", r.pairs}, {"evaluated", r.evaluated}};
    io::atomic_write(a.out, j.dump(2) + "\n");
  }
}

inline void register_llm_plan(CLI::App* llm_cmd) {
  auto args = std::make_shared<llm_plan_args>();
  auto* pl = llm_cmd->add_subcommand("plan", "The fastest execution on N GPUs that fits, proved optimal over the space");
  pl->add_option("--model", args->model, "Model (devplace.llm-model/1 or Calculon's model JSON)")->required();
  pl->add_option("--system", args->system, "System (devplace.llm-system/1 or Calculon's system JSON)")->required();
  pl->add_option("--gpus", args->gpus, "GPUs N (tp * pp * dp * cp <= N)")->required()->check(CLI::PositiveNumber);
  pl->add_option("--global-batch", args->batch, "Global batch in samples")->required()->check(CLI::PositiveNumber);
  pl->add_option("--dtype", args->dtype, "fp16, bf16 or fp8 (default bf16)");
  pl->add_option("--top", args->top, "List the K best executions (default 1)")->check(CLI::PositiveNumber);
  pl->add_option("--max-cp", args->max_cp, "Largest context-parallel degree to try (default 1)")->check(CLI::PositiveNumber);
  pl->add_flag("--exact-gpus", args->exact, "Only executions on exactly N GPUs");
  pl->add_option("--max-tp", args->max_tp, "Largest tensor-parallel degree to try (default: any that divides)")->check(CLI::PositiveNumber);
  pl->add_option("--max-pp", args->max_pp, "Largest pipeline-parallel degree to try (default: any that divides)")->check(CLI::PositiveNumber);
  pl->add_option("--max-vp", args->max_vp, "Largest interleaving (virtual stages per GPU) to try (default: any that divides)")->check(CLI::PositiveNumber);
  pl->add_option("--max-micro-batch", args->max_mb, "Largest micro-batch to try (default: any that divides)")->check(CLI::PositiveNumber);
  pl->add_option("--recompute", args->recompute, "Recomputation modes to try (default: none selective full)")
      ->check(CLI::IsMember({"none", "selective", "full"}))->delimiter(',');
  pl->add_option("--time-limit", args->time_limit, "Stop after this many seconds (status time_limit)")->check(seconds_validator());
  pl->add_option("--out", args->out, "Write the best execution's result (devplace.llm-result/1 with status and execution)");
  pl->add_option("--svg", args->svg, "Write time.svg and memory.svg of the top executions into this directory");
  pl->callback([args] { run_llm_plan(*args); });
}

inline void register_llm_balance(CLI::App* llm_cmd) {
  struct args_t {
    std::string model, system, execution, out;
  };
  auto args = std::make_shared<args_t>();
  auto* b = llm_cmd->add_subcommand("balance", "Uneven layer split: fewer layers on the stages with the embedding and LM head");
  b->add_option("--model", args->model, "Model (devplace.llm-model/1 or Calculon's model JSON)")->required();
  b->add_option("--system", args->system, "System (devplace.llm-system/1 or Calculon's system JSON)")->required();
  b->add_option("--execution", args->execution, "Execution with vp = 1 (devplace.llm-execution/1 or Calculon's)")->required();
  b->add_option("--out", args->out, "Write the execution with layers_per_stage (devplace.llm-execution/1)");
  b->callback([args] {
    require_writable({args->out});
    const auto m = io::read_llm_model(args->model);
    const auto s = io::read_llm_system(args->system);
    auto e = io::read_llm_execution(args->execution);
    e.layers_per_stage.clear();
    std::optional<std::vector<std::int64_t>> split;
    llm::evaluation uniform, balanced;
    try {
      uniform = llm::evaluate(m, s, e);
      split = llm::balance_layers(m, s, e);
    } catch (const std::invalid_argument& x) {
      throw failure(args->execution + ": " + x.what());
    }
    if (!split) throw failure("no split of " + m.name + " over " + std::to_string(e.pp) + " stages fits in memory");
    e.layers_per_stage = *split;
    balanced = llm::evaluate(m, s, e);
    std::printf("uniform         %.4f s, %.2f GiB per GPU%s\n", uniform.iteration_s, uniform.memory_gib_per_gpu,
                uniform.fits ? "" : " (does not fit)");
    std::printf("balanced        %.4f s, %.2f GiB per GPU, %.2f %% faster\n", balanced.iteration_s,
                balanced.memory_gib_per_gpu, 100 * (uniform.iteration_s / balanced.iteration_s - 1));
    std::printf("layers/stage   ");
    for (auto l : *split) std::printf(" %lld", static_cast<long long>(l));
    std::printf("\n");
    if (!args->out.empty()) io::atomic_write(args->out, io::to_json(e).dump(2) + "\n");
  });
}

void register_llm(CLI::App& app) {
  auto* llm_cmd = app.add_subcommand("llm", "LLM training on GPU clusters: evaluate an execution, search the best");
  llm_cmd->require_subcommand(1);
  struct args_t {
    std::string model, system, execution, out, trace;
  };
  auto args = std::make_shared<args_t>();
  auto* ev = llm_cmd->add_subcommand("evaluate", "Iteration time, throughput and memory of one execution");
  ev->add_option("--trace", args->trace, "Write the time breakdown as a Chrome trace (Perfetto, chrome://tracing)");
  ev->add_option("--model", args->model, "Model (devplace.llm-model/1 or Calculon's model JSON)")->required();
  ev->add_option("--system", args->system, "System (devplace.llm-system/1 or Calculon's system JSON)")->required();
  ev->add_option("--execution", args->execution, "Execution (devplace.llm-execution/1 or Calculon's)")->required();
  ev->add_option("--out", args->out, "Write the result (devplace.llm-result/1 JSON)");
  ev->callback([args] {
    require_writable({args->out, args->trace});
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
    if (!args->trace.empty()) io::atomic_write(args->trace, viz::llm_breakdown_trace(r, m.name + " on " + s.name));
    if (!args->out.empty()) {
      auto j = io::to_json(r);
      j["model"] = io::to_json(m);
      j["execution"] = io::to_json(e);
      j["system"] = s.name;
      io::atomic_write(args->out, j.dump(2) + "\n");
    }
  });
  register_llm_plan(llm_cmd);
  register_llm_balance(llm_cmd);
}

}  // namespace devplace::cli
