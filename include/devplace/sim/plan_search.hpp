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
#include <functional>
#include <numeric>
#include <string_view>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "devplace/algorithm/longest_path.hpp"
#include "devplace/config.hpp"
#include "devplace/executor.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/plan.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace {

/// What the search has done so far (for a progress line).
struct plan_search_progress {
  std::size_t done = 0, total = 0, explored = 0, pruned = 0;
  double best_samples_per_s = 0;       ///< 0 while nothing is simulated
  std::size_t best_stages = 0, best_replicas = 0;
  double elapsed_s = 0;
};

/// What happened to a configuration.
enum class config_outcome { explored, pruned, infeasible };

[[nodiscard]] constexpr std::string_view to_string(config_outcome c) noexcept {
  return c == config_outcome::explored ? "explored" : c == config_outcome::pruned ? "pruned" : "infeasible";
}

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
  cost_choice cost = cost_choice::automatic;  ///< the mapper's cost model (combined: over MB micro-batches)
  bool prune = true;                   ///< bound-pruned search; false: every configuration explored
  /// Called after every configuration (from the thread that finished it, one call at a time).
  std::function<void(const plan_search_progress&)> progress;
};

/// One configuration tried.
struct plan_candidate {
  std::size_t stages = 0, replicas = 0;
  devplace::status status = status::infeasible;  ///< feasible when partition, map and simulation ran
  config_outcome outcome = config_outcome::infeasible;
  std::string reason;                            ///< why not, otherwise empty
  double bound_samples_per_s = 0;                ///< proved upper bound of its simulated samples/s
  double partition_ms = 0;                       ///< phase-1 objective
  double mapping_ms = 0;                         ///< phase-2 objective
  bool mapping_optimal = false;
  std::string cost;                              ///< p2p, allreduce or combined
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

/// The simulation options of a search.
inline simulation_options plan_simulation_options(const op_graph& g, const plan_search_options& o) {
  const double mbs = o.micro_batch_size > 0 ? o.micro_batch_size : g.micro_batch_size() > 0 ? g.micro_batch_size() : 1.0;
  return {.micro_batches = o.micro_batches, .micro_batch_size = mbs, .schedule = o.schedule, .recompute = o.recompute};
}

/// mbs · R · MB per second of an iteration of `iteration_ms`; +inf for 0.
inline double samples_per_s_of(const simulation_options& so, std::size_t R, double iteration_ms) {
  return iteration_ms > 0 ? so.micro_batch_size * double(R) * double(so.micro_batches) / (iteration_ms / 1000.0)
                          : std::numeric_limits<double>::infinity();
}

/// The partition-independent iteration bounds of a graph: CP (heaviest path of w) and W, max_v w.
struct work_bounds {
  double heaviest_path_ms = 0, total_ms = 0, largest_ms = 0;
};

inline work_bounds make_work_bounds(const op_graph& g, bool recompute) {
  auto w = [recompute](const op_graph& x, std::size_t v) {
    return x.compute_ms(v) + (recompute ? x.forward_ms(v) : 0.0);
  };
  work_bounds b;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) b.total_ms += w(g, v), b.largest_ms = std::max(b.largest_ms, w(g, v));
  b.heaviest_path_ms = longest_path(g, w).length;
  return b;
}

/// Before partitioning: iteration ≥ max(CP, MB · max(W / S, max_v w(v))).
inline double iteration_bound_before_partition(const work_bounds& b, std::size_t S, std::size_t MB) {
  return std::max(b.heaviest_path_ms, double(MB) * std::max(b.total_ms / double(S), b.largest_ms));
}

/// The link bounds of a topology: the fastest link (largest bandwidth, smallest latency), and
/// for every ring size R the smallest θ_R such that some R devices are connected by links of at
/// most θ_R ms per byte in at least one direction. A ring over R distinct devices is such a set
/// (its links connect it), so its slowest link moves a byte in ≥ θ_R ms.
struct link_bounds {
  double bandwidth_gbps = 0, latency_us = std::numeric_limits<double>::infinity();
  std::vector<double> ring_ms_per_byte;  ///< θ_R, indexed by R (0 for R ≤ 1)
};

