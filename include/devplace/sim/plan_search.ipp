#pragma once
/// \file sim/plan_search.ipp
/// The definition of `search_plan` on an `op_graph` and a `matrix_topology` (sim/plan_search.hpp)
/// and its steps: it runs the partition, the mapper under every cost model and the simulator, so it
/// is compiled where it is included and called (header-only mode: sim/plan_search.hpp does not
/// include it; devplace/sim.hpp does) or once in `devplace::core` (compiled mode; see config.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <string_view>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/config.hpp"
#include "devplace/executor.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/cluster/greedy_cluster.hpp"
#include "devplace/partition/general_dp.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/plan.hpp"
#include "devplace/sim/detail/plan_bounds.hpp"
#include "devplace/sim/iteration_mapping.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/polish.hpp"
#include "devplace/topology/matrix_topology.hpp"
#include "devplace/views/quotient.hpp"

#include "devplace/sim/plan_search.hpp"

namespace devplace {

namespace detail {

/// The phase-1 cost model of a search (partition/stage_cost.hpp) for R replicas per stage and
/// `device_memory_bytes` per device: MB and β̄ from the search's options.
template <int = 0>
stage_cost_options plan_stage_cost(const plan_search_options& o, std::size_t replicas, double device_memory_bytes) {
  return {.replicas = replicas, .micro_batches = o.micro_batches, .device_memory_bytes = device_memory_bytes,
          .bandwidth_gbps = o.bandwidth_gbps};
}

/// The simulation options of a search for v model chunks per device: an interleaved search runs
/// its v = 1 configurations as 1F1B (the interleaved schedule with one chunk is 1F1B exactly).
template <int = 0>
simulation_options plan_simulation_options(const op_graph& g, const plan_search_options& o, std::size_t v = 1) {
  const double mbs = o.micro_batch_size > 0 ? o.micro_batch_size : g.micro_batch_size() > 0 ? g.micro_batch_size() : 1.0;
  const pipeline_schedule s = o.schedule == pipeline_schedule::interleaved && v == 1 ? pipeline_schedule::one_f_one_b : o.schedule;
  return {.micro_batches = o.micro_batches, .micro_batch_size = mbs, .schedule = s, .recompute = o.recompute,
          .virtual_stages = v, .dp_bucket_bytes = o.dp_bucket_bytes};
}

/// The v the search tries per (S, R): 1, and with the interleaved schedule every entry of
/// `o.virtual_stages`, ascending, once each.
template <int = 0>
std::vector<std::size_t> plan_virtual_stages(const plan_search_options& o) {
  std::vector<std::size_t> vs{1};
  if (o.schedule == pipeline_schedule::interleaved) vs.insert(vs.end(), o.virtual_stages.begin(), o.virtual_stages.end());
  std::sort(vs.begin(), vs.end());
  vs.erase(std::unique(vs.begin(), vs.end()), vs.end());
  return vs;
}

/// The rows of an interleaved plan's S · v chunks from the S rows of its ranks: chunk c runs on
/// the devices of rank c mod S.
template <int = 0>
std::vector<std::vector<std::size_t>> interleaved_rows(const device_mapping& ranks, std::size_t v) {
  std::vector<std::vector<std::size_t>> rows;
  rows.reserve(ranks.size() * v);
  for (std::size_t c = 0; c < ranks.size() * v; ++c) rows.push_back(ranks[c % ranks.size()]);
  return rows;
}

/// A partition of one configuration, with its bound.
struct partition_option {
  std::vector<std::size_t> stage_of;
  std::vector<std::size_t> replicas;   ///< R_s per stage
  std::string method;
  double bound_samples_per_s = 0;
  bool optimal = false;                ///< proved optimal under its partitioning objective
  std::string status;                  ///< the partitioner's status
  double time_s = 0;                   ///< the partitioner's wall time
};

/// The partitions the flow offers for (S, R): its reference and every alpha's, distinct.
template <int = 0>
std::vector<partition_option> partition_options_of(const parmesan_result& part, std::size_t S, std::size_t R) {
  std::vector<partition_option> options;
  auto offer = [&](const std::vector<std::size_t>& so, std::string method) {
    if (so.empty()) return;
    for (const auto& x : options)
      if (x.stage_of == so) return;
    options.push_back({so, std::vector<std::size_t>(S, R), std::move(method), 0, false,
                       std::string(to_string(part.status)), part.time_s});
  };
  if (part.from_reference) offer(part.stage_of, "topo-dp+refine");
  for (const auto& st : part.steps) {
    std::ostringstream name;
    name << "cluster+dp+refine (alpha " << st.alpha << ")";
    offer(st.stage_of, name.str());
  }
  return options;
}

/// Records the mapped and simulated option `opt` as the candidate's plan (`rows`: a device row per
/// stage or chunk).
template <int = 0>
void record_option(plan_candidate& c, const op_graph& g, const matrix_topology& t, const partition_option& opt,
                          const stage_cost_options& cost, const mapping_result& mr,
                          const std::vector<std::vector<std::size_t>>& rows, const simulation_result& sim,
                          const plan_search_options& o, const simulation_options& so) {
  const std::size_t S = opt.replicas.size();  // S, or S · v chunks
  const std::size_t Rhat = *std::max_element(opt.replicas.begin(), opt.replicas.end());
  const bool uniform = std::all_of(opt.replicas.begin(), opt.replicas.end(), [&](std::size_t r) { return r == Rhat; });
  const auto e = evaluate_partition(g, opt.stage_of, opt.replicas, cost);
  c.replicas = Rhat;
  c.stage_replicas = opt.replicas;
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
  p.virtual_stages = so.virtual_stages;
  p.replicas = Rhat;
  p.stage_replicas = uniform ? std::vector<std::size_t>{} : opt.replicas;
  p.micro_batches = o.micro_batches;
  p.settings = plan_settings{.micro_batch_size = so.micro_batch_size, .schedule = std::string(to_string(so.schedule)),
                             .recompute = o.recompute, .blocking_sends = so.blocking_sends,
                             .phase1_bandwidth_gbps = o.bandwidth_gbps,
                             .cost = o.iteration_mapping ? std::string("iteration") : std::string(to_string(o.cost)),
                             .dp_bucket_bytes = o.dp_bucket_bytes};
  p.stage_of = opt.stage_of;
  p.device_of = rows;
  p.partition = partition_summary{.objective_ms = e.objective_ms, .stage_time_ms = e.stage_time_ms,
                                  .stage_memory_bytes = e.stage_memory_bytes, .method = opt.method,
                                  .optimal = opt.optimal, .status = opt.status, .time_s = opt.time_s};
  p.mapping = mapping_summary{.objective_ms = mr.objective_ms, .lower_bound_ms = mr.lower_bound_ms, .cost = mr.cost,
                              .method = so.virtual_stages > 1 ? "binary_search_backtracking (ranks)" : "binary_search_backtracking",
                              .optimal = mr.optimal,
                              .nodes_explored = mr.nodes_explored, .status = std::string(to_string(mr.status)),
                              .time_s = mr.time_s};
  p.simulation = simulation_summary{.schedule = std::string(to_string(so.schedule)), .iteration_ms = sim.iteration_ms,
                                    .samples_per_s = sim.samples_per_s, .bubble_fraction = sim.bubble_fraction};
}

/// A mapped partition option: the mapping, its device rows (per stage or chunk) and the rows of the
/// CS and p2p baseline maps of the same partition.
struct mapped_option {
  mapping_result mr;
  std::vector<std::vector<std::size_t>> rows, cs, p2p;
};

/// Maps an option of S stages (v = 1): `map_devices` under the search's cost model, or
/// `map_for_iteration` and the simulation polish of the fastest of it and the baselines.
template <int = 0>
mapped_option map_stages(const op_graph& g, const matrix_topology& t, const partition_option& opt,
                                const plan_search_options& o, const simulation_options& so, double limit_s) {
  const stage_graph sg = make_stage_graph(g, opt.stage_of, opt.replicas);
  const double polish_s = o.iteration_mapping ? limit_s * o.polish_share : 0.0;
  const mapper_options mo{.cost = o.cost, .threads = 1, .timeout_s = limit_s - polish_s, .micro_batches = o.micro_batches};
  mapped_option m;
  m.mr = o.iteration_mapping
             ? map_for_iteration(sg, link_costs(t), stage_forward_ms(g, opt.stage_of, opt.replicas.size()),
                                 {.micro_batches = o.micro_batches, .recompute = o.recompute, .blocking_sends = so.blocking_sends},
                                 mo)
             : map_devices(sg, t, mo);
  if (m.mr.device_of.empty()) return m;
  m.cs = cs_map(sg);
  m.p2p = p2p_map(sg);
  if (polish_s > 0) {  // the fastest simulated of the mapping, CS and p2p, polished on the simulation
    const std::vector<std::vector<std::vector<std::size_t>>> cands{m.mr.device_of, m.cs, m.p2p};
    const auto q = polish_fastest(make_pipeline_model(g, opt.stage_of, opt.replicas.size(), cands.front()), t,
                                  std::span<const std::vector<std::vector<std::size_t>>>(cands), so, {.timeout_s = polish_s});
    m.mr.device_of.assign(q.device_of.begin(), q.device_of.end());
    m.mr.objective_ms = q.iteration_ms;
    if (q.status == status::time_limit) m.mr.status = status::time_limit;
  }
  m.rows = m.mr.device_of;
  return m;
}

/// Maps an option of S · v chunks (v ≥ 2) as S pipeline ranks × R replicas: the stage graph
/// folded by rank (chunk c on rank c mod S) is mapped under the search's cost model (combined for
/// `iteration_mapping`), and each chunk gets its rank's row. With `iteration_mapping` the fastest
/// simulated of the mapping and the CS and p2p maps of the folded graph is kept (the polish moves
/// single stage replicas, which would break the rows' repetition).
template <int = 0>
mapped_option map_chunks(const op_graph& g, const matrix_topology& t, const partition_option& opt, std::size_t v,
                                const plan_search_options& o, const simulation_options& so, double limit_s) {
  const std::size_t S = opt.replicas.size() / v;
  std::vector<std::size_t> rank_of(opt.stage_of.size());
  for (std::size_t u = 0; u < rank_of.size(); ++u) rank_of[u] = opt.stage_of[u] % S;
  const stage_graph sg =
      make_stage_graph(g, rank_of, std::vector<std::size_t>(opt.replicas.begin(), opt.replicas.begin() + std::ptrdiff_t(S)));
  mapped_option m;
  m.mr = map_devices(sg, t, {.cost = o.iteration_mapping ? cost_choice::combined : o.cost, .threads = 1, .timeout_s = limit_s,
                             .micro_batches = o.micro_batches});
  if (m.mr.device_of.empty()) return m;
  m.rows = interleaved_rows(m.mr.device_of, v);
  m.cs = interleaved_rows(cs_map(sg), v);
  m.p2p = interleaved_rows(p2p_map(sg), v);
  if (o.iteration_mapping) {
    double best = std::numeric_limits<double>::infinity();
    for (const auto* rows : {&m.rows, &m.cs, &m.p2p}) {
      const double ms = simulate(make_pipeline_model(g, opt.stage_of, opt.replicas.size(), *rows), t, so).iteration_ms;
      if (ms < best) best = ms, m.mr.device_of.assign(rows->begin(), rows->begin() + std::ptrdiff_t(S));
    }
    m.mr.objective_ms = best;
    m.rows = interleaved_rows(m.mr.device_of, v);
  }
  return m;
}

/// Bounds, maps and simulates every partition option of a configuration (v chunks per device),
/// keeping the fastest simulated one in `c`; with `o.prune`, an option whose bound is below
/// `incumbent()` is skipped.
template <class Incumbent>
void explore_options(plan_candidate& c, const op_graph& g, const matrix_topology& t, std::vector<partition_option>& options,
                     const stage_cost_options& cost, const plan_search_options& o, const link_bounds& fast,
                     double bound_before, const Incumbent& incumbent, std::size_t v = 1) {
  const simulation_options so = plan_simulation_options(g, o, v);
  c.bound_samples_per_s = 0;
  for (auto& opt : options) {
    const std::size_t Rhat = *std::max_element(opt.replicas.begin(), opt.replicas.end());
    opt.bound_samples_per_s =
        std::min(bound_before, samples_per_s_of(so, Rhat, iteration_bound_of_partition(g, opt.stage_of, opt.replicas, fast, so)));
    c.bound_samples_per_s = std::max(c.bound_samples_per_s, opt.bound_samples_per_s);
  }
  bool any = false;
  std::size_t skipped = 0;  // options whose bound is below the incumbent
  for (const auto& opt : options) {
    if (o.prune && opt.bound_samples_per_s < incumbent()) {
      ++skipped;
      continue;
    }
    const double limit_s = o.map_timeout_s / double(options.size());
    const mapped_option m = v > 1 ? map_chunks(g, t, opt, v, o, so, limit_s) : map_stages(g, t, opt, o, so, limit_s);
    if (m.mr.device_of.empty()) continue;
    auto run = [&](const std::vector<std::vector<std::size_t>>& rows) {
      return simulate(make_pipeline_model(g, opt.stage_of, opt.replicas.size(), rows), t, so);
    };
    const auto sim = run(m.rows);
    if (any && sim.samples_per_s <= c.samples_per_s) continue;
    any = true;
    record_option(c, g, t, opt, cost, m.mr, m.rows, sim, o, so);
    c.cs_samples_per_s = run(m.cs).samples_per_s;
    c.p2p_samples_per_s = run(m.p2p).samples_per_s;
  }
  if (!any) {
    // Some option skipped by its bound: the configuration may be feasible, it cannot win.
    const bool pruned = skipped > 0;
    c.status = pruned ? status::pruned : status::infeasible;
    c.outcome = pruned ? config_outcome::pruned : config_outcome::infeasible;
    c.reason = pruned ? "pruned after partitioning" : "no mapping";
    return;
  }
  c.status = status::feasible;
  c.outcome = config_outcome::explored;
}

/// The smallest device memory of the topology.
template <int = 0>
double smallest_memory(const matrix_topology& t) {
  double memory = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < t.num_devices(); ++d) memory = std::min(memory, t.device_memory_bytes(d));
  return memory;
}

/// Partition, map and simulate (S, R) with v chunks per device (the graph cut into S · v chunks,
/// each device's share of the memory 1 / v per chunk). `incumbent()` is the best simulated
/// samples/s so far; with `o.prune`, the configuration (or a partition option) whose bound is
/// below it is skipped.
template <class Incumbent>
plan_candidate plan_one(const op_graph& g, const matrix_topology& t, std::size_t S, std::size_t R, std::size_t v,
                        const plan_search_options& o, const link_bounds& fast, double bound_before, const Incumbent& incumbent) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  plan_candidate c;
  c.stages = S;
  c.replicas = R;
  c.virtual_stages = v;
  c.devices = S * R;
  c.bound_samples_per_s = bound_before;
  if (v > 1 && o.micro_batches % S != 0) {
    c.reason = "MB = " + std::to_string(o.micro_batches) + " is not a multiple of S (the interleaved schedule runs groups of S)";
    return c;
  }
  if (o.prune && bound_before < incumbent()) {
    c.status = status::pruned;
    c.outcome = config_outcome::pruned;
    c.reason = "pruned before partitioning";
    return c;
  }
  const partition_options po{.stages = S * v, .cost = plan_stage_cost(o, R, smallest_memory(t) / double(v))};
  const auto part = parmesan_partition(g, {.partition = po, .clusters = o.clusters, .threads = 1});
  if (!part.has_solution()) {
    c.reason = "no partition fits (" + std::string(to_string(part.status)) + ")";
    c.time_s = elapsed();
    return c;
  }
  // Alpha selection by simulation: every alpha's partition (and the flow's reference) is mapped
  // and simulated; the fastest simulated one is kept.
  auto options = partition_options_of(part, S * v, R);
  explore_options(c, g, t, options, po.cost, o, fast, bound_before, incumbent, v);
  c.replicas = R;
  c.time_s = elapsed();
  return c;
}

