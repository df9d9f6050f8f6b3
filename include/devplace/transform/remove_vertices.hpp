#pragma once
/// \file transform/remove_vertices.hpp
/// Removing operators from an `op_graph`: the kept operators keep their relative order, their
/// attributes and the edges between them. The peers' preprocessing steps are built from these:
/// PipeDream's optimizer drops its `Input*` sources and then its `__getitem__` sinks
/// (`drop_pipedream_io`, docs/peers/pipedream.md).
///
/// Complexity: O(n + m) per call.
#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "devplace/dag/op_graph.hpp"

namespace devplace::transform {

/// An `op_graph` together with, for each of its vertices, the vertex of the input it came from.
struct kept_graph {
  op_graph graph;
  std::vector<std::size_t> original;  ///< original[v] = vertex of the input graph
};

/// The graph induced by the vertices v with keep[v]. Throws `std::invalid_argument` when
/// `keep` does not have one entry per vertex.
[[nodiscard]] inline kept_graph keep_vertices(const op_graph& g, const std::vector<bool>& keep) {
  const std::size_t n = g.num_vertices();
  if (keep.size() != n) throw std::invalid_argument("keep_vertices: keep must have one entry per vertex");
  std::vector<std::size_t> index(n, n);
  kept_graph r;
  op_graph_builder b;
  b.set_name(g.name());
  for (std::size_t v = 0; v < n; ++v)
    if (keep[v]) {
      index[v] = b.add_op(g.op(v));
      r.original.push_back(v);
    }
  for (std::size_t u = 0; u < n; ++u) {
    if (!keep[u]) continue;
    for (auto w : g.out_edges(u))
      if (keep[static_cast<std::size_t>(w)]) b.add_edge(index[u], index[static_cast<std::size_t>(w)], g.edge_bytes(u, static_cast<std::size_t>(w)));
  }
  r.graph = std::move(b).build();
  return r;
}

/// Removes every source (no in-edge) for which `pred(g.op(v))` holds; a single pass: vertices
/// that become sources are not looked at again.
template <class Pred>
[[nodiscard]] kept_graph remove_sources_if(const op_graph& g, Pred&& pred) {
  std::vector<bool> keep(g.num_vertices(), true);
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    if (g.in_edges(v).empty() && pred(g.op(v))) keep[v] = false;
  return keep_vertices(g, keep);
}

/// Removes every sink (no out-edge) for which `pred(g.op(v))` holds; a single pass.
template <class Pred>
[[nodiscard]] kept_graph remove_sinks_if(const op_graph& g, Pred&& pred) {
  std::vector<bool> keep(g.num_vertices(), true);
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    if (g.out_edges(v).empty() && pred(g.op(v))) keep[v] = false;
  return keep_vertices(g, keep);
}

/// PipeDream's preprocessing (optimizer_graph_hierarchical.py, main): drop every source whose
/// description (`op_attributes::name`) starts with `Input`, then every sink of the result whose
/// description starts with `__getitem__`. `original` maps into `g`.
[[nodiscard]] inline kept_graph drop_pipedream_io(const op_graph& g) {
  auto starts = [](std::string_view prefix) {
    return [prefix](const op_attributes& a) { return std::string_view(a.name).substr(0, prefix.size()) == prefix; };
  };
  kept_graph a = remove_sources_if(g, starts("Input"));
  kept_graph b = remove_sinks_if(a.graph, starts("__getitem__"));
  for (auto& v : b.original) v = a.original[v];
  return b;
}

}  // namespace devplace::transform
