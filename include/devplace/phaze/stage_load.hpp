#pragma once
/// \file phaze/stage_load.hpp
/// PHAZE's stage model (seed-phaze.md §3.4, §3.5; docs/phaze.md): the latency and memory of one
/// pipeline stage (a set of layers) on `a` accelerators, and the time per batch F of a whole plan.
/// The placement DP (phaze/placement.hpp) and its re-evaluation both call these functions.
///
/// A stage S runs its layers one at a time in the graph's topological order (`topological_sort`,
/// smallest ready id first); a layer starts when the previous one has finished and its inputs are
/// there: an input from inside S when its producer finished, one from outside after the transfer
/// T(bytes) of cost/transfer.hpp (no latency term). Backward runs in the reverse order, a gradient
/// from outside arriving after T(bytes).
///   stash latency      fw_lat + bw_lat
///   recompute latency  fw_lat + (backward started after Σ fw of S, the recomputation)   (s > 1)
/// Memory of S as the s-th stage from the pipeline's end (PipeDream-Flush keeps s − 1 micro-batches
/// in flight):
///   mem(S, s) = Σ_{v∈S} (2 P_v + o·P_v + A_v) + (s − 1) · stash,
///   stash = Σ bytes of the edges entering S (recomputation) or Σ_{v∈S} A_v (stashing),
/// with P_v = param_bytes, A_v = memory_bytes (the activations of one micro-batch) and o the
/// optimizer's bytes per parameter byte (0 for SGD). The stage uses a = t accelerators when it holds
/// a tensor-parallel layer slice, else a = 1.
/// Time per batch (eq. 17, 18): with d pipelines, B micro-batches, s stages and first stage S₁,
///   F = (⌈B/d⌉ + s − 1) · max_i load_i + (c/2) · ring_allreduce(P(S₁) over d)   (c = 4: 4 (d−1)/d P/β).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/config.hpp"
#include "devplace/cost/transfer.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/status.hpp"

namespace devplace::phaze {

/// Which activation policy the DP considers (seed-phaze.md §1.3: both, the better wins).
enum class recompute_policy { both, stash_only, recompute_only };

struct placement_options {
  std::size_t devices = 1;        ///< K
  std::size_t global_batch = 1;   ///< samples per mini-batch, B · b
  double bandwidth_gbps = 4.294967296;  ///< β: 4 GiB/s, PHAZE's PCIe 3.0 figure
  double device_memory_bytes = std::numeric_limits<double>::infinity();  ///< HBM per accelerator
  double optimizer_bytes_per_param_byte = 0;  ///< o: 0 for SGD (PHAZE's runs), 1 for PHAZE's "Adam"
  double resync_factor = 4;       ///< c of eq. 18
  recompute_policy recompute = recompute_policy::both;
  std::size_t max_downsets = 200000;  ///< the DP stops with status::work_limit above this
  std::size_t max_table_entries = std::size_t{1} << 27;  ///< N (S+1)(K+1) doubles (1 GiB); above: work_limit
  unsigned threads = 1;           ///< workers over (variant, recompute) pairs (executor.hpp)
};

template <int = 0>
void check_placement_options(const placement_options& o) {
  DEVPLACE_EXPECTS(o.devices >= 1, "phaze: devices must be >= 1");
  DEVPLACE_EXPECTS(o.global_batch >= 1, "phaze: global_batch must be >= 1");
  DEVPLACE_EXPECTS(o.bandwidth_gbps > 0 && std::isfinite(o.bandwidth_gbps), "phaze: bandwidth_gbps must be finite and > 0");
  DEVPLACE_EXPECTS(o.device_memory_bytes > 0, "phaze: device_memory_bytes must be > 0");
  DEVPLACE_EXPECTS(o.optimizer_bytes_per_param_byte >= 0, "phaze: optimizer_bytes_per_param_byte must be >= 0");
  DEVPLACE_EXPECTS(o.resync_factor >= 0, "phaze: resync_factor must be >= 0");
}

/// One workload variant: the layer graph at tensor-parallel width t and micro-batch size b (its
/// costs are per accelerator: a slice's when the layer is tensor parallel). `tensor_parallel[v]`
/// marks the layer slices (empty: none).
template <class G>
struct workload_variant {
  std::size_t tensor_width = 1;  ///< t
  std::size_t micro_batch = 1;   ///< b
  G graph;
  std::vector<bool> tensor_parallel;
};

namespace detail {

/// A layer graph copied once into arrays (the template shell's concrete core input).
struct layer_table {
  std::size_t n = 0, tensor_width = 1, micro_batch = 1;
  std::vector<double> fw, bw, params, act;
  std::vector<bool> sliced;
  std::vector<std::vector<std::pair<std::size_t, double>>> in, out;  ///< (neighbour, bytes)
  std::vector<std::size_t> order;                                    ///< serial execution order
};

template <class G>
  requires profiled_dag<std::remove_cvref_t<G>>
layer_table make_layer_table(const workload_variant<G>& w) {
  layer_table t;
  const auto& g = w.graph;
  t.n = devplace::num_vertices(g);
  DEVPLACE_EXPECTS(t.n >= 1, "phaze: the layer graph is empty");
  DEVPLACE_EXPECTS(w.tensor_width >= 1, "phaze: tensor_width must be >= 1");
  DEVPLACE_EXPECTS(w.micro_batch >= 1, "phaze: micro_batch must be >= 1");
  DEVPLACE_EXPECTS(w.tensor_parallel.empty() || w.tensor_parallel.size() == t.n,
                   "phaze: tensor_parallel must be empty or have one flag per layer");
  t.tensor_width = w.tensor_width;
  t.micro_batch = w.micro_batch;
  t.in.resize(t.n);
  t.out.resize(t.n);
  for (std::size_t v = 0; v < t.n; ++v) {
    t.fw.push_back(devplace::forward_ms(g, v));
    t.bw.push_back(devplace::backward_ms(g, v));
    t.params.push_back(devplace::param_bytes(g, v));
    t.act.push_back(devplace::memory_bytes(g, v));
    t.sliced.push_back(!w.tensor_parallel.empty() && w.tensor_parallel[v]);
  }
  for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) {
    t.out[u].emplace_back(v, bytes);
    t.in[v].emplace_back(u, bytes);
  });
  const auto topo = topological_sort(g);
  DEVPLACE_EXPECTS(topo.status == status::optimal, "phaze: the layer graph has a cycle");
  t.order = topo.order;
  return t;
}

}  // namespace detail

