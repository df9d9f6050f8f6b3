#pragma once
/// \file partition/stage_cost.hpp
/// The phase-1 stage cost model (docs/formats.md "Cost conventions"; Parmesan eq. 3 and 14).
///
/// For a stage X (a set of operators) with R replicas, at constant bandwidth β̄ (GB/s):
///   time     t(X, R) = ( Σ_{v∈X} c_u(v) + Σ_{edges e with exactly one end in X} bytes(e) / (β̄·10^6) ) / R
///   memory   m(X)    = ( Σ_{v∈X} max(m_fwd(v), m_bwd(v)) + Σ_{edges e with exactly one end in X} bytes(e) ) / MB
/// and X is feasible when m(X) ≤ R · device memory (the DP's budget, eq. 3).
/// `evaluate_partition` recomputes every stage of a labelling from scratch: O(n + m).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "devplace/dag/op_graph.hpp"

namespace devplace {

struct stage_cost_options {
  std::size_t replicas = 1;        ///< R
  std::size_t micro_batches = 1;   ///< MB of eq. 14
  double device_memory_bytes = std::numeric_limits<double>::infinity();
  double bandwidth_gbps = 10.0;    ///< β̄
};

/// t(X, R) from the stage's compute (ms) and the bytes on its cut edges.
[[nodiscard]] constexpr double stage_time_ms(double compute_ms, double cut_bytes, const stage_cost_options& o) noexcept {
  return (compute_ms + cut_bytes / (o.bandwidth_gbps * 1e6)) / static_cast<double>(o.replicas);
}
/// m(X) from the stage's internal memory Σ max(m_fwd, m_bwd) and the bytes on its cut edges.
[[nodiscard]] constexpr double stage_memory_bytes(double internal_bytes, double cut_bytes, const stage_cost_options& o) noexcept {
  return (internal_bytes + cut_bytes) / static_cast<double>(o.micro_batches == 0 ? 1 : o.micro_batches);
}
/// m(X) ≤ R · device memory.
[[nodiscard]] constexpr bool stage_fits(double memory_bytes, const stage_cost_options& o) noexcept {
  return memory_bytes <= static_cast<double>(o.replicas) * o.device_memory_bytes;
}

struct partition_evaluation {
  bool valid = false;                    ///< S labels in range, every stage non-empty, monotone along edges
  bool fits = false;                     ///< every stage within the memory budget
  double objective_ms = 0;               ///< max stage time
  std::vector<double> stage_time_ms;     ///< t(X_s, R)
  std::vector<double> stage_memory_bytes;///< m(X_s)
  std::vector<double> stage_compute_ms;  ///< Σ c_u
  std::vector<double> stage_cut_bytes;   ///< bytes on edges with exactly one end in the stage
};

/// Evaluates the labelling `stage_of` (S stages) of `g` from scratch.
[[nodiscard]] inline partition_evaluation evaluate_partition(const op_graph& g, const std::vector<std::size_t>& stage_of,
                                                             std::size_t stages, const stage_cost_options& o) {
  partition_evaluation e;
  const std::size_t n = g.num_vertices();
  if (stage_of.size() != n || stages == 0) return e;
  e.stage_compute_ms.assign(stages, 0.0);
  e.stage_cut_bytes.assign(stages, 0.0);
  std::vector<double> internal(stages, 0.0);
  std::vector<std::size_t> size(stages, 0);
  bool valid = true;
  for (std::size_t v = 0; v < n; ++v) {
    if (stage_of[v] >= stages) return e;
    e.stage_compute_ms[stage_of[v]] += g.compute_ms(v);
    internal[stage_of[v]] += g.memory_bytes(v);
    ++size[stage_of[v]];
  }
  const auto& s = g.structure();
  for (std::size_t u = 0; u < n; ++u) {
    const auto succ = s.out_edges(u);
    for (std::size_t k = 0; k < succ.size(); ++k) {
      const std::size_t v = succ[k];
      if (stage_of[u] > stage_of[v]) valid = false;
      if (stage_of[u] != stage_of[v]) {
        const double b = g.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(u) + k));
        e.stage_cut_bytes[stage_of[u]] += b;
        e.stage_cut_bytes[stage_of[v]] += b;
      }
    }
  }
  for (auto c : size) valid = valid && c > 0;
  e.valid = valid;
  e.fits = true;
  for (std::size_t k = 0; k < stages; ++k) {
    e.stage_time_ms.push_back(stage_time_ms(e.stage_compute_ms[k], e.stage_cut_bytes[k], o));
    e.stage_memory_bytes.push_back(stage_memory_bytes(internal[k], e.stage_cut_bytes[k], o));
    e.fits = e.fits && stage_fits(e.stage_memory_bytes.back(), o);
    e.objective_ms = std::max(e.objective_ms, e.stage_time_ms.back());
  }
  return e;
}

}  // namespace devplace
