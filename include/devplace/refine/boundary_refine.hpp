#pragma once
/// \file refine/boundary_refine.hpp
/// Parmesan's iterative refinement (seed-parmesan.md §6): after the DP on the clustered graph,
/// move single atomic operators that lie on a stage boundary to a neighbouring stage.
///
/// A move (v, j) takes v from its stage i to stage j and is valid when
///   * j is the stage of a neighbour of v,
///   * max_{u ∈ pred(v)} σ(u) ≤ j ≤ min_{w ∈ succ(v)} σ(w)  (labels stay monotone along edges, so
///     every stage stays convex and the stage graph stays acyclic),
///   * stage i does not become empty,
///   * the memory of stage j after the move (eq. 14) stays within R · device memory.
/// Every step takes the valid move with the best gain vector and stops when no move has a
/// positive gain or after `max_moves` (I = 100) steps. The result is the best labelling seen
/// under the partition objective (max stage time, eq. 3), so refinement never makes it worse.
///
/// Two gain policies:
///   * `refine_policy::paper` — the paper's lexicographic gains: (1) decrease of
///     Φ = Σ_{stage pairs (i, i+1)} min δ(x) over the operators x on that boundary, where δ is
///     the undirected hop distance to the nearest reconverging vertex; (2) decrease of the total
///     bytes on cut edges; (3) decrease of the maximum stage compute. A move may not undo the
///     previous one (tabu).
///   * `refine_policy::objective` — (1) decrease of the partition objective (max stage time of
///     eq. 3), (2) decrease of the sum of stage times, (3) decrease of cut bytes.
/// Ties: smallest operator id, then smallest target stage.
///
/// Complexity: a step scans the operators (O(n + m)) and tries at most two target stages for
/// each boundary operator; a candidate costs O(deg + S) (objective policy) or O(deg · log m + S)
/// (paper policy: Φ is maintained per boundary as a multiset of δ values), so a run is
/// O(I · (n + m + B · (deg log m + S))) for B boundary operators.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/partition/stage_cost.hpp"
#include "devplace/status.hpp"

namespace devplace {

enum class refine_policy { paper, objective };

struct boundary_refine_options {
  std::size_t stages = 0;       ///< S (labels are 0 .. S-1)
  stage_cost_options cost;        ///< R, MB, device memory, β̄ (partition/stage_cost.hpp)
  std::size_t max_moves = 100;    ///< I
  refine_policy policy = refine_policy::paper;
};

struct boundary_refine_result {
  devplace::status status = status::feasible;  ///< always `feasible` (a bad call throws, see `boundary_refine`)
  std::vector<std::size_t> stage_of;           ///< best labelling seen
  double initial_objective_ms = 0;
  double objective_ms = 0;                     ///< objective of `stage_of` (≤ initial)
  std::size_t moves = 0;                       ///< moves performed
  std::size_t best_after_moves = 0;            ///< the returned labelling was reached after this many moves
};

namespace detail {

/// Per-stage aggregates of a labelling, updated move by move.
class stage_state {
 public:
  stage_state(const op_graph& g, std::vector<std::size_t> stage_of, const boundary_refine_options& o)
      : g_(g), o_(o), sigma_(std::move(stage_of)), compute_(o.stages, 0.0), cut_(o.stages, 0.0),
        mem_(o.stages, 0.0), size_(o.stages, 0) {
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      compute_[sigma_[v]] += g.compute_ms(v);
      mem_[sigma_[v]] += g.memory_bytes(v);
      ++size_[sigma_[v]];
    }
    for_each_edge([&](std::size_t u, std::size_t w, double b) {
      if (sigma_[u] != sigma_[w]) {
        cut_[sigma_[u]] += b;
        cut_[sigma_[w]] += b;
        cut_bytes_ += b;
      }
    });
  }

