#pragma once
/// \file partition/pipeline_dp.hpp
/// The exact pipeline partitioner of Parmesan (eq. 13 with fixed R): split any profiled DAG into
/// exactly S non-empty, convex stages, ordered so that no edge runs backwards, minimising the
/// maximum stage time t(X, R) of eq. 3, with every stage within the eq. 14 memory budget.
///
///   T_s(F) = min_{F' ⊊ F down-sets} max( T_{s-1}(F'), t(F ∖ F', R) ),  T_0(∅) = 0,
///   answer T_S(V).
///
/// How it is computed. The recurrence runs forward, layer by layer: from every down-set F' of
/// layer s−1 it enumerates the down-sets F ⊋ F' (algorithm/downsets.hpp) and relaxes T_s(F).
/// The stage X = F ∖ F' is costed incrementally as the enumeration adds vertices (compute,
/// internal memory, cut bytes: O(degree) per added vertex). An upper bound U — the fixed-order
/// DP's objective (partition/topo_dp.hpp), a feasible partition — prunes soundly:
///   * Σ c_u(X) / R only grows as X grows, so once it exceeds U no superset of X can be a stage
///     of a solution ≤ U: the enumeration prunes that whole branch;
///   * the internal memory only grows too: over R·DM, prune likewise;
///   * a down-set F whose remaining compute cannot fit in the remaining S − s stages
///     ((Σ c_u(V ∖ F)) / (R (S − s)) > U) is not kept.
/// The last stage is V ∖ F' and is costed directly. Only down-sets reachable under the bound are
/// ever created; `max_downsets` caps them, and `max_visits` the down-sets visited in a pass
/// (status `work_limit`, the fixed-order solution attached). The result is `optimal` whenever the search completed: it is exact.
///
/// Complexity: O(S · P · (n/64 + d̄)) for the P (down-set, stage) pairs within the bound, memory
/// O(N · n/64) for the N down-sets created. See docs/partition.md for measured figures.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/partition/result.hpp"
#include "devplace/partition/topo_dp.hpp"

namespace devplace {

namespace detail {

/// Accumulates the cost of the stage X = F ∖ base as vertices (positions) are added.
struct stage_accumulator {
  const std::vector<double>* compute;
  const std::vector<double>* internal;
  const std::vector<std::vector<std::pair<std::size_t, double>>>* succ;  // position -> (position, bytes)
  const std::vector<std::vector<std::pair<std::size_t, double>>>* pred;
  const dynamic_bitset* base;
  double c = 0, mem = 0, cut = 0, out = 0;  // out: bytes leaving F = base ∪ X, minus out(base)
  std::size_t count = 0;                    // |X|

  void add(std::size_t p, const dynamic_bitset&) {
    ++count;
    c += (*compute)[p];
    mem += (*internal)[p];
    for (auto [q, b] : (*succ)[p]) {  // successors are never in F yet
      cut += b;
      out += b;
    }
    for (auto [q, b] : (*pred)[p]) {  // predecessors are all in F already
      cut += base->test(q) ? b : -b;
      out -= b;
    }
  }
};

/// The costs of an op_graph in the enumerator's topological positions, as the forward DPs over
/// down-sets read them (pipeline_dp, general_dp): per position its compute and internal memory,
/// its out- and in-edges with their bytes, the compute and memory of its down-closure (the position
/// and its ancestors), and the totals.
struct positioned_costs {
  std::vector<double> compute, internal;
  std::vector<std::vector<std::pair<std::size_t, double>>> succ, pred;
  std::vector<double> down_compute, down_internal;
  double total_compute = 0, total_internal = 0;

