#pragma once
/// \file ilp/builders/partition.hpp
/// Pipeline partitioning as a MILP, in the constraint formulation of the MCM paper (seed-mcm.md
/// §1.3, §2.7), with the phase-1 cost model of docs/formats.md "Cost conventions" (Parmesan eq. 3
/// and 14): split an operator graph into exactly S non-empty stages, ordered so that no edge runs
/// backwards (hence convex, with an acyclic stage graph), every stage within R · device memory,
/// minimising the largest stage time t(X, R). The optimum equals `pipeline_dp`'s.
///
/// Formulation (v operators, s = 0..S−1 stages, e = (u, v) edges with b_e bytes, β̄ in GB/s):
///   x_{v,s} ∈ {0,1}                 Σ_s x_{v,s} = 1                    (one stage per operator)
///   X_v(k) = Σ_{s≤k} x_{v,s}:       X_v(k) ≤ X_u(k)  ∀(u,v), k < S−1   (MCM eq. 2, cumulative form:
///                                                                        labels never decrease)
///   Σ_v x_{v,s} ≥ 1                                                     (exactly S non-empty stages)
///   c_{e,s} ∈ [0,1]:  c_{e,s} ≥ x_{u,s} − x_{v,s},  c_{e,s} ≥ x_{v,s} − x_{u,s}   (e cut by stage s)
///   t ≥ ( Σ_v c_u(v) x_{v,s} + Σ_e b_e/(β̄·10^6) c_{e,s} ) / R        ∀s  (eq. 3)
///   ( Σ_v max(m_fwd, m_bwd)(v) x_{v,s} + Σ_e b_e c_{e,s} ) / MB ≤ R·DM  ∀s  (eq. 14; only when DM is finite)
///   minimise t.
/// c_{e,s} only has lower bounds: it equals "exactly one end of e in s" wherever a row binds, and
/// larger values only make rows harder, so the optimum is exact. Tightening (`tighten`, on by
/// default, valid): operator v cannot lie in a stage s < S − n + |anc(v)| (the later stages need
/// non-ancestors) nor s > n − 1 − |desc(v)|, and t ≥ max(Σ c_u / (S·R), max_v c_u(v) / R).
/// Size: n·S binaries, |E|·S continuous, about n + S + |E|(S−1) + 2|E|S + 2S rows.
///
/// Repair (seed-mcm.md §2.3 FIX mode as an optimisation, §2.7 "repair projection"): the valid
/// partition closest to a candidate labelling y (any values; entries ≥ S are never matched):
///   minimise Σ_v Σ_{s ≠ y_v} x_{v,s}   (= the number of operators whose stage changes)
/// subject to the same validity rows (assignment, monotone labels, non-empty stages, memory), plus
/// `time_weight` · t when that weight is > 0 (ties broken towards a faster partition).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/algorithm/reachability.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/expr.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"
#include "devplace/partition/result.hpp"
#include "devplace/partition/stage_cost.hpp"

namespace devplace::ilp {

struct partition_ilp_options {
  bool tighten = true;  ///< fix x_{v,s} = 0 outside the stages v can take; bounds on t
  /// MCM eq. 4 (seed-mcm §2.7 D-F): chip edges e_{a,b} >= x_{u,a} + x_{v,b} - 1, chip reachability
  /// r_{a,b} >= e_{a,b}, r_{a,b} >= r_{a,c} + e_{c,b} - 1, and e_{a,b} + r_{a,c} + e_{c,b} <= 2 for
  /// a < c < b: every stage-graph edge is the only path between its stages. Off by default.
  bool chip_triangle = false;
  /// MCM eq. 3 with a free K (seed-mcm §2.7 C): stages may stay empty as long as the used ones
  /// are a prefix (z_s >= x_{v,s}, z_s <= sum_v x_{v,s}, z_{s+1} <= z_s), instead of exactly S
  /// non-empty stages. Off by default.
  bool free_stage_count = false;
};

struct partition_repair_options {
  bool tighten = true;       ///< as in partition_ilp_options
  double time_weight = 0;    ///< > 0: add time_weight · t (ms) to the objective
};

/// The result of a repair: the partition and how many operators changed stage.
struct partition_repair_result {
  partition_result partition;
  std::size_t changed = 0;  ///< operators v with stage_of[v] != candidate[v]
};

class partition_ilp;
/// The shared builder: partitioning (candidate == nullptr) or repair (defined below).
template <int = 0>
partition_ilp build_partition_model(const op_graph& g, const partition_options& o, bool tighten, bool with_time,
                                    const std::vector<std::size_t>* candidate, double time_weight,
                                    bool chip_triangle = false, bool free_stage_count = false);

/// A partitioning (or repair) MILP and what is needed to read its solutions back.
class partition_ilp {
 public:
  [[nodiscard]] const ilp::model& model() const noexcept { return m_; }
  [[nodiscard]] ilp::model& model() noexcept { return m_; }
  /// x_{v,s}.
  [[nodiscard]] var assignment(std::size_t v, std::size_t s) const { return x_.at(v * o_.stages + s); }
  /// t, the largest stage time (absent from a repair model without time weight).
  [[nodiscard]] var objective_var() const noexcept { return t_; }

