#pragma once
/// \file sim/closed_form.hpp
/// The simulated iteration in closed form, fill and drain included (docs/simulator.md, "Fill and
/// drain"). Notation on the replica graph: one vertex v per stage replica (s, r) with
///   a_v = its forward task  (R̂/R_s · f_s, plus its activation sends with blocking sends),
///   b_v = its backward task (R̂/R_s · (b_s + f_s with recomputation), plus its gradient sends),
/// an arc u → w for every pair of replicas that exchange data (stage s < stage t, shares
/// overlapping), weighted by the transfer time of that part (0 with blocking sends, where the
/// sender's task carries it), and AR(s) the ring allreduce of stage s.
///
/// **GPipe (exact)**. Identical micro-batches make the task graph a grid: a path through the
/// forwards visits a replica path P and repeats one of its tasks for the other MB − 1 micro-batches
/// (the heaviest, at best), crosses to the backwards at its last replica c (F(c, MB−1) → B(c, MB−1)
/// in device order), and returns along a replica path Q from c back to v in the same way:
///
///   E(v) = max over replica paths P ending at c and Q from v to c of
///          Σ_P a + (MB−1) · max_P a + Σ_{arcs of P} T + Σ_Q b + (MB−1) · max_Q b + Σ_{arcs of Q} T'
///   iteration = max( max_v E(v), max_s (max_{v of s} E(v) + AR(s)) ) + update
///
/// (E(v) is the end of B(v, 0), the last task of v's device). Exact whenever no task waits for a
/// link: with blocking sends (the transfers take no link time), or without link serialisation.
/// For a chain of S stages with R equal replicas it is, per replica, Σ_s (a_s + b_s) + (MB − 1) ·
/// (max_s a_s + max_s b_s): the steady-state term MB · max(a + b) of the combined mapping model
/// plus the fill and drain.
///
/// **Any schedule (a bound)**. Device v cannot start before micro-batch 0's forwards reach it
/// (head(v), the heaviest forward path into v), runs MB · (a_v + b_v), and after its last backward
/// the gradient still flows back to the first stage (tail(v), the heaviest backward path out of v)
/// while its stage's allreduce runs:
///
///   iteration ≥ max_v [ head(v) + MB · (a_v + b_v) + max(tail(v), AR(s_v)) ] + update.
///
/// 1F1B attains it for a chain of equal stages, (MB + S − 1)(a + b); with unequal stages it is a
/// bound only (a device's later forwards wait on the backwards they are interleaved with, so its
/// device order is not the GPipe grid above; no closed form is given for 1F1B): tested as a bound.
///
/// Complexity: O(V · (V + A)) for V replicas and A arcs (the maximum over the heaviest task of a
/// path is taken by fixing it: for each vertex x, the heaviest path through x among the vertices
/// no heavier than x).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "devplace/cost/transfer.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

struct iteration_closed_form {
  double gpipe_ms = 0;        ///< the GPipe iteration (exact when no task waits for a link)
  double lower_bound_ms = 0;  ///< the fill + MB · load + drain bound, valid for every schedule
};

