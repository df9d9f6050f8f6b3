#pragma once
/// \file ilp/builders/phaze_schedule.hpp
/// PHAZE's operator scheduling ILP (seed-phaze.md §2): schedule the operators of one layer (any
/// `dag`) on one accelerator with `tensor_cores` tensor cores (TC) and `vector_cores` vector cores
/// (VC), minimising the makespan. Every operator runs either on one core of its type (a fused
/// operator on one TC+VC pair (c, c)) with latency ℓ, or intra-operator parallel (y = 1) with
/// latency ℓ̂ and then alone: nothing else runs while it does.
///
/// Formulation (i ≺ j: a path i ~> j; "incomparable": neither; H a big-M):
///   (1)  T ≥ t_i + p_i                      p_i = y_i ℓ̂_i + (1 − y_i) ℓ_i    (2, substituted)
///   (3)  x_ij + x_ji ≤ 1                    incomparable i, j (x only exists for those pairs;
///   (4)  x_ik ≥ x_ij + x_jk − 1             (5)/(6) make x_ij = 1, x_ji = 0 constants for i ≺ j)
///   (7)  t_i + p_i ≤ t_j                    edges i → j (paths follow)
///   (8)  t_i + p_i − H (1 − x_ij) ≤ t_j     incomparable i, j
///   (9)  x_ij + x_ji ≥ y_i                  incomparable i, j
///   (10) y_i + Σ_c z^tc_ic = 1              TC and fused operators
///   (11) y_i + Σ_c z^vc_ic = 1              VC and fused operators
///   (12)-(14) a TC operator has no z^vc, a VC operator no z^tc, a fused operator one pair variable
///        per c < min(#TC, #VC) used in both (10) and (11)
///   (15) x_ij + x_ji ≥ z^tc_ic + z^tc_jc − 1  incomparable i, j, c < #TC    (16) the same for z^vc
///   minimise T,  0 ≤ t_i, T ≤ H = Σ_i min(ℓ_i, ℓ̂_i) (the serial schedule, which also makes (8)
///   valid, seed-phaze.md §2.6).
/// (3) and (9) are written for ordered incomparable pairs, (15)/(16) for unordered ones; for
/// two fused operators the VC copy of (15) is skipped (same pair variable, same row). A fused
/// operator's z at an unpaired core (c ≥ min(#TC, #VC)) is left out: (10), (11), (14) force it
/// to 0 anyway. (4) is implied when every latency is > 0 (a cycle in x contradicts (7)/(8));
/// `transitivity` adds it always, never, or automatically when some latency is 0, and drops the
/// triples where a constant makes it vacuous (x_ik ≡ 1, x_ij ≡ 0 or x_jk ≡ 0). Symmetry breaking
/// (only without fused operators): the k-th operator of a type may only use cores 0..k of it.
/// Zero-latency operators are kept (seed-phaze.md §6 item 6 suggests contracting them first):
/// they take a core, and are ordered like any other operator, so one cannot sit strictly inside
/// another operator's run on the same core (the ILP's semantics, also of the decoder, the lazy
/// loop and the validator).
/// Size, for p incomparable pairs: 1 + 2n + 2p columns plus #TC per TC operator, #VC per VC
/// operator, min(#TC, #VC) per fused one = O(n² + n(#TC + #VC)); rows n (1) + |E| (7) + 5p
/// (3, 8, 9) + n (10/11) + at most p(#TC + #VC) (15/16), plus at most n(n−1)(n−2) for (4).
///
/// The z families can be left out (`tensor_core_rows`, `vector_core_rows`). The decoder then gives
/// cores greedily by start time, and reports through `cores_assigned` whether that worked; a
/// schedule without it may overcommit cores (the model is then a relaxation).
/// `solve_phaze_schedule` runs the lazy loop of seed-phaze.md §2.4 on that: solve without both
/// families; if the decoded schedule can be given cores it is optimal (its makespan is the
/// relaxation's optimum); otherwise solve once more with both families (at most two solves; the
/// second gets what is left of the time limit). The greedy check is stricter than the seed's per-instant core
/// count, which misses that a fused operator needs the same index c on both core types; a failed
/// check only costs the second solve, so the answer is exact either way.
///
/// The decoder returns the ASAP schedule on the order given by x (seed-phaze.md §6 item 8): its
/// makespan is ≤ T, and equal to it at an optimum. If x has a cycle (only possible with
/// zero-latency operators and `transitivity` never) it uses the start times t instead.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/algorithm/reachability.hpp"
#include "devplace/dag/access.hpp"
#include "devplace/dag/concepts.hpp"
#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/expr.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"
#include "devplace/status.hpp"

