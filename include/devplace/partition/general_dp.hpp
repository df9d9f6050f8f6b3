#pragma once
/// \file partition/general_dp.hpp
/// Parmesan's general DP (eq. 2, seed-parmesan.md §4.1): split any profiled DAG into exactly S
/// non-empty convex stages, ordered so that no edge runs backwards, and give stage s its own
/// replica count r_s ≥ 1 with Σ_s r_s = D, minimising the largest stage time t(X_s, r_s) of eq. 3
/// (partition/stage_cost.hpp, the one stage-cost definition), every stage within its budget
/// m(X_s) ≤ r_s · device memory (eq. 14):
///
///   T_s(F, d) = min_{F' ⊊ F down-sets} min_{d' = s−1}^{d−1} max( T_{s−1}(F', d'), t(F ∖ F', d − d') ),
///   T_0(∅, 0) = 0 (every other T_0 = +∞: exactly S non-empty stages), answer T_S(V, D).
///
/// Every device is used (Σ r_s = D). This loses nothing against Σ r_s ≤ D: t(X, r) and the memory
/// test only improve with r, so a spare device can always join the last stage.
///
/// How it is computed: as `pipeline_dp` (partition/pipeline_dp.hpp), forward layer by layer over
/// the down-sets reachable from the previous layer's, the stage X = F ∖ F' costed incrementally as
/// the enumeration adds vertices; each (F', F) pair is then relaxed for every device count d' of F'
/// and every replica count r of X. An upper bound U prunes: a stage is admitted only if some
/// r ≤ D − (S − 1) brings it to ≤ U, so a branch whose compute Σ c_u(X) / (D − S + 1) exceeds U is
/// cut (D − d' − (S − s) once F' holds d' devices), and with d devices used a down-set whose remaining compute exceeds U on the D − d devices
/// left is not kept. U is the caller's `upper_bound_ms`, tightened, when S divides D, by the
/// fixed-R optimum of eq. 13 at R = D / S (`pipeline_dp`; a feasible vector of counts).
///
/// Complexity: O(P · (n/64 + d̄ + D²)) for the P (down-set pair) visits under the bound, memory
/// O(N · (n/64 + S·D)) for the N down-sets created; `max_downsets` and `max_visits` cap them
/// (status `work_limit`, with the fixed-R solution attached when there is one).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/result.hpp"
#include "devplace/partition/stage_cost.hpp"

namespace devplace {

struct general_partition_options {
  std::size_t stages = 1;   ///< S: exactly S non-empty stages
  std::size_t devices = 1;  ///< D = Σ_s r_s (D ≥ S)
  /// MB, device memory, β̄ of the stage cost model; `cost.replicas` is not read (each stage has its own).
  stage_cost_options cost;
  std::uint64_t max_downsets = 2'000'000;   ///< cap on the down-sets created
  std::uint64_t max_visits = 50'000'000;    ///< cap on the down-set visits
  /// Seek only solutions with objective ≤ this; none under it: `infeasible`.
  double upper_bound_ms = std::numeric_limits<double>::infinity();
};

struct general_partition_result {
  devplace::status status = status::infeasible;  ///< optimal / infeasible / work_limit (fixed-R solution attached, if any)
  std::vector<std::size_t> stage_of;             ///< stage of every operator (empty without a solution)
  std::vector<std::size_t> replicas;             ///< r_s per stage, Σ = D (empty without a solution)
  double objective_ms = 0;                       ///< max_s t(X_s, r_s)
  std::vector<double> stage_time_ms;
  std::vector<double> stage_memory_bytes;
  std::uint64_t downsets = 0;                    ///< down-sets created
  double time_s = 0;                             ///< wall time

