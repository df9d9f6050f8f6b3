#pragma once
/// \file sim/pipeline_model.hpp
/// `pipeline_model`, the mapped pipeline the simulator runs (sim/pipeline_simulator.hpp): per
/// stage (or model chunk) forward and backward time, parameter bytes, the stage-graph messages,
/// the devices of its replicas and, optionally, its gradient profile (its operators in backward
/// order, which says when the gradient buckets of the data-parallel allreduce fill);
/// `make_pipeline_model` builds it from any `profiled_dag` and a partition,
/// `check_pipeline_model` validates it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/properties.hpp"

namespace devplace {

/// One operator of a stage's gradient profile: its backward time and the parameter bytes whose
/// gradients are ready when that backward finishes.
struct gradient_op {
  double backward_ms = 0;
  double param_bytes = 0;
};

/// A mapped pipeline: what the simulator needs, independent of how it was produced.
struct pipeline_model {
  std::size_t stages = 0;                              ///< S
  std::size_t replicas = 1;                            ///< R (R̂, the reference count, with rows of different lengths)
  std::vector<double> forward_ms, backward_ms;         ///< per stage, one micro-batch
  std::vector<double> param_bytes;                     ///< P(s)
  /// M[s][s'] for s < s': bytes of the stage-graph edge s → s' (activations forward, gradients
  /// back), ≥ 0 for every edge — a 0-byte edge is still a dependency — and negative where there
  /// is no edge.
  std::vector<std::vector<double>> message_bytes;
  std::vector<std::vector<std::size_t>> device_of;     ///< S rows of R devices (row s: R_s ≥ 1 devices)
  /// Optional: per stage, its operators in the order their backward passes run. The simulator
  /// reads the proportions (a row's times are scaled to the stage's backward time, its bytes to
  /// P(s)) to decide when each gradient bucket is full (sim/pipeline_simulator.hpp). Empty, or an
  /// empty row: the stage produces its gradients at a constant rate over its backward.
  std::vector<std::vector<gradient_op>> gradient_profile;
};

/// Builds the model of `g` cut by `stage_of` into S stages with R replicas on `device_of`, for any
/// `profiled_dag`: per stage, forward = Σ forward_ms(v) and backward = Σ (compute_ms(v) −
/// forward_ms(v)), so that forward + backward is the stage's c_u, the same compute the partitioner
/// and the mapper read; parameter bytes Σ param_bytes(v); and M(s, s') = bytes of the edges between
/// s and s' (either direction, parallel edges once: dag/edges.hpp); -1 where no edge; and the
/// gradient profile: each stage's operators in reverse topological order (`topological_sort`
/// reversed: the order the backward pass runs them), each with compute_ms − forward_ms and
/// param_bytes.
/// Throws std::invalid_argument on a size mismatch, a stage ≥ S, an empty row of `device_of`, an
/// operator whose compute_ms is less than its forward_ms, or a cycle.
template <profiled_dag G>
[[nodiscard]] pipeline_model make_pipeline_model(const G& g, const std::vector<std::size_t>& stage_of, std::size_t stages,
                                                 std::vector<std::vector<std::size_t>> device_of) {
  const std::size_t n = devplace::num_vertices(g);
  if (stage_of.size() != n)
    throw std::invalid_argument("make_pipeline_model: stage_of has " + std::to_string(stage_of.size()) +
                                " entries, the graph " + std::to_string(n) + " operators");
  if (stages == 0) throw std::invalid_argument("make_pipeline_model: at least one stage is needed");
  if (device_of.size() != stages)
    throw std::invalid_argument("make_pipeline_model: device_of has " + std::to_string(device_of.size()) +
                                " rows, one per stage (" + std::to_string(stages) + ") is needed");
  pipeline_model m;
  m.stages = stages;
  m.replicas = 0;
  for (std::size_t s = 0; s < stages; ++s) {
    if (device_of[s].empty())
      throw std::invalid_argument("make_pipeline_model: device_of row " + std::to_string(s) + " has no device");
    m.replicas = std::max(m.replicas, device_of[s].size());  // R̂ = max_s R_s
  }
  m.forward_ms.assign(stages, 0.0);
  m.backward_ms.assign(stages, 0.0);
  m.param_bytes.assign(stages, 0.0);
  m.message_bytes.assign(stages, std::vector<double>(stages, -1.0));
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t s = stage_of[v];
    if (s >= stages)
      throw std::invalid_argument("make_pipeline_model: operator " + std::to_string(v) + " has stage " +
                                  std::to_string(s) + " >= S = " + std::to_string(stages));
    const double f = devplace::forward_ms(g, v), c = devplace::compute_ms(g, v);
    if (c < f)
      throw std::invalid_argument("make_pipeline_model: operator " + std::to_string(v) + " has compute_ms " +
                                  std::to_string(c) + " < forward_ms " + std::to_string(f));
    m.forward_ms[s] += f;
    m.backward_ms[s] += c - f;
    m.param_bytes[s] += devplace::param_bytes(g, v);
  }
  const auto topo = topological_sort(g);
  if (!topo) throw std::invalid_argument("make_pipeline_model: the graph has a cycle");
  m.gradient_profile.assign(stages, {});
  for (auto it = topo.order.rbegin(); it != topo.order.rend(); ++it)
    m.gradient_profile[stage_of[*it]].push_back(
        {devplace::compute_ms(g, *it) - devplace::forward_ms(g, *it), devplace::param_bytes(g, *it)});
  for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) {
    const std::size_t a = stage_of[u], b = stage_of[v];
    if (a == b) return;
    double& mb = m.message_bytes[std::min(a, b)][std::max(a, b)];
    mb = std::max(mb, 0.0) + bytes;
  });
  m.device_of = std::move(device_of);
  return m;
}