  positioned_costs(const op_graph& g, const downset_enumerator& e) {
    const std::size_t n = g.num_vertices();
    compute.assign(n, 0.0);
    internal.assign(n, 0.0);
    succ.resize(n);
    pred.resize(n);
    const auto& st = g.structure();
    for (std::size_t u = 0; u < n; ++u) {
      const std::size_t pu = e.position_of(u);
      compute[pu] = g.compute_ms(u);
      internal[pu] = g.memory_bytes(u);
      total_compute += compute[pu];
      total_internal += internal[pu];
      const auto out = st.out_edges(u);
      for (std::size_t k = 0; k < out.size(); ++k) {
        const double b = g.edge_bytes_of(static_cast<csr_dag::edge_type>(st.first_out_edge(u) + k));
        const std::size_t pv = e.position_of(out[k]);
        succ[pu].emplace_back(pv, b);
        pred[pv].emplace_back(pu, b);
      }
    }
    down_compute.assign(n, 0.0);
    down_internal.assign(n, 0.0);
    for (std::size_t p = 0; p < n; ++p)
      e.down(p).for_each([&](std::size_t q) {
        down_compute[p] += compute[q];
        down_internal[p] += internal[q];
      });
  }

  /// The positions a stage grown from the down-set `base` (its compute `base_compute`, internal
  /// memory `base_memory`) can never take: outside `base`, their down-closure alone brings the
  /// stage's compute over `max_ms` on `width` replicas or its memory per micro-batch (÷ `mb`) over
  /// `budget`. `base` itself is set too, so the result is the enumerator's blocked set.
  [[nodiscard]] dynamic_bitset blocked(const dynamic_bitset& base, double base_compute, double base_memory, double width,
                                       double max_ms, double mb, double budget) const {
    dynamic_bitset b = base;
    for (std::size_t p = 0; p < compute.size(); ++p)
      if (!base.test(p) &&
          ((down_compute[p] - base_compute) / width > max_ms || (down_internal[p] - base_memory) / mb > budget))
        b.set(p);
    return b;
  }
};

/// The down-sets a DP pass has created, each with the properties of F itself, by id (∅ is id 0).
struct downset_table {
  struct state {
    double c, mem, out;  // Σ c_u(F), Σ internal(F), bytes of edges leaving F
    std::size_t count;   // |F|
  };
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  std::vector<dynamic_bitset> sets;
  std::vector<state> props;
  std::unordered_map<dynamic_bitset, std::uint32_t, dynamic_bitset_hash> index;

  explicit downset_table(const downset_enumerator& e) {
    sets.push_back(e.empty_set());
    props.push_back({0, 0, 0, 0});
    index.emplace(sets[0], 0);
  }
  [[nodiscard]] std::size_t size() const noexcept { return sets.size(); }

  /// The id of F = f, the down-set `base` grown by the stage `a`; created when new, or `none`
  /// when that would exceed `max_sets` down-sets.
  std::uint32_t intern(const dynamic_bitset& f, const state& base, const stage_accumulator& a, std::uint64_t max_sets) {
    auto [it, inserted] = index.try_emplace(f, static_cast<std::uint32_t>(sets.size()));
    if (inserted) {
      if (sets.size() >= max_sets) return none;
      sets.push_back(f);
      props.push_back({base.c + a.c, base.mem + a.mem, base.out + a.out, base.count + a.count});
    }
    return it->second;
  }
};

/// The last stage X = V ∖ F' after every F' of the frontier (layer S − 1, its bottleneck in
/// T_prev), and the partition read back through `parent`: `optimal`, or `infeasible` when no last
/// stage fits under U.
inline void pipeline_dp_last_stage(const op_graph& g, const partition_options& o, const downset_enumerator& e,
                                   const positioned_costs& pc, const downset_table& table,
                                   const std::vector<std::vector<std::uint32_t>>& parent,
                                   const std::vector<std::uint32_t>& frontier, const std::vector<double>& T_prev,
                                   double U, partition_result& r) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  const auto& cost = o.cost;
  double best = std::numeric_limits<double>::infinity();
  std::uint32_t best_parent = 0;
  for (std::uint32_t fid : frontier) {
    const auto& bp = table.props[fid];
    if (bp.count == n) continue;  // the last stage must not be empty
    const double c = pc.total_compute - bp.c, cut = bp.out;
    const double t = stage_time_ms(c, cut, cost);
    if (t > U || !stage_fits(stage_memory_bytes(pc.total_internal - bp.mem, cut, cost), cost)) continue;
    const double value = std::max(T_prev[fid], t);
    if (value < best) {
      best = value;
      best_parent = fid;
    }
  }
  if (best == std::numeric_limits<double>::infinity()) {
    r.status = status::infeasible;
    return;
  }
  // Reconstruct the chain of down-sets.
  r.stage_of.assign(n, S - 1);
  std::uint32_t id = best_parent;
  for (std::size_t layer = S - 1; layer >= 1; --layer) {
    const std::uint32_t prev = parent[layer][id];
    dynamic_bitset stage = table.sets[id];
    stage.subtract(table.sets[prev]);
    stage.for_each([&](std::size_t p) { r.stage_of[e.vertex_at(p)] = layer - 1; });
    id = prev;
  }
  r.status = status::optimal;
  finish_partition(g, o, r);
}

/// One pass of the DP that only admits stages of time <= U. Returns `optimal` with the best
/// partition when one exists under U (then it is optimal overall), `infeasible` when none does,
/// `work_limit` when the down-set cap stopped it. `created` receives the down-sets created.
inline partition_result pipeline_dp_pass(const op_graph& g, const partition_options& o, const downset_enumerator& e,
                                         double U, std::uint64_t& created) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  partition_result r;
  const auto& cost = o.cost;
  const double R = static_cast<double>(o.cost.replicas);
  const double budget = R * o.cost.device_memory_bytes;
  const double mb = static_cast<double>(std::max<std::size_t>(o.cost.micro_batches, 1));

