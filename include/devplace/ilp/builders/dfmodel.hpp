#pragma once
/// \file ilp/builders/dfmodel.hpp
/// DFModel's inter-chip optimisation (seed-dfmodel.md §3.1–3.2) in the MILP form of §3.6: choose a
/// sharding scheme for every kernel and a pipeline stage (one of `stages` = n_pp chip groups,
/// stages may stay empty, A3) for every kernel, with tensors never flowing to an earlier stage
/// (A6), minimising the largest per-stage critical time (eq. 7). docs/ilp-dfmodel.md has the long
/// form.
///
/// Per stage c, with A (kernels × stages) and s_i (one-hot over kernel i's schemes):
///   compute    t_comp[c] = Σ_i A[i,c] · f_i / (n_tp · t_lim · t_flop)
///   network    t_net[c]  = Σ_i A[i,c] · c_i[s_i]  +  Σ_j H[j,c] · C_j[s_src, s_dst]     (H = A[src,:], eq. 4–6)
///   p2p        t_p2p[c]  = Σ_j L'[j,c] · b_j / n_bw(c),  L'[j,c] = 1 for stage(src) ≤ c < stage(dst)
///              (A4/A5: one hop per crossed boundary; n_bw(c) = `boundary_bandwidth[c]`, the link
///              from stage c to c + 1, or `network_bandwidth` when that vector is empty)
///   critical   t_cri[c]  = max(t_comp, t_net, t_p2p)   (paper eq. 7; `overlap = sum` adds them, A2)
///   objective  minimise max_c t_cri[c]
///   optional   DRAM: Σ_j b_j · L[j,c] ≤ d_cap, L = inclusive lifetime [stage(src), stage(dst)] of
///              cross-stage tensors (eq. 3; the paper uses it in the intra-chip pass, §V-B2)
/// Linearisation (§3.1, §3.6): prefix sums P_i(c) = Σ_{c'≤c} A[i,c']; precedence
/// P_dst(c) ≤ P_src(c); L'[j,c] = P_src(c) − P_dst(c); L[j,c] = P_src(c) − P_dst(c−1) − B[j,c] with
/// B ≤ A[src,c], B ≤ A[dst,c] (B ≥ A[src,c] + A[dst,c] − 1 is not needed: B only lowers the DRAM
/// rows, so a solution exists iff one with B = A[src,c] ∧ A[dst,c] does); pair variables
/// q_{j,a,b} ≥ 0 with Σ_b q = s_src,a and Σ_a q = s_dst,b make s_srcᵀ C_j s_dst linear (exact for
/// binary s); the products with A become u_{i,c} ≥ c_i·s_i − M_i(1 − A[i,c]) and
/// v_{j,c} ≥ C_j·q_j − M_j(1 − A[src,c]) (M = the largest cost): u and v are only bounded below
/// and enter only rows T ≥ ..., so the optimum T is exact. Times are in the units of the inputs
/// (f / t_flop, b / n_bw and the scheme costs must agree; with GB/s from a topology, ns).
/// Size: n·C + Σ z_i binaries; 1 + Σ_j z_src·z_dst + (n' + m')·C continuous (n', m': kernels and
/// tensors with a non-zero cost), + m·C with a DRAM capacity; rows O(n + (m + n' + m')·C + Σ_j z).
///
///   auto p = devplace::ilp::make_dfmodel_inter_chip_problem(g, flop, bytes, /*stages=*/4);
///   // fill p.kernels[i].scheme_cost, p.tensors[j].transition_cost, n_tp, t_lim, t_flop, n_bw
///   auto r = devplace::ilp::solve_dfmodel_inter_chip(p, devplace::ilp::glpk_solver{});
///   // r.status, r.objective, r.stage_of[i], r.scheme_of[i], r.figures (per-stage times)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/dag/concepts.hpp"
#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/expr.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"
#include "devplace/status.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace::ilp {

struct dfmodel_kernel {
  double flop = 0;                         ///< f_i
  std::vector<double> scheme_cost{0.0};    ///< c_i: inherent communication time of each scheme
};

struct dfmodel_tensor {
  std::size_t src = 0, dst = 0;            ///< producer and consumer kernels
  double bytes = 0;                        ///< b_j
  /// C_j[a][b]: layout-conversion time for producer scheme a and consumer scheme b; empty = 0.
  std::vector<std::vector<double>> transition_cost;
};

enum class dfmodel_overlap { max, sum };