/// The graphs the general DP runs on when the graph has more than K operators: the quotient of
/// each α's clustering (clustering reads no replica count, so one per α serves every S).
struct general_graphs {
  bool direct = false;             ///< at most K operators: the DP runs on the graph itself
  std::vector<double> alpha;
  std::vector<std::vector<std::size_t>> cluster_of;
  std::vector<op_graph> quotient;
  std::string skipped;             ///< graphs left out for their down-set count
};

template <int = 0>
general_graphs make_general_graphs(const op_graph& g, const plan_search_options& o, double memory) {
  general_graphs q;
  if (!o.general) return q;
  auto small = [&](const op_graph& x, const std::string& what) {
    const auto n = count_downsets(x, {.max_downsets = o.general_max_downsets + 1, .max_memory_bytes = 1u << 30});
    if (n.status == status::optimal && n.count <= o.general_max_downsets) return true;
    q.skipped += (q.skipped.empty() ? "" : ", ") + what;
    return false;
  };
  const std::string over = ": over " + std::to_string(o.general_max_downsets) + " down-sets";
  if (g.num_vertices() <= o.clusters) {
    q.direct = small(g, "the graph");
    if (!q.direct) q.skipped += over;
    return q;
  }
  const parmesan_options defaults;
  for (double a : defaults.alphas) {
    const clustering c = greedy_cluster(g, {.max_clusters = o.clusters, .alpha = a,
                                            .cost = plan_stage_cost(o, 1, memory)});
    op_graph x = to_op_graph(views::quotient(g, c.cluster_of));
    std::ostringstream name;
    name << "alpha " << a;
    if (!small(x, name.str())) continue;
    q.alpha.push_back(a);
    q.quotient.push_back(std::move(x));
    q.cluster_of.push_back(c.cluster_of);
  }
  if (!q.skipped.empty()) q.skipped += over;
  return q;
}

