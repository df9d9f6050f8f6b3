// devplace mcm validate --graph G --chips C --plan P
// devplace mcm count    --graph G --chips C
// devplace mcm search   --graph G --chips C --policy random|sa|rl|ce --samples N [--seed S]
//                       [--evaluator compute|ring] [--memory none|static|liveness] [--sram BYTES]
//                       [--link-gbps X] [--seconds T] [--replicate-cones FANOUT] [--out plan.json]
// Multi-chip-module partitioning (Xie et al., MLSys 2022): check a plan's stage_of against the
// rules eq. 2-4 of a one-way ring of C chiplets, count the valid partitions of a small graph by
// enumeration, or search with a policy and the constraint engine for the best valid partition.
#include <CLI/CLI.hpp>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/mcm/broadcast.hpp"
#include "devplace/mcm/search.hpp"
#include "devplace/mcm/validate.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif

namespace devplace::cli {

struct mcm_args {
  std::string graph, format = "auto", plan_file, policy = "random", evaluator = "compute", memory = "none", out;
  std::size_t chips = 0, samples = 100, replicate = 0;
  std::uint64_t seed = 0;
  double sram = 32.0 * 1024 * 1024, link_gbps = 20, seconds = std::numeric_limits<double>::infinity();
};

inline void run_mcm_validate(const mcm_args& a, std::ostream& os) {
  const op_graph g = io::read_graph(a.graph, a.format);
  const plan p = io::read_plan_json(a.plan_file);  // not checked against g: eq. 2 is reported below
  if (p.stage_of.size() != g.num_vertices())
    throw failure(a.plan_file + ": stage_of has " + std::to_string(p.stage_of.size()) + " entries, the graph " +
                  std::to_string(g.num_vertices()) + " operators");
  std::vector<int> f(p.stage_of.begin(), p.stage_of.end());
  const auto v = mcm::validate(g, std::span<const int>(f), a.chips);
  if (!v.valid()) throw failure("invalid on " + std::to_string(a.chips) + " chips: " + v.message);
  os << "valid on " << a.chips << " chips: " << v.chips_used << " chips used\n";
}

inline void run_mcm_count(const mcm_args& a, std::ostream& os) {
  const op_graph g = io::read_graph(a.graph, a.format);
  mcm::count_result c;
  try {
    c = mcm::count_valid(g, a.chips);
  } catch (const std::invalid_argument& e) {
    throw failure(std::string(e.what()) + " (count enumerates every assignment: use a small graph)");
  }
  os << "valid " << c.valid << " of " << c.total << "; first violation: eq2 " << c.fails_eq2 << ", eq3 " << c.fails_eq3
     << ", eq4 " << c.fails_eq4 << '\n';
}

template <class Eval>
mcm::search_result mcm_search_with(const op_graph& g, const mcm::chip_topology& ring, const Eval& eval, const mcm_args& a) {
  const mcm::search_options o{.samples = a.samples, .seconds = a.seconds, .seed = a.seed, .thresholds = {1.0, 1.1, 1.25, 1.5, 2.0}};
  const std::size_t N = g.num_vertices(), C = a.chips;
  if (a.policy == "random") {
    mcm::uniform_policy p;
    return mcm::search(g, ring, p, eval, o);
  }
  if (a.policy == "sa") {
    mcm::annealing_policy p(N, C, {.budget = a.samples});
    return mcm::search(g, ring, p, eval, o);
  }
  if (a.policy == "ce") {
    mcm::cross_entropy_policy p(N, C);
    return mcm::search(g, ring, p, eval, o);
  }
  mcm::softmax_policy p(N, C);
  return mcm::search(g, ring, p, eval, o);
}

inline void run_mcm_search(const mcm_args& a, std::ostream& os) {
  require_writable({a.out});
  op_graph g = io::read_graph(a.graph, a.format);
  if (a.replicate > 0) {
    auto rc = mcm::replicate_cones(g, {.min_fanout = a.replicate});
    os << "replicated " << rc.roots << " broadcast cones: " << g.num_vertices() << " -> " << rc.graph.num_vertices()
       << " operators (the plan refers to the transformed graph)\n";
    g = std::move(rc.graph);
    g.set_name(g.name() + "+replicated");
  }
  if (g.num_vertices() == 0) throw failure(a.graph + ": the graph has no operators");
  const auto ring = mcm::one_way_ring(a.chips, a.sram, a.link_gbps);
  const mcm::evaluator_options eo{.memory = a.memory == "static"     ? mcm::memory_check::static_sum
                                            : a.memory == "liveness" ? mcm::memory_check::liveness
                                                                     : mcm::memory_check::none};
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = a.evaluator == "ring" ? mcm_search_with(g, ring, mcm::ring_evaluator(g, ring, eo), a)
                                       : mcm_search_with(g, ring, mcm::compute_evaluator(g, ring, eo), a);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int K = 0;
  for (int c : r.chip_of) K = std::max(K, c + 1);
  os << std::setprecision(4) << "mcm search: policy " << a.policy << ", evaluator " << a.evaluator << ", N = " << g.num_vertices()
     << ", C = " << a.chips << ", " << r.samples << " samples in " << secs << " s (" << to_string(r.status) << ")\n";
  os << "best: bottleneck " << r.best.bottleneck_ms << " ms on " << K << " chips, " << r.improvement()
     << "x the chain-DP baseline (" << (r.baseline_throughput > 0 ? 1.0 / r.baseline_throughput : 0.0) << " ms)\n";
  os << "repair: " << r.fallbacks << " fallbacks, " << r.restarts << " restarts, " << r.backtracks << " backtracks; "
     << r.invalid << " samples failed H\n";
  if (a.out.empty()) return;
  plan p;
  p.graph = g.name();
  p.topology = "one_way_ring(" + std::to_string(a.chips) + ")";
  p.stages = static_cast<std::size_t>(K);
  p.replicas = 1;
  p.stage_of.assign(r.chip_of.begin(), r.chip_of.end());
  for (int k = 0; k < K; ++k) p.device_of.push_back({static_cast<std::size_t>(k)});
  partition_summary ps;
  ps.objective_ms = r.best.bottleneck_ms;
  ps.method = a.policy == "rl" ? "mcm-fix-ppo" : "mcm-" + a.policy;
  ps.status = std::string(to_string(r.status));
  ps.time_s = secs;
  p.partition = ps;
  io::write_plan_json(p, a.out);
  os << "wrote " << a.out << '\n';
}

void register_mcm(CLI::App& app) {
  auto* cmd = app.add_subcommand("mcm", "Multi-chip-module partitioning on a one-way ring of chiplets (eq. 2-4)");
  cmd->require_subcommand(1);
  auto a = std::make_shared<mcm_args>();
  auto common = [&](CLI::App* s) {
    s->add_option("--graph", a->graph, "Graph file")->required()->check(CLI::ExistingFile);
    s->add_option("--format", a->format, "Graph format")
        ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))
        ->capture_default_str();
    s->add_option("--chips,-C", a->chips, "Chips C (1..1024)")
        ->required()
        ->check(CLI::Range(std::size_t{1}, mcm::max_engine_chips));
  };
  auto* v = cmd->add_subcommand("validate", "Check a plan's stage_of against eq. 2-4 (exit 1 when invalid)");
  common(v);
  v->add_option("--plan", a->plan_file, "Plan file (devplace.plan/1) with stage_of")->required()->check(CLI::ExistingFile);
  v->callback([a] { run_mcm_validate(*a, std::cout); });
  auto* c = cmd->add_subcommand("count", "Count valid partitions by enumerating all C^N assignments (small graphs)");
  common(c);
  c->callback([a] { run_mcm_count(*a, std::cout); });
  auto* s = cmd->add_subcommand("search", "Search for the best valid partition");
  common(s);
  s->add_option("--policy", a->policy, "random (Random search), sa (annealing), rl (softmax + PPO, FIX), ce (cross-entropy)")
      ->check(CLI::IsMember({"random", "sa", "rl", "ce"}))
      ->capture_default_str();
  s->add_option("--samples", a->samples, "Sample budget")->check(CLI::PositiveNumber)->capture_default_str();
  s->add_option("--seed", a->seed, "Random seed")->capture_default_str();
  s->add_option("--seconds", a->seconds, "Wall-time budget in seconds [none]")->check(seconds_validator());
  s->add_option("--evaluator", a->evaluator, "compute (1 / max chip time) or ring (also the ring links)")
      ->check(CLI::IsMember({"compute", "ring"}))
      ->capture_default_str();
  s->add_option("--memory", a->memory, "Memory check H: none, static or liveness")
      ->check(CLI::IsMember({"none", "static", "liveness"}))
      ->capture_default_str();
  s->add_option("--sram", a->sram, "SRAM bytes per chip (H)")->check(CLI::PositiveNumber)->capture_default_str();
  s->add_option("--link-gbps", a->link_gbps, "Ring link bandwidth, GB/s")->check(CLI::PositiveNumber)->capture_default_str();
  s->add_option("--replicate-cones", a->replicate,
                "Replicate parameter-free broadcast cones of fan-out >= this first (0: off)")
      ->capture_default_str();
  s->add_option("--out", a->out, "Write the best partition as a plan (devplace.plan/1) here");
  s->callback([a] { run_mcm_search(*a, std::cout); });
}

}  // namespace devplace::cli
