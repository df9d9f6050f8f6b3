#pragma once
/// \file partition/stage_cost.hpp
/// The phase-1 stage cost model (docs/formats.md "Cost conventions"; Parmesan eq. 3 and 14): the
/// one definition of a stage's time and memory that the DPs, clustering, refinement, the flow and
/// the partition ILP all call. Its parameters are `stage_cost_options`, nested as `.cost` in every
/// partitioning option struct.
///
/// For a stage X (a set of operators) with R replicas, at constant bandwidth β̄ (GB/s):
///   time     t(X, R) = ( Σ_{v∈X} c_u(v) + Σ_{edges e with exactly one end in X} bytes(e) / (β̄·10^6) ) / R
///   memory   m(X)    = ( Σ_{v∈X} max(m_fwd(v), m_bwd(v)) + Σ_{edges e with exactly one end in X} bytes(e) ) / MB
/// and X is feasible when m(X) ≤ R · device memory (the DP's budget, eq. 3).
/// `evaluate_partition` recomputes every stage of a labelling from scratch: O(n + m).
#include <algorithm>
#include <cstddef>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/cost/transfer.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/op_graph.hpp"

namespace devplace {

struct stage_cost_options {
  std::size_t replicas = 1;        ///< R
  std::size_t micro_batches = 1;   ///< MB of eq. 14
  double device_memory_bytes = std::numeric_limits<double>::infinity();
  double bandwidth_gbps = 10.0;    ///< β̄
};

/// Throws std::invalid_argument naming the field when `o` is not a valid cost model: R ≥ 1,
/// MB ≥ 1, memory > 0 (not NaN), bandwidth finite and > 0. `who` prefixes the message.
inline void check_cost_options(const stage_cost_options& o, const char* who) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(std::string(who) + ": cost." + what); };
  if (o.replicas == 0) fail("replicas must be >= 1");
  if (o.micro_batches == 0) fail("micro_batches must be >= 1");
  if (!(o.device_memory_bytes > 0)) fail("device_memory_bytes must be > 0");
  if (!(o.bandwidth_gbps > 0) || !std::isfinite(o.bandwidth_gbps)) fail("bandwidth_gbps must be a finite number > 0");
}

/// ms per cut byte of a stage before the division by R: 1 / (β̄ · 10^6) (cost/transfer.hpp at β̄,
/// no latency). Linear builders (the DP's prefix sums, the ILP rows) use this coefficient.
[[nodiscard]] constexpr double cut_ms_per_byte(const stage_cost_options& o) noexcept {
  return transfer_time_ms(1.0, o.bandwidth_gbps);
}