/// Partition (general DP, J(2)), map and simulate S stages over D devices with per-stage counts.
template <class Incumbent>
plan_candidate plan_one_general(const op_graph& g, const matrix_topology& t, std::size_t S, std::size_t D,
                                const plan_search_options& o, const general_graphs& q, const link_bounds& fast,
                                double bound_before, const Incumbent& incumbent) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  plan_candidate c;
  c.stages = S;
  c.replicas = 0;
  c.general = true;
  c.devices = D;
  c.bound_samples_per_s = bound_before;
  if (o.prune && bound_before < incumbent()) {
    c.status = status::pruned;
    c.outcome = config_outcome::pruned;
    c.reason = "pruned before partitioning";
    return c;
  }
  const stage_cost_options cost = plan_stage_cost(o, 1, smallest_memory(t));
  std::vector<partition_option> options;
  std::string why;
  auto offer = [&](const general_partition_result& r, std::vector<std::size_t> stage_of, std::string method) {
    if (!r.has_solution()) {
      why = std::string(to_string(r.status));
      return;
    }
    for (const auto& x : options)
      if (x.stage_of == stage_of && x.replicas == r.replicas) return;
    options.push_back({std::move(stage_of), r.replicas, std::move(method), 0, r.status == status::optimal,
                       std::string(to_string(r.status)), r.time_s});
  };
  if (q.direct) {  // at most K operators: the DP on the graph itself
    const auto r = general_dp(g, {.stages = S, .devices = D, .cost = cost});
    offer(r, r.stage_of, "general-dp");
  } else {
    for (std::size_t k = 0; k < q.quotient.size(); ++k) {
      if (q.quotient[k].num_vertices() < S) continue;
      const auto r = general_dp(q.quotient[k], {.stages = S, .devices = D, .cost = cost});
      std::vector<std::size_t> stage_of;
      if (r.has_solution()) {
        stage_of.resize(g.num_vertices());
        for (std::size_t v = 0; v < g.num_vertices(); ++v) stage_of[v] = r.stage_of[q.cluster_of[k][v]];
      }
      std::ostringstream name;
      name << "cluster+general-dp (alpha " << q.alpha[k] << ")";
      offer(r, std::move(stage_of), name.str());
    }
  }
  if (options.empty()) {
    c.reason = !q.direct && q.quotient.empty() ? "general DP skipped (" + q.skipped + ")"
                                               : "no general partition fits (" + (why.empty() ? std::string("infeasible") : why) + ")";
    c.time_s = elapsed();
    return c;
  }
  explore_options(c, g, t, options, cost, o, fast, bound_before, incumbent);
  c.time_s = elapsed();
  return c;
}

