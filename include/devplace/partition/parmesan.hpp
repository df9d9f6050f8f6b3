#pragma once
/// \file partition/parmesan.hpp
/// Parmesan's operator-level partitioning flow (seed-parmesan.md §5–§6): for each α,
///   1. cluster the operators into at most K hyper-operators (cluster/greedy_cluster.hpp),
///   2. run the exact DP on the quotient graph (partition/pipeline_dp.hpp),
///   3. map the stages back to the operators and refine them (refine/boundary_refine.hpp),
/// and keep the α whose refined partition has the smallest objective (max stage time, eq. 3).
/// The α values run in parallel threads. Every step's objective and time is reported. The flow
/// also refines the fixed-order split of the unclustered graph (its reference, below) and
/// returns that instead when it beats every α, so it is never worse than the fixed-order DP.
///
/// The result is `feasible`, not `optimal`: clustering restricts the DP to unions of clusters.
/// (The DP step is optimal for the clustered graph; `steps[k].dp_status` says so.)
///
/// The DP of each α is bounded by the objective of the fixed-order split of the unclustered
/// graph (partition/topo_dp.hpp, exact, near-linear in practice): a clustering whose best partition cannot beat it is
/// settled at once instead of being proved optimal, and its clustered fixed-order split is
/// refined instead. This keeps pathological clusterings (one huge cluster) cheap.
#include <chrono>
#include <cstddef>
#include <limits>
#include <vector>

#include "devplace/algorithm/reconverging.hpp"
#include "devplace/cluster/greedy_cluster.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/executor.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/result.hpp"
#include "devplace/refine/boundary_refine.hpp"
#include "devplace/views/quotient.hpp"

