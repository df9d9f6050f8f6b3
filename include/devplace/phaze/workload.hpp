#pragma once
/// \file phaze/workload.hpp
/// From an operator graph to PHAZE's per-architecture throughput (seed-phaze.md §1.4, Algorithm 1
/// `run_dp`; docs/phaze.md):
///   1. `workload_layers`: the graph's own layer ids (`devplace.graph/1` `nodes[].layer`, on
///      every node) when it has them (`split_layers_by_id`: one layer per distinct id, the layer
///      graph must be acyclic), else `split_layers`: contiguous blocks of the topological order
///      (equal operator counts; the quotient has edges only forwards). `layer_split::from_ids`
///      says which was used.
///   2. `make_layer_graph`: per configuration and micro-batch size b, the operator latencies
///      (phaze/estimator.hpp, activations scaled by b / b₀ for a graph profiled at b₀), each
///      layer's forward and backward makespan (phaze/layer_schedule.hpp, identical layers
///      scheduled once), and the layer graph the DP reads: fwd_ms, bwd_ms, param_bytes, the
///      layer's activations (Σ outputs of its non-zero-cost operators) as its memory, and the
///      bytes between layers on the edges.
///   3. `evaluate_architecture`: the placement DP (phaze/placement.hpp) over the micro-batch sizes
///      and both activation policies, for every HBM size; the best samples/s wins (ties: the
///      smaller HBM). A pure function of the configuration, as the sweep needs.
/// Tensor parallelism needs layer-slice graphs (PHAZE extracts them with Megatron-LM); the graph
/// format has none, so this path uses t = 1.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <type_traits>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/phaze/evaluation_cache.hpp"
#include "devplace/phaze/layer_schedule.hpp"
#include "devplace/phaze/operator_graph.hpp"
#include "devplace/phaze/placement.hpp"

namespace devplace::phaze {

struct layer_split {
  std::vector<std::size_t> layer_of;               ///< per operator
  std::vector<std::vector<std::size_t>> members;   ///< per layer, in topological order
  bool from_ids = false;                           ///< the graph's layer ids (else equal blocks)
  std::vector<std::int64_t> ids;                   ///< from_ids: the layer id of each layer (ascending)
};

/// `layers` contiguous blocks of the topological order (fewer when the graph is smaller).
template <int = 0>
[[nodiscard]] layer_split split_layers(const op_graph& g, std::size_t layers) {
  DEVPLACE_EXPECTS(layers >= 1, "phaze: split_layers: layers must be >= 1");
  const std::size_t n = g.num_vertices();
  DEVPLACE_EXPECTS(n >= 1, "phaze: split_layers: the graph is empty");
  const auto topo = topological_sort(g);
  DEVPLACE_EXPECTS(topo.status == status::optimal, "phaze: split_layers: the graph has a cycle");
  const std::size_t L = std::min(layers, n);
  layer_split s;
  s.layer_of.resize(n);
  s.members.resize(L);
  for (std::size_t p = 0; p < n; ++p) {
    const std::size_t l = p * L / n;
    s.layer_of[topo.order[p]] = l;
    s.members[l].push_back(topo.order[p]);
  }
  return s;
}

/// Whether every operator of `g` carries a layer id (`op_attributes::layer` ≥ 0). Throws
/// `std::invalid_argument` when some do and some do not (naming the first operator without).
template <int = 0>
[[nodiscard]] bool has_layer_ids(const op_graph& g) {
  std::size_t with = 0, first_without = g.num_vertices();
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    if (g.op(v).layer >= 0) ++with;
    else if (first_without == g.num_vertices()) first_without = v;
  }
  if (with != 0 && with != g.num_vertices())
    devplace::detail::precondition_failed("phaze: operator id " + std::to_string(g.op(first_without).id) +
                                          " has no layer id while others have one (give every operator a layer or none)");
  return with > 0 && with == g.num_vertices();
}

