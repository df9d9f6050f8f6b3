#pragma once
/// \file ilp/builders/mapping.hpp
/// The device-mapping problem of Parmesan (seed-parmesan.md §7.1–7.2, docs/formats.md "Cost
/// conventions") as a MILP: place the S·R stage replicas of a `stage_graph` on distinct devices of
/// any `device_topology`, minimising the largest stage-replica time under the p2p (eq. 6/8) or the
/// allreduce (eq. 7/9) model. The optimum is the objective in ms that `map_devices` and
/// `devplace map` report for the same input.
///
/// Formulation (v = s·R + r a stage replica, d, e devices, T(d, e, x) = x / (B(d, e)·10^6) +
/// latency(d, e) in ms, the `link_costs` transfer time):
///   x_{v,d} ∈ {0,1}          Σ_d x_{v,d} = 1 (every replica placed)   Σ_v x_{v,d} ≤ 1 (injective)
///   for every pair {v, w} whose joint placement a time reads (p2p: replica r of two stages with
///   M(s, s') > 0; allreduce: neighbours on the ring of a stage), continuous y^{vw}_{d,e} ≥ 0 for
///   d ≠ e with
///       Σ_e y^{vw}_{d,e} = x_{v,d} ∀d,   Σ_d y^{vw}_{d,e} = x_{w,e} ∀e
///   (the first-level RLT linearisation of x_{v,d}·x_{w,e}: exact for binary x, and tighter than
///   y ≥ x + x − 1)
///   p2p:        t ≥ c_u(s) + Σ_{s'∈adj(s)} Σ_{d≠e} T(d, e, M(s, s')) · y^{v,v'}_{d,e}    ∀ v = (s, r)
///   allreduce:  t ≥ c_u(s) + Σ_{d≠e} 2(R−1)·T(d, e, P(s)/R) · y^{(s,q),(s,q+1)}_{d,e}   ∀ s, q (ring links)
///   minimise t,      t ≥ max_s c_u(s).
/// Symmetry breaking (`symmetry_breaking`, valid for the model, on by default): p2p — the replica
/// copies are interchangeable, so the replicas of stage 0 take increasing devices; allreduce — a
/// ring can be rotated, so replica 0 of every stage has the smallest device of its ring, and (on
/// a symmetric topology) reflected, so dev(s, 1) < dev(s, R−1); rings of identical stages (equal
/// c_u and P) are ordered by their smallest device.
/// Size: S·R·D binaries; D(D−1) continuous columns and 2D rows per pair (R·|E_S| pairs under p2p,
/// S·R ring links under allreduce); S·R (p2p) or S·R (allreduce) time rows.
///
///   auto ilp = devplace::ilp::build_mapping_ilp(sg, topology, {.cost = devplace::cost_choice::p2p});
///   devplace::mapping_result r = ilp.decode(devplace::ilp::glpk_solver{}.solve(ilp.model(), {}));
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/expr.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/mapping_result.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace::ilp {

struct mapping_ilp_options {
  cost_choice cost = cost_choice::automatic;  ///< automatic: the paper's ratio rule (select_cost_model)
  bool symmetry_breaking = true;              ///< the valid symmetry-breaking rows described above
};

class mapping_ilp;
template <int = 0>
[[nodiscard]] mapping_ilp build_mapping_ilp(const stage_graph& g, const link_costs& L, const mapping_ilp_options& o = {});

/// A mapping MILP and what is needed to read its solutions back.
class mapping_ilp {
 public:
  [[nodiscard]] const ilp::model& model() const noexcept { return m_; }
  [[nodiscard]] ilp::model& model() noexcept { return m_; }
  /// The resolved cost model (never `automatic`).
  [[nodiscard]] cost_choice cost() const noexcept { return cost_; }
  /// x_{v,d}: replica r of stage s (v = s·R + r) on device d.
  [[nodiscard]] var placement(std::size_t s, std::size_t r, std::size_t d) const {
    return x_.at((s * g_.replicas() + r) * L_.devices() + d);
  }
  /// The epigraph variable t (the objective, ms).
  [[nodiscard]] var objective_var() const noexcept { return t_; }

  /// The device of every stage replica in `sol` (S rows of R devices). Throws
  /// std::invalid_argument when `sol` does not hold a valid placement.
  template <int = 0>
  [[nodiscard]] device_mapping devices(const solution& sol) const {
    if (!sol.has_values() || sol.values.size() != m_.num_vars())
      throw std::invalid_argument("mapping_ilp: the solution has no values for this model");
    const std::size_t V = g_.vertices(), D = L_.devices();
    std::vector<std::size_t> dev(V, unplaced);
    for (std::size_t v = 0; v < V; ++v)
      for (std::size_t d = 0; d < D; ++d)
        if (sol.values[x_[v * D + d].index] > 0.5) {
          if (dev[v] != unplaced) throw std::invalid_argument("mapping_ilp: a stage replica is placed twice");
          dev[v] = d;
        }
    return unflatten(g_, dev);  // evaluate() checks injectivity
  }

  /// The model's columns for a given mapping (S rows of R distinct devices): x from the mapping,
  /// y = x·x, t the largest stage-replica time — a feasible point whose objective is the
  /// mapping's, to pass as `solve_options::start` (e.g. the backtracking mapper's answer, so a
  /// time-limited solve never returns worse). Throws std::invalid_argument on a malformed mapping.
  template <int = 0>
  [[nodiscard]] std::vector<double> start(const device_mapping& mapping) const {
    const std::size_t S = g_.stages(), R = g_.replicas(), D = L_.devices();
    if (mapping.size() != S) throw std::invalid_argument("mapping_ilp::start: the mapping has the wrong number of stages");
    std::vector<std::size_t> dev(g_.vertices());
    std::vector<bool> used(D, false);
    for (std::size_t s = 0; s < S; ++s) {
      if (mapping[s].size() != R) throw std::invalid_argument("mapping_ilp::start: stage " + std::to_string(s) + " has the wrong number of replicas");
      for (std::size_t r = 0; r < R; ++r) {
        const std::size_t d = mapping[s][r];
        if (d >= D || used[d]) throw std::invalid_argument("mapping_ilp::start: device " + std::to_string(d) + " is out of range or used twice");
        used[d] = true;
        dev[g_.vertex(s, r)] = d;
      }
    }
    if (symmetry_breaking_) canonicalize(dev);
    std::vector<double> x(m_.num_vars(), 0.0);
    for (std::size_t v = 0; v < dev.size(); ++v) x[x_[v * D + dev[v]].index] = 1.0;
    for (const auto& pv : pairs_) x[pv.y[dev[pv.v] * D + dev[pv.w]].index] = 1.0;
    double t = m_.get(t_).lower;
    for (const auto i : time_rows_) t = std::max(t, m_.rows()[i].rhs - m_.activity(i, x));  // x[t] = 0 here
    x[t_.index] = t;
    return x;
  }

  /// Reads a solver's answer back as a `mapping_result`: the mapping, its objective evaluated
  /// from scratch under the model, the solver's proved bound, and the status (optimal only when
  /// the solver proved it). Throws std::runtime_error when the solver failed (ilp::result_status).
  template <int = 0>
  [[nodiscard]] mapping_result decode(const solution& sol) const {
    mapping_result r;
    r.status = result_status(sol);
    r.cost = std::string(to_string(cost_));
    r.time_s = sol.time_s;
    if (sol.has_values() && r.status != status::infeasible) {
      r.device_of = devices(sol);
      r.objective_ms = cost_ == cost_choice::allreduce ? evaluate(g_, L_, r.device_of, allreduce_cost{}).objective_ms
                                                       : evaluate(g_, L_, r.device_of, p2p_cost{}).objective_ms;
      r.lower_bound_ms = std::isnan(sol.best_bound) ? 0.0 : std::min(sol.best_bound, r.objective_ms);
      r.optimal = r.status == status::optimal;
      if (r.optimal) r.lower_bound_ms = r.objective_ms;
    } else if (r.status == status::optimal || r.status == status::feasible) {
      throw std::invalid_argument("mapping_ilp: the solution has no values");
    } else if (!std::isnan(sol.best_bound)) {
      r.lower_bound_ms = sol.best_bound;
    }
    return r;
  }

 private:
  template <int>
  friend mapping_ilp build_mapping_ilp(const stage_graph&, const link_costs&, const mapping_ilp_options&);
  mapping_ilp(const stage_graph& g, const link_costs& L) : m_("devplace_mapping"), g_(g), L_(L) {}

  ilp::model m_;
  stage_graph g_;
  link_costs L_;
  cost_choice cost_ = cost_choice::p2p;
  struct pair_vars {
    std::size_t v, w;     // stage replicas, v < w
    std::vector<var> y;   // D×D, index d*D + e (v on d, w on e); unused on the diagonal
  };
  /// Moves `dev` (device per stage replica) to the member of its symmetry class that satisfies
  /// the symmetry-breaking rows, keeping its objective: p2p — renumber the replica chains by the
  /// device of stage 0; allreduce — rotate every ring so replica 0 has its smallest device, reflect
  /// it on a symmetric topology when dev(s, 1) > dev(s, R−1), and sort the rings of consecutive
  /// identical stages (equal c_u and P) by their smallest device.
  template <int = 0>
  void canonicalize(std::vector<std::size_t>& dev) const {
    const std::size_t S = g_.stages(), R = g_.replicas();
    if (R < 2) return;
    auto ring = [&](std::size_t s) {
      std::vector<std::size_t> d(R);
      for (std::size_t r = 0; r < R; ++r) d[r] = dev[g_.vertex(s, r)];
      return d;
    };
    auto set_ring = [&](std::size_t s, const std::vector<std::size_t>& d) {
      for (std::size_t r = 0; r < R; ++r) dev[g_.vertex(s, r)] = d[r];
    };
    if (cost_ != cost_choice::allreduce) {
      std::vector<std::size_t> order(R);
      for (std::size_t r = 0; r < R; ++r) order[r] = r;
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t b) { return dev[g_.vertex(0, a)] < dev[g_.vertex(0, b)]; });
      const auto old = dev;
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t r = 0; r < R; ++r) dev[g_.vertex(s, r)] = old[g_.vertex(s, order[r])];
      return;
    }
    for (std::size_t s = 0; s < S; ++s) {
      auto d = ring(s);
      std::rotate(d.begin(), std::min_element(d.begin(), d.end()), d.end());
      if (R >= 3 && L_.symmetric() && d[1] > d[R - 1]) std::reverse(d.begin() + 1, d.end());
      set_ring(s, d);
    }
    auto same = [&](std::size_t a, std::size_t b) {
      return g_.compute_ms(a) == g_.compute_ms(b) && g_.param_bytes(a) == g_.param_bytes(b);
    };
    std::vector<bool> done(S, false);
    for (std::size_t s = 0; s < S; ++s) {  // each class of identical stages, sorted by smallest device
      if (done[s]) continue;
      std::vector<std::size_t> members;
      for (std::size_t k = s; k < S; ++k)
        if (!done[k] && same(s, k)) {
          members.push_back(k);
          done[k] = true;
        }
      std::vector<std::vector<std::size_t>> rings;
      for (auto k : members) rings.push_back(ring(k));
      std::sort(rings.begin(), rings.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
      for (std::size_t i = 0; i < members.size(); ++i) set_ring(members[i], rings[i]);
    }
  }

  std::vector<var> x_;
  var t_;
  bool symmetry_breaking_ = true;
  std::vector<pair_vars> pairs_;
  std::vector<std::size_t> time_rows_;  // rows t − Σ ... ≥ c_u(s)
};