  /// The stage of every operator in `sol`. Throws std::invalid_argument without a labelling.
  template <int = 0>
  [[nodiscard]] std::vector<std::size_t> stages(const solution& sol) const {
    if (!sol.has_values() || sol.values.size() != m_.num_vars())
      throw std::invalid_argument("partition_ilp: the solution has no values for this model");
    const std::size_t n = g_.num_vertices(), S = o_.stages;
    std::vector<std::size_t> stage_of(n, S);
    for (std::size_t v = 0; v < n; ++v)
      for (std::size_t s = 0; s < S; ++s)
        if (sol.values[x_[v * S + s].index] > 0.5) stage_of[v] = s;
    for (auto s : stage_of)
      if (s == S) throw std::invalid_argument("partition_ilp: an operator has no stage in the solution");
    return stage_of;
  }

  /// Reads a solver's answer back as a `partition_result` (objective and per-stage figures
  /// evaluated from scratch with eq. 3/14; status optimal only when the solver proved it; for a
  /// repair model, optimal means "closest", not "fastest"). Throws std::runtime_error when the
  /// solver failed.
  template <int = 0>
  [[nodiscard]] partition_result decode(const solution& sol) const {
    partition_result r;
    r.status = result_status(sol);
    r.time_s = sol.time_s;
    if (sol.has_values() && r.status != status::infeasible) {
      r.stage_of = stages(sol);
      finish_partition(g_, o_, r);
    }
    return r;
  }

  /// For a repair model: the partition and the number of operators moved away from the candidate.
  template <int = 0>
  [[nodiscard]] partition_repair_result decode_repair(const solution& sol) const {
    partition_repair_result rr;
    rr.partition = decode(sol);
    for (std::size_t v = 0; v < rr.partition.stage_of.size(); ++v)
      if (v >= candidate_.size() || rr.partition.stage_of[v] != candidate_[v]) ++rr.changed;
    return rr;
  }

 private:
  template <int>
  friend partition_ilp build_partition_model(const op_graph&, const partition_options&, bool, bool,
                                             const std::vector<std::size_t>*, double, bool, bool);
  partition_ilp(const op_graph& g, const partition_options& o) : m_("devplace_partition"), g_(g), o_(o) {}