struct dfmodel_inter_chip_problem {
  std::vector<dfmodel_kernel> kernels;
  std::vector<dfmodel_tensor> tensors;
  std::size_t stages = 1;                  ///< n_pp
  double tp_chips = 1;                     ///< n_tp
  double tile_limit = 1;                   ///< t_lim
  double tile_flops = 1;                   ///< t_flop, FLOP per time unit of one tile
  double network_bandwidth = 1;            ///< n_bw, bytes per time unit
  dfmodel_overlap overlap = dfmodel_overlap::max;
  double dram_capacity = std::numeric_limits<double>::infinity();  ///< per stage
  /// Per boundary: bytes per time unit from stage c to stage c + 1 (stages − 1 entries); empty =
  /// `network_bandwidth` everywhere. `dfmodel_boundary_bandwidths` reads it from a topology.
  std::vector<double> boundary_bandwidth;

  /// n_bw(c): the bandwidth of the boundary c -> c + 1 (c + 1 < stages).
  [[nodiscard]] double bandwidth_after(std::size_t c) const {
    return boundary_bandwidth.empty() ? network_bandwidth : boundary_bandwidth.at(c);
  }
};

/// The figures of a complete choice (stages and schemes).
struct dfmodel_evaluation {
  bool valid = false;                      ///< sizes, ranges, precedence and DRAM capacity hold
  double objective = 0;                    ///< max_c t_cri[c]
  std::vector<double> compute, network, p2p, critical, dram;  ///< per stage
};

struct dfmodel_inter_chip_result {
  devplace::status status = status::infeasible;
  double objective = 0;
  double lower_bound = 0;                  ///< the solver's proved bound
  std::vector<std::size_t> stage_of;       ///< per kernel
  std::vector<std::size_t> scheme_of;      ///< per kernel
  dfmodel_evaluation figures;
  double time_s = 0;
};

/// Throws std::invalid_argument on malformed input (ranges, sizes, non-finite or negative values,
/// tensors that form a cycle).
template <int = 0>
void check_dfmodel_problem(const dfmodel_inter_chip_problem& p) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("dfmodel: " + what); };
  auto ok = [](double x) { return std::isfinite(x) && x >= 0; };
  auto positive = [](double x) { return std::isfinite(x) && x > 0; };
  if (p.stages == 0) bad("at least one stage is needed");
  if (!(positive(p.tp_chips) && positive(p.tile_limit) && positive(p.tile_flops) && positive(p.network_bandwidth)))
    bad("n_tp, t_lim, t_flop and n_bw must be finite and > 0");
  if (std::isnan(p.dram_capacity) || p.dram_capacity < 0) bad("the DRAM capacity must be >= 0 (or +infinity)");
  if (!p.boundary_bandwidth.empty()) {
    if (p.boundary_bandwidth.size() + 1 != p.stages)
      bad("boundary_bandwidth needs stages - 1 = " + std::to_string(p.stages - 1) + " entries, not " +
          std::to_string(p.boundary_bandwidth.size()));
    for (double b : p.boundary_bandwidth)
      if (!positive(b)) bad("boundary bandwidths must be finite and > 0");
  }
  const std::size_t n = p.kernels.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = p.kernels[i];
    if (!ok(k.flop)) bad("kernel " + std::to_string(i) + ": flop must be finite and >= 0");
    if (k.scheme_cost.empty()) bad("kernel " + std::to_string(i) + " has no sharding scheme");
    for (double c : k.scheme_cost)
      if (!ok(c)) bad("kernel " + std::to_string(i) + ": scheme costs must be finite and >= 0");
  }
  std::vector<std::vector<std::size_t>> succ(n);
  std::vector<std::size_t> indeg(n, 0);
  for (std::size_t j = 0; j < p.tensors.size(); ++j) {
    const auto& t = p.tensors[j];
    if (t.src >= n || t.dst >= n || t.src == t.dst) bad("tensor " + std::to_string(j) + ": src and dst must be two kernels");
    if (!ok(t.bytes)) bad("tensor " + std::to_string(j) + ": bytes must be finite and >= 0");
    succ[t.src].push_back(t.dst);
    ++indeg[t.dst];
    if (t.transition_cost.empty()) continue;
    if (t.transition_cost.size() != p.kernels[t.src].scheme_cost.size())
      bad("tensor " + std::to_string(j) + ": the transition matrix needs one row per scheme of the producer");
    for (const auto& row : t.transition_cost) {
      if (row.size() != p.kernels[t.dst].scheme_cost.size())
        bad("tensor " + std::to_string(j) + ": the transition matrix needs one column per scheme of the consumer");
      for (double c : row)
        if (!ok(c)) bad("tensor " + std::to_string(j) + ": transition costs must be finite and >= 0");
    }
  }
  std::vector<std::size_t> ready;  // Kahn: every kernel is popped iff the tensors form a DAG
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push_back(i);
  for (std::size_t k = 0; k < ready.size(); ++k)
    for (std::size_t v : succ[ready[k]])
      if (--indeg[v] == 0) ready.push_back(v);
  if (ready.size() != n) bad("the tensors form a cycle (the workload must be a DAG)");
}

