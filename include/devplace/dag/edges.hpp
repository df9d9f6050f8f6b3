#pragma once
/// \file dag/edges.hpp
/// `for_each_edge(g, f)`: visits every edge u -> v of a `profiled_dag` once with its bytes,
/// `f(u, v, bytes)`, applying the library's rule for parallel edges (docs/concepts.md):
/// `edge_bytes(g, u, v)` is the total sent from u to v, however many times v is listed among u's
/// successors, so a repeated successor is visited once. O(n + m) time, O(n) extra memory.
#include <cstddef>
#include <vector>

#include "devplace/dag/properties.hpp"

namespace devplace {

template <profiled_dag G, class F>
void for_each_edge(const G& g, F&& f) {
  const std::size_t n = devplace::num_vertices(g);
  std::vector<std::size_t> seen(n, n);  // seen[v] == u: u -> v already visited
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : devplace::out_edges(g, u)) {
      const auto vv = static_cast<std::size_t>(v);
      if (vv < n) {
        if (seen[vv] == u) continue;
        seen[vv] = u;
      }
      f(u, vv, devplace::edge_bytes(g, u, vv));
    }
}

}  // namespace devplace
