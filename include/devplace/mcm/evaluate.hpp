#pragma once
/// \file mcm/evaluate.hpp
/// Evaluating a partition: the analytical throughput model of the MCM paper and the dynamic
/// memory check H (seed-mcm §1.4, §6 A6, A7), behind one concept.
///
/// \concept evaluator
///   `e(f)` with `f` a `std::span<const int>` (one chip per operator) returns an `evaluation`.
///   An evaluator is bound to its graph and topology when it is made. A partition that fails H
///   (or the hardware) has `valid = false, throughput = 0`, as in the paper.
///   Models: `compute_evaluator`, `ring_evaluator`, `callback_evaluator`.
///   Archetype: test/archetypes/mcm_archetypes.hpp.
///
/// Latency of chip d: L_d = sum of t_u over its operators (t_u = forward_ms: the paper's target
/// is an inference accelerator). compute: T = 1 / max_d L_d. ring: tensors are deduplicated per
/// (producer, destination chip) with the producer's largest edge bytes to that chip; each crosses
/// the links of its route; T = 1 / max(max_d L_d, max_link load / bandwidth). Throughput is in
/// samples per ms.
///
/// H_static (chip d): sum of param_bytes + max fwd memory + the bytes it receives <= SRAM.
/// H_liveness (chip d): walk d's operators in topological order; weights stay resident, a
/// received tensor lives from the start until its last local consumer, a produced tensor from
/// its producer to its last local consumer; the peak of live bytes plus the running operator's
/// memory must fit the SRAM.
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/mcm/topology.hpp"

namespace devplace::mcm {

struct evaluation {
  bool valid = true;          ///< passes H (and whatever the evaluator checks)
  double throughput = 0;      ///< 1 / bottleneck_ms, 0 when not valid
  double bottleneck_ms = 0;   ///< max(compute_ms, link_ms)
  double compute_ms = 0;      ///< max_d L_d
  double link_ms = 0;         ///< max link load / bandwidth (ring evaluator)
  double peak_bytes = 0;      ///< the largest per-chip memory H saw (0 when H is off)
};

template <class E>
concept evaluator = std::copy_constructible<E> && requires(const E& e, std::span<const int> f) {
  { e(f) } -> std::convertible_to<evaluation>;
};

enum class memory_check { none, static_sum, liveness };

struct evaluator_options {
  memory_check memory = memory_check::none;
  bool use_compute_ms = false;  ///< t_u = compute_ms (forward + backward) instead of forward_ms
};

namespace detail {

/// The profiled data an evaluator needs, copied once (the concrete core). A template, so that its
/// functions are compiled where an evaluator is called, not where this header is included.
template <int = 0>
struct basic_eval_core {
  std::size_t n = 0, C = 0;
  std::vector<double> t, params, mem;
  std::vector<std::vector<std::pair<std::size_t, double>>> out;  // (v, bytes)
  std::vector<std::size_t> topo;
  chip_topology topo_chips;
  evaluator_options opt;

  template <profiled_dag G>
  basic_eval_core(const G& g, chip_topology tp, evaluator_options o) : topo_chips(std::move(tp)), opt(o) {
    n = devplace::num_vertices(g);
    C = topo_chips.chips();
    t.resize(n), params.resize(n), mem.resize(n), out.resize(n);
    for (std::size_t u = 0; u < n; ++u) {
      t[u] = o.use_compute_ms ? devplace::compute_ms(g, u) : devplace::forward_ms(g, u);
      params[u] = devplace::param_bytes(g, u);
      mem[u] = devplace::memory_bytes(g, u);
      for (auto v : devplace::out_edges(g, u))
        out[u].emplace_back(static_cast<std::size_t>(v), devplace::edge_bytes(g, u, v));
    }
    const auto ts = topological_sort(g);
    if (!ts) throw std::invalid_argument("mcm evaluator: the graph has a cycle");
    topo = ts.order;
  }

  void check(std::span<const int> f) const {
    if (f.size() != n) throw std::invalid_argument("mcm evaluator: the partition has " + std::to_string(f.size()) +
                                                   " entries, the graph " + std::to_string(n));
    for (int c : f)
      if (c < 0 || static_cast<std::size_t>(c) >= C)
        throw std::invalid_argument("mcm evaluator: chip " + std::to_string(c) + " out of range");
  }

  /// Received tensors: (producer, destination chip, bytes), deduplicated.
  std::vector<std::tuple<std::size_t, std::size_t, double>> transfers(std::span<const int> f) const {
    std::vector<std::tuple<std::size_t, std::size_t, double>> r;
    std::vector<double> best(C, -1.0);
    for (std::size_t u = 0; u < n; ++u) {
      for (const auto& [v, b] : out[u])
        if (f[v] != f[u]) best[static_cast<std::size_t>(f[v])] = std::max(best[static_cast<std::size_t>(f[v])], b);
      for (const auto& [v, b] : out[u]) {
        const auto d = static_cast<std::size_t>(f[v]);
        if (best[d] >= 0) r.emplace_back(u, d, best[d]), best[d] = -1.0;
      }
    }
    return r;
  }

  double compute_bottleneck(std::span<const int> f) const {
    std::vector<double> L(C, 0.0);
    for (std::size_t u = 0; u < n; ++u) L[static_cast<std::size_t>(f[u])] += t[u];
    return *std::max_element(L.begin(), L.end());
  }