inline link_bounds make_link_bounds(const matrix_topology& t) {
  const std::size_t D = t.num_devices();
  link_bounds f;
  struct link { double w; std::size_t a, b; };
  std::vector<link> links;
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b) {
      if (a == b) continue;
      f.bandwidth_gbps = std::max(f.bandwidth_gbps, t.bandwidth_gbps(a, b));
      f.latency_us = std::min(f.latency_us, t.latency_us(a, b));
      if (a < b) links.push_back({1.0 / (std::max(t.bandwidth_gbps(a, b), t.bandwidth_gbps(b, a)) * 1e6), a, b});
    }
  if (!std::isfinite(f.latency_us)) f.latency_us = 0;
  if (!(f.bandwidth_gbps > 0)) f.bandwidth_gbps = 1;  // one device: no transfer is ever made
  // Kruskal order: θ_R is the weight of the link that first makes a component of R devices.
  std::sort(links.begin(), links.end(), [](const link& x, const link& y) { return x.w < y.w; });
  std::vector<std::size_t> parent(D), size(D, 1);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto root = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  f.ring_ms_per_byte.assign(D + 1, 0.0);
  std::size_t largest = 1;
  for (const auto& l : links) {
    std::size_t a = root(l.a), b = root(l.b);
    if (a == b) continue;
    if (size[a] < size[b]) std::swap(a, b);
    parent[b] = a;
    size[a] += size[b];
    for (; largest < size[a]; ++largest) f.ring_ms_per_byte[largest + 1] = l.w;
  }
  return f;
}

/// After partitioning: the partition simulated with every p2p transfer on the fastest link, every
/// ring link at θ_R (the smallest latency everywhere) and links never waiting — no mapping's
/// simulated iteration is shorter (see the file comment).
inline double iteration_bound_of_partition(const op_graph& g, const std::vector<std::size_t>& stage_of, std::size_t S,
                                           std::size_t R, const link_bounds& f, simulation_options so) {
  const auto D = static_cast<Eigen::Index>(S * R);
  std::vector<std::vector<std::size_t>> rows(S, std::vector<std::size_t>(R));
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < R; ++r) rows[s][r] = s * R + r;
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(D, D, f.bandwidth_gbps);
  if (R >= 2 && f.ring_ms_per_byte[R] > 0)  // the devices of one stage: its ring
    for (std::size_t s = 0; s < S; ++s)
      bw.block(static_cast<Eigen::Index>(s * R), static_cast<Eigen::Index>(s * R), static_cast<Eigen::Index>(R),
               static_cast<Eigen::Index>(R))
          .setConstant(std::min(f.bandwidth_gbps, 1.0 / (f.ring_ms_per_byte[R] * 1e6)));
  so.serialize_links = false;
  return simulate_core(make_pipeline_model(g, stage_of, S, std::move(rows)), bw, Eigen::MatrixXd::Constant(D, D, f.latency_us), so)
      .iteration_ms;
}

/// A partition of one configuration, with its bound.
struct partition_option {
  std::vector<std::size_t> stage_of;
  std::string method;
  double bound_samples_per_s = 0;
};

/// The partitions the flow offers for (S, R): its reference and every alpha's, distinct.
inline std::vector<partition_option> partition_options_of(const parmesan_result& part) {
  std::vector<partition_option> options;
  auto offer = [&](const std::vector<std::size_t>& so, std::string method) {
    if (so.empty()) return;
    for (const auto& x : options)
      if (x.stage_of == so) return;
    options.push_back({so, std::move(method), 0});
  };
  if (part.from_reference) offer(part.stage_of, "topo-dp+refine");
  for (const auto& st : part.steps) {
    std::ostringstream name;
    name << "cluster+dp+refine (alpha " << st.alpha << ")";
    offer(st.stage_of, name.str());
  }
  return options;
}