namespace detail {

/// Rows that break the symmetries of the mapping MILP (R ≥ 2): the copies of the pipeline in
/// device order (p2p); with allreduce, each stage's ring rotated to start on its smallest device
/// (and reflected on a symmetric topology), and the rings of identical stages in device order.
/// x[v·D + d]: vertex v on device d.
template <int = 0>
void add_mapping_symmetry_rows(model& m, const stage_graph& g, const link_costs& L, const std::vector<var>& x,
                                      bool allreduce) {
  const std::size_t S = g.stages(), R = g.replicas(), D = L.devices();
  auto devnum = [&](std::size_t v) {
    linear_expr e;
    for (std::size_t d = 1; d < D; ++d) e.add(x[v * D + d], static_cast<double>(d));
    return e;
  };
  if (!allreduce) {
    for (std::size_t r = 0; r + 1 < R; ++r)
      m.add(devnum(g.vertex(0, r)) + 1.0 <= devnum(g.vertex(0, r + 1)), "sym_copies_" + std::to_string(r));
  } else {
    for (std::size_t s = 0; s < S; ++s) {
      for (std::size_t q = 1; q < R; ++q)
        m.add(devnum(g.vertex(s, 0)) + 1.0 <= devnum(g.vertex(s, q)), "sym_rotate_s" + std::to_string(s) + "_" + std::to_string(q));
      if (R >= 3 && L.symmetric())
        m.add(devnum(g.vertex(s, 1)) + 1.0 <= devnum(g.vertex(s, R - 1)), "sym_reflect_s" + std::to_string(s));
    }
    // Identical stages: their rings can be swapped; order them by their smallest device.
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t s2 = s + 1; s2 < S; ++s2) {
        if (g.compute_ms(s) != g.compute_ms(s2) || g.param_bytes(s) != g.param_bytes(s2)) continue;
        bool between_identical = false;  // only order consecutive members of a class
        for (std::size_t k = s + 1; k < s2; ++k)
          if (g.compute_ms(k) == g.compute_ms(s) && g.param_bytes(k) == g.param_bytes(s)) between_identical = true;
        if (!between_identical)
          m.add(devnum(g.vertex(s, 0)) + 1.0 <= devnum(g.vertex(s2, 0)),
                "sym_swap_s" + std::to_string(s) + "_s" + std::to_string(s2));
      }
  }
}

}  // namespace detail