/// A configuration of the search: S stages with R replicas each, or (general) S stages over D devices.
struct plan_configuration {
  std::size_t stages = 0, replicas = 0;
  bool general = false;
  std::size_t devices = 0;
  std::size_t virtual_stages = 1;  ///< v: chunks per device (interleaved)
};

/// Every configuration of the search, in the order of the exhaustive listing: every (S, R) with
/// every v of `virtual_stages` (v = 1, and v ≥ 2 where S ≥ 2 and S · v chunks fit the operators),
/// then with `general` every S with 2 ≤ S < D over all D devices (S = 1 and S = D are
/// equal-count ones).
template <int = 0>
std::vector<plan_configuration> plan_configurations(const op_graph& g, std::size_t D, bool exact_product,
                                                           bool general = false,
                                                           const std::vector<std::size_t>& virtual_stages = {1}) {
  std::vector<plan_configuration> configs;
  for (std::size_t S = 1; S <= std::min(D, g.num_vertices()); ++S)
    for (std::size_t R = 1; S * R <= D; ++R)
      if (!exact_product || S * R == D)
        for (std::size_t v : virtual_stages)
          if (v == 1 || (S >= 2 && S * v <= g.num_vertices())) configs.push_back({S, R, false, S * R, v});
  if (general)
    for (std::size_t S = 2; S < D && S <= g.num_vertices(); ++S) configs.push_back({S, 0, true, D});
  return configs;
}

}  // namespace detail