/// Records the mapped and simulated option `opt` as the candidate's plan.
inline void record_option(plan_candidate& c, const op_graph& g, const matrix_topology& t, const partition_option& opt,
                          const parmesan_result& part, const partition_options& po, const mapping_result& mr,
                          const simulation_result& sim, const plan_search_options& o, const simulation_options& so) {
  const std::size_t S = c.stages, R = c.replicas;
  const auto e = evaluate_partition(g, opt.stage_of, S, po.cost);
  c.partition_ms = e.objective_ms;
  c.mapping_ms = mr.objective_ms;
  c.mapping_optimal = mr.optimal;
  c.cost = mr.cost;
  c.iteration_ms = sim.iteration_ms;
  c.samples_per_s = sim.samples_per_s;
  c.bubble_fraction = sim.bubble_fraction;
  plan& p = c.result;
  p.graph = g.name();
  p.topology = t.name();
  p.stages = S;
  p.replicas = R;
  p.micro_batches = o.micro_batches;
  p.settings = plan_settings{.micro_batch_size = so.micro_batch_size, .schedule = std::string(to_string(o.schedule)),
                             .recompute = o.recompute, .blocking_sends = so.blocking_sends,
                             .phase1_bandwidth_gbps = o.bandwidth_gbps, .cost = std::string(to_string(o.cost))};
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

/// Partition, map and simulate (S, R). `incumbent()` is the best simulated samples/s so far; with
/// `o.prune`, the configuration (or a partition option) whose bound is below it is skipped.
template <class Incumbent>
plan_candidate plan_one(const op_graph& g, const matrix_topology& t, std::size_t S, std::size_t R, const plan_search_options& o,
                        const link_bounds& fast, double bound_before, const Incumbent& incumbent) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  plan_candidate c;
  c.stages = S;
  c.replicas = R;
  c.bound_samples_per_s = bound_before;
  if (o.prune && bound_before < incumbent()) {
    c.outcome = config_outcome::pruned;
    c.reason = "pruned before partitioning";
    return c;
  }
  double memory = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < t.num_devices(); ++d) memory = std::min(memory, t.device_memory_bytes(d));
  const partition_options po{.stages = S, .cost = {.replicas = R, .micro_batches = o.micro_batches,
                                                   .device_memory_bytes = memory, .bandwidth_gbps = o.bandwidth_gbps}};
  const auto part = parmesan_partition(g, {.partition = po, .clusters = o.clusters, .threads = 1});
  if (!part.has_solution()) {
    c.reason = "no partition fits (" + std::string(to_string(part.status)) + ")";
    c.time_s = elapsed();
    return c;
  }
  // Alpha selection by simulation: every alpha's partition (and the flow's reference) is mapped
  // and simulated; the fastest simulated one is kept.
  auto options = partition_options_of(part);
  const simulation_options so = plan_simulation_options(g, o);
  c.bound_samples_per_s = 0;
  for (auto& opt : options) {
    opt.bound_samples_per_s = std::min(bound_before, samples_per_s_of(so, R, iteration_bound_of_partition(g, opt.stage_of, S, R, fast, so)));
    c.bound_samples_per_s = std::max(c.bound_samples_per_s, opt.bound_samples_per_s);
  }
  bool any = false;
  for (const auto& opt : options) {
    if (o.prune && opt.bound_samples_per_s < incumbent()) continue;
    const stage_graph sg = make_stage_graph(g, opt.stage_of, S, R);
    const auto mr = map_devices(sg, t, mapper_options{.cost = o.cost, .threads = 1, .timeout_s = o.map_timeout_s / double(options.size()),
                                                      .micro_batches = o.micro_batches});
    if (mr.device_of.empty()) continue;
    auto run = [&](const device_mapping& dev) {
      std::vector<std::vector<std::size_t>> rows(dev.begin(), dev.end());
      return simulate(make_pipeline_model(g, opt.stage_of, S, rows), t, so);
    };
    const auto sim = run(mr.device_of);
    if (any && sim.samples_per_s <= c.samples_per_s) continue;
    any = true;
    record_option(c, g, t, opt, part, po, mr, sim, o, so);
    c.cs_samples_per_s = run(cs_map(sg)).samples_per_s;
    c.p2p_samples_per_s = run(p2p_map(sg)).samples_per_s;
  }
  c.time_s = elapsed();
  if (!any) {
    const bool all_pruned = o.prune && !options.empty();
    c.outcome = all_pruned ? config_outcome::pruned : config_outcome::infeasible;
    c.reason = all_pruned ? "pruned after partitioning" : "no mapping";
    return c;
  }
  c.status = status::feasible;
  c.outcome = config_outcome::explored;
  return c;
}

