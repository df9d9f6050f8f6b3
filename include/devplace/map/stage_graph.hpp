#pragma once
/// \file map/stage_graph.hpp
/// `stage_graph`: the input of device mapping (Parmesan phase 2, seed-parmesan.md §7.1, §7.8).
///
/// A partition of an operator graph into S stages, each replicated R times, seen at stage level:
///   * c_u(s) = Σ_{v∈s} c_u(v)            stage compute in ms (one micro-batch, one replica)
///   * P(s)   = Σ_{v∈s} param_bytes(v)    parameter bytes (drive the allreduce of eq. 9)
///   * M(s,s') = Σ bytes of the graph edges with one end in s and the other in s', either
///     direction (symmetric; the diagonal is 0)
/// The mapped graph G' holds R identical copies of the stage graph: vertex `v = s·R + r` is
/// replica r of stage s, and replica r of s talks to replica r of every neighbour stage s'
/// (M(s,s') > 0). The R replicas of a stage form its allreduce ring in index order 0..R−1.
///
/// Build it from any `profiled_dag` and a `stage_of` labelling with `make_stage_graph`, or
/// directly from S, R, c_u, P and M (synthetic stage graphs for tests and experiments).
///
/// Per-stage replica counts (Parmesan's general DP, partition/general_dp.hpp): stage s may have
/// its own R_s ≥ 1. The G' vertices of stage s are then `offset(s) + r`, r < R_s. A micro-batch
/// round carries R̂ · mBS samples, R̂ = max_s R_s (`replicas()`, the reference count): replica i of
/// stage s works on the share [i/R_s, (i+1)/R_s) of it, so its compute per micro-batch is
/// c_u(s) · R̂ / R_s (`replica_compute_ms`), and it exchanges with replica j of a neighbour s'
/// the part of M(s, s') · R̂ that both shares hold (`exchange_bytes`; the data redistribution
/// between stages of different widths). With equal counts this is the model above: R̂ = R,
/// c_u(s), and M(s, s') between replicas of the same index only. The allreduce of stage s runs
/// over its R_s replicas.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/cost/collective.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/properties.hpp"

namespace devplace {

class stage_graph {
 public:
  stage_graph() = default;

  /// S = compute_ms.size() stages with R = `replicas` replicas each. `message_bytes` is S × S,
  /// symmetric, finite and ≥ 0 (the diagonal is ignored); compute and parameters finite and ≥ 0.
  /// Throws std::invalid_argument otherwise.
  stage_graph(std::size_t replicas, std::vector<double> compute_ms, std::vector<double> param_bytes,
              std::vector<std::vector<double>> message_bytes)
      : stage_graph(check_replicas(replicas, compute_ms.size()), compute_ms, std::move(param_bytes),
                    std::move(message_bytes)) {}  // compute_ms copied: its size is read in the same call

  /// As above with R_s = `stage_replicas[s]` ≥ 1 replicas for stage s (one entry per stage).
  stage_graph(std::vector<std::size_t> stage_replicas, std::vector<double> compute_ms, std::vector<double> param_bytes,
              std::vector<std::vector<double>> message_bytes)
      : S_(compute_ms.size()), compute_(std::move(compute_ms)), params_(std::move(param_bytes)),
        reps_(std::move(stage_replicas)) {
    if (S_ == 0) throw std::invalid_argument("stage_graph: at least one stage is needed");
    if (reps_.size() != S_) throw std::invalid_argument("stage_graph: one replica count per stage");
    off_.assign(S_ + 1, 0);
    R_ = 0;
    for (std::size_t s = 0; s < S_; ++s) {
      if (reps_[s] == 0)
        throw std::invalid_argument("stage_graph: replicas must be >= 1 (stage " + std::to_string(s) + ")");
      off_[s + 1] = off_[s] + reps_[s];
      R_ = std::max(R_, reps_[s]);
    }
    uniform_ = std::all_of(reps_.begin(), reps_.end(), [&](std::size_t r) { return r == R_; });
    vstage_.resize(off_[S_]);
    for (std::size_t s = 0; s < S_; ++s)
      for (std::size_t v = off_[s]; v < off_[s + 1]; ++v) vstage_[v] = s;
    if (params_.size() != S_) throw std::invalid_argument("stage_graph: one parameter size per stage");
    if (message_bytes.size() != S_) throw std::invalid_argument("stage_graph: the message matrix must be S x S");
    for (std::size_t s = 0; s < S_; ++s) {
      check_value(compute_[s], "compute_ms", s);
      check_value(params_[s], "param_bytes", s);
      if (message_bytes[s].size() != S_) throw std::invalid_argument("stage_graph: the message matrix must be S x S");
    }
    M_.assign(S_ * S_, 0.0);
    for (std::size_t a = 0; a < S_; ++a)
      for (std::size_t b = 0; b < S_; ++b) {
        if (a == b) continue;
        const double m = message_bytes[a][b];
        check_value(m, "message_bytes", a);
        if (m != message_bytes[b][a])
          throw std::invalid_argument("stage_graph: message_bytes must be symmetric (M[" + std::to_string(a) + "][" +
                                      std::to_string(b) + "] != M[" + std::to_string(b) + "][" + std::to_string(a) +
                                      "])");
        M_[a * S_ + b] = m;
      }
    build_adjacency();
  }