namespace detail {

inline void check_gradient_profile(const pipeline_model& m) {
  const auto& gp = m.gradient_profile;
  if (gp.empty()) return;
  auto fail = [](std::size_t s, const std::string& what) {
    throw std::invalid_argument("simulate: gradient_profile row " + std::to_string(s) + " " + what);
  };
  if (gp.size() != m.stages)
    throw std::invalid_argument("simulate: gradient_profile needs no row or one per stage (S = " + std::to_string(m.stages) + ")");
  for (std::size_t s = 0; s < m.stages; ++s) {
    if (gp[s].empty()) continue;
    double time = 0, bytes = 0;
    for (const auto& op : gp[s]) {
      if (!(op.backward_ms >= 0) || !std::isfinite(op.backward_ms) || !(op.param_bytes >= 0) || !std::isfinite(op.param_bytes))
        fail(s, "has a negative or non-finite entry");
      time += op.backward_ms;
      bytes += op.param_bytes;
    }
    if (m.backward_ms[s] > 0 && !(time > 0)) fail(s, "has no backward time, the stage has " + std::to_string(m.backward_ms[s]) + " ms");
    if (m.param_bytes[s] > 0 && !(bytes > 0)) fail(s, "has no parameter bytes, the stage has " + std::to_string(m.param_bytes[s]));
  }
}

}  // namespace detail

/// Throws std::invalid_argument naming the field when `m` is not a well-formed model on `devices`
/// devices: sizes, finite costs ≥ 0, device ids < devices, and distinct devices. With
/// `virtual_stages` v > 1 (the interleaved schedule) the S stages are S / v ranks × v chunks:
/// S must be a multiple of v, the first S / v rows hold distinct devices, and row c ≥ S / v
/// repeats row c − S / v (chunk c runs on the devices of pipeline rank c mod S / v). A gradient
/// profile is empty or has S rows; a non-empty row has finite entries ≥ 0, some backward time
/// where the stage has backward time and some parameter bytes where it has parameters.
inline void check_pipeline_model(const pipeline_model& m, std::size_t devices, std::size_t virtual_stages = 1) {
  const std::size_t S = m.stages, R = m.replicas;
  auto fail = [](const std::string& what) { throw std::invalid_argument("simulate: " + what); };
  // R is the reference count R̂; each row holds its stage's R_s devices.
  if (S == 0 || R == 0) fail("the model needs at least one stage and one replica");
  if (virtual_stages == 0 || S % virtual_stages != 0)
    fail("the " + std::to_string(S) + " stages do not split into virtual_stages = " + std::to_string(virtual_stages) +
         " chunks per device");
  const std::size_t ranks = S / virtual_stages;
  if (m.forward_ms.size() != S || m.backward_ms.size() != S || m.param_bytes.size() != S || m.message_bytes.size() != S ||
      m.device_of.size() != S)
    fail("forward_ms, backward_ms, param_bytes, message_bytes and device_of need one entry per stage (S = " +
         std::to_string(S) + ")");
  std::vector<char> used(devices, 0);
  for (std::size_t s = 0; s < S; ++s) {
    for (double x : {m.forward_ms[s], m.backward_ms[s], m.param_bytes[s]})
      if (!(x >= 0) || !std::isfinite(x)) fail("stage " + std::to_string(s) + " has a negative or non-finite cost");
    if (m.message_bytes[s].size() != S) fail("message_bytes row " + std::to_string(s) + " needs S entries");
    for (double x : m.message_bytes[s])
      if (!std::isfinite(x)) fail("message_bytes row " + std::to_string(s) + " has a non-finite entry");
    if (m.device_of[s].empty()) fail("device_of row " + std::to_string(s) + " has no device");
    for (auto d : m.device_of[s]) {
      if (d >= devices)
        fail("device_of[" + std::to_string(s) + "] names device " + std::to_string(d) + ", the topology has " +
             std::to_string(devices));
      if (s >= ranks) continue;  // a later chunk of rank s mod ranks: checked below
      if (used[d]) fail("device " + std::to_string(d) + " runs two stage replicas");
      used[d] = 1;
    }
  }
  detail::check_gradient_profile(m);
  for (std::size_t s = ranks; s < S; ++s)
    if (m.device_of[s] != m.device_of[s - ranks])
      fail("device_of row " + std::to_string(s) + " must repeat row " + std::to_string(s - ranks) +
           " (chunk c runs on pipeline rank c mod " + std::to_string(ranks) + ")");
}

}  // namespace devplace