  [[nodiscard]] bool has_solution() const noexcept { return !stage_of.empty(); }
};

namespace detail {

inline general_partition_result general_dp_core(const op_graph& g, const general_partition_options& o) {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](general_partition_result& r) {
    r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  general_partition_result r;
  const std::size_t n = g.num_vertices(), S = o.stages, D = o.devices;
  if (S > n) return finish(r);  // infeasible: S non-empty stages need S operators
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr double slack = 1 + 1e-9;  // admits values equal up to rounding
  const double mb = static_cast<double>(o.cost.micro_batches);
  auto cost_at = [&](std::size_t reps) {
    stage_cost_options c = o.cost;
    c.replicas = reps;
    return c;
  };

  // The bound U: the caller's, or the fixed-R optimum when S divides D.
  double U = o.upper_bound_ms;
  general_partition_result fixed;
  if (D % S == 0) {
    partition_options po{.stages = S, .cost = cost_at(D / S), .max_downsets = o.max_downsets,
                         .max_visits = o.max_visits, .upper_bound_ms = o.upper_bound_ms};
    const auto p = pipeline_dp(g, po);
    if (p.has_solution() && p.objective_ms <= o.upper_bound_ms) {
      fixed.stage_of = p.stage_of;
      fixed.replicas.assign(S, D / S);
      fixed.objective_ms = p.objective_ms;
      fixed.stage_time_ms = p.stage_time_ms;
      fixed.stage_memory_bytes = p.stage_memory_bytes;
      if (p.status == status::optimal) U = std::min(U, p.objective_ms);
    }
  }
  const double Ucut = std::isfinite(U) ? U * slack + 1e-12 : inf;

  const downset_enumerator e(g);
  const positioned_costs pc(g, e);
  // Plain references, not a structured binding: C++20 compilers before clang 16 cannot capture
  // structured bindings in lambdas.
  const auto& compute = pc.compute;
  const auto& internal = pc.internal;
  const auto& succ = pc.succ;
  const auto& pred = pc.pred;
  const double total_compute = pc.total_compute, total_internal = pc.total_internal;

  struct state {
    double c, mem, out;
    std::size_t count;
  };
  std::vector<dynamic_bitset> sets{e.empty_set()};
  std::vector<state> props{{0, 0, 0, 0}};
  std::unordered_map<dynamic_bitset, std::uint32_t, dynamic_bitset_hash> index;
  index.emplace(sets[0], 0);

  const std::size_t W = D + 1;  // T rows: devices used 0..D
  struct link {
    std::uint32_t from;
    std::uint32_t devices;
  };
  // T[layer][id·W + d], parent likewise; layer 0 is ∅ with 0 devices.
  std::vector<std::vector<double>> T(S);
  std::vector<std::vector<link>> parent(S);
  T[0].assign(W, inf);
  T[0][0] = 0;
  std::vector<std::uint32_t> frontier{0};
  bool capped = false;
  std::uint64_t visits = 0;
  std::vector<double> t_of(W), value_of(W);

  for (std::size_t layer = 1; layer < S && !capped; ++layer) {
    std::vector<double>& Tl = T[layer];
    std::vector<link>& Pl = parent[layer];
    const std::vector<double>& Tp = T[layer - 1];
    std::vector<std::uint32_t> next_frontier;
    const std::size_t d_hi = D - (S - layer);  // devices used after this layer, at most
    for (std::uint32_t fid : frontier) {
      const dynamic_bitset base = sets[fid];  // copy: `sets` may grow during the enumeration
      const state bp = props[fid];
      std::size_t dlo = W, dhi = 0;  // device counts of F' with a finite T
      for (std::size_t d = 0; d < W; ++d)
        if (Tp[fid * W + d] < inf) dlo = std::min(dlo, d), dhi = d;
      if (dlo == W) continue;
      // The widest this stage can be: the devices F' leaves at best, less one per later stage.
      const double wide = static_cast<double>(D - dlo - (S - layer));
      const double wide_budget = wide * o.cost.device_memory_bytes;
      stage_accumulator acc0{&compute, &internal, &succ, &pred, &base};
      const dynamic_bitset blocked = pc.blocked(base, bp.c, bp.mem, wide, Ucut, mb, wide_budget);
      (void)e.for_each_superset(base, blocked, acc0, [&](const dynamic_bitset& f, const stage_accumulator& a) {
        if (++visits > o.max_visits) {
          capped = true;
          return downset_action::stop;
        }
        if (a.c / wide > Ucut || a.mem / mb > wide_budget) return downset_action::prune;
        if (bp.count + a.count == n) return downset_action::proceed;  // later stages would be empty
        const double rest = total_compute - bp.c - a.c;
        std::uint32_t id = std::numeric_limits<std::uint32_t>::max();
        for (std::size_t dp = dlo; dp <= dhi; ++dp) {
          const double before = Tp[fid * W + dp];
          if (before == inf) continue;
          for (std::size_t d = dp + 1; d <= d_hi; ++d) {
            const auto c = cost_at(d - dp);
            const double t = stage_time_ms(a.c, a.cut, c);
            if (t > Ucut || !stage_fits(stage_memory_bytes(a.mem, a.cut, c), c)) continue;
            if (rest / static_cast<double>(D - d) > Ucut) break;  // fewer devices left: worse still
            const double value = std::max(before, t);
            if (id == std::numeric_limits<std::uint32_t>::max()) {
              auto [it, inserted] = index.try_emplace(f, static_cast<std::uint32_t>(sets.size()));
              if (inserted) {
                if (sets.size() >= o.max_downsets) {
                  capped = true;
                  return downset_action::stop;
                }
                sets.push_back(f);
                props.push_back({bp.c + a.c, bp.mem + a.mem, bp.out + a.out, bp.count + a.count});
              }
              id = it->second;
              if (Tl.size() < sets.size() * W) {
                Tl.resize(sets.size() * W, inf);
                Pl.resize(sets.size() * W, link{0, 0});
              }
            }
            double& slot = Tl[id * W + d];
            if (value < slot) {
              bool fresh = true;
              for (std::size_t k = 0; k < W && fresh; ++k) fresh = Tl[id * W + k] == inf;
              if (fresh) next_frontier.push_back(id);
              slot = value;
              Pl[id * W + d] = {fid, static_cast<std::uint32_t>(dp)};
            }
          }
        }
        return downset_action::proceed;
      });
      if (capped) break;
    }
    if (Tl.size() < sets.size() * W) {
      Tl.resize(sets.size() * W, inf);
      Pl.resize(sets.size() * W, link{0, 0});
    }
    std::sort(next_frontier.begin(), next_frontier.end());
    frontier = std::move(next_frontier);
  }
  r.downsets = sets.size();
  if (capped) {
    if (fixed.has_solution()) {
      fixed.downsets = r.downsets;
      r = fixed;
    }
    r.status = status::work_limit;
    return finish(r);
  }

  // Last stage: X = V ∖ F' with the D − d' devices left.
  const std::vector<double>& Tp = T[S - 1];
  double best = inf;
  std::uint32_t best_id = 0, best_d = 0;
  for (std::uint32_t fid : frontier) {
    const state& bp = props[fid];
    if (bp.count == n) continue;
    const double c = total_compute - bp.c, cut = bp.out;
    for (std::size_t dp = S - 1; dp < D; ++dp) {
      const double before = Tp[fid * W + dp];
      if (before == inf) continue;
      const auto cs = cost_at(D - dp);
      const double t = stage_time_ms(c, cut, cs);
      if (t > Ucut || !stage_fits(stage_memory_bytes(total_internal - bp.mem, cut, cs), cs)) continue;
      const double value = std::max(before, t);
      if (value < best) best = value, best_id = fid, best_d = static_cast<std::uint32_t>(dp);
    }
  }
  if (best == inf) {
    r.status = status::infeasible;
    return finish(r);
  }
  r.stage_of.assign(n, S - 1);
  r.replicas.assign(S, 0);
  r.replicas[S - 1] = D - best_d;
  std::uint32_t id = best_id, d = best_d;
  for (std::size_t layer = S - 1; layer >= 1; --layer) {
    const link l = parent[layer][id * W + d];
    dynamic_bitset stage = sets[id];
    stage.subtract(sets[l.from]);
    stage.for_each([&](std::size_t p) { r.stage_of[e.vertex_at(p)] = layer - 1; });
    r.replicas[layer - 1] = d - l.devices;
    id = l.from;
    d = l.devices;
  }
  const auto ev = evaluate_partition(g, r.stage_of, r.replicas, o.cost);
  r.objective_ms = ev.objective_ms;
  r.stage_time_ms = ev.stage_time_ms;
  r.stage_memory_bytes = ev.stage_memory_bytes;
  r.status = status::optimal;
  return finish(r);
}

}  // namespace detail

/// The general DP partitioner (eq. 2) over any `profiled_dag` (copied once into an `op_graph`).
/// Checks S ≥ 1, D ≥ S and the cost options (std::invalid_argument / precondition failure).
template <profiled_dag G>
[[nodiscard]] general_partition_result general_dp(const G& g, const general_partition_options& o) {
  DEVPLACE_EXPECTS(o.stages >= 1, "general_dp: at least one stage is needed");
  DEVPLACE_EXPECTS(o.devices >= o.stages, "general_dp: every stage needs a device (D >= S)");
  stage_cost_options c = o.cost;
  c.replicas = 1;  // not read
  check_cost_options(c, "general_dp");
  if constexpr (std::is_same_v<G, op_graph>)
    return detail::general_dp_core(g, o);
  else
    return detail::general_dp_core(to_op_graph(g), o);
}

}  // namespace devplace