  [[nodiscard]] std::size_t stages() const noexcept { return S_; }
  /// R, or with per-stage counts the reference R̂ = max_s R_s.
  [[nodiscard]] std::size_t replicas() const noexcept { return R_; }
  /// R_s, the replicas of stage s.
  [[nodiscard]] std::size_t replicas(std::size_t s) const noexcept { return reps_[s]; }
  /// Whether every stage has the same number of replicas.
  [[nodiscard]] bool uniform_replicas() const noexcept { return uniform_; }
  /// |V'| = Σ_s R_s (S·R), the number of devices a mapping uses.
  [[nodiscard]] std::size_t vertices() const noexcept { return off_[S_]; }
  /// The first G' vertex of stage s: Σ_{s' < s} R_{s'} (s·R).
  [[nodiscard]] std::size_t offset(std::size_t s) const noexcept { return off_[s]; }
  /// The G' vertex of replica r of stage s: offset(s) + r (s·R + r).
  [[nodiscard]] std::size_t vertex(std::size_t s, std::size_t r) const noexcept { return off_[s] + r; }
  [[nodiscard]] std::size_t stage_of_vertex(std::size_t v) const noexcept { return vstage_[v]; }
  [[nodiscard]] std::size_t replica_of_vertex(std::size_t v) const noexcept { return v - off_[vstage_[v]]; }