  const positioned_costs pc(g, e);
  // Plain references, not a structured binding: C++20 compilers before clang 16 cannot capture
  // structured bindings in lambdas.
  const auto& compute = pc.compute;
  const auto& internal = pc.internal;
  const auto& succ = pc.succ;
  const auto& pred = pc.pred;
  const double total_compute = pc.total_compute;

  constexpr double inf = std::numeric_limits<double>::infinity();

  downset_table table(e);  // the down-sets created so far

  std::vector<std::vector<double>> T(S);                 // T[s-1][id] for s = 1 .. S-1
  std::vector<std::vector<std::uint32_t>> parent(S);
  std::vector<std::uint32_t> frontier{0};                // ids with finite T in the previous layer
  std::vector<double> T_prev{0.0};                       // indexed by id
  bool capped = false;
  std::uint64_t visits = 0;

  for (std::size_t layer = 1; layer < S && !capped; ++layer) {
    std::vector<double>& Tl = T[layer];
    std::vector<std::uint32_t>& Pl = parent[layer];
    const double stages_left = static_cast<double>(S - layer);
    std::vector<std::uint32_t> next_frontier;
    for (std::uint32_t fid : frontier) {
      const double base_T = T_prev[fid];
      const dynamic_bitset base = table.sets[fid];  // copy: `sets` may grow during the enumeration
      const downset_table::state bp = table.props[fid];
      stage_accumulator acc0{&compute, &internal, &succ, &pred, &base};
      // A position whose own down-closure already brings more compute or internal memory than
      // the stage may hold can never be added: forbid it (this set is closed upwards).
      const dynamic_bitset blocked = pc.blocked(base, bp.c, bp.mem, R, U, mb, budget);
      (void)e.for_each_superset(base, blocked, acc0, [&](const dynamic_bitset& f, const stage_accumulator& a) {
        if (++visits > o.max_visits) {
          capped = true;
          return downset_action::stop;
        }
        if (a.c / R > U || a.mem / mb > budget) return downset_action::prune;
        const double t = stage_time_ms(a.c, a.cut, cost);
        if (t > U || !stage_fits(stage_memory_bytes(a.mem, a.cut, cost), cost)) return downset_action::proceed;
        if (bp.count + a.count == n) return downset_action::proceed;  // later stages would be empty
        if ((total_compute - bp.c - a.c) / (R * stages_left) > U) return downset_action::proceed;
        const double value = std::max(base_T, t);
        const std::uint32_t id = table.intern(f, bp, a, o.max_downsets);
        if (id == downset_table::none) {
          capped = true;
          return downset_action::stop;
        }
        if (Tl.size() <= id) {
          Tl.resize(table.size(), inf);
          Pl.resize(table.size(), 0);
        }
        if (value < Tl[id]) {
          if (Tl[id] == inf) next_frontier.push_back(id);
          Tl[id] = value;
          Pl[id] = fid;
        }
        return downset_action::proceed;
      });
      if (capped) break;
    }
    frontier = std::move(next_frontier);
    T_prev = Tl;
    T_prev.resize(table.size(), inf);
  }
  created = table.size();
  if (capped) {
    r.status = status::work_limit;
    return r;
  }