/// One layer per distinct layer id (ascending ids = layer indices), members in topological order.
/// Precondition (checked): every operator has a layer id and the layer graph (an edge between
/// two layers whenever an operator edge joins them) is acyclic.
template <int = 0>
[[nodiscard]] layer_split split_layers_by_id(const op_graph& g) {
  const std::size_t n = g.num_vertices();
  DEVPLACE_EXPECTS(n >= 1, "phaze: split_layers_by_id: the graph is empty");
  DEVPLACE_EXPECTS(has_layer_ids(g), "phaze: split_layers_by_id: the graph has no layer ids");
  const auto topo = topological_sort(g);
  DEVPLACE_EXPECTS(topo.status == status::optimal, "phaze: split_layers_by_id: the graph has a cycle");
  layer_split s;
  s.from_ids = true;
  for (std::size_t v = 0; v < n; ++v) s.ids.push_back(g.op(v).layer);
  std::sort(s.ids.begin(), s.ids.end());
  s.ids.erase(std::unique(s.ids.begin(), s.ids.end()), s.ids.end());
  s.layer_of.resize(n);
  s.members.resize(s.ids.size());
  for (auto v : topo.order) {
    const auto l = static_cast<std::size_t>(std::lower_bound(s.ids.begin(), s.ids.end(), g.op(v).layer) - s.ids.begin());
    s.layer_of[v] = l;
    s.members[l].push_back(v);
  }
  std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> edges;
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : g.out_edges(u))
      if (s.layer_of[u] != s.layer_of[v])
        edges.emplace_back(static_cast<csr_dag::vertex_type>(s.layer_of[u]), static_cast<csr_dag::vertex_type>(s.layer_of[v]));
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  const csr_dag q(s.ids.size(), edges);
  DEVPLACE_EXPECTS(topological_sort(q).status == status::optimal,
                   "phaze: the graph's layer ids do not form an acyclic layer graph (a layer reaches itself through "
                   "another; PHAZE places a layer whole, so its operators must be a convex part of the graph)");
  return s;
}

/// The layers PHAZE uses: the graph's layer ids when it has them, else `layers` equal blocks.
template <int = 0>
[[nodiscard]] layer_split workload_layers(const op_graph& g, std::size_t layers) {
  return has_layer_ids(g) ? split_layers_by_id(g) : split_layers(g, layers);
}

/// The same for any `operator_graph` (phaze/operator_graph.hpp): its layer_id values, else equal
/// blocks. The split refers to the vertex ids of `g`.
template <operator_graph G>
  requires(!std::is_same_v<G, op_graph>)
[[nodiscard]] layer_split workload_layers(const G& g, std::size_t layers) {
  return workload_layers(to_phaze_graph(g), layers);
}

struct workload_options {
  std::size_t layers = 24;
  estimator_options estimator;
  layer_schedule_options scheduling;
  /// Schedules and placements shared with other calls (phaze/evaluation_cache.hpp); null: none.
  /// The results are the same with or without it.
  evaluation_cache* cache = nullptr;
};

/// How the layers of one layer graph were scheduled.
struct layer_report {
  std::vector<layer_timing> layers;
  std::size_t unique_layers = 0;  ///< distinct layer problems actually scheduled
  [[nodiscard]] std::size_t proved_passes() const {
    std::size_t k = 0;
    for (const auto& l : layers) k += l.forward.proved() + l.backward.proved();
    return k;
  }
};

struct layer_graph {
  workload_variant<op_graph> variant;
  layer_report report;
};

/// The layer graph of `g` on configuration `c` at micro-batch size `micro_batch`; `g` was profiled
/// at `base_micro_batch`.
template <class Solver = no_ilp>
[[nodiscard]] layer_graph make_layer_graph(const op_graph& g, const layer_split& split, const core_config& c,
                                           std::size_t micro_batch, double base_micro_batch,
                                           const workload_options& o = {}, const Solver& solver = {}) {
  DEVPLACE_EXPECTS(split.layer_of.size() == g.num_vertices(), "phaze: make_layer_graph: the split is of another graph");
  DEVPLACE_EXPECTS(micro_batch >= 1 && base_micro_batch > 0, "phaze: make_layer_graph: micro-batch sizes must be > 0");
  const double scale = static_cast<double>(micro_batch) / base_micro_batch;
  const std::size_t n = g.num_vertices();
  std::vector<op_class> kind(n);
  std::vector<op_latency> lat(n);
  std::vector<double> activation(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    const auto w = operator_work(g, v, o.estimator, scale);
    kind[v] = w.kind;
    lat[v] = estimate_latency(w, c, o.estimator);
    const double out = g.op(v).out_bytes;
    if (w.kind != op_class::nop) activation[v] = (out >= 0 ? out : 0) * scale;
  }
  layer_graph r;
  std::map<std::string, layer_timing> memo;
  op_graph_builder b;
  for (std::size_t l = 0; l < split.members.size(); ++l) {
    const auto problem = make_layer_problem(g, split.members[l], kind, lat);
    auto [it, fresh] = memo.try_emplace(detail::problem_key(problem));
    if (fresh) {
      const auto compute = [&] { return schedule_layer(problem, c, solver, o.scheduling); };
      it->second = o.cache ? o.cache->schedule(detail::schedule_key<Solver>(it->first, c, o.scheduling), compute) : compute();
    }
    r.report.layers.push_back(it->second);
    op_attributes a{.id = static_cast<std::int64_t>(l), .fwd_ms = it->second.forward.makespan_ms,
                    .bwd_ms = it->second.backward.makespan_ms};
    for (auto v : split.members[l]) a.param_bytes += g.param_bytes(v), a.fwd_mem_bytes += activation[v];
    b.add_op(a);
  }
  r.report.unique_layers = memo.size();
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : g.out_edges(u))
      if (split.layer_of[u] != split.layer_of[v])
        b.add_edge(split.layer_of[u], split.layer_of[v], g.edge_bytes(u, v) * scale);
  r.variant.micro_batch = micro_batch;
  r.variant.graph = std::move(b).build();
  return r;
}

