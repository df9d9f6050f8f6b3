#pragma once
/// \file partition/topo_dp.hpp
/// The layer-level baseline (PipeDream-style): the optimal split of ONE fixed topological order
/// into S contiguous segments, minimising the maximum stage time t(X, R) (eq. 3) subject to the
/// eq. 14 memory budget. Every prefix of a topological order is a down-set, so its segments are
/// valid stages; the exact DP over all down-sets (pipeline_dp.hpp) can never be worse.
///
///   T[s][j] = min_{i < j} max(T[s-1][i], t(order[i..j)))
///
/// Complexity: bounded passes (see `detail::topo_dp_core`): segments are costed incrementally
/// only where their compute fits the bound, so time is near n·(n/S)·(U/LB - 1) + n·S in
/// practice (O(n (n + m)) worst case) and memory O(S n + m); no n x n table.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/partition/result.hpp"

namespace devplace {

namespace detail {

/// Costs segments [i, j) of a fixed order incrementally: `extend()` appends position j,
/// `drop_front()` removes position i, each in O(degree); `save()` / `restore()` return to an
/// earlier end without rounding drift.
class topo_segment_walker {
 public:
  topo_segment_walker(const op_graph& g, const std::vector<std::size_t>& order, const std::vector<std::size_t>& pos,
                      const stage_cost_options& cost)
      : g_(g), order_(order), pos_(pos), cost_(cost) {}
  void start(std::size_t i) {
    i_ = j_ = i;
    compute_ = internal_ = cut_ = 0;
  }
  /// Appends position j_ (the next one) to the segment.
  void extend() {
    const std::size_t v = order_[j_];
    const auto& s = g_.structure();
    compute_ += g_.compute_ms(v);
    internal_ += g_.memory_bytes(v);
    // v joins positions [i, j): edges to members become internal, others cut.
    const auto succ = s.out_edges(v);
    for (std::size_t k = 0; k < succ.size(); ++k) {
      const double b = g_.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(v) + k));
      const std::size_t p = pos_[succ[k]];
      cut_ += (p >= i_ && p < j_) ? -b : b;
    }
    const auto pred = s.in_edges(v);
    const auto ids = s.in_edge_ids(v);
    for (std::size_t k = 0; k < pred.size(); ++k) {
      const double b = g_.edge_bytes_of(ids[k]);
      const std::size_t p = pos_[pred[k]];
      cut_ += (p >= i_ && p < j_) ? -b : b;
    }
    ++j_;
  }
  /// Removes the first position i_ from the segment (it must not be empty).
  void drop_front() {
    const std::size_t v = order_[i_];
    const auto& s = g_.structure();
    compute_ -= g_.compute_ms(v);
    internal_ -= g_.memory_bytes(v);
    // Edges to the other members become cut, edges that were cut leave the segment.
    const auto succ = s.out_edges(v);
    for (std::size_t k = 0; k < succ.size(); ++k) {
      const double b = g_.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(v) + k));
      const std::size_t p = pos_[succ[k]];
      cut_ += (p > i_ && p < j_) ? b : -b;
    }
    const auto pred = s.in_edges(v);
    const auto ids = s.in_edge_ids(v);
    for (std::size_t k = 0; k < pred.size(); ++k) {
      const double b = g_.edge_bytes_of(ids[k]);
      const std::size_t p = pos_[pred[k]];
      cut_ += (p > i_ && p < j_) ? b : -b;
    }
    ++i_;
  }
  struct snapshot {
    std::size_t j;
    double compute, internal, cut;
  };
  [[nodiscard]] snapshot save() const noexcept { return {j_, compute_, internal_, cut_}; }
  void restore(const snapshot& x) noexcept {
    j_ = x.j;
    compute_ = x.compute;
    internal_ = x.internal;
    cut_ = x.cut;
  }
  [[nodiscard]] std::size_t begin() const noexcept { return i_; }
  [[nodiscard]] std::size_t end() const noexcept { return j_; }
  [[nodiscard]] double compute() const noexcept { return compute_; }
  /// t of the segment, or +inf when it is over the memory budget.
  [[nodiscard]] double time() const noexcept {
    return stage_fits(stage_memory_bytes(internal_, cut_, cost_), cost_) ? stage_time_ms(compute_, cut_, cost_)
                                                                         : std::numeric_limits<double>::infinity();
  }

 private:
  const op_graph& g_;
  const std::vector<std::size_t>& order_;
  const std::vector<std::size_t>& pos_;
  const stage_cost_options& cost_;
  std::size_t i_ = 0, j_ = 0;
  double compute_ = 0, internal_ = 0, cut_ = 0;
};

