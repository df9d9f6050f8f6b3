#pragma once
/// \file phaze/layer_schedule.hpp
/// Per-layer scheduling for PHAZE (seed-phaze.md §1.4 step 4, §2, §6 items 5, 6, 39; docs/phaze.md):
/// the operators of one layer become the scheduling ILP's input (ilp/builders/phaze_schedule.hpp):
///   1. zero-cost operators (`op_class::nop`) are removed, their predecessors linked to their
///      successors (reachability inside the layer is kept);
///   2. a tensor-core operator whose only successor is a vector-core operator that has no other
///      predecessor is fused with it (one fused operator with the TC estimate, as PHAZE's code);
///   3. the layer is scheduled forward, and backward on the reversed DAG, by a list scheduler
///      (`list_schedule`) and, when a solver is given and the layer has at most
///      `max_ilp_pairs` incomparable pairs, by the ILP with a time limit. The result says per
///      pass whether the makespan is proved optimal (the ILP finished) or heuristic.
/// The list scheduler: operators by decreasing bottom level (longest path to a sink at
/// min(ℓ, ℓ̂)), each either intra-op parallel after everything scheduled so far, or on the core
/// (pair) of its type that lets it finish first, after the last parallel operator; the earlier
/// finish wins (ties: one core). It runs three times — that greedy choice, one core always,
/// parallel always (the serial Σ ℓ̂) — and keeps the shortest. O(n² + n · cores). Every schedule
/// it returns passes `ilp::validate_phaze_schedule`.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/ilp/builders/phaze_schedule.hpp"
#include "devplace/phaze/estimator.hpp"

namespace devplace::phaze {

/// One layer ready for scheduling: a DAG (ids in topological order) and its operators per pass.
struct layer_problem {
  std::vector<std::vector<int>> successors;
  std::vector<ilp::phaze_operator> forward, backward;
};

/// Removes the zero-cost operators and fuses TC → VC pairs among `members` (vertices of `g`, in a
/// topological order), whose latencies are `lat[v]`.
template <int = 0>
[[nodiscard]] layer_problem make_layer_problem(const op_graph& g, std::span<const std::size_t> members,
                                                      std::span<const op_class> kind, std::span<const op_latency> lat) {
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> local(g.num_vertices(), none);
  for (std::size_t i = 0; i < members.size(); ++i) local[members[i]] = i;
  // effective[i]: the non-nop operators a member stands for (itself, or through a chain of nops)
  std::vector<std::vector<std::size_t>> effective(members.size()), preds(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto v = members[i];
    std::vector<std::size_t> through;
    for (auto u : g.in_edges(v))
      if (local[u] != none) {
        DEVPLACE_EXPECTS(local[u] < i, "phaze: make_layer_problem: members must be in a topological order");
        through.insert(through.end(), effective[local[u]].begin(), effective[local[u]].end());
      }
    std::sort(through.begin(), through.end());
    through.erase(std::unique(through.begin(), through.end()), through.end());
    if (kind[v] == op_class::nop) effective[i] = std::move(through);
    else effective[i] = {i}, preds[i] = std::move(through);
  }
  std::vector<std::vector<std::size_t>> succs(members.size());
  for (std::size_t i = 0; i < members.size(); ++i)
    for (auto p : preds[i]) succs[p].push_back(i);
  // fusion: a TC operator's only successor is a VC operator with no other predecessor
  std::vector<std::size_t> fused_into(members.size(), none);
  for (std::size_t i = 0; i < members.size(); ++i)
    if (kind[members[i]] == op_class::tensor && succs[i].size() == 1) {
      const auto w = succs[i][0];
      if (kind[members[w]] == op_class::vector && preds[w].size() == 1) fused_into[w] = i;
    }
  std::vector<std::size_t> id(members.size(), none);
  layer_problem p;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (kind[members[i]] == op_class::nop || fused_into[i] != none) continue;
    id[i] = p.forward.size();
    const auto& l = lat[members[i]];
    const bool fused = std::any_of(succs[i].begin(), succs[i].end(), [&](std::size_t w) { return fused_into[w] == i; });
    const auto k = fused ? ilp::phaze_op_kind::fused
                         : kind[members[i]] == op_class::tensor ? ilp::phaze_op_kind::tensor : ilp::phaze_op_kind::vector;
    p.forward.push_back({k, l.single_ms, l.parallel_ms});
    p.backward.push_back({k, l.single_bw_ms, l.parallel_bw_ms});
  }
  for (std::size_t i = 0; i < members.size(); ++i)
    if (fused_into[i] != none) id[i] = id[fused_into[i]];
  p.successors.resize(p.forward.size());
  for (std::size_t i = 0; i < members.size(); ++i)
    for (auto w : succs[i])
      if (id[i] != none && id[w] != id[i]) p.successors[id[i]].push_back(static_cast<int>(id[w]));
  for (auto& s : p.successors) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  return p;
}

