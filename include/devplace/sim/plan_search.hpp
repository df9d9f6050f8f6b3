#pragma once
/// \file sim/plan_search.hpp
/// The (S, R) search of Parmesan (Appendix B): for D devices, every configuration with S · R ≤ D
/// (only S · R = D with `exact_product`), S ≤ operators, runs partition (the Parmesan flow) →
/// map (binary search + backtracking) → simulate, in parallel threads, and picks the
/// configuration with the highest simulated throughput (samples per second; digest G17). Within
/// a configuration, α is chosen by simulation too: the partition of every α (and the flow's
/// reference) is mapped and simulated, the fastest kept. Each configuration also simulates the CS
/// map and the p2p map of the chosen partition, so the gain of the mapping is visible.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <cstddef>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "devplace/executor.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/plan.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace {

struct plan_search_options {
  std::size_t devices = 0;             ///< D; 0: every device of the topology
  bool exact_product = false;          ///< only S·R = D (Parmesan's experiments), not every S·R ≤ D
  std::size_t micro_batches = 4;       ///< MB
  /// Samples per micro-batch (for samples/s); 0: the graph's own (`op_graph::micro_batch_size`),
  /// or 1 when it does not say.
  double micro_batch_size = 0;
  pipeline_schedule schedule = pipeline_schedule::gpipe;
  bool recompute = true;               ///< Parmesan trains with activation recomputation
  std::size_t clusters = 32;           ///< K of the flow
  double bandwidth_gbps = 10.0;        ///< phase-1 constant bandwidth
  double map_timeout_s = 5.0;          ///< per configuration
  unsigned threads = 0;                ///< configurations at once; 0: hardware concurrency
};

/// One configuration tried.
struct plan_candidate {
  std::size_t stages = 0, replicas = 0;
  devplace::status status = status::infeasible;  ///< feasible when partition, map and simulation ran
  std::string reason;                            ///< why not, otherwise empty
  double partition_ms = 0;                       ///< phase-1 objective
  double mapping_ms = 0;                         ///< phase-2 objective
  bool mapping_optimal = false;
  std::string cost;                              ///< p2p or allreduce
  double iteration_ms = 0, samples_per_s = 0, bubble_fraction = 0;
  double cs_samples_per_s = 0, p2p_samples_per_s = 0;  ///< the baseline maps on the same partition
  double time_s = 0;
  plan result;                                   ///< the full plan of this configuration
};

struct plan_search_result {
  devplace::status status = status::infeasible;  ///< feasible when some configuration worked
  std::size_t best = 0;                          ///< index into `candidates`
  std::vector<plan_candidate> candidates;
  double time_s = 0;
};

