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

/// The fixed-R partition (R = D / S on every stage) when S divides D and it is within the
/// caller's bound: a solution to fall back on when a cap stops the search, and its objective
/// tightens the bound U when it is optimal.
inline general_partition_result general_dp_fixed_r(const op_graph& g, const general_partition_options& o, double& U) {
  const std::size_t S = o.stages, D = o.devices;
  general_partition_result fixed;
  if (D % S != 0) return fixed;
  stage_cost_options c = o.cost;
  c.replicas = D / S;
  partition_options po{.stages = S, .cost = c, .max_downsets = o.max_downsets,
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
  return fixed;
}

/// The layered DP of eq. 2: T[layer][F·W + d] is the best bottleneck of `layer` stages covering
/// the down-set F with d devices; each layer extends the previous layer's frontier by one stage.
class general_dp_search {
 public:
  general_dp_search(const op_graph& g, const general_partition_options& o, double Ucut)
      : o_(o), n_(g.num_vertices()), S_(o.stages), D_(o.devices), W_(o.devices + 1), Ucut_(Ucut),
        mb_(static_cast<double>(o.cost.micro_batches)), e_(g), pc_(g, e_), table_(e_), T_(S_), parent_(S_) {
    T_[0].assign(W_, inf);  // layer 0 is ∅ with 0 devices
    T_[0][0] = 0;
    frontier_.push_back(0);
  }

  /// The first S − 1 stages; false when a cap stopped the search.
  bool run() {
    for (std::size_t layer = 1; layer < S_ && !capped_; ++layer) {
      std::vector<std::uint32_t> next_frontier;
      for (std::uint32_t fid : frontier_) {
        extend(layer, fid, next_frontier);
        if (capped_) break;
      }
      grow(layer);
      std::sort(next_frontier.begin(), next_frontier.end());
      frontier_ = std::move(next_frontier);
    }
    return !capped_;
  }

  [[nodiscard]] std::uint64_t downsets() const { return table_.size(); }

  /// The last stage X = V ∖ F' with the D − d' devices left, and the partition read back through
  /// the parents; false when no stage fits.
  bool finish(general_partition_result& r) const {
    const std::vector<double>& Tp = T_[S_ - 1];
    double best = inf;
    std::uint32_t best_id = 0, best_d = 0;
    for (std::uint32_t fid : frontier_) {
      const auto& bp = table_.props[fid];
      if (bp.count == n_) continue;
      const double c = pc_.total_compute - bp.c, cut = bp.out;
      for (std::size_t dp = S_ - 1; dp < D_; ++dp) {
        const double before = Tp[fid * W_ + dp];
        if (before == inf) continue;
        const auto cs = cost_at(D_ - dp);
        const double t = stage_time_ms(c, cut, cs);
        if (t > Ucut_ || !stage_fits(stage_memory_bytes(pc_.total_internal - bp.mem, cut, cs), cs)) continue;
        const double value = std::max(before, t);
        if (value < best) best = value, best_id = fid, best_d = static_cast<std::uint32_t>(dp);
      }
    }
    if (best == inf) return false;
    r.stage_of.assign(n_, S_ - 1);
    r.replicas.assign(S_, 0);
    r.replicas[S_ - 1] = D_ - best_d;
    std::uint32_t id = best_id, d = best_d;
    for (std::size_t layer = S_ - 1; layer >= 1; --layer) {
      const link l = parent_[layer][id * W_ + d];
      dynamic_bitset stage = table_.sets[id];
      stage.subtract(table_.sets[l.from]);
      stage.for_each([&](std::size_t p) { r.stage_of[e_.vertex_at(p)] = layer - 1; });
      r.replicas[layer - 1] = d - l.devices;
      id = l.from;
      d = l.devices;
    }
    return true;
  }

 private:
  static constexpr double inf = std::numeric_limits<double>::infinity();
  static constexpr std::uint32_t none = downset_table::none;
  struct link {
    std::uint32_t from;
    std::uint32_t devices;
  };

  [[nodiscard]] stage_cost_options cost_at(std::size_t reps) const {
    stage_cost_options c = o_.cost;
    c.replicas = reps;
    return c;
  }

  /// Sizes layer `layer`'s rows for every down-set created so far.
  void grow(std::size_t layer) {
    if (T_[layer].size() < table_.size() * W_) {
      T_[layer].resize(table_.size() * W_, inf);
      parent_[layer].resize(table_.size() * W_, link{0, 0});
    }
  }

  /// Every stage X = F ∖ F' after the down-set F' = table_.sets[fid] of the previous layer, on every
  /// device count: T[layer][F, d] takes max(T[layer − 1][F', d'], t(X, d − d')) where smaller.
  void extend(std::size_t layer, std::uint32_t fid, std::vector<std::uint32_t>& next_frontier) {
    std::vector<double>& Tl = T_[layer];
    std::vector<link>& Pl = parent_[layer];
    const std::vector<double>& Tp = T_[layer - 1];
    const std::size_t d_hi = D_ - (S_ - layer);  // devices used after this layer, at most
    const dynamic_bitset base = table_.sets[fid];  // copy: the table may grow during the enumeration
    const downset_table::state bp = table_.props[fid];
    std::size_t dlo = W_, dhi = 0;  // device counts of F' with a finite T
    for (std::size_t d = 0; d < W_; ++d)
      if (Tp[fid * W_ + d] < inf) dlo = std::min(dlo, d), dhi = d;
    if (dlo == W_) return;
    // The widest this stage can be: the devices F' leaves at best, less one per later stage.
    const double wide = static_cast<double>(D_ - dlo - (S_ - layer));
    const double wide_budget = wide * o_.cost.device_memory_bytes;
    stage_accumulator acc0{&pc_.compute, &pc_.internal, &pc_.succ, &pc_.pred, &base};
    const dynamic_bitset blocked = pc_.blocked(base, bp.c, bp.mem, wide, Ucut_, mb_, wide_budget);
    (void)e_.for_each_superset(base, blocked, acc0, [&](const dynamic_bitset& f, const stage_accumulator& a) {
      if (++visits_ > o_.max_visits) {
        capped_ = true;
        return downset_action::stop;
      }
      if (a.c / wide > Ucut_ || a.mem / mb_ > wide_budget) return downset_action::prune;
      if (bp.count + a.count == n_) return downset_action::proceed;  // later stages would be empty
      const double rest = pc_.total_compute - bp.c - a.c;
      std::uint32_t id = none;
      for (std::size_t dp = dlo; dp <= dhi; ++dp) {
        const double before = Tp[fid * W_ + dp];
        if (before == inf) continue;
        for (std::size_t d = dp + 1; d <= d_hi; ++d) {
          const auto c = cost_at(d - dp);
          const double t = stage_time_ms(a.c, a.cut, c);
          if (t > Ucut_ || !stage_fits(stage_memory_bytes(a.mem, a.cut, c), c)) continue;
          if (rest / static_cast<double>(D_ - d) > Ucut_) break;  // fewer devices left: worse still
          if (id == none) {
            id = table_.intern(f, bp, a, o_.max_downsets);
            if (id == none) {
              capped_ = true;
              return downset_action::stop;
            }
            grow(layer);
          }
          double& slot = Tl[id * W_ + d];
          const double value = std::max(before, t);
          if (value < slot) {
            bool fresh = true;
            for (std::size_t k = 0; k < W_ && fresh; ++k) fresh = Tl[id * W_ + k] == inf;
            if (fresh) next_frontier.push_back(id);
            slot = value;
            Pl[id * W_ + d] = {fid, static_cast<std::uint32_t>(dp)};
          }
        }
      }
      return downset_action::proceed;
    });
  }

  const general_partition_options& o_;
  std::size_t n_, S_, D_;
  std::size_t W_;  // T rows: devices used 0..D
  double Ucut_, mb_;
  downset_enumerator e_;
  positioned_costs pc_;
  downset_table table_;
  std::vector<std::vector<double>> T_;  // T[layer][id·W + d], parent likewise
  std::vector<std::vector<link>> parent_;
  std::vector<std::uint32_t> frontier_;
  bool capped_ = false;
  std::uint64_t visits_ = 0;
};

inline general_partition_result general_dp_core(const op_graph& g, const general_partition_options& o) {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](general_partition_result& r) {
    r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  general_partition_result r;
  if (o.stages > g.num_vertices()) return finish(r);  // infeasible: S non-empty stages need S operators
  constexpr double slack = 1 + 1e-9;                  // admits values equal up to rounding

  // The bound U: the caller's, or the fixed-R optimum when S divides D.
  double U = o.upper_bound_ms;
  general_partition_result fixed = general_dp_fixed_r(g, o, U);
  const double Ucut = std::isfinite(U) ? U * slack + 1e-12 : std::numeric_limits<double>::infinity();

  general_dp_search search(g, o, Ucut);
  const bool complete = search.run();
  r.downsets = search.downsets();
  if (!complete) {
    if (fixed.has_solution()) {
      fixed.downsets = r.downsets;
      r = fixed;
    }
    r.status = status::work_limit;
    return finish(r);
  }
  if (!search.finish(r)) {
    r.status = status::infeasible;
    return finish(r);
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