namespace devplace::ilp {

enum class phaze_op_kind { tensor, vector, fused };

struct phaze_operator {
  phaze_op_kind kind = phaze_op_kind::tensor;
  double latency = 0;           ///< ℓ: on one core of its type (a TC+VC pair when fused)
  double parallel_latency = 0;  ///< ℓ̂: intra-operator parallel over all cores of its type
};

enum class phaze_transitivity { automatic, always, never };

struct phaze_schedule_options {
  std::size_t tensor_cores = 1;
  std::size_t vector_cores = 1;
  phaze_transitivity transitivity = phaze_transitivity::automatic;  ///< rows (4)
  bool tensor_core_rows = true;   ///< the z^tc family and its rows (10), (15)
  bool vector_core_rows = true;   ///< the z^vc family and its rows (11), (15)
  bool symmetry_breaking = true;  ///< cores of a type are interchangeable (only without fused ops)
};

/// A schedule of the operators of one layer.
struct phaze_schedule {
  devplace::status status = status::infeasible;
  double makespan = 0;                 ///< of the decoded (ASAP) schedule
  double lower_bound = 0;              ///< the solver's proved bound on the makespan
  std::vector<double> start;           ///< start time of every operator
  std::vector<double> duration;        ///< ℓ or ℓ̂
  std::vector<bool> parallel;          ///< intra-operator parallel (y)
  std::vector<long> tensor_core;       ///< TC index (the pair index of a fused op), −1 if none
  std::vector<long> vector_core;       ///< VC index (the pair index of a fused op), −1 if none
  double time_s = 0;
  std::size_t solves = 0;              ///< solver calls (2 when the lazy loop added the z rows)
};

namespace detail {

/// The input copied once: successors, reachability, operators.
struct phaze_input {
  std::size_t n = 0;
  std::vector<std::vector<std::size_t>> succ;
  reachability_index reach;
  std::vector<phaze_operator> ops;
};

template <dag G>
phaze_input make_phaze_input(const G& g, std::span<const phaze_operator> ops) {
  phaze_input in;
  in.n = devplace::num_vertices(g);
  if (ops.size() != in.n)
    throw std::invalid_argument("phaze_schedule: " + std::to_string(ops.size()) + " operators given for a graph of " +
                                std::to_string(in.n));
  in.succ.resize(in.n);
  for (std::size_t u = 0; u < in.n; ++u)
    for (auto v : devplace::out_edges(g, u)) in.succ[u].push_back(static_cast<std::size_t>(v));
  in.reach = reachability_index(g);
  in.ops.assign(ops.begin(), ops.end());
  for (const auto& o : in.ops)
    if (!std::isfinite(o.latency) || o.latency < 0 || !std::isfinite(o.parallel_latency) || o.parallel_latency < 0)
      throw std::invalid_argument("phaze_schedule: latencies must be finite and >= 0");
  return in;
}

/// Earliest-start schedule of `dur` on the precedence relation before(i, j); false on a cycle.
template <class Before>
bool asap(std::size_t n, const std::vector<double>& dur, Before before, std::vector<double>& start) {
  std::vector<std::size_t> indeg(n, 0), order;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && before(i, j)) ++indeg[j];
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) order.push_back(i);
  start.assign(n, 0.0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && before(i, j)) {
        start[j] = std::max(start[j], start[i] + dur[i]);
        if (--indeg[j] == 0) order.push_back(j);
      }
  }
  return order.size() == n;
}

