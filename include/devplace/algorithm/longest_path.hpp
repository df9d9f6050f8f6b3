#pragma once
/// \file algorithm/longest_path.hpp
/// `longest_path(g, cost)`: the heaviest directed path when every vertex v weighs `cost(g, v)`
/// (the critical path under c_u, or the longest chain with `unit_cost`). Ties go to the path
/// found first in topological order. O((n + m) log n) on any `dag`, iterative.
#include <cstddef>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/config.hpp"
#include "devplace/dag/concepts.hpp"

namespace devplace {

struct longest_path_result {
  double length = 0;              ///< sum of vertex costs along the path
  std::vector<std::size_t> path;  ///< its vertices, source first (empty for an empty graph)
};

template <dag G, vertex_cost_fn<G> Cost>
[[nodiscard]] longest_path_result longest_path(const G& g, const Cost& cost) {
  const std::size_t n = devplace::num_vertices(g);
  longest_path_result r;
  if (n == 0) return r;
  const auto topo = topological_sort(g);
  DEVPLACE_EXPECTS(topo.status == status::optimal, "longest_path: the graph has a cycle");
  std::vector<double> best(n, 0.0);
  std::vector<std::size_t> prev(n, n);
  for (std::size_t u : topo.order) best[u] = static_cast<double>(cost(g, static_cast<vertex_id_t<G>>(u)));
  for (std::size_t u : topo.order)
    for (auto w : devplace::out_edges(g, u)) {
      const auto v = static_cast<std::size_t>(w);
      const double through = best[u] + static_cast<double>(cost(g, static_cast<vertex_id_t<G>>(v)));
      if (through > best[v]) {
        best[v] = through;
        prev[v] = u;
      }
    }
  std::size_t end = topo.order.front();
  for (std::size_t u : topo.order)
    if (best[u] > best[end]) end = u;
  r.length = best[end];
  for (std::size_t v = end; v != n; v = prev[v]) r.path.push_back(v);
  std::vector<std::size_t> forward(r.path.rbegin(), r.path.rend());
  r.path = std::move(forward);
  return r;
}

}  // namespace devplace