/// Builds the mapping MILP of `g` on the devices of `L`. Throws std::invalid_argument when the
/// topology has fewer than S·R devices, for the combined model, or for per-stage replica counts
/// (the model is written for R copies of the stage graph; the backtracking mapper takes those).
template <int>
mapping_ilp build_mapping_ilp(const stage_graph& g, const link_costs& L, const mapping_ilp_options& o) {
  DEVPLACE_EXPECTS(g.uniform_replicas(),
                   "mapping_ilp: the stages have different replica counts; the MILP needs the same R for every stage");
  const std::size_t S = g.stages(), R = g.replicas(), V = g.vertices(), D = L.devices();
  if (V > D)
    throw std::invalid_argument("mapping_ilp: " + std::to_string(S) + " stages x " + std::to_string(R) +
                                " replicas need " + std::to_string(V) + " devices, the topology has " + std::to_string(D));
  if (o.cost == cost_choice::combined)
    throw std::invalid_argument("mapping_ilp: the combined cost model has no MILP (use p2p or allreduce)");
  mapping_ilp p(g, L);
  p.cost_ = select_cost_model(g, o.cost);
  p.symmetry_breaking_ = o.symmetry_breaking;
  const bool allreduce = p.cost_ == cost_choice::allreduce;
  auto& m = p.m_;
  auto vname = [&](std::size_t v) { return "s" + std::to_string(v / R) + "r" + std::to_string(v % R); };

  p.x_.resize(V * D);
  for (std::size_t v = 0; v < V; ++v)
    for (std::size_t d = 0; d < D; ++d) p.x_[v * D + d] = m.add_binary("x_" + vname(v) + "_d" + std::to_string(d));
  auto X = [&](std::size_t v, std::size_t d) { return p.x_[v * D + d]; };
  double tmin = 0;
  for (std::size_t s = 0; s < S; ++s) tmin = std::max(tmin, g.compute_ms(s));
  p.t_ = m.add_continuous(tmin, infinity, "t");

  for (std::size_t v = 0; v < V; ++v) {
    linear_expr e;
    for (std::size_t d = 0; d < D; ++d) e.add(X(v, d), 1.0);
    m.add(e == 1.0, "place_" + vname(v));
  }
  for (std::size_t d = 0; d < D; ++d) {
    linear_expr e;
    for (std::size_t v = 0; v < V; ++v) e.add(X(v, d), 1.0);
    m.add(e <= 1.0, "device_" + std::to_string(d));
  }

  // Linearised pair placements y^{vw}_{d,e} (v < w), created on first use.
  using pair_vars = mapping_ilp::pair_vars;
  auto& pairs = p.pairs_;
  auto pair_of = [&](std::size_t a, std::size_t b) -> const pair_vars& {
    const std::size_t v = std::min(a, b), w = std::max(a, b);
    for (const auto& pv : pairs)
      if (pv.v == v && pv.w == w) return pv;
    pair_vars pv{v, w, std::vector<var>(D * D)};
    const std::string base = "y_" + vname(v) + "_" + vname(w) + "_";
    for (std::size_t d = 0; d < D; ++d)
      for (std::size_t e = 0; e < D; ++e)
        if (d != e) pv.y[d * D + e] = m.add_continuous(0, 1, base + std::to_string(d) + "_" + std::to_string(e));
    for (std::size_t d = 0; d < D; ++d) {
      linear_expr rowsum, colsum;
      for (std::size_t e = 0; e < D; ++e)
        if (d != e) {
          rowsum.add(pv.y[d * D + e], 1.0);
          colsum.add(pv.y[e * D + d], 1.0);
        }
      m.add(rowsum == linear_expr(X(v, d)), "link_" + vname(v) + "_" + vname(w) + "_a" + std::to_string(d));
      m.add(colsum == linear_expr(X(w, d)), "link_" + vname(v) + "_" + vname(w) + "_b" + std::to_string(d));
    }
    pairs.push_back(std::move(pv));
    return pairs.back();
  };
  // Σ_{d≠e} T(p(from), p(to), bytes) for the pair {from, to}, oriented from -> to.
  auto transfer = [&](std::size_t from, std::size_t to, double bytes, bool ring = false) {
    const auto& pv = pair_of(from, to);
    linear_expr e;
    for (std::size_t d = 0; d < D; ++d)
      for (std::size_t f = 0; f < D; ++f) {
        if (d == f) continue;
        // pv.y[a*D + b]: pv.v on a, pv.w on b.
        const std::size_t a = from == pv.v ? d : f, b = from == pv.v ? f : d;
        const double c = ring ? L.ring_transfer_ms(a, b, bytes, R) : L.transfer_ms(a, b, bytes);
        if (c != 0) e.add(pv.y[d * D + f], c);
      }
    return e;
  };

  if (!allreduce) {
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t r = 0; r < R; ++r) {
        const std::size_t v = g.vertex(s, r);
        linear_expr time(g.compute_ms(s));
        for (auto s2 : g.neighbours(s)) time += transfer(v, g.vertex(s2, r), g.message_bytes(s, s2));
        if (!time.empty()) p.time_rows_.push_back(m.add(linear_expr(p.t_) >= time, "time_" + vname(v)));
      }
  } else {
    for (std::size_t s = 0; s < S; ++s) {
      const double x = g.allreduce_bytes(s);
      if (x <= 0 || R < 2) continue;
      for (std::size_t q = 0; q < R; ++q) {
        const std::size_t a = g.vertex(s, q), b = g.vertex(s, (q + 1) % R);
        p.time_rows_.push_back(
            m.add(linear_expr(p.t_) >= g.compute_ms(s) + transfer(a, b, x, true), "ring_" + vname(a) + "_" + vname(b)));
      }
    }
  }

  if (o.symmetry_breaking && R >= 2) detail::add_mapping_symmetry_rows(m, g, L, p.x_, allreduce);
  m.minimize(p.t_);
  return p;
}

/// Same, on any `device_topology`.
template <device_topology T>
[[nodiscard]] mapping_ilp build_mapping_ilp(const stage_graph& g, const T& topology, const mapping_ilp_options& o = {}) {
  return build_mapping_ilp(g, link_costs(topology), o);
}

/// Builds, solves with `solver` and decodes in one call.
template <ilp_solver Solver>
[[nodiscard]] mapping_result solve_mapping_ilp(const stage_graph& g, const link_costs& L, const Solver& solver,
                                               const mapping_ilp_options& o = {}, const solve_options& so = {}) {
  const auto p = build_mapping_ilp(g, L, o);
  return p.decode(solver.solve(p.model(), so));
}

}  // namespace devplace::ilp