  ilp::model m_;
  op_graph g_;
  partition_options o_;
  std::vector<var> x_;
  var t_;
  std::vector<std::size_t> candidate_;
};

/// MCM eq. 3 with a free number of used stages: z_s marks stage s used; used stages form a prefix.
template <int = 0>
void add_free_stage_rows(model& m, const std::vector<var>& x, std::size_t n, std::size_t S) {
  std::vector<var> z(S);
  for (std::size_t s = 0; s < S; ++s) z[s] = m.add_binary("z_s" + std::to_string(s));
  m.fix(z[0], 1);
  for (std::size_t s = 0; s < S; ++s) {
    linear_expr sum;
    for (std::size_t v = 0; v < n; ++v) {
      sum.add(x[v * S + s], 1.0);
      m.add(linear_expr(x[v * S + s]) <= linear_expr(z[s]), "used_v" + std::to_string(v) + "_s" + std::to_string(s));
    }
    m.add(linear_expr(z[s]) <= sum, "nonempty_s" + std::to_string(s));
    if (s + 1 < S) m.add(linear_expr(z[s + 1]) <= linear_expr(z[s]), "prefix_s" + std::to_string(s));
  }
}

/// MCM eq. 4 rows (seed-mcm §2.7 D, E, F) over the stage assignment x (n x S, row-major).
template <int = 0>
void add_chip_triangle_rows(model& m, const std::vector<var>& x,
                                   const std::vector<std::pair<std::size_t, std::size_t>>& edges, std::size_t S) {
  std::vector<var> e(S * S), r(S * S);
  const auto id = [&](std::size_t a, std::size_t b) { return std::to_string(a) + "_" + std::to_string(b); };
  for (std::size_t a = 0; a < S; ++a)
    for (std::size_t b = a + 1; b < S; ++b) {
      e[a * S + b] = m.add_continuous(0, 1, "ce_" + id(a, b));
      r[a * S + b] = m.add_continuous(0, 1, "cr_" + id(a, b));
      m.add(linear_expr(r[a * S + b]) >= linear_expr(e[a * S + b]), "reach_" + id(a, b));
    }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto [u, v] = edges[i];
    for (std::size_t a = 0; a < S; ++a)
      for (std::size_t b = a + 1; b < S; ++b) {
        linear_expr rhs = linear_expr(x[u * S + a]) + linear_expr(x[v * S + b]);
        rhs.add_constant(-1.0);
        m.add(linear_expr(e[a * S + b]) >= rhs, "chipedge_e" + std::to_string(i) + "_" + id(a, b));
      }
  }
  for (std::size_t a = 0; a < S; ++a)
    for (std::size_t c = a + 1; c < S; ++c)
      for (std::size_t b = c + 1; b < S; ++b) {
        linear_expr path = linear_expr(r[a * S + c]) + linear_expr(e[c * S + b]);
        path.add_constant(-1.0);
        m.add(linear_expr(r[a * S + b]) >= path, "closure_" + id(a, b) + "_" + std::to_string(c));
        m.add(linear_expr(e[a * S + b]) + linear_expr(r[a * S + c]) + linear_expr(e[c * S + b]) <= 2.0,
              "triangle_" + id(a, b) + "_" + std::to_string(c));
      }
}

namespace detail {

/// An edge of the operator graph with its bytes.
struct partition_edge {
  std::size_t u, v;
  double bytes;
};

template <int = 0>
std::vector<partition_edge> partition_edges(const op_graph& g) {
  const auto& st = g.structure();
  std::vector<partition_edge> edges;
  for (std::size_t u = 0; u < g.num_vertices(); ++u) {
    const auto succ = st.out_edges(u);
    for (std::size_t k = 0; k < succ.size(); ++k)
      edges.push_back({u, static_cast<std::size_t>(succ[k]),
                       g.edge_bytes_of(static_cast<csr_dag::edge_type>(st.first_out_edge(u) + k))});
  }
  return edges;
}

/// cut[i][s] ≥ |x[u, s] − x[v, s]| for every edge i = (u, v) with bytes (the others get none).
template <int = 0>
std::vector<std::vector<var>> add_cut_indicators(model& m, const std::vector<var>& x,
                                                        const std::vector<partition_edge>& edges, std::size_t S) {
  std::vector<std::vector<var>> cut(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (edges[i].bytes <= 0) continue;
    cut[i].resize(S);
    for (std::size_t s = 0; s < S; ++s) {
      const var c = m.add_continuous(0, 1, "cut_e" + std::to_string(i) + "_s" + std::to_string(s));
      cut[i][s] = c;
      const linear_expr xu(x[edges[i].u * S + s]), xv(x[edges[i].v * S + s]);
      m.add(linear_expr(c) >= xu - xv, "cutout_e" + std::to_string(i) + "_s" + std::to_string(s));
      m.add(linear_expr(c) >= xv - xu, "cutin_e" + std::to_string(i) + "_s" + std::to_string(s));
    }
  }
  return cut;
}

/// The bottleneck t ≥ each stage's time (compute and cut bytes, divided by R); returns t.
template <int = 0>
var add_partition_time_rows(model& m, const op_graph& g, const partition_options& o, const std::vector<var>& x,
                                   const std::vector<partition_edge>& edges,
                                   const std::vector<std::vector<var>>& cut, bool tighten) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  const double R = static_cast<double>(o.cost.replicas);
  auto X = [&](std::size_t v, std::size_t s) { return x[v * S + s]; };
  double total = 0, heaviest = 0;
  for (std::size_t v = 0; v < n; ++v) {
    total += g.compute_ms(v);
    heaviest = std::max(heaviest, g.compute_ms(v));
  }
  const double tmin = tighten ? std::max(total / (static_cast<double>(S) * R), heaviest / R) : 0.0;
  const var t = m.add_continuous(tmin, infinity, "t");
  const double per_byte = cut_ms_per_byte(o.cost) / R;  // ms per cut byte, divided by R (stage_cost.hpp)
  for (std::size_t s = 0; s < S; ++s) {
    linear_expr time;
    for (std::size_t v = 0; v < n; ++v)
      if (g.compute_ms(v) != 0) time.add(X(v, s), g.compute_ms(v) / R);
    for (std::size_t i = 0; i < edges.size(); ++i)
      if (!cut[i].empty()) time.add(cut[i][s], edges[i].bytes * per_byte);
    m.add(linear_expr(t) >= time, "time_s" + std::to_string(s));
  }
  return t;
}