namespace detail {

inline plan_candidate plan_one(const op_graph& g, const matrix_topology& t, std::size_t S, std::size_t R,
                               const plan_search_options& o) {
  const auto start = std::chrono::steady_clock::now();
  plan_candidate c;
  c.stages = S;
  c.replicas = R;
  double memory = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < t.num_devices(); ++d) memory = std::min(memory, t.device_memory_bytes(d));
  const partition_options po{.stages = S, .cost = {.replicas = R, .micro_batches = o.micro_batches,
                                                   .device_memory_bytes = memory, .bandwidth_gbps = o.bandwidth_gbps}};
  const auto part = parmesan_partition(g, {.partition = po, .clusters = o.clusters, .threads = 1});
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (!part.has_solution()) {
    c.reason = "no partition fits (" + std::string(to_string(part.status)) + ")";
    c.time_s = elapsed();
    return c;
  }
  // Alpha selection by simulation: every alpha's partition (and the flow's reference) is mapped
  // and simulated; the fastest simulated one is kept.
  struct option_t {
    std::vector<std::size_t> stage_of;
    std::string method;
  };
  std::vector<option_t> options;
  auto offer = [&](const std::vector<std::size_t>& so, std::string method) {
    if (so.empty()) return;
    for (const auto& x : options)
      if (x.stage_of == so) return;
    options.push_back({so, std::move(method)});
  };
  if (part.from_reference) offer(part.stage_of, "topo-dp+refine");
  for (const auto& st : part.steps) {
    std::ostringstream name;
    name << "cluster+dp+refine (alpha " << st.alpha << ")";
    offer(st.stage_of, name.str());
  }
  const double mbs = o.micro_batch_size > 0 ? o.micro_batch_size : g.micro_batch_size() > 0 ? g.micro_batch_size() : 1.0;
  const simulation_options so{.micro_batches = o.micro_batches, .micro_batch_size = mbs,
                              .schedule = o.schedule, .recompute = o.recompute};
  bool any = false;
  for (const auto& opt : options) {
    const stage_graph sg = make_stage_graph(g, opt.stage_of, S, R);
    const auto mr = map_devices(sg, t, mapper_options{.threads = 1, .timeout_s = o.map_timeout_s / double(options.size())});
    if (mr.device_of.empty()) continue;
    auto run = [&](const device_mapping& dev) {
      std::vector<std::vector<std::size_t>> rows(dev.begin(), dev.end());
      return simulate(make_pipeline_model(g, opt.stage_of, S, rows), t, so);
    };
    const auto sim = run(mr.device_of);
    if (any && sim.samples_per_s <= c.samples_per_s) continue;
    any = true;
    const auto e = evaluate_partition(g, opt.stage_of, S, po.cost);
    c.partition_ms = e.objective_ms;
    c.mapping_ms = mr.objective_ms;
    c.mapping_optimal = mr.optimal;
    c.cost = mr.cost;
    c.iteration_ms = sim.iteration_ms;
    c.samples_per_s = sim.samples_per_s;
    c.bubble_fraction = sim.bubble_fraction;
    c.cs_samples_per_s = run(cs_map(sg)).samples_per_s;
    c.p2p_samples_per_s = run(p2p_map(sg)).samples_per_s;
    plan& p = c.result;
    p.graph = g.name();
    p.topology = t.name();
    p.stages = S;
    p.replicas = R;
    p.micro_batches = o.micro_batches;
    p.settings = plan_settings{.micro_batch_size = mbs, .schedule = std::string(to_string(o.schedule)),
                               .recompute = o.recompute, .blocking_sends = so.blocking_sends,
                               .phase1_bandwidth_gbps = o.bandwidth_gbps, .cost = "auto"};
    p.stage_of = opt.stage_of;
    p.device_of.assign(mr.device_of.begin(), mr.device_of.end());
    p.partition = partition_summary{.objective_ms = e.objective_ms, .stage_time_ms = e.stage_time_ms,
                                    .stage_memory_bytes = e.stage_memory_bytes, .method = opt.method,
                                    .optimal = false, .status = std::string(to_string(part.status)), .time_s = part.time_s};
    p.mapping = mapping_summary{.objective_ms = mr.objective_ms, .lower_bound_ms = mr.lower_bound_ms, .cost = mr.cost,
                                .method = "binary_search_backtracking", .optimal = mr.optimal,
                                .nodes_explored = mr.nodes_explored, .status = std::string(to_string(mr.status)),
                                .time_s = mr.time_s};
    p.simulation = simulation_summary{.schedule = std::string(to_string(o.schedule)), .iteration_ms = sim.iteration_ms,
                                      .samples_per_s = sim.samples_per_s, .bubble_fraction = sim.bubble_fraction};
  }
  if (!any) {
    c.reason = "no mapping";
    c.time_s = elapsed();
    return c;
  }
  c.status = status::feasible;
  c.time_s = elapsed();
  return c;
}

}  // namespace detail

/// Searches (S, R) for `g` on `t` (see the file comment). Throws std::invalid_argument on bad
/// options (no micro-batches, a non-positive bandwidth or micro-batch size).
[[nodiscard]] inline plan_search_result search_plan(const op_graph& g, const matrix_topology& t,
                                                    const plan_search_options& o = {}) {
  if (o.micro_batches == 0) throw std::invalid_argument("search_plan: micro_batches must be >= 1");
  if (!(o.bandwidth_gbps > 0) || !std::isfinite(o.bandwidth_gbps))
    throw std::invalid_argument("search_plan: bandwidth_gbps must be a finite number > 0");
  if (!(o.micro_batch_size >= 0) || !std::isfinite(o.micro_batch_size))
    throw std::invalid_argument("search_plan: micro_batch_size must be a finite number >= 0");
  const auto start = std::chrono::steady_clock::now();
  plan_search_result res;
  const std::size_t D = o.devices ? std::min(o.devices, t.num_devices()) : t.num_devices();
  std::vector<std::pair<std::size_t, std::size_t>> configs;
  for (std::size_t S = 1; S <= std::min(D, g.num_vertices()); ++S)
    for (std::size_t R = 1; S * R <= D; ++R)
      if (!o.exact_product || S * R == D) configs.emplace_back(S, R);
  res.candidates.resize(configs.size());
  parallel_for(configs.size(), o.threads, [&](std::size_t i) {
    res.candidates[i] = detail::plan_one(g, t, configs[i].first, configs[i].second, o);
  });
  bool found = false;
  for (std::size_t i = 0; i < res.candidates.size(); ++i)
    if (res.candidates[i].status == status::feasible &&
        (!found || res.candidates[i].samples_per_s > res.candidates[res.best].samples_per_s)) {
      found = true;
      res.best = i;
    }
  res.status = found ? status::feasible : status::infeasible;
  res.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

/// The same for any `profiled_dag` and any `device_topology`, copied once (every cost through the
/// customisation points) into an `op_graph` and a `matrix_topology`.
template <profiled_dag G, device_topology T>
  requires(!std::is_same_v<G, op_graph> || !std::is_same_v<T, matrix_topology>)
[[nodiscard]] plan_search_result search_plan(const G& g, const T& t, const plan_search_options& o = {}) {
  return search_plan(to_op_graph(g), to_matrix_topology(t), o);
}

}  // namespace devplace