/// Every (S, R) of the search, in the order of the exhaustive listing.
inline std::vector<std::pair<std::size_t, std::size_t>> plan_configurations(const op_graph& g, std::size_t D, bool exact_product) {
  std::vector<std::pair<std::size_t, std::size_t>> configs;
  for (std::size_t S = 1; S <= std::min(D, g.num_vertices()); ++S)
    for (std::size_t R = 1; S * R <= D; ++R)
      if (!exact_product || S * R == D) configs.emplace_back(S, R);
  return configs;
}

}  // namespace detail

/// Searches (S, R) for `g` on `t` (see the file comment). Throws std::invalid_argument on bad
/// options (no micro-batches, a non-positive bandwidth or micro-batch size).
[[nodiscard]] inline plan_search_result search_plan(const op_graph& g, const matrix_topology& t,
                                                    const plan_search_options& o = {}) {
  DEVPLACE_EXPECTS(o.micro_batches >= 1, "search_plan: micro_batches must be >= 1");
  DEVPLACE_EXPECTS(o.bandwidth_gbps > 0 && std::isfinite(o.bandwidth_gbps), "search_plan: bandwidth_gbps must be a finite number > 0");
  DEVPLACE_EXPECTS(o.micro_batch_size >= 0 && std::isfinite(o.micro_batch_size),
                   "search_plan: micro_batch_size must be a finite number >= 0");
  const auto start = std::chrono::steady_clock::now();
  plan_search_result res;
  const std::size_t D = o.devices ? std::min(o.devices, t.num_devices()) : t.num_devices();
  const auto configs = detail::plan_configurations(g, D, o.exact_product);
  res.candidates.resize(configs.size());
  // Best bound first (the listing order among equal bounds).
  const auto work = detail::make_work_bounds(g, o.recompute);
  const auto fast = detail::make_link_bounds(t);
  const auto so = detail::plan_simulation_options(g, o);
  std::vector<double> bound(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i)
    bound[i] = detail::samples_per_s_of(so, configs[i].second,
                                        detail::iteration_bound_before_partition(work, configs[i].first, o.micro_batches));
  std::vector<std::size_t> order(configs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (o.prune) std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bound[a] > bound[b]; });
  std::mutex mu;
  plan_search_progress progress{.total = configs.size()};
  auto incumbent = [&] {
    std::lock_guard lk(mu);
    return progress.best_samples_per_s;
  };
  parallel_for(order.size(), o.threads, [&](std::size_t k) {
    const std::size_t i = order[k];
    auto c = detail::plan_one(g, t, configs[i].first, configs[i].second, o, fast, bound[i], incumbent);
    std::lock_guard lk(mu);
    ++progress.done;
    if (c.outcome == config_outcome::explored) ++progress.explored;
    if (c.outcome == config_outcome::pruned) ++progress.pruned;
    if (c.status == status::feasible && c.samples_per_s > progress.best_samples_per_s)
      progress.best_samples_per_s = c.samples_per_s, progress.best_stages = c.stages, progress.best_replicas = c.replicas;
    progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    res.candidates[i] = std::move(c);
    if (o.progress) o.progress(progress);
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