/// Each stage's memory within R devices' memory (times the micro-batches).
template <int = 0>
void add_partition_memory_rows(model& m, const op_graph& g, const partition_options& o, const std::vector<var>& x,
                                      const std::vector<partition_edge>& edges,
                                      const std::vector<std::vector<var>>& cut) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  const double R = static_cast<double>(o.cost.replicas);
  const double MB = static_cast<double>(std::max<std::size_t>(o.cost.micro_batches, 1));
  auto X = [&](std::size_t v, std::size_t s) { return x[v * S + s]; };
  // Σ mem x + Σ b c <= R · DM · MB, in GB so that coefficients stay moderate.
  constexpr double gb = 1e-9;
  for (std::size_t s = 0; s < S; ++s) {
    linear_expr mem;
    for (std::size_t v = 0; v < n; ++v)
      if (g.memory_bytes(v) != 0) mem.add(X(v, s), g.memory_bytes(v) * gb);
    for (std::size_t i = 0; i < edges.size(); ++i)
      if (!cut[i].empty()) mem.add(cut[i][s], edges[i].bytes * gb);
    m.add(mem <= R * o.cost.device_memory_bytes * MB * gb, "memory_s" + std::to_string(s));
  }
}

}  // namespace detail

template <int>
partition_ilp build_partition_model(const op_graph& g, const partition_options& o, bool tighten, bool with_time,
                                    const std::vector<std::size_t>* candidate, double time_weight, bool chip_triangle,
                                    bool free_stage_count) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  if (S == 0) throw std::invalid_argument("partition_ilp: at least one stage is needed");
  check_cost_options(o.cost, "partition_ilp");
  partition_ilp p(g, o);
  auto& m = p.m_;
  if (candidate) {
    p.candidate_ = *candidate;
    m.set_name("devplace_partition_repair");
  }
  const bool memory = std::isfinite(o.cost.device_memory_bytes);
  const auto& st = g.structure();

  // Stage range of each operator.
  std::vector<std::size_t> lo(n, 0), hi(n, S - 1);
  if (tighten && n > 0) {
    const reachability_index reach(st);
    for (std::size_t v = 0; v < n; ++v) {
      const std::size_t anc = reach.ancestors(v).count(), desc = reach.descendants(v).count();
      lo[v] = S + anc > n && !free_stage_count ? S + anc - n : 0;
      hi[v] = std::min(S - 1, n - 1 - desc);
    }
  }
  p.x_.resize(n * S);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t s = 0; s < S; ++s) {
      p.x_[v * S + s] = m.add_binary("x_v" + std::to_string(v) + "_s" + std::to_string(s));
      if (s < lo[v] || s > hi[v]) m.fix(p.x_[v * S + s], 0);
    }
  auto X = [&](std::size_t v, std::size_t s) { return p.x_[v * S + s]; };

  const std::vector<detail::partition_edge> edges = detail::partition_edges(g);

  for (std::size_t v = 0; v < n; ++v) {
    linear_expr e;
    for (std::size_t s = 0; s < S; ++s) e.add(X(v, s), 1.0);
    m.add(e == 1.0, "assign_v" + std::to_string(v));
  }
  if (!free_stage_count) {
    for (std::size_t s = 0; s < S; ++s) {
      linear_expr e;
      for (std::size_t v = 0; v < n; ++v) e.add(X(v, s), 1.0);
      m.add(e >= 1.0, "nonempty_s" + std::to_string(s));
    }
  } else {
    add_free_stage_rows(m, p.x_, n, S);
  }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    linear_expr cum_u, cum_v;
    for (std::size_t k = 0; k + 1 < S; ++k) {
      cum_u.add(X(edges[i].u, k), 1.0);
      cum_v.add(X(edges[i].v, k), 1.0);
      m.add(cum_v <= cum_u, "order_e" + std::to_string(i) + "_k" + std::to_string(k));
    }
  }

  if (chip_triangle) {
    std::vector<std::pair<std::size_t, std::size_t>> uv;
    for (const auto& e : edges) uv.emplace_back(e.u, e.v);
    add_chip_triangle_rows(m, p.x_, uv, S);
  }

  // Cut indicators, only for edges whose bytes enter a row.
  const std::vector<std::vector<var>> cut =
      with_time || memory ? detail::add_cut_indicators(m, p.x_, edges, S) : std::vector<std::vector<var>>(edges.size());

  if (with_time) p.t_ = detail::add_partition_time_rows(m, g, o, p.x_, edges, cut, tighten);
  if (memory) detail::add_partition_memory_rows(m, g, o, p.x_, edges, cut);

  if (!candidate) {
    m.minimize(p.t_);
  } else {
    linear_expr moved;
    for (std::size_t v = 0; v < n; ++v) {
      const std::size_t y = v < candidate->size() ? (*candidate)[v] : S;
      for (std::size_t s = 0; s < S; ++s)
        if (s != y) moved.add(X(v, s), 1.0);
    }
    if (with_time) moved.add(p.t_, time_weight);
    m.minimize(moved);
  }
  return p;
}