/// The figures of stages `stage_of` and schemes `scheme_of` (one per kernel), from scratch.
/// `valid` is false (and the figures empty) when a vector has the wrong size or an entry is out of
/// range; false with the figures filled when a tensor flows backwards or the DRAM capacity is
/// exceeded. Throws std::invalid_argument when `p` itself is malformed (check_dfmodel_problem).
template <int = 0>
[[nodiscard]] dfmodel_evaluation evaluate_dfmodel_inter_chip(const dfmodel_inter_chip_problem& p,
                                                                    const std::vector<std::size_t>& stage_of,
                                                                    const std::vector<std::size_t>& scheme_of) {
  check_dfmodel_problem(p);
  dfmodel_evaluation e;
  const std::size_t n = p.kernels.size(), C = p.stages;
  if (stage_of.size() != n || scheme_of.size() != n) return e;
  for (std::size_t i = 0; i < n; ++i)
    if (stage_of[i] >= C || scheme_of[i] >= p.kernels[i].scheme_cost.size()) return e;
  e.compute.assign(C, 0.0);
  e.network.assign(C, 0.0);
  e.p2p.assign(C, 0.0);
  e.critical.assign(C, 0.0);
  e.dram.assign(C, 0.0);
  bool valid = true;
  const double rate = p.tp_chips * p.tile_limit * p.tile_flops;
  for (std::size_t i = 0; i < n; ++i) {
    e.compute[stage_of[i]] += p.kernels[i].flop / rate;
    e.network[stage_of[i]] += p.kernels[i].scheme_cost[scheme_of[i]];
  }
  for (const auto& t : p.tensors) {
    const std::size_t a = stage_of[t.src], b = stage_of[t.dst];
    if (a > b) valid = false;
    if (!t.transition_cost.empty()) e.network[a] += t.transition_cost[scheme_of[t.src]][scheme_of[t.dst]];
    for (std::size_t c = a; c < b; ++c) e.p2p[c] += t.bytes / p.bandwidth_after(c);
    if (a < b)
      for (std::size_t c = a; c <= b; ++c) e.dram[c] += t.bytes;
  }
  for (std::size_t c = 0; c < C; ++c) {
    e.critical[c] = p.overlap == dfmodel_overlap::max ? std::max({e.compute[c], e.network[c], e.p2p[c]})
                                                      : e.compute[c] + e.network[c] + e.p2p[c];
    e.objective = std::max(e.objective, e.critical[c]);
    if (e.dram[c] > p.dram_capacity) valid = false;
  }
  e.valid = valid;
  return e;
}

/// The problem of any `dag` (seed §1.1): kernel i is vertex i with f_i = flop(g, i); every edge
/// u -> v is one tensor of b = bytes(g, u, v) (a parallel edge is another copy: DFModel replicates
/// a tensor per consumer, §IV-C). Tensors are numbered in the order of the vertices and their
/// `out_edges`. Every kernel gets one scheme of cost 0 and no tensor a conversion cost: fill
/// `scheme_cost`, `transition_cost` and the machine constants afterwards.
template <dag G, vertex_cost_fn<G> Flop, edge_cost_fn<G> Bytes>
[[nodiscard]] dfmodel_inter_chip_problem make_dfmodel_inter_chip_problem(const G& g, const Flop& flop,
                                                                         const Bytes& bytes, std::size_t stages) {
  using V = vertex_id_t<G>;
  dfmodel_inter_chip_problem p;
  const std::size_t n = devplace::num_vertices(g);
  p.stages = stages;
  p.kernels.resize(n);
  for (std::size_t u = 0; u < n; ++u) {
    p.kernels[u].flop = static_cast<double>(flop(g, static_cast<V>(u)));
    for (auto w : devplace::out_edges(g, u)) {
      const auto v = static_cast<std::size_t>(w);
      p.tensors.push_back({u, v, static_cast<double>(bytes(g, static_cast<V>(u), static_cast<V>(v))), {}});
    }
  }
  return p;
}