  double link_bottleneck(std::span<const int> f) const {
    std::vector<std::vector<double>> load(C, std::vector<double>(C, 0.0));
    for (const auto& [u, d, b] : transfers(f)) {
      const auto from = static_cast<std::size_t>(f[u]);
      if (!topo_chips.reachable(from, d)) return std::numeric_limits<double>::infinity();
      for (const auto& [x, y] : topo_chips.route(from, d)) load[x][y] += b;
    }
    double worst = 0;
    for (std::size_t x = 0; x < C; ++x)
      for (std::size_t y = 0; y < C; ++y)
        if (load[x][y] > 0) worst = std::max(worst, load[x][y] / (topo_chips.link_gbps(x, y) * 1e6));
    return worst;
  }

  /// Peak memory of the fullest chip under the chosen H.
  double peak_memory(std::span<const int> f) const {
    std::vector<double> base(C, 0.0), peak(C, 0.0);
    for (std::size_t u = 0; u < n; ++u) base[static_cast<std::size_t>(f[u])] += params[u];
    const auto tr = transfers(f);
    if (opt.memory == memory_check::static_sum) {
      for (std::size_t u = 0; u < n; ++u) peak[static_cast<std::size_t>(f[u])] = std::max(peak[static_cast<std::size_t>(f[u])], mem[u]);
      for (const auto& [u, d, b] : tr) base[d] += b;
      double w = 0;
      for (std::size_t d = 0; d < C; ++d) w = std::max(w, base[d] + peak[d]);
      return w;
    }
    // liveness: positions in the topological order; last local use of every tensor
    std::vector<std::size_t> pos(n);
    for (std::size_t i = 0; i < n; ++i) pos[topo[i]] = i;
    std::vector<std::vector<std::pair<std::size_t, double>>> events(n);  // (free position, bytes) per alloc position
    std::vector<double> live(C, 0.0);
    for (const auto& [u, d, b] : tr) {  // received at the start, freed after the last consumer on d
      std::size_t last = 0;
      for (const auto& [v, bb] : out[u])
        if (static_cast<std::size_t>(f[v]) == d) last = std::max(last, pos[v]);
      live[d] += b;
      events[last].emplace_back(d, -b);
    }
    for (auto& x : peak) x = 0;
    for (std::size_t d = 0; d < C; ++d) peak[d] = base[d] + live[d];
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t u = topo[i], d = static_cast<std::size_t>(f[u]);
      double produced = 0;
      std::size_t last = i;
      for (const auto& [v, b] : out[u])
        if (f[v] == f[u]) produced = std::max(produced, b), last = std::max(last, pos[v]);
        else produced = std::max(produced, b);
      live[d] += produced;
      peak[d] = std::max(peak[d], base[d] + live[d] + mem[u]);
      if (last == i) live[d] -= produced;  // sent away or unused: freed after u
      else events[last].emplace_back(d, -produced);
      for (const auto& [dd, b] : events[i]) live[dd] += b;  // tensors whose last use is u
    }
    return *std::max_element(peak.begin(), peak.end());
  }

  evaluation run(std::span<const int> f, bool links) const {
    check(f);
    evaluation e;
    e.compute_ms = compute_bottleneck(f);
    e.link_ms = links ? link_bottleneck(f) : 0.0;
    e.bottleneck_ms = std::max(e.compute_ms, e.link_ms);
    if (opt.memory != memory_check::none) {
      e.peak_bytes = peak_memory(f);
      e.valid = e.peak_bytes <= topo_chips.sram_bytes();
    }
    e.throughput = e.valid && e.bottleneck_ms > 0 ? 1.0 / e.bottleneck_ms
                   : e.valid                      ? std::numeric_limits<double>::infinity()
                                                  : 0.0;
    if (e.valid && e.bottleneck_ms == std::numeric_limits<double>::infinity()) e.valid = false, e.throughput = 0;
    return e;
  }
};

using eval_core = basic_eval_core<>;

}  // namespace detail

/// T = 1 / max_d L_d (the paper-literal analytical model), plus H when asked.
class compute_evaluator {
 public:
  template <profiled_dag G>
  compute_evaluator(const G& g, chip_topology t, evaluator_options o = {})
      : core_(std::make_shared<detail::eval_core>(g, std::move(t), o)) {}
  /// On any `device_topology`, through `to_chip_topology` (mcm/topology.hpp).
  template <profiled_dag G, device_topology T>
  compute_evaluator(const G& g, const T& t, evaluator_options o = {}) : compute_evaluator(g, to_chip_topology(t), o) {}
  template <int = 0>
  [[nodiscard]] evaluation operator()(std::span<const int> f) const { return core_->run(f, false); }

 private:
  std::shared_ptr<const detail::eval_core> core_;
};

/// T = 1 / max(max_d L_d, max link load / bandwidth) over the topology's routes, plus H.
class ring_evaluator {
 public:
  template <profiled_dag G>
  ring_evaluator(const G& g, chip_topology t, evaluator_options o = {})
      : core_(std::make_shared<detail::eval_core>(g, std::move(t), o)) {}
  /// On any `device_topology`, through `to_chip_topology` (mcm/topology.hpp).
  template <profiled_dag G, device_topology T>
  ring_evaluator(const G& g, const T& t, evaluator_options o = {}) : ring_evaluator(g, to_chip_topology(t), o) {}
  template <int = 0>
  [[nodiscard]] evaluation operator()(std::span<const int> f) const { return core_->run(f, true); }

 private:
  std::shared_ptr<const detail::eval_core> core_;
};

/// A user callback (e.g. compile and run on hardware).
struct callback_evaluator {
  std::function<evaluation(std::span<const int>)> fn;
  [[nodiscard]] evaluation operator()(std::span<const int> f) const { return fn(f); }
};

}  // namespace devplace::mcm