/// Gives cores to the non-parallel operators of a fixed schedule, greedily by start time; false
/// when the greedy assignment fails (not a proof that none exists).
template <int = 0>
bool assign_cores(const phaze_input& in, const phaze_schedule_options& o, phaze_schedule& s) {
  const std::size_t n = in.n, pairs = std::min(o.tensor_cores, o.vector_cores);
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  // By start time; at a tie a zero-length operator first (it then ends before the other starts).
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return s.start[a] != s.start[b] ? s.start[a] < s.start[b] : s.duration[a] < s.duration[b];
  });
  std::vector<double> tc_free(o.tensor_cores, -std::numeric_limits<double>::infinity()),
      vc_free(o.vector_cores, -std::numeric_limits<double>::infinity());
  constexpr double eps = 1e-9;
  s.tensor_core.assign(n, -1);
  s.vector_core.assign(n, -1);
  for (std::size_t i : idx) {
    if (s.parallel[i]) continue;
    const double st = s.start[i], fi = st + s.duration[i];
    auto pick = [&](std::vector<double>& busy, std::size_t limit) -> long {
      for (std::size_t c = 0; c < limit; ++c)
        if (busy[c] <= st + eps) return static_cast<long>(c);
      return -1;
    };
    switch (in.ops[i].kind) {
      case phaze_op_kind::tensor: {
        const long c = pick(tc_free, o.tensor_cores);
        if (c < 0) return false;
        tc_free[static_cast<std::size_t>(c)] = std::max(tc_free[static_cast<std::size_t>(c)], fi);
        s.tensor_core[i] = c;
        break;
      }
      case phaze_op_kind::vector: {
        const long c = pick(vc_free, o.vector_cores);
        if (c < 0) return false;
        vc_free[static_cast<std::size_t>(c)] = std::max(vc_free[static_cast<std::size_t>(c)], fi);
        s.vector_core[i] = c;
        break;
      }
      case phaze_op_kind::fused: {
        long c = -1;
        for (std::size_t k = 0; k < pairs && c < 0; ++k)
          if (tc_free[k] <= st + eps && vc_free[k] <= st + eps) c = static_cast<long>(k);
        if (c < 0) return false;
        const auto k = static_cast<std::size_t>(c);
        tc_free[k] = vc_free[k] = std::max({tc_free[k], vc_free[k], fi});
        s.tensor_core[i] = s.vector_core[i] = c;
        break;
      }
    }
  }
  return true;
}

}  // namespace detail