/// n_bw per stage boundary read from any `device_topology`: entry c is
/// bandwidth_gbps(t, stage_device[c], stage_device[c + 1]) in GB/s = bytes per ns (so f / t_flop
/// and the scheme costs are then in ns), where stage_device[c] is the device that sends stage c's
/// point-to-point traffic (one chip of its n_tp group). Throws std::invalid_argument on a device
/// out of range or a non-positive bandwidth.
template <device_topology T>
[[nodiscard]] std::vector<double> dfmodel_boundary_bandwidths(const T& t, const std::vector<std::size_t>& stage_device) {
  const std::size_t D = devplace::num_devices(t);
  std::vector<double> bw;
  for (std::size_t c = 0; c + 1 < stage_device.size(); ++c) {
    const std::size_t a = stage_device[c], b = stage_device[c + 1];
    if (a >= D || b >= D || a == b)
      throw std::invalid_argument("dfmodel: stages " + std::to_string(c) + " and " + std::to_string(c + 1) +
                                  " need two distinct devices of the " + std::to_string(D));
    const double x = devplace::bandwidth_gbps(t, a, b);
    if (!(std::isfinite(x) && x > 0))
      throw std::invalid_argument("dfmodel: no bandwidth from device " + std::to_string(a) + " to " + std::to_string(b));
    bw.push_back(x);
  }
  return bw;
}

/// A DFModel inter-chip MILP and what is needed to read its solutions back.
class dfmodel_inter_chip_ilp;
template <int = 0>
[[nodiscard]] dfmodel_inter_chip_ilp build_dfmodel_inter_chip_ilp(const dfmodel_inter_chip_problem& p);

class dfmodel_inter_chip_ilp {
 public:
  [[nodiscard]] const ilp::model& model() const noexcept { return m_; }
  [[nodiscard]] ilp::model& model() noexcept { return m_; }
  [[nodiscard]] var assignment(std::size_t i, std::size_t c) const { return A_.at(i * p_.stages + c); }
  [[nodiscard]] var scheme(std::size_t i, std::size_t k) const { return s_.at(i).at(k); }
  [[nodiscard]] var objective_var() const noexcept { return T_; }

  /// Reads a solver's answer back (figures evaluated from scratch). Throws std::runtime_error
  /// when the solver failed, std::invalid_argument when `sol` has values for another model.
  template <int = 0>
  [[nodiscard]] dfmodel_inter_chip_result decode(const solution& sol) const {
    dfmodel_inter_chip_result r;
    r.status = result_status(sol);
    r.time_s = sol.time_s;
    if (!sol.has_values() || r.status == status::infeasible) {
      if (!std::isnan(sol.best_bound)) r.lower_bound = sol.best_bound;
      return r;
    }
    if (sol.values.size() != m_.num_vars())
      throw std::invalid_argument("dfmodel: the solution has " + std::to_string(sol.values.size()) +
                                  " values for a model of " + std::to_string(m_.num_vars()) + " columns");
    const std::size_t n = p_.kernels.size(), C = p_.stages;
    r.stage_of.assign(n, 0);
    r.scheme_of.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t c = 0; c < C; ++c)
        if (sol.value(A_[i * C + c]) > 0.5) r.stage_of[i] = c;
      for (std::size_t k = 0; k < s_[i].size(); ++k)
        if (sol.value(s_[i][k]) > 0.5) r.scheme_of[i] = k;
    }
    r.figures = evaluate_dfmodel_inter_chip(p_, r.stage_of, r.scheme_of);
    r.objective = r.figures.objective;
    r.lower_bound = std::isnan(sol.best_bound) ? 0.0 : std::min(sol.best_bound, r.objective);
    if (r.status == status::optimal) r.lower_bound = r.objective;
    return r;
  }

 private:
  template <int>
  friend dfmodel_inter_chip_ilp build_dfmodel_inter_chip_ilp(const dfmodel_inter_chip_problem&);
  explicit dfmodel_inter_chip_ilp(const dfmodel_inter_chip_problem& p) : m_("devplace_dfmodel_inter_chip"), p_(p) {}

  ilp::model m_;
  dfmodel_inter_chip_problem p_;
  std::vector<var> A_;
  std::vector<std::vector<var>> s_;
  var T_;
};

