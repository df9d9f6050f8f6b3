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
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
      : S_(compute_ms.size()), R_(replicas), compute_(std::move(compute_ms)), params_(std::move(param_bytes)) {
    if (R_ == 0) throw std::invalid_argument("stage_graph: replicas must be >= 1");
    if (S_ == 0) throw std::invalid_argument("stage_graph: at least one stage is needed");
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
  [[nodiscard]] std::size_t replicas() const noexcept { return R_; }
  /// |V'| = S·R, the number of devices a mapping uses.
  [[nodiscard]] std::size_t vertices() const noexcept { return S_ * R_; }
  /// The G' vertex of replica r of stage s: s·R + r.
  [[nodiscard]] std::size_t vertex(std::size_t s, std::size_t r) const noexcept { return s * R_ + r; }
  [[nodiscard]] std::size_t stage_of_vertex(std::size_t v) const noexcept { return v / R_; }
  [[nodiscard]] std::size_t replica_of_vertex(std::size_t v) const noexcept { return v % R_; }

  /// c_u(s) in ms.
  [[nodiscard]] double compute_ms(std::size_t s) const noexcept { return compute_[s]; }
  /// P(s) in bytes.
  [[nodiscard]] double param_bytes(std::size_t s) const noexcept { return params_[s]; }
  /// M(s, s') in bytes (0 on the diagonal and between stages that exchange nothing).
  [[nodiscard]] double message_bytes(std::size_t s, std::size_t t) const noexcept { return M_[s * S_ + t]; }
  /// The stages s' with M(s, s') > 0, largest message first (ties by index).
  [[nodiscard]] std::span<const std::size_t> neighbours(std::size_t s) const noexcept {
    return {adj_.data() + adj_begin_[s], adj_begin_[s + 1] - adj_begin_[s]};
  }
  /// The ring allreduce volume of one replica of stage s: 2(R−1)/R · P(s) bytes (0 when R = 1).
  [[nodiscard]] double allreduce_bytes(std::size_t s) const noexcept {
    return R_ <= 1 ? 0.0 : 2.0 * static_cast<double>(R_ - 1) / static_cast<double>(R_) * params_[s];
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
  std::vector<std::size_t> adj_, adj_begin_{0};
};

/// The stage graph of a partition of `g`: `stage_of[v]` < S is the stage of operator v. Stages may
/// be empty (c_u = P = 0). Throws std::invalid_argument on a size mismatch or a stage ≥ S.
template <profiled_dag G>
[[nodiscard]] stage_graph make_stage_graph(const G& g, std::span<const std::size_t> stage_of, std::size_t stages,
                                           std::size_t replicas) {
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
  return stage_graph(replicas, std::move(c), std::move(p), std::move(m));
}

/// Convenience overload for a `std::vector` labelling.
template <profiled_dag G>
[[nodiscard]] stage_graph make_stage_graph(const G& g, const std::vector<std::size_t>& stage_of, std::size_t stages,
                                           std::size_t replicas) {
  return make_stage_graph(g, std::span<const std::size_t>(stage_of), stages, replicas);
}

}  // namespace devplace