/// Checks a schedule against the problem: durations match y, the makespan is the last finish
/// time, edges are respected, every non-parallel operator has a core of its kind (a pair for
/// fused) in range, and two operators that share a core, or of which one is intra-op parallel,
/// are ordered (one ends before the other starts; this also holds for zero-latency operators,
/// as in the ILP). Returns an empty string when valid, else what is wrong.
template <dag G>
[[nodiscard]] std::string validate_phaze_schedule(const G& g, std::span<const phaze_operator> ops,
                                                  const phaze_schedule_options& o, const phaze_schedule& s,
                                                  double tol = 1e-6) {
  const std::size_t n = devplace::num_vertices(g);
  if (s.start.size() != n || s.duration.size() != n || s.parallel.size() != n || s.tensor_core.size() != n ||
      s.vector_core.size() != n)
    return "wrong sizes";
  const std::size_t pairs = std::min(o.tensor_cores, o.vector_cores);
  auto fin = [&](std::size_t i) { return s.start[i] + s.duration[i]; };
  double last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double want = s.parallel[i] ? ops[i].parallel_latency : ops[i].latency;
    if (std::abs(s.duration[i] - want) > tol) return "operator " + std::to_string(i) + " has the wrong duration";
    if (s.start[i] < -tol) return "operator " + std::to_string(i) + " starts before 0";
    last = std::max(last, fin(i));
    if (s.parallel[i]) continue;
    const long tc = s.tensor_core[i], vc = s.vector_core[i];
    switch (ops[i].kind) {
      case phaze_op_kind::tensor:
        if (tc < 0 || static_cast<std::size_t>(tc) >= o.tensor_cores || vc >= 0) return "operator " + std::to_string(i) + " has no tensor core";
        break;
      case phaze_op_kind::vector:
        if (vc < 0 || static_cast<std::size_t>(vc) >= o.vector_cores || tc >= 0) return "operator " + std::to_string(i) + " has no vector core";
        break;
      case phaze_op_kind::fused:
        if (tc < 0 || tc != vc || static_cast<std::size_t>(tc) >= pairs) return "fused operator " + std::to_string(i) + " has no core pair";
        break;
    }
  }
  if (std::abs(last - s.makespan) > tol) return "the makespan is not the last finish time";
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : devplace::out_edges(g, u))
      if (fin(u) > s.start[static_cast<std::size_t>(v)] + tol)
        return "edge " + std::to_string(u) + " -> " + std::to_string(v) + " is not respected";
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const bool ordered = fin(i) <= s.start[j] + tol || fin(j) <= s.start[i] + tol;
      if (ordered) continue;
      if (s.parallel[i] || s.parallel[j])
        return "operators " + std::to_string(i) + " and " + std::to_string(j) + " overlap while one is intra-op parallel";
      if ((s.tensor_core[i] >= 0 && s.tensor_core[i] == s.tensor_core[j]) ||
          (s.vector_core[i] >= 0 && s.vector_core[i] == s.vector_core[j]))
        return "operators " + std::to_string(i) + " and " + std::to_string(j) + " overlap on one core";
    }
  return {};
}

/// A PHAZE scheduling ILP and what is needed to read its solutions back.
class phaze_schedule_ilp {
 public:
  [[nodiscard]] const ilp::model& model() const noexcept { return m_; }
  [[nodiscard]] ilp::model& model() noexcept { return m_; }
  [[nodiscard]] const phaze_schedule_options& options() const noexcept { return o_; }
  [[nodiscard]] var makespan_var() const noexcept { return T_; }
  [[nodiscard]] double big_m() const noexcept { return H_; }