/// The model's view of one stage, independent of its position s.
struct stage_cost {
  std::size_t devices = 1;        ///< a
  double stash_latency_ms = 0;    ///< fw_lat + bw_lat (also any stage at s = 1)
  double recompute_latency_ms = 0;///< fw_lat + recomputation and backward
  double param_bytes = 0;         ///< P(S)
  double fixed_bytes = 0;         ///< Σ (2P + oP + A)
  double stash_bytes = 0;         ///< per in-flight micro-batch (depends on the policy)

  [[nodiscard]] double latency_ms(std::size_t position, bool recompute) const noexcept {
    return recompute && position > 1 ? recompute_latency_ms : stash_latency_ms;
  }
  [[nodiscard]] double memory_bytes(std::size_t position) const noexcept {
    return fixed_bytes + static_cast<double>(position - 1) * stash_bytes;
  }
  /// The largest position s ≤ cap at which the stage fits in `memory` (0: never), seed §3.4.
  [[nodiscard]] std::size_t max_position(std::size_t cap, double memory) const noexcept {
    if (memory_bytes(cap) <= memory) return cap;
    if (fixed_bytes > memory) return 0;
    return 1 + static_cast<std::size_t>(std::floor((memory - fixed_bytes) / stash_bytes));
  }
};

namespace detail {

/// The stage of the layers with `in_stage[v]`, under the policy `recompute` (only the stash bytes
/// depend on it). O(|S| + edges of S) plus O(n) for the order walk.
template <int = 0>
stage_cost evaluate_stage(const layer_table& t, const std::vector<char>& in_stage, bool recompute,
                                 const placement_options& o) {
  stage_cost c;
  std::vector<double> finish(t.n, 0), finish_bw(t.n, 0);
  double clock = 0, fw_sum = 0, inbound = 0, act = 0;
  bool sliced = false;
  for (auto v : t.order) {
    if (!in_stage[v]) continue;
    double ready = clock;
    for (auto [u, bytes] : t.in[v]) {
      if (in_stage[u]) ready = std::max(ready, finish[u]);
      else {
        ready = std::max(ready, transfer_time_ms(bytes, o.bandwidth_gbps));
        inbound += bytes;
      }
    }
    finish[v] = clock = ready + t.fw[v];
    fw_sum += t.fw[v];
    c.param_bytes += t.params[v];
    act += t.act[v];
    sliced = sliced || t.sliced[v];
  }
  const double fw_lat = clock;
  auto backward = [&](double start) {
    double bclock = start;
    for (auto it = t.order.rbegin(); it != t.order.rend(); ++it) {
      const auto v = *it;
      if (!in_stage[v]) continue;
      double ready = bclock;
      for (auto [w, bytes] : t.out[v])
        ready = std::max(ready, in_stage[w] ? finish_bw[w] : transfer_time_ms(bytes, o.bandwidth_gbps));
      finish_bw[v] = bclock = ready + t.bw[v];
    }
    return bclock;
  };
  c.stash_latency_ms = fw_lat + backward(0);
  c.recompute_latency_ms = fw_lat + backward(fw_sum);
  c.devices = sliced ? t.tensor_width : 1;
  c.fixed_bytes = (2 + o.optimizer_bytes_per_param_byte) * c.param_bytes + act;
  c.stash_bytes = recompute ? inbound : act;
  return c;
}

}  // namespace detail

/// eq. 18: the data-parallel gradient allreduce paid by the first stage, (c/2) · ring allreduce of
/// P bytes over d replicas at β (cost/transfer.hpp) = c (d − 1)/d · P/β.
template <int = 0>
[[nodiscard]] double resync_ms(double param_bytes, std::size_t replicas, const placement_options& o) {
  const double step = transfer_time_ms(ring_step_bytes(param_bytes, replicas), o.bandwidth_gbps);
  return o.resync_factor / 2 * ring_allreduce_ms(step, replicas);
}