  template <class F>
  void for_each_edge(F&& f) const {
    const auto& s = g_.structure();
    for (std::size_t u = 0; u < g_.num_vertices(); ++u) {
      const auto succ = s.out_edges(u);
      for (std::size_t k = 0; k < succ.size(); ++k)
        f(u, static_cast<std::size_t>(succ[k]),
          g_.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(u) + k)));
    }
  }
  template <class F>
  void for_each_neighbour(std::size_t v, F&& f) const {
    const auto& s = g_.structure();
    const auto succ = s.out_edges(v);
    for (std::size_t k = 0; k < succ.size(); ++k)
      f(static_cast<std::size_t>(succ[k]), g_.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(v) + k)));
    const auto pred = s.in_edges(v);
    const auto ids = s.in_edge_ids(v);
    for (std::size_t k = 0; k < pred.size(); ++k) f(static_cast<std::size_t>(pred[k]), g_.edge_bytes_of(ids[k]));
  }

  [[nodiscard]] double stage_time(std::size_t s) const {
    return stage_time_ms(compute_[s], cut_[s], o_.cost);
  }
  [[nodiscard]] double stage_memory(std::size_t s) const {
    return stage_memory_bytes(mem_[s], cut_[s], o_.cost);
  }
  [[nodiscard]] double objective() const {
    double t = 0;
    for (std::size_t s = 0; s < o_.stages; ++s) t = std::max(t, stage_time(s));
    return t;
  }
  [[nodiscard]] double time_sum() const {
    double t = 0;
    for (std::size_t s = 0; s < o_.stages; ++s) t += stage_time(s);
    return t;
  }
  [[nodiscard]] double max_compute() const { return *std::max_element(compute_.begin(), compute_.end()); }
  [[nodiscard]] double cut_bytes() const { return cut_bytes_; }
  [[nodiscard]] std::size_t stage(std::size_t v) const { return sigma_[v]; }
  [[nodiscard]] std::size_t stage_size(std::size_t s) const { return size_[s]; }
  [[nodiscard]] const std::vector<std::size_t>& labels() const { return sigma_; }

  /// Starts maintaining Φ incrementally (paper policy): per stage boundary, the multiset of the
  /// δ values its cut edges contribute, so that a move costs O(deg · log) instead of O(m).
  void track_phi(std::span<const std::size_t> delta) {
    delta_ = delta;
    boundary_.assign(o_.stages > 1 ? o_.stages - 1 : 0, {});
    for_each_edge([&](std::size_t u, std::size_t w, double) { phi_edge(u, w, +1); });
  }

  /// Moves v to stage j (no validity check).
  void move(std::size_t v, std::size_t j) {
    const std::size_t i = sigma_[v];
    if (!delta_.empty()) phi_incident(v, -1);
    for_each_neighbour(v, [&](std::size_t w, double b) {
      const std::size_t sw = sigma_[w];
      if (sw != i) { cut_[i] -= b; cut_[sw] -= b; cut_bytes_ -= b; }
      if (sw != j) { cut_[j] += b; cut_[sw] += b; cut_bytes_ += b; }
    });
    compute_[i] -= g_.compute_ms(v);
    compute_[j] += g_.compute_ms(v);
    mem_[i] -= g_.memory_bytes(v);
    mem_[j] += g_.memory_bytes(v);
    --size_[i];
    ++size_[j];
    sigma_[v] = j;
    if (!delta_.empty()) phi_incident(v, +1);
  }

  /// Φ of the paper policy: Σ over stage pairs (i, i+1) of the smallest δ on that boundary
  /// (the δ of an end of a cut edge u -> w, σ(u) < σ(w): δ(u) on boundary σ(u), δ(w) on
  /// boundary σ(w) - 1). O(S) once `track_phi` was called, O(m) otherwise.
  [[nodiscard]] double phi(std::span<const std::size_t> delta) const {
    if (o_.stages < 2) return 0;
    double sum = 0;
    if (!delta_.empty()) {
      for (const auto& b : boundary_)
        if (!b.empty()) sum += static_cast<double>(b.begin()->first);
      return sum;
    }
    constexpr auto none = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> best(o_.stages - 1, none);
    for_each_edge([&](std::size_t u, std::size_t w, double) {
      const std::size_t su = sigma_[u], sw = sigma_[w];
      if (su < sw) {
        best[su] = std::min(best[su], delta[u]);
        best[sw - 1] = std::min(best[sw - 1], delta[w]);
      }
    });
    for (auto b : best) if (b != none) sum += static_cast<double>(b);
    return sum;
  }

 private:
  void phi_add(std::size_t boundary, std::size_t d, int sign) {
    auto& m = boundary_[boundary];
    if (sign > 0) {
      ++m[d];
    } else {
      const auto it = m.find(d);
      if (--it->second == 0) m.erase(it);
    }
  }
  void phi_edge(std::size_t u, std::size_t w, int sign) {
    const std::size_t su = sigma_[u], sw = sigma_[w];
    if (su < sw) {
      phi_add(su, delta_[u], sign);
      phi_add(sw - 1, delta_[w], sign);
    }
  }
  void phi_incident(std::size_t v, int sign) {
    const auto& s = g_.structure();
    for (auto w : s.out_edges(v)) phi_edge(v, static_cast<std::size_t>(w), sign);
    for (auto u : s.in_edges(v)) phi_edge(static_cast<std::size_t>(u), v, sign);
  }

 private:
  const op_graph& g_;
  const boundary_refine_options& o_;
  std::vector<std::size_t> sigma_;
  std::vector<double> compute_, cut_, mem_;
  std::vector<std::size_t> size_;
  double cut_bytes_ = 0;
  std::span<const std::size_t> delta_;                          ///< set by track_phi
  std::vector<std::map<std::size_t, std::size_t>> boundary_;    ///< δ -> count, per stage boundary
};

}  // namespace detail