  /// The ASAP schedule on the order of `sol` (x, y), with cores from z when the model has them,
  /// else given greedily (`cores_assigned` false when that fails). Throws std::runtime_error when
  /// the solver failed.
  template <int = 0>
  [[nodiscard]] phaze_schedule decode(const solution& sol, bool* cores_assigned = nullptr) const {
    phaze_schedule s;
    s.status = result_status(sol);
    s.time_s = sol.time_s;
    s.solves = 1;
    if (cores_assigned) *cores_assigned = false;
    if (!sol.has_values() || s.status == status::infeasible) {
      if (!std::isnan(sol.best_bound)) s.lower_bound = sol.best_bound;
      return s;
    }
    const std::size_t n = in_.n;
    auto val = [&](var v) { return sol.values.at(v.index); };
    s.parallel.resize(n);
    s.duration.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      s.parallel[i] = val(y_[i]) > 0.5;
      s.duration[i] = s.parallel[i] ? in_.ops[i].parallel_latency : in_.ops[i].latency;
    }
    auto before = [&](std::size_t i, std::size_t j) {
      if (in_.reach.reaches(i, j)) return true;
      if (in_.reach.comparable(i, j)) return false;
      return val(x_[i * n + j]) > 0.5;
    };
    if (!detail::asap(n, s.duration, before, s.start)) {  // x has a cycle (zero latencies): use t
      for (std::size_t i = 0; i < n; ++i) s.start[i] = val(t_[i]);
    }
    s.makespan = 0;
    for (std::size_t i = 0; i < n; ++i) s.makespan = std::max(s.makespan, s.start[i] + s.duration[i]);
    bool ok = true;
    if (o_.tensor_core_rows && o_.vector_core_rows) {
      s.tensor_core.assign(n, -1);
      s.vector_core.assign(n, -1);
      for (std::size_t i = 0; i < n; ++i) {
        if (s.parallel[i]) continue;
        for (std::size_t c = 0; c < ztc_[i].size(); ++c)
          if (val(ztc_[i][c]) > 0.5) s.tensor_core[i] = static_cast<long>(c);
        for (std::size_t c = 0; c < zvc_[i].size(); ++c)
          if (val(zvc_[i][c]) > 0.5) s.vector_core[i] = static_cast<long>(c);
      }
    } else {
      ok = detail::assign_cores(in_, o_, s);
    }
    if (cores_assigned) *cores_assigned = ok;
    s.lower_bound = std::isnan(sol.best_bound) ? 0.0 : std::min(sol.best_bound, s.makespan);
    if (s.status == status::optimal) s.lower_bound = s.makespan;
    return s;
  }

  /// Use build_phaze_schedule_ilp; this takes the input already copied.
  template <int = 0>
  phaze_schedule_ilp(detail::phaze_input in, const phaze_schedule_options& o)
      : m_("devplace_phaze_schedule"), in_(std::move(in)), o_(o) {
    build();
  }

 private:

  template <int = 0>
  void build() {
    bool has_fused = false, has_zero = false;
    for (const auto& op : in_.ops) {
      has_fused = has_fused || op.kind == phaze_op_kind::fused;
      has_zero = has_zero || op.latency <= 0 || op.parallel_latency <= 0;
      if ((op.kind != phaze_op_kind::vector && o_.tensor_cores == 0) || (op.kind != phaze_op_kind::tensor && o_.vector_cores == 0))
        throw std::invalid_argument("phaze_schedule: an operator needs a core type the accelerator does not have");
    }
    add_time_and_order_vars();
    add_order_rows(has_zero);
    add_core_families(has_fused);
    add_sharing_rows(ztc_, "sharetc_");
    add_sharing_rows(zvc_, "sharevc_");
    m_.minimize(T_);
  }

  /// The makespan T, the start t_i and the parallel flag y_i of every operator; x_ij (i before j)
  /// for ordered incomparable pairs only (has_x_), the others being constants.
  template <int = 0>
  void add_time_and_order_vars() {
    const std::size_t n = in_.n;
    H_ = 0;
    for (const auto& op : in_.ops) H_ += std::min(op.latency, op.parallel_latency);
    auto& m = m_;
    T_ = m.add_continuous(0, H_, "T");
    t_.resize(n);
    y_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      t_[i] = m.add_continuous(0, H_, "t_" + std::to_string(i));
      y_[i] = m.add_binary("y_" + std::to_string(i));
    }
    x_.assign(n * n, var{});
    has_x_.assign(n * n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j && !in_.reach.comparable(i, j)) {
          x_[i * n + j] = m.add_binary("x_" + std::to_string(i) + "_" + std::to_string(j));
          has_x_[i * n + j] = 1;
        }
  }

  /// The latency of operator i: its parallel latency when y_i.
  template <int = 0>
  [[nodiscard]] linear_expr duration(std::size_t i) const {
    linear_expr e(in_.ops[i].latency);
    e.add(y_[i], in_.ops[i].parallel_latency - in_.ops[i].latency);
    return e;
  }
  /// i before j: x_ij, or the constant the precedence gives.
  template <int = 0>
  [[nodiscard]] linear_expr X(std::size_t i, std::size_t j) const {
    const std::size_t n = in_.n;
    if (has_x_[i * n + j]) return linear_expr(x_[i * n + j]);
    return linear_expr(in_.reach.reaches(i, j) ? 1.0 : 0.0);
  }

  /// Makespan, precedence, disjunctive and (where asked, or where a latency is zero) transitivity rows.
  template <int = 0>
  void add_order_rows(bool has_zero) {
    const std::size_t n = in_.n;
    auto& m = m_;
  for (std::size_t i = 0; i < n; ++i) m.add(linear_expr(T_) >= linear_expr(t_[i]) + duration(i), "makespan_" + std::to_string(i));
  for (std::size_t i = 0; i < n; ++i)
    for (auto j : in_.succ[i])
      m.add(linear_expr(t_[i]) + duration(i) <= linear_expr(t_[j]), "prec_" + std::to_string(i) + "_" + std::to_string(j));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (has_x_[i * n + j]) m.add(X(i, j) + X(j, i) <= 1.0, "order_" + std::to_string(i) + "_" + std::to_string(j));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (has_x_[i * n + j]) {
        m.add(linear_expr(t_[i]) + duration(i) - H_ * (1.0 - X(i, j)) <= linear_expr(t_[j]),
              "disj_" + std::to_string(i) + "_" + std::to_string(j));
        m.add(X(i, j) + X(j, i) >= linear_expr(y_[i]), "alone_" + std::to_string(i) + "_" + std::to_string(j));
      }
  const bool trans = o_.transitivity == phaze_transitivity::always ||
                     (o_.transitivity == phaze_transitivity::automatic && has_zero);
  if (trans)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t k = 0; k < n; ++k) {
          if (i == j || j == k || i == k) continue;
          if (!has_x_[i * n + j] && !has_x_[j * n + k] && !has_x_[i * n + k]) continue;  // constants: holds
          // Vacuous when x_ik is the constant 1 (i ≺ k) or x_ij or x_jk the constant 0.
          if ((!has_x_[i * n + k] && in_.reach.reaches(i, k)) || (!has_x_[i * n + j] && !in_.reach.reaches(i, j)) ||
              (!has_x_[j * n + k] && !in_.reach.reaches(j, k)))
            continue;
          m.add(X(i, k) >= X(i, j) + X(j, k) - 1.0,
                "trans_" + std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(k));
        }
  }

  /// The core assignment families: z_ic puts operator i on core c (unless it runs in parallel);
  /// with symmetry breaking, the k-th operator of a kind may use only the first k + 1 cores.
  template <int = 0>
  void add_core_families(bool has_fused) {
    const std::size_t n = in_.n, pairs = std::min(o_.tensor_cores, o_.vector_cores);
    auto& m = m_;
  ztc_.assign(n, {});
  zvc_.assign(n, {});
  const bool sym = o_.symmetry_breaking && !has_fused;
  std::size_t tc_rank = 0, vc_rank = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto kind = in_.ops[i].kind;
    if (kind == phaze_op_kind::fused) {
      if (!(o_.tensor_core_rows || o_.vector_core_rows)) continue;
      for (std::size_t c = 0; c < pairs; ++c) ztc_[i].push_back(m.add_binary("zf_" + std::to_string(i) + "_" + std::to_string(c)));
      zvc_[i] = ztc_[i];  // (14): the same pair variable in both families
      m.add(linear_expr(y_[i]) + sum(ztc_[i]) == 1.0, "core_" + std::to_string(i));
    } else if (kind == phaze_op_kind::tensor && o_.tensor_core_rows) {
      for (std::size_t c = 0; c < o_.tensor_cores; ++c) {
        ztc_[i].push_back(m.add_binary("ztc_" + std::to_string(i) + "_" + std::to_string(c)));
        if (sym && c > tc_rank) m.fix(ztc_[i].back(), 0);
      }
      ++tc_rank;
      m.add(linear_expr(y_[i]) + sum(ztc_[i]) == 1.0, "core_" + std::to_string(i));
    } else if (kind == phaze_op_kind::vector && o_.vector_core_rows) {
      for (std::size_t c = 0; c < o_.vector_cores; ++c) {
        zvc_[i].push_back(m.add_binary("zvc_" + std::to_string(i) + "_" + std::to_string(c)));
        if (sym && c > vc_rank) m.fix(zvc_[i].back(), 0);
      }
      ++vc_rank;
      m.add(linear_expr(y_[i]) + sum(zvc_[i]) == 1.0, "core_" + std::to_string(i));
    }
  }
  }

  /// Two operators on the same core of family z do not overlap.
  template <int = 0>
  void add_sharing_rows(const std::vector<std::vector<var>>& z, const char* tag) {
    const std::size_t n = in_.n;
    auto& m = m_;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        if (!has_x_[i * n + j]) continue;
        const std::size_t k = std::min(z[i].size(), z[j].size());
        for (std::size_t c = 0; c < k; ++c) {
          if (&z == &zvc_ && in_.ops[i].kind == phaze_op_kind::fused && in_.ops[j].kind == phaze_op_kind::fused)
            continue;  // two fused ops on pair c: already ordered by the TC row
          m.add(X(i, j) + X(j, i) >= linear_expr(z[i][c]) + linear_expr(z[j][c]) - 1.0,
                std::string(tag) + std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(c));
        }
      }
  }

  ilp::model m_;
  detail::phaze_input in_;
  phaze_schedule_options o_;
  double H_ = 0;
  var T_;
  std::vector<var> t_, y_, x_;
  std::vector<std::vector<var>> ztc_, zvc_;
  std::vector<char> has_x_;  // x_ij is a variable (an incomparable pair)
};

