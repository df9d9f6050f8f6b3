#pragma once
/// \file phaze/operator_graph.hpp
/// What PHAZE reads from a user's graph type. PHAZE estimates each operator's latency from its
/// kind (phaze/estimator.hpp classifies the aten name: linear, matmul, gelu, view, ...), so beyond
/// the profiled costs of `profiled_dag` it needs `op_label`, and reads `output_bytes`, `layer_id`
/// and `profiled_micro_batch` when the type gives them (dag/operator_properties.hpp; defaults:
/// output unknown — the largest outgoing edge stands for it —, no layer ids — equal blocks of the
/// topological order —, profiled at micro-batch 1). Example, a user type with members:
///
///   struct my_graph {            // num_vertices, out_edges, forward_ms, ... as for profiled_dag
///     std::string op_label(std::size_t v) const;
///     std::int64_t layer_id(std::size_t v) const;
///   };
///   auto split = phaze::workload_layers(g, 24);   // any phaze::operator_graph
///
/// The PHAZE entry points taking a user type copy it once per call with `to_phaze_graph`
/// (convert once yourself for a sweep over many configurations).
#include "devplace/dag/operator_properties.hpp"

namespace devplace::phaze {

/// \concept operator_graph
/// A graph PHAZE can estimate: a `labelled_dag` (dag/operator_properties.hpp).
template <class G>
concept operator_graph = labelled_dag<G>;

/// Copies any `operator_graph` into the `op_graph` PHAZE's passes run on (O(n + m)).
template <operator_graph G>
[[nodiscard]] op_graph to_phaze_graph(const G& g) {
  return to_operator_graph(g);
}

}  // namespace devplace::phaze