  /// c_u(s) in ms (per micro-batch of one replica when the counts are equal).
  [[nodiscard]] double compute_ms(std::size_t s) const noexcept { return compute_[s]; }
  /// The compute of one replica of stage s per micro-batch round: c_u(s) · R̂ / R_s (c_u(s) with
  /// equal counts).
  [[nodiscard]] double replica_compute_ms(std::size_t s) const noexcept {
    return reps_[s] == R_ ? compute_[s] : compute_[s] * static_cast<double>(R_) / static_cast<double>(reps_[s]);
  }
  /// The replicas j of stage t whose share of the round overlaps replica i of stage s: [first, last).
  [[nodiscard]] std::pair<std::size_t, std::size_t> peers(std::size_t s, std::size_t i, std::size_t t) const noexcept {
    if (reps_[s] == reps_[t]) return {i, i + 1};
    const std::size_t a = reps_[s], b = reps_[t];
    return {i * b / a, ((i + 1) * b + a - 1) / a};
  }
  /// Bytes replica i of stage s and replica j of stage t exchange each way per micro-batch round:
  /// M(s, t) · R̂ · |share_i ∩ share_j| (M(s, t) for i = j and 0 otherwise with equal counts).
  [[nodiscard]] double exchange_bytes(std::size_t s, std::size_t i, std::size_t t, std::size_t j) const noexcept {
    const double m = M_[s * S_ + t];
    const std::size_t a = reps_[s], b = reps_[t];
    if (a == b) return i == j ? (a == R_ ? m : m * static_cast<double>(R_) / static_cast<double>(a)) : 0.0;
    // shares in units of 1 / (a·b): [i·b, (i+1)·b) and [j·a, (j+1)·a)
    const std::size_t lo = std::max(i * b, j * a), hi = std::min((i + 1) * b, (j + 1) * a);
    if (hi <= lo) return 0.0;
    return m * static_cast<double>(R_) * static_cast<double>(hi - lo) / (static_cast<double>(a) * static_cast<double>(b));
  }
  /// P(s) in bytes.
  [[nodiscard]] double param_bytes(std::size_t s) const noexcept { return params_[s]; }
  /// M(s, s') in bytes (0 on the diagonal and between stages that exchange nothing).
  [[nodiscard]] double message_bytes(std::size_t s, std::size_t t) const noexcept { return M_[s * S_ + t]; }
  /// The stages s' with M(s, s') > 0, largest message first (ties by index).
  [[nodiscard]] std::span<const std::size_t> neighbours(std::size_t s) const noexcept {
    return {adj_.data() + adj_begin_[s], adj_begin_[s + 1] - adj_begin_[s]};
  }
  /// The stages breadth-first over the stage graph (each stage's neighbours in `neighbours`
  /// order), every search started at the unreached stage of largest `pressure` (the first among
  /// equals); `parent` (optional): the stage each one was reached from (S for a start).
  [[nodiscard]] std::vector<std::size_t> breadth_first_stages(std::span<const double> pressure,
                                                              std::vector<std::size_t>* parent = nullptr) const {
    std::vector<std::size_t> seq;
    std::vector<char> seen(S_, 0);
    if (parent) parent->assign(S_, S_);
    while (seq.size() < S_) {
      std::size_t start = S_;
      for (std::size_t s = 0; s < S_; ++s)
        if (!seen[s] && (start == S_ || pressure[s] > pressure[start])) start = s;
      seen[start] = 1;
      seq.push_back(start);
      for (std::size_t head = seq.size() - 1; head < seq.size(); ++head)
        for (auto t : neighbours(seq[head]))
          if (!seen[t]) {
            seen[t] = 1, seq.push_back(t);
            if (parent) (*parent)[t] = seq[head];
          }
    }
    return seq;
  }
  /// The ring allreduce volume of one replica of stage s: the all-reduce's 2(R_s−1) ring steps
  /// of P(s)/R_s bytes each (cost/collective.hpp), 2(R_s−1)/R_s · P(s) bytes (0 when R_s = 1).
  [[nodiscard]] double allreduce_bytes(std::size_t s) const noexcept {
    const std::size_t r = reps_[s];
    return r <= 1 ? 0.0 : collective_steps(collective_op::all_reduce, r) / static_cast<double>(r) * params_[s];
  }
  /// A replica of stage s on a ring whose largest per-byte link cost is W, in the rings form
  /// without latency (the line ring cover): c_u(s) + allreduce_bytes(s) · W ms.
  [[nodiscard]] double ring_stage_ms(std::size_t s, double W) const noexcept { return replica_compute_ms(s) + allreduce_bytes(s) * W; }
  /// The least `ring_stage_ms` over the stages at ring cost W (the stage that first accepts W).
  [[nodiscard]] double least_ring_stage_ms(double W) const noexcept {
    double m = std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < S_; ++s) m = std::min(m, ring_stage_ms(s, W));
    return m;
  }
  /// The ring cost θ_s = (t − c_u(s)) / allreduce_bytes(s) up to which stage s meets target t.
  [[nodiscard]] double ring_cost_within(std::size_t s, double t) const noexcept {
    return (t - replica_compute_ms(s)) / allreduce_bytes(s);
  }
  /// Σ_s allreduce_bytes(s) ÷ Σ_{s<s'} M(s, s'), the ratio ρ that selects the cost model
  /// (seed-parmesan.md G13); +inf when nothing is exchanged point to point but something is reduced.
  [[nodiscard]] double allreduce_to_p2p_ratio() const noexcept {
    double ar = 0, p2p = 0;
    for (std::size_t s = 0; s < S_; ++s) {
      ar += allreduce_bytes(s);
      for (std::size_t t = s + 1; t < S_; ++t) p2p += M_[s * S_ + t];
    }
    if (p2p == 0) return ar > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    return ar / p2p;
  }