/// Builds the scheduling ILP of the layer `g` whose operator v is `ops[v]`. Throws
/// std::invalid_argument on a size mismatch, a negative or non-finite latency, or an operator
/// kind without cores.
template <dag G>
[[nodiscard]] phaze_schedule_ilp build_phaze_schedule_ilp(const G& g, std::span<const phaze_operator> ops,
                                                          const phaze_schedule_options& o = {}) {
  return phaze_schedule_ilp(detail::make_phaze_input(g, ops), o);
}

/// Solves the layer. `lazy`: the loop of seed-phaze.md §2.4 (file comment): first without the core
/// families, then, if the relaxed optimum cannot be given cores, once more with both; `solves`
/// says how many ran, `time_s` is their sum, `lower_bound` the better of their bounds. Not
/// `lazy`: one solve with both families. `o.tensor_core_rows` / `vector_core_rows` are ignored.
/// The answer is exact either way (up to the solver's tolerances and `so`).
template <dag G, ilp_solver Solver>
[[nodiscard]] phaze_schedule solve_phaze_schedule(const G& g, std::span<const phaze_operator> ops, const Solver& solver,
                                                  phaze_schedule_options o = {}, const solve_options& so = {},
                                                  bool lazy = true) {
  if (lazy) {
    phaze_schedule_options relaxed = o;
    relaxed.tensor_core_rows = relaxed.vector_core_rows = false;
    const auto p = build_phaze_schedule_ilp(g, ops, relaxed);
    bool cores = false;
    auto s = p.decode(solver.solve(p.model(), so), &cores);
    if (cores || s.start.empty()) return s;  // done, or nothing to give cores to
    o.tensor_core_rows = o.vector_core_rows = true;
    const auto full = build_phaze_schedule_ilp(g, ops, o);
    solve_options rest = so;  // the time limit holds for the whole loop
    if (std::isfinite(so.time_limit_s)) rest.time_limit_s = std::max(0.0, so.time_limit_s - s.time_s);
    auto s2 = full.decode(solver.solve(full.model(), rest));
    s2.time_s += s.time_s;
    s2.solves = 2;
    // The relaxed model's bound is a bound of the full one too.
    if (!s2.start.empty()) s2.lower_bound = std::min(s2.makespan, std::max(s2.lower_bound, s.lower_bound));
    return s2;
  }
  o.tensor_core_rows = o.vector_core_rows = true;
  const auto p = build_phaze_schedule_ilp(g, ops, o);
  return p.decode(solver.solve(p.model(), so));
}

}  // namespace devplace::ilp