namespace devplace {

struct parmesan_options {
  partition_options partition;                      ///< S, R, MB, memory, bandwidth, down-set cap
  std::size_t clusters = 32;                        ///< K
  std::vector<double> alphas{0.01, 1.0, 100.0};     ///< α values tried
  bool refine = true;                               ///< run the refinement step
  refine_policy policy = refine_policy::paper;      ///< gains used by refinement
  std::size_t max_moves = 100;                      ///< I
  unsigned threads = 0;                             ///< 0: one per α, at most hardware concurrency
};

/// What one α gave.
struct parmesan_step {
  double alpha = 0;
  std::size_t clusters = 0;                 ///< hyper-operators after clustering
  double cluster_time_s = 0;
  /// `optimal`: the DP's partition is optimal for the clustered graph; `infeasible`: no clustered
  /// partition beats the unclustered fixed-order split, and the clustered fixed-order split was used.
  devplace::status dp_status = status::infeasible;
  double dp_objective_ms = 0;               ///< objective of cluster + DP (atomic operators, eq. 3)
  double dp_time_s = 0;
  double objective_ms = 0;                  ///< after refinement (= dp_objective_ms without it)
  double refine_time_s = 0;
  std::size_t moves = 0;
  std::vector<std::size_t> stage_of;
};

struct parmesan_result : partition_result {
  std::vector<parmesan_step> steps;         ///< one per α, in the order given
  std::size_t best_step = 0;                ///< index into `steps` of the partition returned
  /// The unclustered fixed-order split, refined: the flow's reference. When it beats every α,
  /// it is what the flow returns (`from_reference`).
  double reference_objective_ms = 0;
  bool from_reference = false;
};

namespace detail {

inline parmesan_step parmesan_one(const op_graph& g, const parmesan_options& opt, double alpha,
                                  const std::vector<std::size_t>& delta, double bound) {
  using clock = std::chrono::steady_clock;
  auto secs = [](clock::time_point a) { return std::chrono::duration<double>(clock::now() - a).count(); };
  parmesan_step st;
  st.alpha = alpha;
  const auto& po = opt.partition;
  auto t0 = clock::now();
  const clustering c = greedy_cluster(g, {.max_clusters = std::max(opt.clusters, po.stages), .alpha = alpha, .cost = po.cost});
  st.clusters = c.num_clusters;
  st.cluster_time_s = secs(t0);
  t0 = clock::now();
  const op_graph q = to_op_graph(views::quotient(g, c.cluster_of));
  partition_options bounded = po;
  bounded.upper_bound_ms = std::min(po.upper_bound_ms, bound);
  // A quotient of about K clusters needs few visits; one left with many independent clusters
  // (clustering stopped early, e.g. at the memory limit) has astronomically many down-sets and
  // would walk the whole visit budget per pass: there, the clustered fixed-order split is used.
  bounded.max_visits = std::min(po.max_visits, std::max<std::uint64_t>(po.max_downsets, 1));
  partition_result dp = pipeline_dp(q, bounded);
  st.dp_status = dp.status;
  if (dp.status == status::infeasible && bound < po.upper_bound_ms) {
    // No partition of the clustered graph beats the unclustered fixed-order split: take the
    // clustered fixed-order split as this alpha's starting point (refinement may still help).
    dp = topo_dp(q, po);
  }
  st.dp_time_s = secs(t0);
  if (!dp.has_solution()) return st;
  std::vector<std::size_t> stage_of(g.num_vertices());
  for (std::size_t v = 0; v < g.num_vertices(); ++v) stage_of[v] = dp.stage_of[c.cluster_of[v]];
  st.dp_objective_ms = evaluate_partition(g, stage_of, po.stages, po.cost).objective_ms;
  st.objective_ms = st.dp_objective_ms;
  st.stage_of = std::move(stage_of);
  if (opt.refine) {
    t0 = clock::now();
    const auto r = boundary_refine(g, st.stage_of,
                                   {.stages = po.stages, .cost = po.cost, .max_moves = opt.max_moves, .policy = opt.policy},
                                   delta);
    st.refine_time_s = secs(t0);
    st.moves = r.moves;
    if (r.status == status::feasible) {
      st.objective_ms = r.objective_ms;
      st.stage_of = r.stage_of;
    }
  }
  return st;
}

inline parmesan_result parmesan_core(const op_graph& g, const parmesan_options& opt) {
  const auto start = std::chrono::steady_clock::now();
  parmesan_result res;
  // The fixed-order split of the unclustered graph bounds every alpha's DP: a clustered
  // partition that cannot beat it is not worth proving optimal.
  const partition_result reference = topo_dp(g, opt.partition);
  const double bound = reference.status == status::feasible ? reference.objective_ms
                                                            : std::numeric_limits<double>::infinity();
  std::vector<std::size_t> delta = distance_to_reconverging(g);
  for (auto& d : delta) d = std::min(d, g.num_vertices());  // no reconverging vertex reachable
  const std::size_t k = opt.alphas.size();
  res.steps.resize(k);
  parallel_for(k, opt.threads, [&](std::size_t i) { res.steps[i] = parmesan_one(g, opt, opt.alphas[i], delta, bound); });
  // The reference: the unclustered fixed-order split, refined like the others.
  std::vector<std::size_t> ref_stage_of;
  if (reference.status == status::feasible) {
    ref_stage_of = reference.stage_of;
    res.reference_objective_ms = reference.objective_ms;
    if (opt.refine) {
      const auto& po = opt.partition;
      const auto rr = boundary_refine(g, ref_stage_of,
                                      {.stages = po.stages, .cost = po.cost, .max_moves = opt.max_moves, .policy = opt.policy},
                                      delta);
      if (rr.status == status::feasible) {
        ref_stage_of = rr.stage_of;
        res.reference_objective_ms = rr.objective_ms;
      }
    }
  }
  bool found = false;
  bool capped = false;
  for (std::size_t i = 0; i < k; ++i) {
    const auto& st = res.steps[i];
    capped = capped || st.dp_status == status::work_limit;
    if (st.stage_of.empty()) continue;
    if (!found || st.objective_ms < res.steps[res.best_step].objective_ms) {
      found = true;
      res.best_step = i;
    }
  }
  if (!ref_stage_of.empty() && (!found || res.reference_objective_ms < res.steps[res.best_step].objective_ms)) {
    res.status = status::feasible;
    res.from_reference = true;
    res.stage_of = ref_stage_of;
    finish_partition(g, opt.partition, res);
  } else if (found) {
    res.status = status::feasible;
    res.stage_of = res.steps[res.best_step].stage_of;
    finish_partition(g, opt.partition, res);
  } else {
    res.status = capped ? status::work_limit : status::infeasible;
  }
  res.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

}  // namespace detail

/// The Parmesan flow over any `profiled_dag` (copied once into an `op_graph`).
template <profiled_dag G>
[[nodiscard]] parmesan_result parmesan_partition(const G& g, const parmesan_options& opt) {
  check_cost_options(opt.partition.cost, "parmesan_partition");
  if (opt.alphas.empty()) throw std::invalid_argument("parmesan_partition: alphas must not be empty");
  if constexpr (std::is_same_v<G, op_graph>)
    return detail::parmesan_core(g, opt);
  else
    return detail::parmesan_core(to_op_graph(g), opt);
}

}  // namespace devplace