namespace detail {

struct replica_graph {
  std::size_t V = 0;
  std::vector<std::size_t> stage;               ///< stage of vertex v
  std::vector<double> a, b;                     ///< forward and backward task per vertex
  struct arc {
    std::size_t u, w;
    double fwd, bwd;                            ///< transfer time u → w (activation) and w → u (gradient)
  };
  std::vector<arc> arcs;                        ///< u < w (topological: stage order)
  std::vector<double> allreduce;                ///< AR(s)
};

inline replica_graph make_replica_graph(const pipeline_model& m, const Eigen::MatrixXd& bw, const Eigen::MatrixXd& lat,
                                        const simulation_options& o) {
  check_pipeline_model(m, static_cast<std::size_t>(bw.rows()));
  const std::size_t S = m.stages, R = m.replicas;
  std::vector<std::size_t> off(S + 1, 0);
  for (std::size_t s = 0; s < S; ++s) off[s + 1] = off[s] + m.device_of[s].size();
  auto reps = [&](std::size_t s) { return m.device_of[s].size(); };
  auto transfer = [&](std::size_t x, std::size_t y, double bytes) {
    if (x == y) return 0.0;
    return transfer_time_ms(bytes, bw(static_cast<Eigen::Index>(x), static_cast<Eigen::Index>(y)),
                            lat(static_cast<Eigen::Index>(x), static_cast<Eigen::Index>(y)));
  };
  replica_graph g;
  g.V = off[S];
  g.stage.resize(g.V);
  g.a.resize(g.V);
  g.b.resize(g.V);
  for (std::size_t s = 0; s < S; ++s) {
    const double k = reps(s) == R ? 1.0 : static_cast<double>(R) / static_cast<double>(reps(s));
    for (std::size_t r = 0; r < reps(s); ++r) {
      g.stage[off[s] + r] = s;
      g.a[off[s] + r] = k * m.forward_ms[s];
      g.b[off[s] + r] = k * (m.backward_ms[s] + (o.recompute ? m.forward_ms[s] : 0.0));
    }
  }
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t t = s + 1; t < S; ++t) {
      const double bytes = m.message_bytes[s][t];
      if (bytes < 0) continue;
      const std::size_t A = reps(s), B = reps(t);
      for (std::size_t i = 0; i < A; ++i)
        for (std::size_t j = 0; j < B; ++j) {
          double x = 0;
          if (A == B) {
            if (i != j) continue;
            x = A == R ? bytes : bytes * static_cast<double>(R) / static_cast<double>(A);
          } else {
            const std::size_t lo = std::max(i * B, j * A), hi = std::min((i + 1) * B, (j + 1) * A);
            if (hi <= lo) continue;
            x = bytes * static_cast<double>(R) * static_cast<double>(hi - lo) / (static_cast<double>(A) * static_cast<double>(B));
          }
          const std::size_t u = off[s] + i, w = off[t] + j, du = m.device_of[s][i], dw = m.device_of[t][j];
          const double tf = transfer(du, dw, x), tb = transfer(dw, du, x);
          if (o.blocking_sends) {
            g.a[u] += tf;
            g.b[w] += tb;
            g.arcs.push_back({u, w, 0.0, 0.0});
          } else {
            g.arcs.push_back({u, w, tf, tb});
          }
        }
    }
  std::sort(g.arcs.begin(), g.arcs.end(), [](const auto& x, const auto& y) { return x.u != y.u ? x.u < y.u : x.w < y.w; });
  g.allreduce.assign(S, 0.0);
  if (o.allreduce)
    for (std::size_t s = 0; s < S; ++s) {
      const std::size_t Rs = reps(s);
      if (Rs <= 1 || m.param_bytes[s] <= 0) continue;
      double slowest = 0;
      for (std::size_t r = 0; r < Rs; ++r)
        slowest = std::max(slowest, transfer(m.device_of[s][r], m.device_of[s][(r + 1) % Rs], ring_step_bytes(m.param_bytes[s], Rs)));
      g.allreduce[s] = ring_allreduce_ms(slowest, Rs);
    }
  return g;
}