/// t(X, R) from the stage's compute (ms) and the bytes on its cut edges.
[[nodiscard]] constexpr double stage_time_ms(double compute, double cut_bytes, const stage_cost_options& o) noexcept {
  return (compute + cut_bytes * cut_ms_per_byte(o)) / static_cast<double>(o.replicas);
}
/// m(X) from the stage's internal memory Σ max(m_fwd, m_bwd) and the bytes on its cut edges.
[[nodiscard]] constexpr double stage_memory_bytes(double internal_bytes, double cut_bytes, const stage_cost_options& o) noexcept {
  return (internal_bytes + cut_bytes) / static_cast<double>(o.micro_batches == 0 ? 1 : o.micro_batches);
}
/// m(X) ≤ R · device memory.
[[nodiscard]] constexpr bool stage_fits(double bytes, const stage_cost_options& o) noexcept {
  return bytes <= static_cast<double>(o.replicas) * o.device_memory_bytes;
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

/// Evaluates the labelling `stage_of` of any `profiled_dag` from scratch with its own replica count
/// per stage (Parmesan's general DP, eq. 2): stage k has `replicas[k]` ≥ 1 replicas, S =
/// replicas.size(); stage k's time is t(X_k, replicas[k]) and its budget replicas[k] · device
/// memory (`o.replicas` is not read). Otherwise as the overload below, which is the case of S
/// equal counts.
template <profiled_dag G>
[[nodiscard]] partition_evaluation evaluate_partition(const G& g, const std::vector<std::size_t>& stage_of,
                                                      const std::vector<std::size_t>& replicas,
                                                      const stage_cost_options& o);

/// Evaluates the labelling `stage_of` (S stages) of any `profiled_dag` from scratch, reading
/// compute_ms, memory_bytes and edge_bytes through the customisation points (parallel edges
/// once, dag/edges.hpp). A labelling that is not monotone or leaves a stage empty is reported as
/// `valid = false`; a wrong size or a label ≥ S throws std::invalid_argument.
template <profiled_dag G>
[[nodiscard]] partition_evaluation evaluate_partition(const G& g, const std::vector<std::size_t>& stage_of,
                                                      std::size_t stages, const stage_cost_options& o) {
  if (stages == 0) throw std::invalid_argument("evaluate_partition: at least one stage is needed");
  check_cost_options(o, "evaluate_partition");
  return evaluate_partition(g, stage_of, std::vector<std::size_t>(stages, o.replicas), o);
}

template <profiled_dag G>
[[nodiscard]] partition_evaluation evaluate_partition(const G& g, const std::vector<std::size_t>& stage_of,
                                                      const std::vector<std::size_t>& replicas,
                                                      const stage_cost_options& o) {
  const std::size_t stages = replicas.size();
  partition_evaluation e;
  const std::size_t n = devplace::num_vertices(g);
  if (stage_of.size() != n)
    throw std::invalid_argument("evaluate_partition: stage_of has " + std::to_string(stage_of.size()) +
                                " entries, the graph " + std::to_string(n) + " operators");
  if (stages == 0) throw std::invalid_argument("evaluate_partition: at least one stage is needed");
  for (std::size_t k = 0; k < stages; ++k)
    if (replicas[k] == 0)
      throw std::invalid_argument("evaluate_partition: stage " + std::to_string(k) + " has 0 replicas");
  check_cost_options(o, "evaluate_partition");
  e.stage_compute_ms.assign(stages, 0.0);
  e.stage_cut_bytes.assign(stages, 0.0);
  std::vector<double> internal(stages, 0.0);
  std::vector<std::size_t> size(stages, 0);
  bool valid = true;
  for (std::size_t v = 0; v < n; ++v) {
    if (stage_of[v] >= stages)
      throw std::invalid_argument("evaluate_partition: operator " + std::to_string(v) + " has stage " +
                                  std::to_string(stage_of[v]) + " >= S = " + std::to_string(stages));
    e.stage_compute_ms[stage_of[v]] += devplace::compute_ms(g, v);
    internal[stage_of[v]] += devplace::memory_bytes(g, v);
    ++size[stage_of[v]];
  }
  for_each_edge(g, [&](std::size_t u, std::size_t v, double b) {
    if (stage_of[u] > stage_of[v]) valid = false;
    if (stage_of[u] != stage_of[v]) {
      e.stage_cut_bytes[stage_of[u]] += b;
      e.stage_cut_bytes[stage_of[v]] += b;
    }
  });
  for (auto c : size) valid = valid && c > 0;
  e.valid = valid;
  e.fits = true;
  for (std::size_t k = 0; k < stages; ++k) {
    stage_cost_options ok = o;
    ok.replicas = replicas[k];
    e.stage_time_ms.push_back(stage_time_ms(e.stage_compute_ms[k], e.stage_cut_bytes[k], ok));
    e.stage_memory_bytes.push_back(stage_memory_bytes(internal[k], e.stage_cut_bytes[k], ok));
    e.fits = e.fits && stage_fits(e.stage_memory_bytes.back(), ok);
    e.objective_ms = std::max(e.objective_ms, e.stage_time_ms.back());
  }
  return e;
}

}  // namespace devplace
