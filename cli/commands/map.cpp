// devplace map --graph G --topology T --plan P.json [--cost iteration|auto|p2p|allreduce|combined] [--threads N]
//              [--timeout SECONDS] [--polish-share F] [--oracles default|none|NAME,NAME...] [--baseline cs|p2p|random|bisection]
//              [--seed N] [--out plan.json]
// Reads a plan with stage_of (from `devplace partition`), maps its S stages x R replicas (or the
// per-stage counts of its stage_replicas) onto the devices of the topology, and writes the plan back (to --out, else over --plan) with device_of
// and the mapping figures. An interleaved plan (virtual_stages v > 1: S·v chunks) has its S pipeline
// ranks mapped, on the stage graph folded by rank, and every chunk gets its rank's devices.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/io/topology_json.hpp"
#include "devplace/map/bisection_map.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/sim/from_plan.hpp"
#include "devplace/sim/iteration_mapping.hpp"
#include "devplace/sim/polish.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif

namespace devplace::cli {

struct map_args {
  // the default maps for the simulated iteration: of the mappings tried it keeps the fastest
  std::string graph, format = "auto", topology, plan_file, cost = "iteration", baseline, out;
  unsigned threads = 0;
  double timeout = std::numeric_limits<double>::infinity();
  double polish_share = 0.5;  // of --timeout, for the simulation polish of --cost iteration (0: none)
  std::uint64_t seed = 1;
  std::string oracles = "default";  ///< the mapper's target oracles (map/oracle.hpp)
};

/// The default's last step: the simulation polish (sim/polish.hpp) of the fastest simulated of
/// the iteration mapping, the CS map and the p2p map, until `deadline`; a progress line on a terminal.
inline polish_result polish_for_map(const op_graph& g, const matrix_topology& topo, const plan& p, const stage_graph& sg,
                                    const mapping_result& r, std::uint64_t seed, std::chrono::steady_clock::time_point deadline) {
  const std::size_t D = topo.num_devices();
  std::vector<std::vector<std::vector<std::size_t>>> cands;
  for (const auto& d : {r.device_of, baseline_map(sg, D, baseline::cs, seed), baseline_map(sg, D, baseline::p2p, seed)})
    cands.emplace_back(d.begin(), d.end());
  const bool tty = isatty(fileno(stderr));
  polish_options po{.deadline = deadline};
  if (tty)
    po.progress = [](const polish_progress& q) {
      std::fprintf(stderr, "\r\033[Kpolish: %.3f -> %.3f ms simulated, %llu simulations, %.1f s", q.initial_ms, q.iteration_ms,
                   static_cast<unsigned long long>(q.evaluations), q.elapsed_s);
    };
  const auto model = make_pipeline_model(g, p.stage_of, p.stages, cands.front());
  simulation_options so = simulation_options_of(p);
  so.micro_batches = std::max<std::size_t>(so.micro_batches, 1);
  auto res = polish_fastest(model, topo, std::span<const std::vector<std::vector<std::size_t>>>(cands), so, po);
  if (tty) std::fprintf(stderr, "\r\033[K");
  return res;
}

inline void print_mapping(const plan& p, std::ostream& os) {
  const auto& m = *p.mapping;
  os << "mapping         " << m.method << ", cost " << m.cost << ", S = " << p.stages << ", " << replicas_text(p)
     << ": objective " << m.objective_ms << " ms, lower bound " << m.lower_bound_ms << " ms (" << m.status
     << (m.optimal ? ", proved optimal" : "") << ") in " << m.time_s << " s, " << m.nodes_explored << " nodes\n";
  os << "  stage  devices\n";
  for (std::size_t s = 0; s < p.device_of.size(); ++s) {
    os << "  " << std::setw(5) << s << " ";
    for (auto d : p.device_of[s]) os << ' ' << d;
    os << '\n';
  }
}

/// What the three ways of mapping share: the plan, its stage graph folded by pipeline rank (an
/// interleaved plan's S·v chunks run on S ranks, chunk c on rank c mod S; otherwise the stages
/// themselves), and the settings of the simulated iteration.
struct map_job {
  const op_graph& g;
  const matrix_topology& topo;
  plan& p;
  std::vector<std::size_t> rank_of;  ///< operator -> pipeline rank
  std::size_t ranks = 0, v = 1, MB = 1;
  stage_graph sg;
  bool recompute = false, blocking = false;
  std::chrono::steady_clock::time_point t0;