/// Searches (S, R) — and v with the interleaved schedule — for `g` on `t` (see the file comment).
/// Throws std::invalid_argument on bad options (no micro-batches, a non-positive bandwidth or
/// micro-batch size, a negative bucket, a virtual_stages entry of 0). The body of `search_plan`
/// (sim/plan_search.hpp declares this type and calls `run`).
template <int>
struct detail::search_plan_defined_in_sim_plan_search_ipp {
  static plan_search_result run(const op_graph& g, const matrix_topology& t, const plan_search_options& o) {
    DEVPLACE_EXPECTS(o.micro_batches >= 1, "search_plan: micro_batches must be >= 1");
    DEVPLACE_EXPECTS(o.bandwidth_gbps > 0 && std::isfinite(o.bandwidth_gbps), "search_plan: bandwidth_gbps must be a finite number > 0");
    DEVPLACE_EXPECTS(o.micro_batch_size >= 0 && std::isfinite(o.micro_batch_size),
                     "search_plan: micro_batch_size must be a finite number >= 0");
    DEVPLACE_EXPECTS(o.polish_share >= 0 && o.polish_share <= 1, "search_plan: polish_share must be in [0, 1]");
    DEVPLACE_EXPECTS(o.dp_bucket_bytes >= 0 && std::isfinite(o.dp_bucket_bytes),
                     "search_plan: dp_bucket_bytes must be a finite number >= 0");
    DEVPLACE_EXPECTS(std::find(o.virtual_stages.begin(), o.virtual_stages.end(), std::size_t{0}) == o.virtual_stages.end(),
                     "search_plan: virtual_stages entries must be >= 1");
    const auto start = std::chrono::steady_clock::now();
    plan_search_result res;
    const std::size_t D = o.devices ? std::min(o.devices, t.num_devices()) : t.num_devices();
    const auto configs = detail::plan_configurations(g, D, o.exact_product, o.general, detail::plan_virtual_stages(o));
    res.candidates.resize(configs.size());
    // Best bound first (the listing order among equal bounds). The bound before partitioning holds
    // for every v: the S devices of a replica still do MB · W of work and micro-batch 0 still runs
    // the heaviest path.
    const auto work = detail::make_work_bounds(g, o.recompute);
    const auto fast = detail::make_link_bounds(t);
    const auto so = detail::plan_simulation_options(g, o);
    const auto general_graphs = detail::make_general_graphs(g, o, detail::smallest_memory(t));
    std::vector<double> bound(configs.size());
    for (std::size_t i = 0; i < configs.size(); ++i)
      bound[i] = configs[i].general
                     ? detail::samples_bound_of_general(work, so, configs[i].stages, configs[i].devices)
                     : detail::samples_per_s_of(so, configs[i].replicas,
                                                detail::iteration_bound_before_partition(work, configs[i].stages, o.micro_batches));
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
      const auto& cf = configs[i];
      auto c = cf.general ? detail::plan_one_general(g, t, cf.stages, cf.devices, o, general_graphs, fast, bound[i], incumbent)
                          : detail::plan_one(g, t, cf.stages, cf.replicas, cf.virtual_stages, o, fast, bound[i], incumbent);
      std::lock_guard lk(mu);
      ++progress.done;
      if (c.outcome == config_outcome::explored) ++progress.explored;
      if (c.outcome == config_outcome::pruned) ++progress.pruned;
      if (c.status == status::feasible && c.samples_per_s > progress.best_samples_per_s)
        progress.best_samples_per_s = c.samples_per_s, progress.best_stages = c.stages, progress.best_replicas = c.replicas,
        progress.best_virtual_stages = c.virtual_stages;
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
};

}  // namespace devplace
