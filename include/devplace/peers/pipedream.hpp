#pragma once
/// \file peers/pipedream.hpp
/// PipeDream's optimizer (Narayanan et al., SOSP 2019; msr-fiddle/pipedream
/// `optimizer/optimizer_graph_hierarchical.py`), reproduced on its own inputs: the same value of
/// "Time per stage in pipeline" for the same `graph.txt` and flags. docs/peers/pipedream.md
/// describes the model, its units and where upstream quirks decide a result.
///
///   op_graph g = io::read_pipedream("alexnet/graph.txt");
///   auto r = peers::pipedream_optimize(g, {.levels = {{.machines = 4, .bandwidth = 11e9},
///                                                     {.machines = 4, .bandwidth = 1.1e9}}});
///   // r.objective_s == 0.01715851636...  (REFERENCE_RESULTS.md, `-n 4 4 -b 11e9 1.1e9`)
///
/// Pipeline: `transform::drop_pipedream_io` (drop `Input*` sources, then `__getitem__` sinks),
/// `antichain_states` from the first remaining source, then one DP per level (level 1 = GPUs in
/// a machine first). Per level with n machines, bandwidth B and nm machines per lower unit
/// (1 at level 1, the previous level's n above), A[a][j][m] is the best time per stage of the
/// state range (a, j] on exactly m+1 machines:
///   base   A = (T(a,j) + 4·m·P(a,j) / (B·(m+1)) / nm) / (m+1)
///   split  A = min over k with a ≺ k ≺ j and m' = 1..m of
///          max(A[a][k][m−m'], (T(k,j) + 4·(m'−1)·P(k,j) / (B·m')) / m',
///              2·out(k) / (B·m') / r, [j not final] 2·out(j) / (B·m') / r)
/// with T = Σ (fwd + bwd) / 1000 seconds at level 1 and the lower level's A[a][j][n_low − 1]
/// above, P = parameter bytes, out(s) = Σ activation bytes over aug(s), r the activation
/// compression ratio (no transfer terms when unset). Upstream ranges split at states k that
/// merely follow a in its own topological order; here k must satisfy I(a) ⊊ I(k) ⊊ I(j) (the
/// sound ranges, see the docs). Complexity: O(S² · n²) for the top level, O(S³ · n²) for a
/// lower level (all start rows), S = number of states.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "devplace/algorithm/antichain_states.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/dag/operator_properties.hpp"
#include "devplace/status.hpp"
#include "devplace/transform/remove_vertices.hpp"