 private:
  static std::vector<std::size_t> check_replicas(std::size_t replicas, std::size_t stages) {
    if (replicas == 0) throw std::invalid_argument("stage_graph: replicas must be >= 1");
    return std::vector<std::size_t>(stages, replicas);
  }
  static void check_value(double x, const char* what, std::size_t s) {
    if (!std::isfinite(x) || x < 0)
      throw std::invalid_argument(std::string("stage_graph: ") + what + " of stage " + std::to_string(s) +
                                  " must be a finite number >= 0");
  }
  void build_adjacency() {
    adj_begin_.assign(S_ + 1, 0);
    adj_.clear();
    for (std::size_t s = 0; s < S_; ++s) {
      adj_begin_[s] = adj_.size();
      const std::size_t first = adj_.size();
      for (std::size_t t = 0; t < S_; ++t)
        if (t != s && M_[s * S_ + t] > 0) adj_.push_back(t);
      std::stable_sort(adj_.begin() + static_cast<std::ptrdiff_t>(first), adj_.end(),
                       [&](std::size_t a, std::size_t b) { return M_[s * S_ + a] > M_[s * S_ + b]; });
    }
    adj_begin_[S_] = adj_.size();
  }

  std::size_t S_ = 0, R_ = 1;
  std::vector<double> compute_, params_, M_;
  std::vector<std::size_t> reps_, off_{0}, vstage_;
  bool uniform_ = true;
  std::vector<std::size_t> adj_, adj_begin_{0};
};

/// The stage graph of a partition with R_s = `stage_replicas[s]` replicas for stage s
/// (S = stage_replicas.size()), e.g. a `general_dp` result.
template <profiled_dag G>
[[nodiscard]] stage_graph make_stage_graph(const G& g, std::span<const std::size_t> stage_of,
                                           std::vector<std::size_t> stage_replicas) {
  const std::size_t stages = stage_replicas.size();
  const std::size_t n = devplace::num_vertices(g);
  if (stage_of.size() != n)
    throw std::invalid_argument("make_stage_graph: stage_of has " + std::to_string(stage_of.size()) +
                                " entries, the graph " + std::to_string(n) + " operators");
  if (stages == 0) throw std::invalid_argument("make_stage_graph: at least one stage is needed");
  std::vector<double> c(stages, 0.0), p(stages, 0.0);
  std::vector<std::vector<double>> m(stages, std::vector<double>(stages, 0.0));
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t s = stage_of[v];
    if (s >= stages)
      throw std::invalid_argument("make_stage_graph: operator " + std::to_string(v) + " has stage " +
                                  std::to_string(s) + " >= S = " + std::to_string(stages));
    c[s] += devplace::compute_ms(g, v);
    p[s] += devplace::param_bytes(g, v);
  }
  for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) {
    const std::size_t a = stage_of[u], b = stage_of[v];
    if (a == b) return;
    m[a][b] += bytes;
    m[b][a] += bytes;
  });
  return stage_graph(std::move(stage_replicas), std::move(c), std::move(p), std::move(m));
}

/// The stage graph of a partition of `g`: `stage_of[v]` < S is the stage of operator v. Stages may
/// be empty (c_u = P = 0). Throws std::invalid_argument on a size mismatch or a stage ≥ S.
template <profiled_dag G>
[[nodiscard]] stage_graph make_stage_graph(const G& g, std::span<const std::size_t> stage_of, std::size_t stages,
                                           std::size_t replicas) {
  if (replicas == 0) throw std::invalid_argument("make_stage_graph: replicas must be >= 1");
  if (stages == 0) throw std::invalid_argument("make_stage_graph: at least one stage is needed");
  return make_stage_graph(g, stage_of, std::vector<std::size_t>(stages, replicas));
}

/// Convenience overload for a `std::vector` labelling.
template <profiled_dag G>
[[nodiscard]] stage_graph make_stage_graph(const G& g, const std::vector<std::size_t>& stage_of, std::size_t stages,
                                           std::size_t replicas) {
  return make_stage_graph(g, std::span<const std::size_t>(stage_of), stages, replicas);
}

/// Convenience overload for a `std::vector` labelling with per-stage replica counts.
template <profiled_dag G>
[[nodiscard]] stage_graph make_stage_graph(const G& g, const std::vector<std::size_t>& stage_of,
                                           std::vector<std::size_t> stage_replicas) {
  return make_stage_graph(g, std::span<const std::size_t>(stage_of), std::move(stage_replicas));
}

}  // namespace devplace