/// The reversed DAG (the backward pass).
template <int = 0>
[[nodiscard]] std::vector<std::vector<int>> reversed(const std::vector<std::vector<int>>& succ) {
  std::vector<std::vector<int>> r(succ.size());
  for (std::size_t u = 0; u < succ.size(); ++u)
    for (int v : succ[u]) r[static_cast<std::size_t>(v)].push_back(static_cast<int>(u));
  return r;
}

namespace detail {

enum class parallel_choice { greedy, never, always };

template <int = 0>
ilp::phaze_schedule list_schedule_pass(const std::vector<std::vector<int>>& succ,
                                              const std::vector<std::vector<int>>& pred, const std::vector<double>& level,
                                              std::span<const ilp::phaze_operator> ops,
                                              const ilp::phaze_schedule_options& o, parallel_choice mode) {
  const std::size_t n = succ.size();
  ilp::phaze_schedule s;
  s.status = status::feasible;
  s.start.assign(n, 0);
  s.duration.assign(n, 0);
  s.parallel.assign(n, false);
  s.tensor_core.assign(n, -1);
  s.vector_core.assign(n, -1);
  std::vector<double> tc_free(o.tensor_cores, 0), vc_free(o.vector_cores, 0);
  std::vector<std::size_t> waiting(n);
  std::vector<bool> done(n, false);
  for (std::size_t v = 0; v < n; ++v) waiting[v] = pred[v].size();
  double barrier = 0, all_finish = 0;
  for (std::size_t step = 0; step < n; ++step) {
    std::size_t v = n;
    for (std::size_t u = 0; u < n; ++u)
      if (!done[u] && waiting[u] == 0 && (v == n || level[u] > level[v])) v = u;
    double ready = 0;
    for (int u : pred[v]) ready = std::max(ready, s.start[static_cast<std::size_t>(u)] + s.duration[static_cast<std::size_t>(u)]);
    const auto kind = ops[v].kind;
    const std::size_t cores = kind == ilp::phaze_op_kind::tensor ? o.tensor_cores
                              : kind == ilp::phaze_op_kind::vector ? o.vector_cores
                                                                   : std::min(o.tensor_cores, o.vector_cores);
    std::size_t best_core = 0;
    double best_start = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < cores; ++c) {
      const double free = kind == ilp::phaze_op_kind::tensor ? tc_free[c]
                          : kind == ilp::phaze_op_kind::vector ? vc_free[c] : std::max(tc_free[c], vc_free[c]);
      const double st = std::max({ready, barrier, free});
      if (st < best_start) best_start = st, best_core = c;
    }
    const double par_start = std::max(ready, all_finish);
    const bool parallel = mode == parallel_choice::always ||
                          (mode == parallel_choice::greedy && par_start + ops[v].parallel_latency < best_start + ops[v].latency);
    if (parallel) {
      s.parallel[v] = true;
      s.start[v] = par_start;
      s.duration[v] = ops[v].parallel_latency;
      barrier = par_start + ops[v].parallel_latency;
    } else {
      s.start[v] = best_start;
      s.duration[v] = ops[v].latency;
      const double fin = best_start + ops[v].latency;
      if (kind != ilp::phaze_op_kind::vector) tc_free[best_core] = fin, s.tensor_core[v] = static_cast<long>(best_core);
      if (kind != ilp::phaze_op_kind::tensor) vc_free[best_core] = fin, s.vector_core[v] = static_cast<long>(best_core);
    }
    all_finish = std::max(all_finish, s.start[v] + s.duration[v]);
    done[v] = true;
    for (int w : succ[v]) --waiting[static_cast<std::size_t>(w)];
  }
  s.makespan = all_finish;
  return s;
}

}  // namespace detail