/// The time of the even compute split of the order into S stages (infinite when a stage does
/// not fit memory): an upper bound on the DP's optimum. pc: prefix compute along the order.
inline double topo_even_split_time(topo_segment_walker& w, const std::vector<double>& pc, std::size_t S) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = pc.size() - 1;
  const double total = pc[n];
  double upper = 0;
  std::size_t i = 0;
  for (std::size_t k = 1; k <= S && upper < inf; ++k) {
    std::size_t j = i + 1;  // non-empty, and leave one position per later stage
    const double share = total * static_cast<double>(k) / static_cast<double>(S);
    while (j < n - (S - k) && pc[j] < share) ++j;
    if (k == S) j = n;
    w.start(i);
    while (w.end() < j) w.extend();
    upper = std::max(upper, w.time());
    i = j;
  }
  return upper;
}

/// The DP table of one pass under the bound U: T[k·(n + 1) + j] is the best bottleneck of k
/// segments covering order[0, j), arg the start of the last of them.
struct topo_dp_table {
  std::size_t n;
  std::vector<double> T;
  std::vector<std::size_t> arg;

  topo_dp_table(std::size_t n_ops, std::size_t S) : n(n_ops), T((S + 1) * (n_ops + 1)), arg((S + 1) * (n_ops + 1)) {}
  [[nodiscard]] std::size_t at(std::size_t k, std::size_t j) const { return k * (n + 1) + j; }

  /// Fills the table under U (segments of time ≤ U only, boundaries within the compute ranges).
  void fill(topo_segment_walker& w, const std::vector<double>& pc, std::size_t S, double R, double U, double tol) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double total = pc[n];
    const double reach = U * R;  // compute a stage may hold
    std::fill(T.begin(), T.end(), inf);
    T[at(0, 0)] = 0;
    // Boundary range of k: positions j with pc[j] ≤ k·U·R and total - pc[j] ≤ (S - k)·U·R.
    std::vector<std::size_t> hi(S + 1);
    for (std::size_t k = 0; k <= S; ++k) {
      const double cap = static_cast<double>(k) * reach + tol;
      hi[k] = static_cast<std::size_t>(std::upper_bound(pc.begin(), pc.end(), cap) - pc.begin()) - 1;
      hi[k] = std::min(hi[k], n - (S - k));
    }
    std::vector<std::size_t> lo(S + 1);
    for (std::size_t k = 0; k <= S; ++k) {
      const double need = total - static_cast<double>(S - k) * reach - tol;
      lo[k] = static_cast<std::size_t>(std::lower_bound(pc.begin(), pc.end(), need) - pc.begin());
      lo[k] = std::max(lo[k], k);
    }
    // Stage by stage, starts i ascending (so ties go to the smallest i, as in the full table):
    // the segment [i, base) slides along with i, and the ends j ≥ base are added on top of it
    // and taken off again (restored) for every start.
    for (std::size_t k = 1; k <= S; ++k) {
      if (lo[k] > hi[k] || lo[k - 1] > hi[k - 1]) continue;
      bool open = false;
      for (std::size_t i = lo[k - 1]; i <= hi[k - 1] && i < hi[k]; ++i) {
        const double prev = T[at(k - 1, i)];
        if (prev == inf) continue;
        const std::size_t base = std::max(lo[k], i + 1);
        // Even the shortest segment from i holds more compute than a stage may: skip i.
        if ((pc[base] - pc[i]) / R > U * (1 + 1e-9) + tol) continue;
        if (!open || w.end() <= i) {
          w.start(i);
          open = true;
        }
        while (w.begin() < i) w.drop_front();
        while (w.end() < base) w.extend();
        const auto kept = w.save();
        for (;;) {
          const std::size_t j = w.end();
          if (j >= lo[k]) {
            const double t = w.time();
            if (t <= U && t != inf) {
              const double v = std::max(prev, t);
              if (v < T[at(k, j)]) {
                T[at(k, j)] = v;
                arg[at(k, j)] = i;
              }
            }
          }
          if (j >= hi[k] || (pc[j + 1] - pc[i]) / R > U * (1 + 1e-9) + tol) break;
          w.extend();
        }
        w.restore(kept);
      }
    }
  }
};