namespace devplace::peers {

/// One level of the machine hierarchy: `machines` units joined at `bandwidth` bytes/s.
struct pipedream_level {
  std::size_t machines = 1;
  double bandwidth = 1e9;  ///< bytes/s (upstream `-b`, default 1e9)
};

struct pipedream_options {
  std::vector<pipedream_level> levels;  ///< level 1 (GPUs inside a machine) first; upstream `-n`, `-b`
  bool straight = false;                ///< `--straight_pipeline`: one machine per stage
  bool use_fewer_machines = false;      ///< `--use_fewer_machines`
  std::optional<double> memory_size;    ///< bytes; set = `--use_memory_constraint -s M`
  /// `--activation_compression_ratio`; the published reference runs pass 1. Unset = upstream's
  /// default None, which drops every transfer term.
  std::optional<double> activation_compression_ratio = 1.0;
  bool drop_io = true;  ///< drop `Input*` sources and `__getitem__` sinks first (upstream always does)
};

/// A stage: the state range (from, to] of one level with its replication factor.
struct pipedream_stage {
  std::size_t level = 0;             ///< 0 = level 1
  std::ptrdiff_t from_state = -1;    ///< -1 = the empty start
  std::size_t to_state = 0;
  std::size_t replicas = 1;
  std::vector<std::size_t> vertices;  ///< vertices of the input graph, ascending
};

struct pipedream_result {
  devplace::status status = status::infeasible;  ///< optimal, or infeasible (memory)
  double objective_s = std::numeric_limits<double>::infinity();  ///< "Time per stage in pipeline", s
  double single_stage_s = 0;   ///< Σ (fwd + bwd) / 1000
  double data_parallel_s = 0;  ///< the optimizer's plain data-parallel estimate
  std::size_t states = 0;      ///< antichain states ("Total number of states")
  std::size_t vertices = 0;    ///< operators after dropping inputs and `__getitem__` sinks
  std::vector<pipedream_stage> stages;  ///< top level first, then each lower level in order
  std::vector<std::ptrdiff_t> stage_of;  ///< per input vertex: lowest-level stage index, −1 if dropped
  double time_s = 0;                     ///< wall time of the call
};

namespace detail {

struct pd_entry {
  double t = std::numeric_limits<double>::quiet_NaN();  ///< NaN = no value (upstream None)
  int k = -1;        ///< split state, −1 for a single stage
  int replicas = 0;  ///< machines of the last stage
  int rest = 0;      ///< m index of the part before the split
};

struct pd_states {
  std::size_t S = 0, final_state = 0;
  std::vector<double> ct, act, par, out;  ///< per row: row 0 = start (0), row i+1 = state i
  std::vector<char> less;                 ///< less[i * S + j]: I(i) ⊊ I(j)
  std::vector<std::vector<int>> preds;    ///< preds[j] = {k : I(k) ⊊ I(j)}, ascending
  [[nodiscard]] bool below(std::size_t row, std::size_t j) const { return row == 0 || less[(row - 1) * S + j]; }
};

struct pd_table {
  std::size_t rows = 0, S = 0, n = 0;
  std::vector<pd_entry> e;
  pd_entry& at(std::size_t r, std::size_t j, std::size_t m) { return e[(r * S + j) * n + m]; }
  [[nodiscard]] const pd_entry& at(std::size_t r, std::size_t j, std::size_t m) const { return e[(r * S + j) * n + m]; }
};

struct pd_level_ctx {
  const pd_states* st;
  const pd_table* lower;  ///< nullptr at level 1
  std::size_t n, nm;
  double bw;
  const pipedream_options* opt;
  /// T(row, j): the time of the range (row, j] from the level below.
  [[nodiscard]] double T(std::size_t row, std::size_t j) const {
    if (!lower) return st->ct[j + 1] - st->ct[row];
    return lower->at(row, j, lower->n - 1).t;
  }
};

inline bool pd_mem_ok(const pd_level_ctx& c, double act_par, std::size_t divisor, std::size_t used) {
  if (!c.opt->memory_size) return true;
  const double stash = std::ceil(static_cast<double>(c.n - used) / static_cast<double>(divisor)) * act_par;
  return !(stash > *c.opt->memory_size);
}

inline void pd_base(const pd_level_ctx& c, pd_table& A, std::size_t r) {
  const pd_states& s = *c.st;
  const std::size_t max_m = c.opt->straight ? 1 : c.n;
  for (std::size_t j = 0; j < s.S; ++j) {
    if (!s.below(r, j)) continue;
    const double T = c.T(r, j), P = s.par[j + 1] - s.par[r], act = s.act[j + 1] - s.act[r];
    for (std::size_t m = 0; m < max_m; ++m) {
      if (!pd_mem_ok(c, act + P, m + 1, m + 1)) continue;
      double dp = (4.0 * static_cast<double>(m) * P) / (c.bw * static_cast<double>(m + 1));
      dp /= static_cast<double>(c.nm);
      if (!std::isnan(T)) A.at(r, j, m) = {(T + dp) / static_cast<double>(m + 1), -1, static_cast<int>(m + 1), 0};
    }
  }
}

inline void pd_split(const pd_level_ctx& c, pd_table& A, std::size_t r, std::size_t m, std::size_t j) {
  const pd_states& s = *c.st;
  const auto* ratio = c.opt->activation_compression_ratio ? &*c.opt->activation_compression_ratio : nullptr;
  pd_entry best = A.at(r, j, m);
  if (c.opt->use_fewer_machines) {
    const pd_entry& prev = A.at(r, j, m - 1);
    if (!std::isnan(prev.t) && (std::isnan(best.t) || prev.t < best.t)) best = prev;
  }
  const std::size_t max_mp = c.opt->straight ? 1 : m;
  for (const int kk : s.preds[j]) {
    const auto k = static_cast<std::size_t>(kk);
    if (!s.below(r, k) || (r > 0 && r - 1 == k)) continue;
    const double T = c.T(k + 1, j);
    if (std::isnan(T)) continue;
    const double P = s.par[j + 1] - s.par[k + 1], act = s.act[j + 1] - s.act[k + 1];
    for (std::size_t mp = 1; mp <= max_mp; ++mp) {
      if (!pd_mem_ok(c, act + P, mp, m + 1)) continue;
      const auto dmp = static_cast<double>(mp);
      const double last = (T + (4.0 * (dmp - 1) * P) / (c.bw * dmp)) / dmp;
      const pd_entry& before = A.at(r, k, m - mp);
      if (std::isnan(before.t)) continue;
      double t = std::max(before.t, last);
      if (ratio) {
        t = std::max(t, (2.0 * s.out[k + 1]) / (c.bw * dmp) / *ratio);
        if (j != s.final_state) t = std::max(t, (2.0 * s.out[j + 1]) / (c.bw * dmp) / *ratio);
      }
      if (std::isnan(best.t) || best.t > t) best = {t, kk, static_cast<int>(mp), static_cast<int>(m - mp)};
    }
  }
  A.at(r, j, m) = best;
}

/// One level's table: every start row when `all_rows`, else the start row only.
inline pd_table pd_solve_level(const pd_level_ctx& c, bool all_rows) {
  pd_table A{all_rows ? c.st->S + 1 : 1, c.st->S, c.n, {}};
  A.e.assign(A.rows * A.S * A.n, pd_entry{});
  for (std::size_t r = 0; r < A.rows; ++r) {
    pd_base(c, A, r);
    for (std::size_t m = 1; m < c.n; ++m)
      for (std::size_t j = 0; j < c.st->S; ++j)
        if (c.st->below(r, j) && (r == 0 || r - 1 != j)) pd_split(c, A, r, m, j);
  }
  return A;
}

inline pd_states pd_prepare(const op_graph& g, const antichain_state_set& states) {
  pd_states s;
  s.S = states.size();
  const std::size_t n = g.num_vertices();
  const auto& e = states.enumerator;
  s.ct.assign(s.S + 1, 0.0);
  s.act.assign(s.S + 1, 0.0);
  s.par.assign(s.S + 1, 0.0);
  s.out.assign(s.S + 1, 0.0);
  bool found = false;
  for (std::size_t i = 0; i < s.S; ++i) {
    states.ideal[i].for_each([&](std::size_t p) {
      const auto& a = g.op(e.vertex_at(p));
      s.ct[i + 1] += (a.fwd_ms + a.bwd_ms) / 1000.0;
      s.act[i + 1] += std::max(a.out_bytes, 0.0);
      s.par[i + 1] += a.param_bytes;
    });
    states.augmented[i].for_each([&](std::size_t p) { s.out[i + 1] += std::max(g.op(e.vertex_at(p)).out_bytes, 0.0); });
    if (states.ideal[i].count() == n) {
      s.final_state = i;
      found = true;
    }
  }
  if (!found) throw std::invalid_argument("pipedream_optimize: no antichain state covers the whole graph");
  s.less.assign(s.S * s.S, 0);
  s.preds.assign(s.S, {});
  for (std::size_t j = 0; j < s.S; ++j)
    for (std::size_t k = 0; k < j; ++k)  // states are ordered by |I|: a strict subset comes first
      if (states.ideal[k].count() < states.ideal[j].count() && states.ideal[k].is_subset_of(states.ideal[j])) {
        s.less[k * s.S + j] = 1;
        s.preds[j].push_back(static_cast<int>(k));
      }
  return s;
}

}  // namespace detail

namespace detail {

struct pd_range {
  std::size_t row, to, replicas;
};

/// The stages of A[row][j][m], in pipeline order.
inline std::vector<pd_range> pd_unwind(const pd_table& A, std::size_t row, std::size_t j, std::size_t m) {
  std::vector<pd_range> r;
  pd_entry e = A.at(row, j, m);
  while (e.k >= 0) {
    r.push_back({static_cast<std::size_t>(e.k) + 1, j, static_cast<std::size_t>(e.replicas)});
    j = static_cast<std::size_t>(e.k);
    e = A.at(row, j, static_cast<std::size_t>(e.rest));
  }
  r.push_back({row, j, static_cast<std::size_t>(e.replicas)});
  return {r.rbegin(), r.rend()};
}

inline void pd_validate(const pipedream_options& o) {
  if (o.levels.empty()) throw std::invalid_argument("pipedream_optimize: levels must not be empty");
  for (const auto& l : o.levels) {
    if (l.machines == 0) throw std::invalid_argument("pipedream_optimize: every level needs at least 1 machine");
    if (!(l.bandwidth > 0) || !std::isfinite(l.bandwidth))
      throw std::invalid_argument("pipedream_optimize: bandwidths must be finite and > 0");
  }
  if (o.memory_size && !(*o.memory_size > 0)) throw std::invalid_argument("pipedream_optimize: memory_size must be > 0");
  if (o.activation_compression_ratio &&
      (!(*o.activation_compression_ratio > 0) || !std::isfinite(*o.activation_compression_ratio)))
    throw std::invalid_argument("pipedream_optimize: activation_compression_ratio must be finite and > 0");
}

}  // namespace detail

/// Runs PipeDream's optimizer on `g` (read with `io::read_pipedream`). Throws
/// `std::invalid_argument` on bad options or a graph left empty by the preprocessing.
[[nodiscard]] inline pipedream_result pipedream_optimize(const op_graph& g, const pipedream_options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  detail::pd_validate(opt);
  transform::kept_graph kept;
  if (opt.drop_io) {
    kept = transform::drop_pipedream_io(g);
  } else {
    kept.graph = g;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) kept.original.push_back(v);
  }
  const op_graph& h = kept.graph;
  if (h.num_vertices() == 0) throw std::invalid_argument("pipedream_optimize: no operators left after dropping inputs");
  std::size_t start = 0;
  while (!h.in_edges(start).empty()) ++start;  // the first source in file order
  const antichain_state_set states = antichain_states(h, start);
  const detail::pd_states st = detail::pd_prepare(h, states);