  pipeline_dp_last_stage(g, o, e, pc, table, parent, frontier, T_prev, U, r);
  return r;
}

/// Runs passes under rising bounds U: from the lower bound max(Σ c_u / (S·R), max c_u / R)
/// upwards by 5 % per pass, and finally the fixed-order DP's objective (a feasible partition, so
/// that pass cannot fail unless the fixed order is infeasible) or no bound at all. The first pass
/// that finds a partition has found an optimal one: every partition of value <= U was admitted.
/// A template only so that compiled mode compiles it once, in devplace::core (config.hpp).
template <int = 0>
partition_result pipeline_dp_core(const op_graph& g, const partition_options& o) {
  const auto start = std::chrono::steady_clock::now();
  partition_result r;
  const std::size_t n = g.num_vertices(), S = o.stages;
  if (S == 0 || S > n || o.cost.replicas == 0) {
    r.status = status::infeasible;
    return r;
  }
  const downset_enumerator e(g);
  const partition_result baseline = topo_dp_core(g, e.order(), o);
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr double slack = 1 + 1e-9;  // admits values equal up to rounding
  double total = 0, heaviest = 0, bytes = 0;
  for (std::size_t v = 0; v < n; ++v) {
    total += g.compute_ms(v);
    heaviest = std::max(heaviest, g.compute_ms(v));
  }
  for (double b : g.edge_bytes_by_id()) bytes += b;
  const double R = static_cast<double>(o.cost.replicas);
  const double lower = std::max(total / (static_cast<double>(S) * R), heaviest / R);
  // No stage can take longer than all compute plus all communication: a pass under that bound
  // admits every partition.
  const double everything = stage_time_ms(total, bytes, o.cost) * slack + 1e-12;
  double upper = std::min(everything, baseline.status == status::feasible ? baseline.objective_ms * slack + 1e-12 : inf);
  const bool bounded = o.upper_bound_ms < upper;
  if (bounded) upper = o.upper_bound_ms * slack + 1e-12;
  if (lower > upper) {  // not even the lower bound fits under the caller's bound
    r.status = status::infeasible;
    r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  std::uint64_t created = 0, total_created = 0;
  for (double U = lower > 0 ? lower * slack : 1e-9;; U = std::min(U * 1.05, upper)) {
    const bool last = !(U < upper);
    r = pipeline_dp_pass(g, o, e, last ? upper : U, created);
    total_created = std::max(total_created, created);
    if (r.status == status::optimal || r.status == status::work_limit || last) break;
  }
  if (r.status == status::work_limit && baseline.status == status::feasible &&
      baseline.objective_ms <= o.upper_bound_ms) {
    r = baseline;  // the fixed-order solution, for what it is worth
    r.status = status::work_limit;
  }
  r.downsets = total_created;
  r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

#if !DEVPLACE_HEADER_ONLY
extern template partition_result pipeline_dp_core<0>(const op_graph&, const partition_options&);
#endif

}  // namespace detail

/// The exact DP partitioner over any `profiled_dag` (copied once into an `op_graph`).
template <profiled_dag G>
[[nodiscard]] partition_result pipeline_dp(const G& g, const partition_options& o) {
  check_cost_options(o.cost, "pipeline_dp");
  if constexpr (std::is_same_v<G, op_graph>)
    return detail::pipeline_dp_core(g, o);
  else
    return detail::pipeline_dp_core(to_op_graph(g), o);
}

}  // namespace devplace