inline iteration_closed_form closed_form_core(const replica_graph& g, std::size_t MB, double update_ms) {
  constexpr double ninf = -std::numeric_limits<double>::infinity();
  const std::size_t V = g.V;
  const double extra = static_cast<double>(MB - 1);
  // Fp(c): max over forward paths P ending at c of Σ_P a + arcs + (MB−1) · max_P a.
  std::vector<double> Fp(V, ninf);
  std::vector<double> pre(V), post(V);
  for (std::size_t x = 0; x < V; ++x) {
    auto in = [&](std::size_t u) { return g.a[u] <= g.a[x]; };
    // pre[u]: the heaviest path ending at u (u included) among allowed vertices, for u ≤ x.
    for (std::size_t u = 0; u <= x; ++u) pre[u] = in(u) ? g.a[u] : ninf;
    for (const auto& e : g.arcs)  // arcs sorted by u: pre[e.u] final when read (u < w)
      if (e.w <= x && in(e.w) && pre[e.u] > ninf) pre[e.w] = std::max(pre[e.w], pre[e.u] + e.fwd + g.a[e.w]);
    // post[c]: continue from x to c (x's own a counted in pre[x]).
    std::fill(post.begin(), post.end(), ninf);
    post[x] = pre[x];
    for (const auto& e : g.arcs)
      if (e.u >= x && post[e.u] > ninf && in(e.w)) post[e.w] = std::max(post[e.w], post[e.u] + e.fwd + g.a[e.w]);
    for (std::size_t c = x; c < V; ++c)
      if (post[c] > ninf) Fp[c] = std::max(Fp[c], post[c] + extra * g.a[x]);
  }
  // E(v) = max over y (the heaviest backward on Q) of [ heaviest b-path v ⇝ y (y excluded) +
  //        max over c ⩾ y of (b-path y ⇝ c + Fp(c)) + (MB−1) · b_y ], within {u : b_u ≤ b_y}.
  std::vector<double> E(V, ninf), down(V), to_y(V);
  for (std::size_t y = 0; y < V; ++y) {
    auto in = [&](std::size_t u) { return g.b[u] <= g.b[y]; };
    // down[u] for u ≥ y: b_u + max(Fp(u), max over arcs u → w of (T' + down[w])).
    for (std::size_t u = V; u-- > y;) down[u] = in(u) ? g.b[u] + Fp[u] : ninf;
    for (auto it = g.arcs.rbegin(); it != g.arcs.rend(); ++it)
      if (it->u >= y && in(it->u) && down[it->w] > ninf)
        down[it->u] = std::max(down[it->u], g.b[it->u] + it->bwd + down[it->w]);
    // to_y[u] for u ≤ y: the heaviest Σ b + arcs from u to y, y's own b excluded (0 at y).
    std::fill(to_y.begin(), to_y.end(), ninf);
    to_y[y] = 0;
    for (auto it = g.arcs.rbegin(); it != g.arcs.rend(); ++it)
      if (it->w <= y && to_y[it->w] > ninf && in(it->u))
        to_y[it->u] = std::max(to_y[it->u], g.b[it->u] + it->bwd + to_y[it->w]);
    if (down[y] == ninf) continue;
    for (std::size_t v = 0; v <= y; ++v)
      if (to_y[v] > ninf) E[v] = std::max(E[v], to_y[v] + down[y] + extra * g.b[y]);
  }
  iteration_closed_form r;
  std::vector<double> stage_end(g.allreduce.size(), 0.0);
  for (std::size_t v = 0; v < V; ++v) {
    r.gpipe_ms = std::max(r.gpipe_ms, E[v]);
    stage_end[g.stage[v]] = std::max(stage_end[g.stage[v]], E[v]);
  }
  for (std::size_t s = 0; s < stage_end.size(); ++s) r.gpipe_ms = std::max(r.gpipe_ms, stage_end[s] + g.allreduce[s]);
  r.gpipe_ms += update_ms;
  // The bound: head (forward into v), MB · load, then the longer of tail (backward out of v) and AR.
  std::vector<double> head(V, 0.0), tail(V, 0.0);
  for (const auto& e : g.arcs) {  // sorted by u: head[e.u] and tail[e.u] final when read
    head[e.w] = std::max(head[e.w], head[e.u] + g.a[e.u] + e.fwd);
    tail[e.w] = std::max(tail[e.w], tail[e.u] + g.b[e.u] + e.bwd);
  }
  for (std::size_t v = 0; v < V; ++v)
    r.lower_bound_ms = std::max(r.lower_bound_ms, head[v] + static_cast<double>(MB) * (g.a[v] + g.b[v]) +
                                                      std::max(tail[v], g.allreduce[g.stage[v]]));
  r.lower_bound_ms += update_ms;
  return r;
}

/// The replica graph of a (partly) mapped stage graph, with blocking sends (a transfer is part of
/// its sender's task) or overlapped ones (a delay on the arc): a transfer or ring whose devices
/// are not all placed counts 0, so every quantity is a lower bound of its value in any completion
/// (and exact once everything is placed).
inline replica_graph replica_graph_of(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                                      const std::vector<double>& forward_ms, bool recompute, bool blocking_sends = true) {
  const std::size_t S = g.stages(), R = g.replicas();
  replica_graph x;
  x.V = g.vertices();
  x.stage.resize(x.V);
  x.a.resize(x.V);
  x.b.resize(x.V);
  for (std::size_t s = 0; s < S; ++s) {
    const double k = g.replicas(s) == R ? 1.0 : static_cast<double>(R) / static_cast<double>(g.replicas(s));
    const double f = forward_ms.empty() ? 0.0 : forward_ms[s];
    for (std::size_t r = 0; r < g.replicas(s); ++r) {
      const std::size_t v = g.vertex(s, r);
      x.stage[v] = s;
      x.a[v] = k * f;
      x.b[v] = k * (g.compute_ms(s) - f + (recompute ? f : 0.0));
    }
  }
  for (std::size_t s = 0; s < S; ++s)
    for (auto t : g.neighbours(s)) {
      if (t < s) continue;
      for (std::size_t r = 0; r < g.replicas(s); ++r) {
        const auto [lo, hi] = g.peers(s, r, t);
        for (std::size_t j = lo; j < hi; ++j) {
          const std::size_t u = g.vertex(s, r), w = g.vertex(t, j);
          const double bytes = g.exchange_bytes(s, r, t, j);
          double tf = 0, tb = 0;
          if (dev[u] != unplaced && dev[w] != unplaced) {
            tf = L.transfer_ms(dev[u], dev[w], bytes);
            tb = L.transfer_ms(dev[w], dev[u], bytes);
          }
          if (blocking_sends) {
            x.a[u] += tf;
            x.b[w] += tb;
            x.arcs.push_back({u, w, 0.0, 0.0});
          } else {
            x.arcs.push_back({u, w, tf, tb});
          }
        }
      }
    }
  std::sort(x.arcs.begin(), x.arcs.end(), [](const auto& p, const auto& q) { return p.u != q.u ? p.u < q.u : p.w < q.w; });
  x.allreduce.assign(S, 0.0);
  for (std::size_t s = 0; s < S; ++s) {
    bool placed = true;
    for (std::size_t r = 0; r < g.replicas(s); ++r) placed = placed && dev[g.vertex(s, r)] != unplaced;
    if (placed) x.allreduce[s] = allreduce_cost::ring_ms(g, L, dev, g.vertex(s, 0));
  }
  return x;
}

}  // namespace detail