/// Builds the partitioning MILP of `g` for `o` (stages, replicas, micro-batches, device memory,
/// bandwidth; `max_downsets` and `upper_bound_ms` are ignored).
template <int = 0>
[[nodiscard]] partition_ilp build_partition_ilp(const op_graph& g, const partition_options& o,
                                                       const partition_ilp_options& io = {}) {
  return build_partition_model(g, o, io.tighten, true, nullptr, 0.0, io.chip_triangle, io.free_stage_count);
}

/// Builds the repair MILP: the valid partition of `g` (same validity as build_partition_ilp)
/// with the fewest operators moved away from `candidate` (one stage per operator).
template <int = 0>
[[nodiscard]] partition_ilp build_partition_repair_ilp(const op_graph& g, const partition_options& o,
                                                              const std::vector<std::size_t>& candidate,
                                                              const partition_repair_options& ro = {}) {
  if (candidate.size() != g.num_vertices())
    throw std::invalid_argument("partition_repair_ilp: the candidate has " + std::to_string(candidate.size()) +
                                " entries, the graph " + std::to_string(g.num_vertices()) + " operators");
  if (!(ro.time_weight >= 0)) throw std::invalid_argument("partition_repair_ilp: time_weight must be >= 0");
  return build_partition_model(g, o, ro.tighten, ro.time_weight > 0, &candidate, ro.time_weight);
}

/// Any `profiled_dag`: copied into an op_graph first.
template <profiled_dag G>
  requires(!std::same_as<G, op_graph>)
[[nodiscard]] partition_ilp build_partition_ilp(const G& g, const partition_options& o,
                                                const partition_ilp_options& io = {}) {
  return build_partition_ilp(to_op_graph(g), o, io);
}

/// Builds, solves with `solver` and decodes in one call.
template <ilp_solver Solver>
[[nodiscard]] partition_result solve_partition_ilp(const op_graph& g, const partition_options& o, const Solver& solver,
                                                   const partition_ilp_options& io = {}, const solve_options& so = {}) {
  const auto p = build_partition_ilp(g, o, io);
  return p.decode(solver.solve(p.model(), so));
}

/// Repairs `candidate` with `solver` in one call.
template <ilp_solver Solver>
[[nodiscard]] partition_repair_result repair_partition_ilp(const op_graph& g, const partition_options& o,
                                                           const std::vector<std::size_t>& candidate,
                                                           const Solver& solver, const partition_repair_options& ro = {},
                                                           const solve_options& so = {}) {
  const auto p = build_partition_repair_ilp(g, o, candidate, ro);
  return p.decode_repair(solver.solve(p.model(), so));
}

}  // namespace devplace::ilp
