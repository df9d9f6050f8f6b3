#pragma once
/// \file dag/csr_dag.hpp
/// `csr_dag`: the library's compact, owning, bidirectional graph in compressed sparse row form.
/// It is the "concrete core" that heavy passes copy any `dag` into (`to_csr_dag`).
///
/// Edges are numbered 0 .. m-1 in (source, target) lexicographic order; the out-CSR stores them
/// in that order, the in-CSR stores (source, edge id) pairs sorted by target then source.
/// Parallel edges are merged on construction (an edge id stands for one unordered pair u -> v).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/dag/concepts.hpp"

namespace devplace {

class csr_dag {
 public:
  using vertex_type = std::uint32_t;
  using edge_type = std::uint32_t;

  csr_dag() = default;

  /// Builds from `n` vertices and a list of (source, target) pairs. Parallel edges are merged;
  /// self-loops and ids >= n are caller bugs (checked by DEVPLACE_EXPECTS). Acyclicity is not
  /// checked here: use `topological_sort` or the op_graph builder for checked construction.
  /// `merged_from`, when given, receives for each input pair the id of the edge it became.
  template <int = 0>
  csr_dag(std::size_t n, std::span<const std::pair<vertex_type, vertex_type>> edges,
          std::vector<edge_type>* merged_from = nullptr) {
    build(n, edges, merged_from);
  }

  [[nodiscard]] std::size_t num_vertices() const noexcept { return out_offsets_.empty() ? 0 : out_offsets_.size() - 1; }
  [[nodiscard]] std::size_t num_edges() const noexcept { return out_targets_.size(); }

  [[nodiscard]] std::span<const vertex_type> out_edges(std::size_t u) const noexcept {
    return {out_targets_.data() + out_offsets_[u], out_targets_.data() + out_offsets_[u + 1]};
  }
  [[nodiscard]] std::span<const vertex_type> in_edges(std::size_t v) const noexcept {
    return {in_sources_.data() + in_offsets_[v], in_sources_.data() + in_offsets_[v + 1]};
  }
  [[nodiscard]] std::size_t out_degree(std::size_t u) const noexcept { return out_offsets_[u + 1] - out_offsets_[u]; }
  [[nodiscard]] std::size_t in_degree(std::size_t v) const noexcept { return in_offsets_[v + 1] - in_offsets_[v]; }

  /// Edge ids of the out-edges of u, parallel to `out_edges(u)`: the k-th out-edge has id
  /// `first_out_edge(u) + k`.
  [[nodiscard]] edge_type first_out_edge(std::size_t u) const noexcept { return out_offsets_[u]; }
  /// Edge ids of the in-edges of v, parallel to `in_edges(v)`.
  [[nodiscard]] std::span<const edge_type> in_edge_ids(std::size_t v) const noexcept {
    return {in_edge_ids_.data() + in_offsets_[v], in_edge_ids_.data() + in_offsets_[v + 1]};
  }
  [[nodiscard]] vertex_type source(edge_type e) const noexcept { return edge_sources_[e]; }
  [[nodiscard]] vertex_type target(edge_type e) const noexcept { return out_targets_[e]; }

  /// The id of edge u -> v, if present. O(log out_degree(u)).
  [[nodiscard]] std::optional<edge_type> find_edge(std::size_t u, std::size_t v) const noexcept {
    const auto outs = out_edges(u);
    const auto it = std::lower_bound(outs.begin(), outs.end(), static_cast<vertex_type>(v));
    if (it == outs.end() || *it != v) return std::nullopt;
    return static_cast<edge_type>(out_offsets_[u] + static_cast<std::size_t>(it - outs.begin()));
  }

  friend bool operator==(const csr_dag&, const csr_dag&) = default;

 private:
  template <int = 0>
  void build(std::size_t n, std::span<const std::pair<vertex_type, vertex_type>> edges,
             std::vector<edge_type>* merged_from) {
    std::vector<std::size_t> order(edges.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return edges[a] < edges[b]; });
    out_offsets_.assign(n + 1, 0);
    if (merged_from) merged_from->assign(edges.size(), 0);
    out_targets_.clear();
    edge_sources_.clear();
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto [u, v] = edges[order[k]];
      DEVPLACE_EXPECTS(u < n && v < n && u != v, "csr_dag: edge " + std::to_string(u) + " -> " + std::to_string(v) +
                                                   (u == v ? " is a self-loop" : " names a vertex >= n = " + std::to_string(n)));
      if (out_targets_.empty() || edge_sources_.back() != u || out_targets_.back() != v) {
        out_targets_.push_back(v);
        edge_sources_.push_back(u);
        ++out_offsets_[u + 1];
      }
      if (merged_from) (*merged_from)[order[k]] = static_cast<edge_type>(out_targets_.size() - 1);
    }
    for (std::size_t u = 0; u < n; ++u) out_offsets_[u + 1] += out_offsets_[u];

    in_offsets_.assign(n + 1, 0);
    for (auto v : out_targets_) ++in_offsets_[v + 1];
    for (std::size_t v = 0; v < n; ++v) in_offsets_[v + 1] += in_offsets_[v];
    in_sources_.assign(out_targets_.size(), 0);
    in_edge_ids_.assign(out_targets_.size(), 0);
    std::vector<edge_type> fill(in_offsets_.begin(), in_offsets_.end() - 1);
    for (edge_type e = 0; e < out_targets_.size(); ++e) {  // sources ascend: in-lists come sorted
      const auto v = out_targets_[e];
      in_sources_[fill[v]] = edge_sources_[e];
      in_edge_ids_[fill[v]] = e;
      ++fill[v];
    }
  }

  std::vector<edge_type> out_offsets_;
  std::vector<vertex_type> out_targets_;
  std::vector<vertex_type> edge_sources_;
  std::vector<edge_type> in_offsets_;
  std::vector<vertex_type> in_sources_;
  std::vector<edge_type> in_edge_ids_;
};

/// Copies any `dag` into a `csr_dag` (parallel edges merged). O(n + m log m).
template <dag G>
[[nodiscard]] csr_dag to_csr_dag(const G& g) {
  std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> edges;
  const std::size_t n = devplace::num_vertices(g);
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : devplace::out_edges(g, u))
      edges.emplace_back(static_cast<csr_dag::vertex_type>(u), static_cast<csr_dag::vertex_type>(v));
  return csr_dag(n, edges);
}

}  // namespace devplace