/// eq. 17 + 18: the time per batch of d pipelines of s stages with the given max load.
template <int = 0>
[[nodiscard]] double time_per_batch_ms(double max_load_ms, std::size_t micro_batches, std::size_t replicas,
                                              std::size_t stages, double first_stage_param_bytes,
                                              const placement_options& o) {
  const std::size_t per_pipeline = (micro_batches + replicas - 1) / replicas;
  return static_cast<double>(per_pipeline + stages - 1) * max_load_ms + resync_ms(first_stage_param_bytes, replicas, o);
}

/// One stage of a plan, in pipeline order.
struct placed_stage {
  std::vector<std::size_t> layers;  ///< vertex ids, ascending
  std::size_t devices = 1;          ///< a (per pipeline)
  std::size_t position = 1;         ///< s: 1 = the last stage
  double latency_ms = 0;            ///< its load per micro-batch
  double memory_bytes = 0;          ///< per accelerator, at its position
};

/// A PHAZE plan {p, d, t} with its stages, F and throughput.
struct placement {
  devplace::status status = status::infeasible;
  std::size_t tensor_width = 1;   ///< t
  std::size_t data_parallel = 1;  ///< d
  std::size_t micro_batch = 1;    ///< b
  std::size_t micro_batches = 1;  ///< B = global batch / b
  bool recompute = false;
  std::vector<placed_stage> stages;  ///< p = stages.size(), first stage first
  double max_load_ms = 0;
  double resync_ms = 0;
  double time_per_batch_ms = std::numeric_limits<double>::infinity();  ///< F
  double samples_per_s = 0;       ///< global batch / F
  std::size_t devices_used = 0;   ///< d · Σ a
  std::size_t downsets = 0;       ///< of the variant chosen
  [[nodiscard]] bool has_solution() const noexcept { return !stages.empty(); }
  [[nodiscard]] std::size_t pipeline_stages() const noexcept { return stages.size(); }
};

/// Recomputes F of `p` (stages, t from `w`, d, b, recompute) from scratch and fills the stage
/// latencies, memories, F and throughput. Status `feasible` when the stages partition the layers,
/// no edge goes backwards, every stage fits its memory and d · Σa ≤ K; else `infeasible`.
template <class G>
  requires profiled_dag<std::remove_cvref_t<G>>
placement evaluate_placement(const workload_variant<G>& w, placement p, const placement_options& o) {
  check_placement_options(o);
  const auto t = detail::make_layer_table(w);
  DEVPLACE_EXPECTS(o.global_batch % t.micro_batch == 0, "phaze: global_batch must be a multiple of micro_batch");
  p.tensor_width = t.tensor_width;
  p.micro_batch = t.micro_batch;
  p.micro_batches = o.global_batch / t.micro_batch;
  p.status = status::infeasible;
  std::vector<std::size_t> stage_of(t.n, p.stages.size());
  for (std::size_t i = 0; i < p.stages.size(); ++i)
    for (auto v : p.stages[i].layers) {
      DEVPLACE_EXPECTS(v < t.n, "phaze: evaluate_placement: layer id out of range");
      if (stage_of[v] != p.stages.size()) return p;  // a layer in two stages
      stage_of[v] = i;
    }
  if (p.stages.empty() || std::count(stage_of.begin(), stage_of.end(), p.stages.size()) > 0) return p;
  for (std::size_t u = 0; u < t.n; ++u)
    for (auto [v, bytes] : t.out[u])
      if (stage_of[v] < stage_of[u]) return p;
  const std::size_t s = p.stages.size();
  bool fits = true;
  std::size_t devices = 0;
  p.max_load_ms = 0;
  for (std::size_t i = 0; i < s; ++i) {
    std::vector<char> in_stage(t.n, 0);
    for (auto v : p.stages[i].layers) in_stage[v] = 1;
    const auto c = detail::evaluate_stage(t, in_stage, p.recompute, o);
    auto& st = p.stages[i];
    st.devices = c.devices;
    st.position = s - i;
    st.latency_ms = c.latency_ms(st.position, p.recompute);
    st.memory_bytes = c.memory_bytes(st.position);
    fits = fits && st.memory_bytes <= o.device_memory_bytes;
    devices += c.devices;
    p.max_load_ms = std::max(p.max_load_ms, st.latency_ms);
  }
  const std::size_t d = p.data_parallel;
  if (!fits || d == 0 || d * devices > o.devices || d > p.micro_batches) return p;
  double first_params = 0;
  for (auto v : p.stages.front().layers) first_params += t.params[v];
  p.resync_ms = resync_ms(first_params, d, o);
  p.time_per_batch_ms = time_per_batch_ms(p.max_load_ms, p.micro_batches, d, s, first_params, o);
  p.samples_per_s = static_cast<double>(o.global_batch) / p.time_per_batch_ms * 1000.0;
  p.devices_used = d * devices;
  p.status = status::feasible;
  return p;
}

}  // namespace devplace::phaze