/// Refines `stage_of` (S labels, monotone along edges) of `g`. `delta` (one entry per operator,
/// the hop distance to the nearest reconverging vertex, see algorithm/reconverging.hpp) is
/// needed by the paper policy and ignored by the objective policy.
/// Throws std::invalid_argument on a bad call: `stages` 0, `stage_of` not one label < S per
/// operator, a labelling that is not monotone along the edges, or the paper policy without one
/// `delta` entry per operator.
[[nodiscard]] inline boundary_refine_result boundary_refine(const op_graph& g, std::vector<std::size_t> stage_of,
                                                            const boundary_refine_options& opt,
                                                            std::span<const std::size_t> delta = {}) {
  check_cost_options(opt.cost, "boundary_refine");
  boundary_refine_result r;
  const std::size_t n = g.num_vertices();
  const auto& s = g.structure();
  auto fail = [](const std::string& what) { devplace::detail::precondition_failed("boundary_refine: " + what); };
  if (opt.stages == 0) fail("stages must be >= 1");
  if (stage_of.size() != n)
    fail("stage_of has " + std::to_string(stage_of.size()) + " entries for " + std::to_string(n) + " operators");
  for (std::size_t v = 0; v < n; ++v)
    if (stage_of[v] >= opt.stages)
      fail("stage_of[" + std::to_string(v) + "] = " + std::to_string(stage_of[v]) + " is not below stages = " +
           std::to_string(opt.stages));
  for (std::size_t u = 0; u < n; ++u)
    for (auto w : s.out_edges(u))
      if (stage_of[u] > stage_of[w])
        fail("the labelling is not monotone: edge " + std::to_string(u) + " -> " + std::to_string(w) + " goes from stage " +
             std::to_string(stage_of[u]) + " back to stage " + std::to_string(stage_of[w]));
  if (opt.policy == refine_policy::paper && delta.size() != n)
    fail("the paper policy (the default) needs delta, one entry per operator (distance_to_reconverging); got " +
         std::to_string(delta.size()) + " for " + std::to_string(n) + " operators (refine_policy::objective needs none)");
  detail::stage_state st(g, std::move(stage_of), opt);
  if (opt.policy == refine_policy::paper) st.track_phi(delta);
  r.initial_objective_ms = r.objective_ms = st.objective();
  r.stage_of = st.labels();

  using gain_t = std::tuple<double, double, double>;
  auto score = [&]() -> gain_t {  // larger is better
    if (opt.policy == refine_policy::paper) return {-st.phi(delta), -st.cut_bytes(), -st.max_compute()};
    return {-st.objective(), -st.time_sum(), -st.cut_bytes()};
  };
  constexpr double rel_eps = 1e-12;
  auto better = [&](const gain_t& a, const gain_t& b) {  // a strictly better than b, with a tolerance
    auto cmp = [&](double x, double y) {
      const double tol = rel_eps * std::max({1.0, std::abs(x), std::abs(y)});
      return x > y + tol ? 1 : (x < y - tol ? -1 : 0);
    };
    for (int c : {cmp(std::get<0>(a), std::get<0>(b)), cmp(std::get<1>(a), std::get<1>(b)),
                  cmp(std::get<2>(a), std::get<2>(b))})
      if (c != 0) return c > 0;
    return false;
  };

  std::size_t tabu_v = n, tabu_stage = opt.stages;
  for (std::size_t step = 0; step < opt.max_moves; ++step) {
    const gain_t current = score();
    bool found = false;
    gain_t best_score{};
    std::size_t best_v = 0, best_j = 0;
    for (std::size_t v = 0; v < n; ++v) {
      const std::size_t i = st.stage(v);
      if (st.stage_size(i) <= 1) continue;
      std::size_t lo = 0, hi = opt.stages - 1;
      for (auto u : s.in_edges(v)) lo = std::max(lo, st.stage(u));
      for (auto w : s.out_edges(v)) hi = std::min(hi, st.stage(w));
      // Candidate targets: neighbouring stages of v inside [lo, hi].
      std::size_t targets[2] = {opt.stages, opt.stages};
      std::size_t nt = 0;
      st.for_each_neighbour(v, [&](std::size_t w, double) {
        const std::size_t j = st.stage(w);
        if (j == i || j < lo || j > hi) return;
        if ((nt > 0 && targets[0] == j) || (nt > 1 && targets[1] == j)) return;
        if (nt < 2) targets[nt++] = j;
      });
      if (nt == 2 && targets[1] < targets[0]) std::swap(targets[0], targets[1]);
      for (std::size_t t = 0; t < nt; ++t) {
        const std::size_t j = targets[t];
        if (opt.policy == refine_policy::paper && v == tabu_v && j == tabu_stage) continue;
        st.move(v, j);
        const bool fits = stage_fits(st.stage_memory(j), opt.cost) && stage_fits(st.stage_memory(i), opt.cost);
        const gain_t sc = score();
        st.move(v, i);
        if (!fits || !better(sc, current)) continue;
        if (!found || better(sc, best_score)) {
          found = true;
          best_score = sc;
          best_v = v;
          best_j = j;
        }
      }
    }
    if (!found) break;
    tabu_v = best_v;
    tabu_stage = st.stage(best_v);
    st.move(best_v, best_j);
    ++r.moves;
    const double obj = st.objective();
    if (obj < r.objective_ms) {
      r.objective_ms = obj;
      r.stage_of = st.labels();
      r.best_after_moves = r.moves;
    }
  }
  r.status = status::feasible;
  return r;
}

/// The same over any `profiled_dag`, copied once into an `op_graph` (every cost through the
/// customisation points).
template <profiled_dag G>
  requires(!std::is_same_v<G, op_graph>)
[[nodiscard]] boundary_refine_result boundary_refine(const G& g, std::vector<std::size_t> stage_of,
                                                     const boundary_refine_options& opt,
                                                     std::span<const std::size_t> delta = {}) {
  return boundary_refine(to_op_graph(g), std::move(stage_of), opt, delta);
}

}  // namespace devplace
