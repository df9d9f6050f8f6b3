// devplace plan --graph G --topology T [--devices D] [--micro-batches MB] [--micro-batch-size N]
//               [--schedule gpipe|1f1b|interleaved] [--virtual-stages V[,V...]] [--dp-bucket-mb X] [--clusters K] [--exact-product] [--map-timeout S] [--out plan.json] [--svg DIR]
//               [--cost iteration|auto|p2p|allreduce|combined] [--polish-share F] [--no-prune] [--general] [--quiet]
//               [--trace FILE]
// The main job: search (S, R), partition, map and simulate the configurations, keep the fastest.
// Configurations whose throughput bound cannot beat the best so far are pruned (--no-prune: all
// explored). --general adds Parmesan's general DP J(2) for every S (per-stage replica counts
// summing to D; the plan file then carries stage_replicas). --schedule interleaved also tries
// every (S, R) with each v of --virtual-stages (Megatron-LM's interleaved 1F1B: the graph cut into
// S x v chunks, v per device; v = 1, plain 1F1B, is always tried; the plan file then carries
// virtual_stages). On a terminal, a progress line on stderr (--quiet: none).
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/io/topology_json.hpp"
#include "devplace/io/atomic_write.hpp"
#include "devplace/map/mapping_result.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/plan_search.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif
#include "commands/pictures.hpp"