  [[nodiscard]] double left(double timeout) const {
    return std::max(0.0, timeout - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  [[nodiscard]] iteration_cost iteration_model() const {
    return {.forward_ms = stage_forward_ms(g, rank_of, ranks), .micro_batches = MB, .recompute = recompute,
            .blocking_sends = blocking};
  }
  /// Every chunk's row from its rank's (the rows themselves without interleaving).
  [[nodiscard]] device_mapping chunk_rows(const device_mapping& rank_rows) const {
    device_mapping rows;
    for (std::size_t c = 0; c < ranks * v; ++c) rows.push_back(rank_rows[c % ranks]);
    return rows;
  }
};

inline map_job make_map_job(const op_graph& g, const matrix_topology& topo, plan& p, std::chrono::steady_clock::time_point t0) {
  const std::size_t D = topo.num_devices(), v = std::max<std::size_t>(p.virtual_stages, 1), ranks = p.stages / v;
  std::vector<std::size_t> rank_of = p.stage_of;
  for (auto& s : rank_of) s %= ranks;
  std::vector<std::size_t> reps = replicas_per_stage(p);
  reps.resize(ranks);
  if (p.stage_replicas.empty()) require_devices(ranks, p.replicas, D);
  else require_devices(reps, D);
  stage_graph sg = make_stage_graph(g, rank_of, reps);
  return {.g = g, .topo = topo, .p = p, .rank_of = std::move(rank_of), .ranks = ranks, .v = v,
          .MB = std::max<std::size_t>(p.micro_batches, 1), .sg = std::move(sg),
          .recompute = p.settings && p.settings->recompute, .blocking = p.settings && p.settings->blocking_sends, .t0 = t0};
}

/// --baseline: the CS, p2p, random or dual recursive bisection map, with its figure under the cost model (and the bound of
/// the link-cost models).
inline void map_baseline(const map_args& a, const map_job& j, const link_costs& L, bool iteration, cost_choice cost, mapping_summary& m) {
  const baseline b = a.baseline == "cs" ? baseline::cs : a.baseline == "p2p" ? baseline::p2p : baseline::random;
  const device_mapping rows =
      a.baseline == "bisection" ? bisection_map(j.sg, L, j.MB) : baseline_map(j.sg, j.topo.num_devices(), b, a.seed);
  j.p.device_of = j.chunk_rows(rows);
  m.method = a.baseline;
  if (iteration) {  // the iteration claims no bound
    m.objective_ms = evaluate(j.sg, L, rows, j.iteration_model()).objective_ms;
    m.status = std::string(to_string(status::feasible));
    return;
  }
  m.objective_ms = evaluate(j.sg, L, rows, cost, j.MB).objective_ms;
  m.lower_bound_ms = cost == cost_choice::allreduce  ? assignment_lower_bound(j.sg, L, allreduce_cost{})
                     : cost == cost_choice::combined ? assignment_lower_bound(j.sg, L, combined_cost{.micro_batches = j.MB})
                                                     : assignment_lower_bound(j.sg, L, p2p_cost{});
  m.optimal = m.objective_ms <= m.lower_bound_ms;
  m.status = std::string(to_string(m.optimal ? status::optimal : status::feasible));
}

/// --cost iteration on an interleaved plan: the fastest simulated (interleaved schedule, the plan's
/// settings) of the iteration mapping and the CS and p2p maps of the folded stage graph. The
/// polish is not run: it moves single stage replicas, which would break the rows' repetition.
inline void fastest_interleaved(const map_job& j, const device_mapping& mapped, std::uint64_t seed, mapping_summary& m,
                                std::ostream& os) {
  const std::size_t D = j.topo.num_devices();
  const char* names[] = {"iteration mapping", "CS map", "p2p map"};
  const device_mapping cands[] = {mapped, baseline_map(j.sg, D, baseline::cs, seed), baseline_map(j.sg, D, baseline::p2p, seed)};
  simulation_options so = simulation_options_of(j.p);
  so.micro_batches = j.MB;
  std::size_t best = 0;
  double best_ms = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < 3; ++i) {
    const auto rows = j.chunk_rows(cands[i]);
    const double ms = simulate(make_pipeline_model(j.g, j.p.stage_of, j.p.stages, rows), j.topo, so).iteration_ms;
    os << "interleaved     " << names[i] << ": " << ms << " ms simulated (v = " << j.v << ")\n";
    if (ms < best_ms) best_ms = ms, best = i;
  }
  j.p.device_of = j.chunk_rows(cands[best]);
  m.objective_ms = best_ms;
  m.method = std::string("combined+local_search, fastest simulated (") + names[best] + ")";
}

/// The default, --cost iteration: map_for_iteration, then the simulation polish (or, for an
/// interleaved plan, the fastest simulated of the mapping and the CS and p2p maps).
inline void map_iteration(const map_args& a, const map_job& j, const link_costs& L, mapping_summary& m, std::ostream& os) {
  const auto r = map_for_iteration(j.sg, L, j.iteration_model().forward_ms,
                                   {.micro_batches = j.MB, .recompute = j.recompute, .blocking_sends = j.blocking},
                                   {.threads = a.threads, .timeout_s = j.left(a.timeout) * (1 - a.polish_share),
                                    .oracles = parse_oracles(a.oracles), .seed = a.seed});
  j.p.device_of = j.chunk_rows(r.device_of);
  m.objective_ms = r.objective_ms;
  m.method = "combined+local_search";
  m.nodes_explored = r.nodes_explored;
  m.status = std::string(to_string(r.status));
  if (j.v > 1) return fastest_interleaved(j, r.device_of, a.seed, m, os);
  if (!(a.polish_share > 0)) return;
  const auto deadline = std::isfinite(a.timeout) ? j.t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(a.timeout))
                                                 : std::chrono::steady_clock::time_point::max();
  const auto q = polish_for_map(j.g, j.topo, j.p, j.sg, r, a.seed, deadline);
  os << "polish          " << q.initial_iteration_ms << " -> " << q.iteration_ms << " ms simulated ("
     << (q.start == 0 ? "iteration mapping" : q.start == 1 ? "CS map" : "p2p map") << ", " << q.swaps << " swaps, "
     << q.moves << " moves, " << q.stage_swaps << " stage swaps, " << q.evaluations << " simulations, "
     << to_string(q.status) << ")\n";
  j.p.device_of = q.device_of;
  m.objective_ms = q.iteration_ms;  // the simulated iteration now
  m.method = "combined+local_search+polish";
  if (q.status == status::time_limit) m.status = std::string(to_string(status::time_limit));
}

/// A link-cost model (--cost p2p|allreduce|combined|auto): the proved search of map_devices.
inline void map_link_cost(const map_args& a, const map_job& j, const link_costs& L, cost_choice cost, mapping_summary& m,
                          std::ostream& os) {
  const auto r = map_devices(j.sg, L, {.cost = cost, .threads = a.threads, .timeout_s = j.left(a.timeout),
                                       .oracles = parse_oracles(a.oracles), .seed = a.seed, .micro_batches = j.MB});
  os << "oracles        ";
  if (r.oracles.empty()) os << " none";
  for (const auto& x : r.oracles)
    os << ' ' << x.name << " asked " << x.asked << ", found " << x.found << ", refuted " << x.refuted << ';';
  os << '\n';
  j.p.device_of = j.chunk_rows(r.device_of);
  m.objective_ms = r.objective_ms;
  m.lower_bound_ms = r.lower_bound_ms;
  m.method = "binary_search_backtracking";
  m.optimal = r.optimal;
  m.nodes_explored = r.nodes_explored;
  m.status = std::string(to_string(r.status));
}

inline void run_map(const map_args& a, std::ostream& os) {
  // --timeout covers everything after the output check: reading, the link tables, the search.
  const auto t0 = std::chrono::steady_clock::now();
  require_writable({a.out.empty() ? a.plan_file : a.out});
  const op_graph g = io::read_graph(a.graph, a.format);
  const matrix_topology topo = io::read_topology_json(a.topology, mapper_device_limit);
  plan p = io::read_plan_json(a.plan_file, &g);
  const map_job j = make_map_job(g, topo, p, t0);
  const link_costs L(topo);
  const bool iteration = a.cost == "iteration";
  const cost_choice requested = iteration ? cost_choice::combined : parse_cost(a.cost);
  const cost_choice cost = select_cost_model(j.sg, requested);
  mapping_summary m;
  m.cost = iteration ? "iteration" : std::string(to_string(cost));
  if (!a.baseline.empty()) map_baseline(a, j, L, iteration, cost, m);
  else if (iteration) map_iteration(a, j, L, m, os);
  else map_link_cost(a, j, L, cost, m, os);
  m.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.mapping = m;
  if (!topo.name().empty()) p.topology = topo.name();
  if (p.graph.empty()) p.graph = g.name();
  print_mapping(p, os);
  const std::string out = a.out.empty() ? a.plan_file : a.out;
  io::write_plan_json(p, out);
  os << "written         " << out << '\n';
}

void register_map(CLI::App& app) {
  auto a = std::make_shared<map_args>();
  auto* cmd = app.add_subcommand("map", "Map the stages x replicas of a plan onto the devices of a topology");
  cmd->add_option("--graph", a->graph, "Graph file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", a->format, "Graph format")
      ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))->capture_default_str();
  cmd->add_option("--topology", a->topology, "Topology file (devplace.topology/1, either form)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--plan", a->plan_file, "Plan file with stage_of (devplace.plan/1)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--cost", a->cost,
                  "Stage-time model: iteration (the combined mapping, the CS and p2p maps improved by local search on the "
                  "simulated GPipe iteration, fill and drain included: the plan's MB, recompute and sends settings; the "
                  "fastest kept), p2p (eq. 6), allreduce (eq. 7), combined (both, allreduce over the plan's MB), "
                  "auto (p2p or allreduce by the volume ratio)")
      ->check(CLI::IsMember({"auto", "p2p", "allreduce", "combined", "iteration"}))->capture_default_str();
  cmd->add_option("--polish-share", a->polish_share,
                  "--cost iteration: share of --timeout for the last step, which simulates the iteration mapping, the CS "
                  "and the p2p map and improves the fastest by swaps and moves kept only when they simulate faster "
                  "(0: no polish; without --timeout it runs to a local optimum)")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--threads", a->threads, "Targets searched at once [hardware concurrency]");
  cmd->add_option("--timeout", a->timeout, "Stop after this many seconds with the best mapping found [none]")
      ->check(seconds_validator());
  cmd->add_option("--oracles", a->oracles,
                  "Target oracles of the mapper, in the order asked: a portfolio (default, none, copies, rings) or names "
                  "from group_cover, quotient_copy, line_ring, copy_cover, comma-separated")
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              (void)parse_oracles(v);
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
            return std::string();
          },
          "PORTFOLIO"))
      ->capture_default_str();
  cmd->add_option("--baseline", a->baseline, "Use a baseline map instead of searching")
      ->check(CLI::IsMember({"cs", "p2p", "random", "bisection"}));
  cmd->add_option("--seed", a->seed, "Seed of the random map")->capture_default_str();
  cmd->add_option("--out", a->out, "Write the plan here [over --plan]");
  cmd->callback([a] { run_map(*a, std::cout); });
}

}  // namespace devplace::cli