/// The non-template core over an op_graph and a given order (a topological order of g).
///
/// T[k][j] = min_{i < j} max(T[k-1][i], t(order[i..j))), ties to the smallest i, as with the full
/// table of segment times, but under a bound U: only segments with t ≤ U are costed, and a
/// boundary j after k segments is only tried where the compute before it fits k stages and the
/// compute after it fits S - k stages (prefix compute ≤ k·U·R, suffix compute ≤ (S-k)·U·R).
/// Compute is monotone in the segment and t ≥ compute / R, so every split of value ≤ U is still
/// seen and every entry T[k][j] ≤ U is the one of the full DP: the first U for which
/// T[S][n] ≤ U gives the full DP's optimum. U rises from the lower bound
/// max(Σc / (S·R), max c / R) by 1/128, 1/64, ... of it up to the value of an even compute split
/// (a feasible split when it fits memory; otherwise the last pass is unbounded).
///
/// Within a pass, stage k slides one segment [i, base) along the starts i (O(degree) per step)
/// and costs the ends j ∈ [lo_k, hi_k] on top of it, so a pass costs O(n + m) plus
/// O(Σ_k |starts_k| · |ends_k| · degree): near-linear when the optimum is close to the lower
/// bound (the ranges are then narrow), O(n² / S) at worst. Memory O(S·n + m).
inline partition_result topo_dp_core(const op_graph& g, const std::vector<std::size_t>& order, const partition_options& o) {
  const auto start = std::chrono::steady_clock::now();
  partition_result r;
  const std::size_t n = g.num_vertices(), S = o.stages;
  r.downsets = n + 1;
  if (S == 0 || S > n || o.cost.replicas == 0) {
    r.status = status::infeasible;
    return r;
  }
  const auto& cost = o.cost;
  const double R = static_cast<double>(o.cost.replicas);
  std::vector<std::size_t> pos(n);
  for (std::size_t k = 0; k < n; ++k) pos[order[k]] = k;
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Prefix compute along the order.
  std::vector<double> pc(n + 1, 0.0);
  double heaviest = 0;
  for (std::size_t k = 0; k < n; ++k) {
    pc[k + 1] = pc[k] + g.compute_ms(order[k]);
    heaviest = std::max(heaviest, g.compute_ms(order[k]));
  }
  const double total = pc[n];
  topo_segment_walker w(g, order, pos, cost);
  // An upper bound: the even compute split of the order (when every stage fits memory).
  const double upper = topo_even_split_time(w, pc, S);
  const double lower = std::max(total / (static_cast<double>(S) * R), heaviest / R);
  topo_dp_table table(n, S);
  const double tol = 1e-9 * (total + 1.0);  // prefix sums and incremental sums round differently
  bool solved = false;
  for (double slack = 1.0 / 128;; slack *= 2) {
    double U = lower * (1 + slack);
    // Last pass: the even split's value, or unbounded when it does not fit memory, the bound no
    // longer grows (zero compute) or one stage could already hold all the compute.
    const bool last = !(U < upper) || !(U > lower) || U * R > total;
    if (last) U = upper < inf ? upper * (1 + 1e-9) + 1e-300 : inf;
    table.fill(w, pc, S, R, U, tol);
    if (table.T[table.at(S, n)] <= U && table.T[table.at(S, n)] < inf) {
      solved = true;
      break;
    }
    if (last) break;
  }
  if (!solved) {
    r.status = status::infeasible;
  } else {
    r.status = status::feasible;  // optimal among splits of this order only
    r.stage_of.assign(n, 0);
    std::size_t j = n;
    for (std::size_t k = S; k >= 1; --k) {
      const std::size_t i = table.arg[table.at(k, j)];
      for (std::size_t p = i; p < j; ++p) r.stage_of[order[p]] = k - 1;
      j = i;
    }
    finish_partition(g, o, r);
  }
  r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace detail

/// The fixed-order DP on the deterministic topological order of `topological_sort` (smallest
/// ready id first). Status `feasible` (optimal only among contiguous splits of that order) or
/// `infeasible`.
template <profiled_dag G>
[[nodiscard]] partition_result topo_dp(const G& g, const partition_options& o) {
  check_cost_options(o.cost, "topo_dp");
  if constexpr (std::is_same_v<G, op_graph>) {
    return detail::topo_dp_core(g, topological_sort(g).order, o);
  } else {
    const op_graph core = to_op_graph(g);
    return detail::topo_dp_core(core, topological_sort(core).order, o);
  }
}

}  // namespace devplace