namespace detail {

/// Σ_{c' ≤ c} A[i, c']: kernel i is placed in stage c or before (A holds C columns per kernel).
template <int = 0>
linear_expr dfmodel_prefix(const std::vector<var>& A, std::size_t C, std::size_t i, std::size_t c) {
  linear_expr e;
  for (std::size_t k = 0; k <= c; ++k) e.add(A[i * C + k], 1.0);
  return e;
}

/// The network time of tensor t's (number j) scheme transition, counted in the stage of its
/// source: q[a, b] pairs the source's scheme a with the destination's b, and v[c] ≥ hm when the
/// source is in stage c (big-M on A). Adds v[c] to net[c]; nothing when every cost is zero.
template <int = 0>
void add_dfmodel_transition_net(model& m, const dfmodel_tensor& t, std::size_t j,
                                       const std::vector<var>& s_src, const std::vector<var>& s_dst,
                                       const std::vector<var>& A, std::size_t C, std::vector<linear_expr>& net) {
  const std::string tj = std::to_string(j);
  double M = 0;
  for (const auto& row : t.transition_cost)
    for (double x : row) M = std::max(M, x);
  if (M <= 0) return;
  const std::size_t za = s_src.size(), zb = s_dst.size();
  std::vector<var> q(za * zb);
  for (std::size_t a = 0; a < za; ++a)
    for (std::size_t b = 0; b < zb; ++b)
      q[a * zb + b] = m.add_continuous(0, 1, "q_" + tj + "_" + std::to_string(a) + "_" + std::to_string(b));
  for (std::size_t a = 0; a < za; ++a) {
    linear_expr e;
    for (std::size_t b = 0; b < zb; ++b) e.add(q[a * zb + b], 1.0);
    m.add(e == linear_expr(s_src[a]), "pairsrc_" + tj + "_" + std::to_string(a));
  }
  for (std::size_t b = 0; b < zb; ++b) {
    linear_expr e;
    for (std::size_t a = 0; a < za; ++a) e.add(q[a * zb + b], 1.0);
    m.add(e == linear_expr(s_dst[b]), "pairdst_" + tj + "_" + std::to_string(b));
  }
  linear_expr hm;
  for (std::size_t a = 0; a < za; ++a)
    for (std::size_t b = 0; b < zb; ++b)
      if (t.transition_cost[a][b] != 0) hm.add(q[a * zb + b], t.transition_cost[a][b]);
  for (std::size_t c = 0; c < C; ++c) {
    const var v = m.add_continuous(0, infinity, "v_" + tj + "_" + std::to_string(c));
    m.add(linear_expr(v) >= hm - M * (1.0 - linear_expr(A[t.src * C + c])), "tensornet_" + tj + "_" + std::to_string(c));
    net[c].add(v, 1.0);
  }
}

/// The DRAM capacity of every stage: tensor j's bytes count in stage c from its source's stage
/// to its destination's, less B[j, c] ≤ A[src, c], A[dst, c] (both ends in stage c).
template <int = 0>
void add_dfmodel_dram_limits(model& m, const dfmodel_inter_chip_problem& p, const std::vector<var>& A) {
  const std::size_t C = p.stages;
  std::vector<linear_expr> dram(C);
  for (std::size_t j = 0; j < p.tensors.size(); ++j) {
    const auto& t = p.tensors[j];
    if (t.bytes <= 0) continue;
    for (std::size_t c = 0; c < C; ++c) {
      const var B = m.add_continuous(0, 1, "B_" + std::to_string(j) + "_" + std::to_string(c));
      m.add(linear_expr(B) <= linear_expr(A[t.src * C + c]), "Bsrc_" + std::to_string(j) + "_" + std::to_string(c));
      m.add(linear_expr(B) <= linear_expr(A[t.dst * C + c]), "Bdst_" + std::to_string(j) + "_" + std::to_string(c));
      linear_expr life = dfmodel_prefix(A, C, t.src, c) - linear_expr(B);
      if (c > 0) life -= dfmodel_prefix(A, C, t.dst, c - 1);
      dram[c] += t.bytes * life;
    }
  }
  for (std::size_t c = 0; c < C; ++c) m.add(dram[c] <= p.dram_capacity, "dram_" + std::to_string(c));
}

}  // namespace detail

