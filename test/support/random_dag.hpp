#pragma once
// Seeded random DAGs of several shapes for property tests. Vertex ids are a topological order.
#include <cstddef>
#include <random>
#include <vector>

#include "devplace/dag/op_graph.hpp"

namespace devplace::test {

enum class shape { sparse, dense, chain_with_skips, fan, multi_source };

/// Adjacency lists (successors) of a random DAG with n vertices.
inline std::vector<std::vector<int>> random_adjacency(std::mt19937_64& rng, std::size_t n, shape s) {
  std::vector<std::vector<int>> adj(n);
  auto add = [&](std::size_t u, std::size_t v) {
    for (int w : adj[u]) if (static_cast<std::size_t>(w) == v) return;
    adj[u].push_back(static_cast<int>(v));
  };
  for (std::size_t u = 0; u < n; ++u)
    for (std::size_t v = u + 1; v < n; ++v) {
      const auto r = rng() % 100;
      switch (s) {
        case shape::sparse: if (r < 12) add(u, v); break;
        case shape::dense: if (r < 45) add(u, v); break;
        case shape::chain_with_skips: if (v == u + 1 || r < 6) add(u, v); break;
        case shape::fan: if ((u == 0 && v + 1 < n) || (v + 1 == n && u > 0) || r < 3) add(u, v); break;
        case shape::multi_source: if (u >= n / 3 && r < 20) add(u, v); else if (u < n / 3 && v >= n / 3 && r < 15) add(u, v); break;
      }
    }
  return adj;
}

inline constexpr shape all_shapes[] = {shape::sparse, shape::dense, shape::chain_with_skips, shape::fan, shape::multi_source};

/// An op_graph over `adj` with small integer attributes (exact sums in floating point).
inline op_graph random_op_graph(std::mt19937_64& rng, const std::vector<std::vector<int>>& adj) {
  op_graph_builder b;
  for (std::size_t v = 0; v < adj.size(); ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = double(1 + rng() % 5), .bwd_ms = double(rng() % 7),
              .fwd_mem_bytes = double(rng() % 40), .bwd_mem_bytes = double(rng() % 40), .param_bytes = double(rng() % 9)});
  for (std::size_t u = 0; u < adj.size(); ++u)
    for (int v : adj[u]) b.add_edge(u, static_cast<std::size_t>(v), double(1 + rng() % 9) * 1e6);
  return std::move(b).build();
}

}  // namespace devplace::test