/// The list schedule of the file comment; status `feasible`.
template <int = 0>
[[nodiscard]] ilp::phaze_schedule list_schedule(const std::vector<std::vector<int>>& succ,
                                                       std::span<const ilp::phaze_operator> ops,
                                                       const ilp::phaze_schedule_options& o) {
  const std::size_t n = succ.size();
  DEVPLACE_EXPECTS(ops.size() == n, "phaze: list_schedule: one operator per vertex");
  DEVPLACE_EXPECTS(o.tensor_cores >= 1 && o.vector_cores >= 1, "phaze: list_schedule: cores must be >= 1");
  const auto pred = reversed(succ);
  const auto topo = topological_sort(succ);
  DEVPLACE_EXPECTS(topo.status == status::optimal, "phaze: list_schedule: the layer has a cycle");
  std::vector<double> level(n, 0);
  for (auto it = topo.order.rbegin(); it != topo.order.rend(); ++it) {
    const auto v = *it;
    for (int w : succ[v]) level[v] = std::max(level[v], level[static_cast<std::size_t>(w)]);
    level[v] += std::min(ops[v].latency, ops[v].parallel_latency);
  }
  using detail::parallel_choice;
  auto best = detail::list_schedule_pass(succ, pred, level, ops, o, parallel_choice::greedy);
  for (auto mode : {parallel_choice::never, parallel_choice::always}) {
    auto s = detail::list_schedule_pass(succ, pred, level, ops, o, mode);
    if (s.makespan < best.makespan) best = std::move(s);
  }
  return best;
}

/// Incomparable pairs of a DAG (neither reaches the other): what makes the ILP hard.
template <int = 0>
[[nodiscard]] std::size_t incomparable_pairs(const std::vector<std::vector<int>>& succ) {
  const std::size_t n = succ.size();
  const auto topo = topological_sort(succ);
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (auto it = topo.order.rbegin(); it != topo.order.rend(); ++it)
    for (int w : succ[*it]) {
      reach[*it][static_cast<std::size_t>(w)] = true;
      for (std::size_t x = 0; x < n; ++x)
        if (reach[static_cast<std::size_t>(w)][x]) reach[*it][x] = true;
    }
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) pairs += !reach[i][j] && !reach[j][i];
  return pairs;
}

/// How one pass of one layer was scheduled.
enum class schedule_method { list, ilp_optimal, ilp_incumbent };

struct pass_schedule {
  double makespan_ms = 0;
  schedule_method method = schedule_method::list;
  [[nodiscard]] bool proved() const noexcept { return method == schedule_method::ilp_optimal; }
};

struct layer_timing {
  pass_schedule forward, backward;
  std::size_t operators = 0, incomparable = 0;
};

/// The solver placeholder: list scheduling only.
struct no_ilp {};

struct layer_schedule_options {
  double ilp_time_limit_s = 10;     ///< per pass (the lazy loop shares it)
  std::size_t max_ilp_pairs = 40;   ///< above this the ILP is not tried (seed-phaze.md §7.4)
};

namespace detail {

template <class Solver>
pass_schedule schedule_pass(const std::vector<std::vector<int>>& succ, std::span<const ilp::phaze_operator> ops,
                            const ilp::phaze_schedule_options& o, const Solver& solver, bool try_ilp,
                            const layer_schedule_options& lo) {
  pass_schedule r;
  r.makespan_ms = list_schedule(succ, ops, o).makespan;
  if constexpr (ilp::ilp_solver<Solver>) {
    if (try_ilp && !succ.empty()) {
      const auto s = ilp::solve_phaze_schedule(succ, ops, solver, o, {.time_limit_s = lo.ilp_time_limit_s});
      if (s.status == status::optimal) r = {s.makespan, schedule_method::ilp_optimal};
      else if (!s.start.empty() && s.makespan < r.makespan_ms) r = {s.makespan, schedule_method::ilp_incumbent};
    }
  }
  return r;
}

}  // namespace detail

/// Schedules both passes of a layer on configuration `c` (see the file comment).
template <class Solver = no_ilp>
[[nodiscard]] layer_timing schedule_layer(const layer_problem& p, const core_config& c, const Solver& solver = {},
                                          const layer_schedule_options& lo = {}) {
  const ilp::phaze_schedule_options o{.tensor_cores = c.num_tc, .vector_cores = c.num_vc};
  layer_timing t;
  t.operators = p.forward.size();
  t.incomparable = incomparable_pairs(p.successors);
  const bool try_ilp = t.incomparable <= lo.max_ilp_pairs;
  t.forward = detail::schedule_pass(p.successors, p.forward, o, solver, try_ilp, lo);
  t.backward = detail::schedule_pass(reversed(p.successors), p.backward, o, solver, try_ilp, lo);
  return t;
}

}  // namespace devplace::phaze