/// The same for any `operator_graph`, copied once into an `op_graph` (phaze/operator_graph.hpp).
template <operator_graph G, class Solver = no_ilp>
  requires(!std::is_same_v<G, op_graph>)
[[nodiscard]] layer_graph make_layer_graph(const G& g, const layer_split& split, const core_config& c, std::size_t micro_batch,
                                           double base_micro_batch, const workload_options& o = {}, const Solver& solver = {}) {
  return make_layer_graph(to_phaze_graph(g), split, c, micro_batch, base_micro_batch, o, solver);
}

struct architecture_options {
  placement_options placement{.devices = 1024, .global_batch = 4096};
  std::vector<double> hbm_bytes{32.0 * (1ull << 30), 64.0 * (1ull << 30), 80.0 * (1ull << 30)};
  std::vector<std::size_t> micro_batches{1, 2, 4, 8};
  workload_options workload;
};

struct architecture_result {
  double samples_per_s = 0;   ///< 0 when nothing fits
  double hbm_bytes = 0;
  placement plan;
  layer_report report;        ///< of the chosen micro-batch size
};

/// PHAZE's throughput of configuration `c` on the workload (see the file comment).
template <class Solver = no_ilp>
[[nodiscard]] architecture_result evaluate_architecture(const op_graph& g, const layer_split& split, const core_config& c,
                                                        const architecture_options& o, const Solver& solver = {}) {
  DEVPLACE_EXPECTS(!o.hbm_bytes.empty() && !o.micro_batches.empty(), "phaze: evaluate_architecture: empty HBM or micro-batch list");
  const double b0 = g.micro_batch_size() > 0 ? g.micro_batch_size() : 1.0;
  std::vector<workload_variant<op_graph>> variants;
  std::vector<layer_report> reports;
  for (auto b : o.micro_batches)
    if (b >= 1 && o.placement.global_batch % b == 0) {
      auto lg = make_layer_graph(g, split, c, b, b0, o.workload, solver);
      variants.push_back(std::move(lg.variant));
      reports.push_back(std::move(lg.report));
    }
  DEVPLACE_EXPECTS(!variants.empty(), "phaze: evaluate_architecture: no micro-batch size divides the global batch");
  const std::span<const workload_variant<op_graph>> all(variants);
  const std::string key = o.workload.cache ? detail::variants_key(all) : std::string();
  architecture_result best;
  for (double hbm : o.hbm_bytes) {
    auto po = o.placement;
    po.device_memory_bytes = hbm;
    const auto compute = [&] { return place(all, po); };
    auto p = o.workload.cache ? o.workload.cache->place(detail::placement_key(key, po), compute) : compute();
    if (p.has_solution() && p.samples_per_s > best.samples_per_s) {
      best.samples_per_s = p.samples_per_s;
      best.hbm_bytes = hbm;
      for (std::size_t i = 0; i < variants.size(); ++i)
        if (variants[i].micro_batch == p.micro_batch) best.report = reports[i];
      best.plan = std::move(p);
    }
  }
  return best;
}

/// The same for any `operator_graph`, copied once per call into an `op_graph` (for a sweep over
/// many configurations, copy it once with `to_phaze_graph` and pass the copy).
template <operator_graph G, class Solver = no_ilp>
  requires(!std::is_same_v<G, op_graph>)
[[nodiscard]] architecture_result evaluate_architecture(const G& g, const layer_split& split, const core_config& c,
                                                        const architecture_options& o, const Solver& solver = {}) {
  return evaluate_architecture(to_phaze_graph(g), split, c, o, solver);
}

}  // namespace devplace::phaze