namespace devplace::cli {

/// The progress line: configurations done, best so far, elapsed (rewritten in place on stderr).
inline void print_plan_progress(const plan_search_progress& p) {
  std::fprintf(stderr, "\r\033[Kplan: %zu/%zu configurations (%zu explored, %zu pruned), best ", p.done, p.total, p.explored,
               p.pruned);
  if (p.best_samples_per_s > 0)
    std::fprintf(stderr, "S = %zu, R = %zu, v = %zu: %.1f samples/s", p.best_stages, p.best_replicas, p.best_virtual_stages,
                 p.best_samples_per_s);
  else std::fprintf(stderr, "none yet");
  std::fprintf(stderr, ", %.1f s", p.elapsed_s);
  std::fflush(stderr);
}

/// The options of devplace plan.
struct plan_args {
  std::string graph, format = "auto", topology, schedule = "gpipe", out, svg, trace;
  bool no_recompute = false, no_prune = false, quiet = false;
  std::string cost = "iteration";
  double dp_bucket_mb = 0;
  std::vector<std::size_t> virtual_stages;
  plan_search_options o;
};

/// One row per configuration searched: its outcome, and for a feasible one its partition,
/// mapping and simulated iteration (and how it compares with the CS and p2p maps).
inline void print_plan_candidates(const plan_search_result& r, bool interleaved) {
  for (const auto& c : r.candidates) {
    std::cout << "  " << std::setw(5) << c.stages << std::setw(5) << (c.general ? "J(2)" : std::to_string(c.replicas));
    if (interleaved) std::cout << std::setw(5) << c.virtual_stages;
    std::cout << "  " << std::left << std::setw(10) << to_string(c.outcome) << std::right;
    if (c.outcome == config_outcome::pruned) {
      std::cout << "  bound " << std::fixed << std::setprecision(1) << c.bound_samples_per_s << " samples/s < best ("
                << c.reason << ")\n" << std::defaultfloat << std::setprecision(6);
      continue;
    }
    if (c.status != status::feasible) {
      std::cout << "  " << c.reason << '\n';
      continue;
    }
    std::cout << std::fixed << std::setprecision(3) << std::setw(14) << c.partition_ms << std::setw(13) << c.mapping_ms
              << std::setw(9) << (c.mapping_optimal ? "yes" : "no") << std::setw(14) << c.iteration_ms << std::setw(12)
              << c.samples_per_s << std::setw(7) << std::setprecision(2) << c.samples_per_s / c.cs_samples_per_s << "x"
              << std::setw(8) << c.samples_per_s / c.p2p_samples_per_s << "x" << std::defaultfloat << std::setprecision(6);
    if (c.general) {
      std::cout << "  R_s =";
      for (auto x : c.stage_replicas) std::cout << ' ' << x;
    }
    std::cout << '\n';
  }
  for (const auto& c : r.candidates)
    if (c.status == status::feasible && c.result.mapping && c.result.mapping->status == "time_limit")
      std::cout << "time limit      S = " << c.stages << ", " << replicas_text(c.result)
                << ": the mapper hit --map-timeout; this configuration's mapping (and so the plan) may change with the machine's speed\n";
}

/// devplace plan: the search, its table, the chosen plan and the optional files.
inline void run_plan(plan_args& a) {
  require_writable({a.out, a.trace});
  if (!a.svg.empty())
    for (const auto& f : picture_paths(a.svg)) require_writable({f});
  const op_graph g = io::read_graph(a.graph, a.format);
  const matrix_topology t = io::read_topology_json(a.topology, mapper_device_limit);
  a.o.schedule = a.schedule == "1f1b"          ? pipeline_schedule::one_f_one_b
                 : a.schedule == "interleaved" ? pipeline_schedule::interleaved
                                               : pipeline_schedule::gpipe;
  if (!a.virtual_stages.empty() && a.o.schedule != pipeline_schedule::interleaved)
    throw CLI::ValidationError("--virtual-stages", "needs --schedule interleaved");
  if (!a.virtual_stages.empty()) a.o.virtual_stages = a.virtual_stages;
  const bool interleaved = a.o.schedule == pipeline_schedule::interleaved;
  a.o.recompute = !a.no_recompute;
  a.o.dp_bucket_bytes = a.dp_bucket_mb * 1048576.0;
  a.o.iteration_mapping = a.cost == "iteration";
  a.o.cost = a.o.iteration_mapping ? cost_choice::combined : parse_cost(a.cost);
  a.o.prune = !a.no_prune;
  const bool progress = !a.quiet && isatty(fileno(stderr));
  if (progress) a.o.progress = print_plan_progress;
  const auto r = search_plan(g, t, a.o);
  if (progress) std::cerr << "\r\033[K" << std::flush;
  std::cout << "plan            " << g.name() << " (" << g.num_vertices() << " operators) on " << t.name() << " ("
            << t.num_devices() << " devices), MB = " << a.o.micro_batches << ", " << a.schedule << "\n"
            << "      S    R" << (interleaved ? "    v" : "")
            << "  outcome     partition ms   mapping ms  optimal  iteration ms   samples/s   vs CS   vs p2p\n";
  print_plan_candidates(r, interleaved);
  std::size_t count[3] = {0, 0, 0};
  for (const auto& c : r.candidates) ++count[static_cast<int>(c.outcome)];
  std::cout << "search          " << r.candidates.size() << " configurations: " << count[0] << " explored, " << count[1]
            << " pruned, " << count[2] << " infeasible" << (a.o.prune ? "" : " (--no-prune)") << '\n';
  if (r.status != status::feasible) throw failure("no configuration of " + g.name() + " fits on " + t.name());
  const auto& best = r.candidates[r.best];
  const plan& p = best.result;
  std::cout << "chosen          S = " << pipeline_ranks(p) << ", " << replicas_text(p) << ": " << simulation_line(p) << " ("
            << std::setprecision(3) << best.samples_per_s / best.cs_samples_per_s << "x CS map, "
            << best.samples_per_s / best.p2p_samples_per_s << "x p2p map), search " << r.time_s << " s\n"
            << std::setprecision(6)
            << (p.virtual_stages > 1 ? "  chunk" : "  stage") << "  operators  time ms  devices\n";
  std::vector<std::size_t> size(p.stages, 0);
  for (auto x : p.stage_of) ++size[x];
  for (std::size_t s = 0; s < p.stages; ++s) {
    std::cout << "  " << std::setw(5) << s << "  " << std::setw(9) << size[s] << "  " << std::setw(7)
              << std::setprecision(4) << p.partition->stage_time_ms[s] << "  ";
    for (auto d : p.device_of[s]) std::cout << d << (t.device_names().empty() ? "" : "=" + t.device_names()[d]) << ' ';
    std::cout << '\n';
  }
  if (!a.out.empty()) {
    io::write_plan_json(p, a.out);
    std::cout << "written         " << a.out << '\n';
  }
  if (!a.svg.empty() || !a.trace.empty()) {
    const auto model = make_pipeline_model(g, p.stage_of, p.stages, p.device_of);
    const auto so = simulation_options_of(p);
    const auto sim = simulate(model, t, so);  // ragged rows with stage_replicas
    if (!a.svg.empty()) {
      write_pictures(a.svg, g, t, p, model, sim, so);
      std::cout << "written         " << picture_paths(a.svg)[0] << ", heatmap.svg, stage_graph.svg\n";
    }
    if (!a.trace.empty()) {
      write_trace(a.trace, g, t, p, model, sim, so);
      std::cout << "written         " << a.trace << " (Chrome Trace Event format)\n";
    }
  }
}

void register_plan(CLI::App& app) {
  auto a = std::make_shared<plan_args>();
  auto* cmd = app.add_subcommand("plan", "Search (S, R), partition, map and simulate: the whole flow");
  cmd->add_option("--graph", a->graph, "Graph file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", a->format, "Graph format")
      ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))->capture_default_str();
  cmd->add_option("--topology", a->topology, "Topology file (matrix or generator form)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--devices", a->o.devices, "Devices to use [all of the topology]");
  cmd->add_option("--micro-batches", a->o.micro_batches, "Micro-batches per iteration")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--micro-batch-size", a->o.micro_batch_size, "Samples per micro-batch [the graph's micro_batch_size, else 1]")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-recompute", a->no_recompute, "No activation recomputation in the simulation [recomputation on]");
  auto* sched = cmd->add_option("--schedule", a->schedule, "Pipeline schedule (interleaved: Megatron-LM's interleaved 1F1B)")
                    ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}))->capture_default_str();
  cmd->add_option("--virtual-stages", a->virtual_stages,
                  "--schedule interleaved: model chunks per device tried for every (S, R), comma-separated, besides 1 "
                  "(1F1B) [2]")
      ->delimiter(',')->check(CLI::PositiveNumber)->needs(sched);
  cmd->add_option("--dp-bucket-mb", a->dp_bucket_mb,
                  "Gradient bucket of the data-parallel allreduce, MiB, overlapped with the last backward as PyTorch DDP "
                  "does (25 is its default); 0: one allreduce after the backward")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--clusters,-K", a->o.clusters, "Hyper-operators of the partitioning flow")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--bandwidth", a->o.bandwidth_gbps, "Constant bandwidth of the partitioning cost model, GB/s")->capture_default_str();
  cmd->add_flag("--exact-product", a->o.exact_product, "Try only S x R = D (faster), not every S x R <= D");
  cmd->add_option("--map-timeout", a->o.map_timeout_s, "Mapper time limit per configuration, s")->capture_default_str();
  cmd->add_option("--polish-share", a->o.polish_share,
                  "--cost iteration: share of --map-timeout for the simulation polish of the fastest of the mapping, "
                  "CS and p2p maps (0: none)")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--cost", a->cost,
                  "Mapping cost model: iteration (combined, then local search on the simulated GPipe iteration; the "
                  "fastest mapping kept), p2p, allreduce, combined (both, allreduce over MB), auto")
      ->check(CLI::IsMember({"auto", "p2p", "allreduce", "combined", "iteration"}))->capture_default_str();
  cmd->add_flag("--no-prune", a->no_prune, "Explore every configuration (no bound pruning)");
  cmd->add_flag("--general", a->o.general,
                "Also Parmesan's general DP J(2) for every S: stages with their own replica counts summing to D");
  cmd->add_flag("--quiet,-q", a->quiet, "No progress line on stderr");
  cmd->add_option("--threads", a->o.threads, "Configurations searched at once [hardware concurrency]");
  cmd->add_option("--out", a->out, "Write the chosen plan here");
  cmd->add_option("--svg", a->svg, "Write gantt.svg, heatmap.svg and stage_graph.svg of the chosen plan into this directory")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--trace", a->trace,
                  "Write the chosen plan's simulated iteration here in the Chrome Trace Event format (Perfetto, chrome://tracing)");
  cmd->callback([a] { run_plan(*a); });
}

}  // namespace devplace::cli