/// Builds the inter-chip MILP of `p`. Throws std::invalid_argument on malformed input.
template <int>
dfmodel_inter_chip_ilp build_dfmodel_inter_chip_ilp(const dfmodel_inter_chip_problem& p) {
  check_dfmodel_problem(p);
  dfmodel_inter_chip_ilp ilp(p);
  auto& m = ilp.m_;
  const std::size_t n = p.kernels.size(), C = p.stages;
  ilp.A_.resize(n * C);
  ilp.s_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < C; ++c)
      ilp.A_[i * C + c] = m.add_binary("A_" + std::to_string(i) + "_" + std::to_string(c));
    for (std::size_t k = 0; k < p.kernels[i].scheme_cost.size(); ++k)
      ilp.s_[i].push_back(m.add_binary("s_" + std::to_string(i) + "_" + std::to_string(k)));
    linear_expr a;
    for (std::size_t c = 0; c < C; ++c) a.add(ilp.A_[i * C + c], 1.0);
    m.add(a == 1.0, "stage_" + std::to_string(i));
    m.add(sum(ilp.s_[i]) == 1.0, "scheme_" + std::to_string(i));
  }
  auto A = [&](std::size_t i, std::size_t c) { return ilp.A_[i * C + c]; };
  auto prefix = [&](std::size_t i, std::size_t c) { return detail::dfmodel_prefix(ilp.A_, C, i, c); };
  for (std::size_t j = 0; j < p.tensors.size(); ++j)
    for (std::size_t c = 0; c + 1 < C; ++c)
      m.add(prefix(p.tensors[j].dst, c) <= prefix(p.tensors[j].src, c),
            "order_" + std::to_string(j) + "_" + std::to_string(c));

  ilp.T_ = m.add_continuous(0, infinity, "T");
  const double rate = p.tp_chips * p.tile_limit * p.tile_flops;
  std::vector<linear_expr> comp(C), net(C), p2p(C);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = p.kernels[i];
    for (std::size_t c = 0; c < C; ++c)
      if (k.flop > 0) comp[c].add(A(i, c), k.flop / rate);
    const double M = *std::max_element(k.scheme_cost.begin(), k.scheme_cost.end());
    if (M <= 0) continue;
    const linear_expr hn = dot(k.scheme_cost, ilp.s_[i]);
    for (std::size_t c = 0; c < C; ++c) {
      const var u = m.add_continuous(0, infinity, "u_" + std::to_string(i) + "_" + std::to_string(c));
      m.add(linear_expr(u) >= hn - M * (1.0 - linear_expr(A(i, c))), "kernelnet_" + std::to_string(i) + "_" + std::to_string(c));
      net[c].add(u, 1.0);
    }
  }
  for (std::size_t j = 0; j < p.tensors.size(); ++j) {
    const auto& t = p.tensors[j];
    const std::string tj = std::to_string(j);
    if (t.bytes > 0)
      for (std::size_t c = 0; c + 1 < C; ++c)  // L'[j,c] = P_src(c) − P_dst(c); zero in the last stage
        p2p[c] += (t.bytes / p.bandwidth_after(c)) * (prefix(t.src, c) - prefix(t.dst, c));
    detail::add_dfmodel_transition_net(m, t, j, ilp.s_[t.src], ilp.s_[t.dst], ilp.A_, C, net);
  }
  for (std::size_t c = 0; c < C; ++c) {
    const std::string sc = std::to_string(c);
    if (p.overlap == dfmodel_overlap::max) {
      m.add(linear_expr(ilp.T_) >= comp[c], "compute_" + sc);
      m.add(linear_expr(ilp.T_) >= net[c], "network_" + sc);
      m.add(linear_expr(ilp.T_) >= p2p[c], "p2p_" + sc);
    } else {
      m.add(linear_expr(ilp.T_) >= comp[c] + net[c] + p2p[c], "critical_" + sc);
    }
  }
  if (std::isfinite(p.dram_capacity)) detail::add_dfmodel_dram_limits(m, p, ilp.A_);
  m.minimize(ilp.T_);
  return ilp;
}

/// Builds, solves with `solver` and decodes in one call.
template <ilp_solver Solver>
[[nodiscard]] dfmodel_inter_chip_result solve_dfmodel_inter_chip(const dfmodel_inter_chip_problem& p,
                                                                 const Solver& solver, const solve_options& so = {}) {
  const auto ilp = build_dfmodel_inter_chip_ilp(p);
  return ilp.decode(solver.solve(ilp.model(), so));
}

}  // namespace devplace::ilp