/// The simulated GPipe iteration as a mapping cost model (map/cost_models.hpp): with the sends
/// (`blocking_sends`) and the allreduce as the simulator runs them, every vertex's time is the
/// closed form above of the whole mapping, so the objective is `simulate(...).iteration_ms` of
/// that mapping (GPipe, `blocking_sends`, `micro_batches`, `recompute`, no update; with overlapped
/// sends, when no transfer waits for its link) — fill, steady state and drain.
/// `forward_ms[s]` is stage s's forward time (the rest of c_u(s) is its backward; empty: all
/// backward). The stage graph's dependencies are its edges with M > 0 (a 0-byte edge, a
/// dependency in the simulator, is none here). Every vertex reads every device, so the search
/// checks a mapping once complete; the bound (unplaced transfers and rings counted 0) prunes
/// before that. Small instances only: O(V · (V + A)) per evaluation.
struct iteration_cost {
  std::vector<double> forward_ms;  ///< per stage
  std::size_t micro_batches = 1;   ///< MB (≥ 1)
  bool recompute = false;          ///< backward repeats the forward
  /// Blocking sends (the sender's task includes the transfer; exact); false: overlapped sends, a
  /// transfer delays only its receiver (exact when no transfer waits for its link, i.e. with
  /// `simulation_options::serialize_links` off or links that are never busy twice at once)
  bool blocking_sends = true;

  [[nodiscard]] std::string_view name() const noexcept { return "iteration"; }

  [[nodiscard]] std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const {
    std::vector<std::size_t> d;
    for (std::size_t u = 0; u < g.vertices(); ++u)
      if (u != v) d.push_back(u);
    return d;
  }

  [[nodiscard]] double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t) const {
    return detail::closed_form_core(detail::replica_graph_of(g, L, dev, forward_ms, recompute, blocking_sends),
                                    std::max<std::size_t>(micro_batches, 1), 0.0)
        .gpipe_ms;
  }

  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    return time(g, L, dev, v);  // monotone in every task, transfer and ring: unplaced ones at 0
  }

  [[nodiscard]] bool shared_time() const noexcept { return true; }
};

/// The closed forms of one iteration of `m` on `topology` under `o` (see the file comment):
/// `gpipe_ms` equals `simulate(m, topology, o).iteration_ms` for GPipe when no task waits for a
/// link (`o.blocking_sends`, or `!o.serialize_links`); `lower_bound_ms` is at most the simulated
/// iteration under every schedule. Throws std::invalid_argument on a malformed model or options.
template <device_topology T>
[[nodiscard]] iteration_closed_form closed_form_iteration(const pipeline_model& m, const T& topology,
                                                          const simulation_options& o = {}) {
  if (o.micro_batches == 0) throw std::invalid_argument("closed_form_iteration: micro_batches must be >= 1");
  if (!(o.update_ms >= 0) || !std::isfinite(o.update_ms))
    throw std::invalid_argument("closed_form_iteration: update_ms must be a finite number >= 0");
  const std::size_t D = devplace::num_devices(topology);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Ones(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  Eigen::MatrixXd lat = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  for (std::size_t x = 0; x < D; ++x)
    for (std::size_t y = 0; y < D; ++y)
      if (x != y) {
        bw(static_cast<Eigen::Index>(x), static_cast<Eigen::Index>(y)) = devplace::bandwidth_gbps(topology, x, y);
        lat(static_cast<Eigen::Index>(x), static_cast<Eigen::Index>(y)) = devplace::latency_us(topology, x, y);
      }
  return detail::closed_form_core(detail::make_replica_graph(m, bw, lat, o), o.micro_batches, o.update_ms);
}

}  // namespace devplace