  pipedream_result res;
  res.states = st.S;
  res.vertices = h.num_vertices();
  std::vector<detail::pd_table> tables;
  std::size_t nm = 1;
  for (std::size_t l = 0; l < opt.levels.size(); ++l) {
    const detail::pd_level_ctx c{&st, l ? &tables.back() : nullptr, opt.levels[l].machines, nm, opt.levels[l].bandwidth, &opt};
    tables.push_back(detail::pd_solve_level(c, l + 1 < opt.levels.size()));
    nm = opt.levels[l].machines;
  }
  // The optimizer's own figures: single stage and plain data parallelism.
  res.single_stage_s = st.ct[st.final_state + 1];
  double dp = res.single_stage_s;
  nm = 1;
  for (const auto& l : opt.levels) {
    const auto n = static_cast<double>(l.machines);
    const double sync = ((4 * (n - 1) * st.par[st.final_state + 1]) / (l.bandwidth * n)) / static_cast<double>(nm);
    dp = (dp + sync) / n;
    nm = l.machines;
  }
  res.data_parallel_s = dp;
  const double obj = tables.back().at(0, st.final_state, opt.levels.back().machines - 1).t;
  if (std::isnan(obj)) {
    res.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
  }
  res.status = status::optimal;
  res.objective_s = obj;
  // Stages, top level first; each level refines the ranges of the level above.
  std::vector<detail::pd_range> ranges{{0, st.final_state, 0}};
  res.stage_of.assign(g.num_vertices(), -1);
  for (std::size_t l = opt.levels.size(); l-- > 0;) {
    std::vector<detail::pd_range> next;
    for (const auto& rg : ranges)
      for (const auto& s : detail::pd_unwind(tables[l], rg.row, rg.to, opt.levels[l].machines - 1)) next.push_back(s);
    for (const auto& s : next) {
      pipedream_stage ps{l, static_cast<std::ptrdiff_t>(s.row) - 1, s.to, s.replicas, {}};
      auto set = states.ideal[s.to];
      if (s.row > 0) set.subtract(states.ideal[s.row - 1]);
      set.for_each([&](std::size_t p) { ps.vertices.push_back(kept.original[states.enumerator.vertex_at(p)]); });
      std::sort(ps.vertices.begin(), ps.vertices.end());
      if (l == 0)
        for (auto v : ps.vertices) res.stage_of[v] = static_cast<std::ptrdiff_t>(&s - next.data());
      res.stages.push_back(std::move(ps));
    }
    ranges = std::move(next);
  }
  res.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

/// The same on any `profiled_dag` (a user type, a view), copied once into an `op_graph` with
/// `to_operator_graph` (dag/operator_properties.hpp). PipeDream's activation size of an operator
/// is its `output_bytes` when the type gives one, else the largest `edge_bytes` leaving it (in
/// PipeDream's own files every edge carries its source's activation size). `drop_io` drops
/// operators by name (`Input*`, `__getitem__*`): it reads `op_label`, so a type without labels
/// keeps every operator.
template <profiled_dag G>
  requires(!std::is_same_v<G, op_graph>)
[[nodiscard]] pipedream_result pipedream_optimize(const G& g, const pipedream_options& opt) {
  op_graph copy = to_operator_graph(g);
  op_graph_builder b;
  for (std::size_t v = 0; v < copy.num_vertices(); ++v) {
    op_attributes a = copy.op(v);
    a.name = a.op;  // PipeDream's preprocessing reads names
    if (a.out_bytes < 0) {
      a.out_bytes = 0;
      for (auto w : copy.out_edges(v)) a.out_bytes = std::max(a.out_bytes, copy.edge_bytes(v, w));
    }
    b.add_op(std::move(a));
  }
  for (std::size_t u = 0; u < copy.num_vertices(); ++u)
    for (auto w : copy.out_edges(u)) b.add_edge(u, w, copy.edge_bytes(u, w));
  return pipedream_optimize(std::move(b).build(), opt);
}

}  // namespace devplace::peers
