#pragma once
/// \file algorithm/reconverging.hpp
/// Reconverging vertices (Parmesan §6): "a cut vertex with at least one of its in-degree or
/// out-degree larger than one", read as an articulation point of the underlying undirected
/// graph whose in-degree or out-degree exceeds one. Found with an iterative Tarjan
/// (low-link) search, O(n + m).
///
/// `distance_to_reconverging(g)`: undirected hop distance from every vertex to the nearest
/// reconverging vertex (multi-source BFS, O(n + m)); vertices in a component without one get
/// `npos`.
#include <cstddef>
#include <limits>
#include <vector>

#include "devplace/dag/concepts.hpp"

namespace devplace {

namespace detail {
template <dag G>
std::vector<std::vector<std::size_t>> undirected_adjacency(const G& g, std::vector<std::size_t>* indeg,
                                                           std::vector<std::size_t>* outdeg) {
  const std::size_t n = devplace::num_vertices(g);
  std::vector<std::vector<std::size_t>> adj(n);
  if (indeg) indeg->assign(n, 0);
  if (outdeg) outdeg->assign(n, 0);
  for (std::size_t u = 0; u < n; ++u)
    for (auto w : devplace::out_edges(g, u)) {
      const auto v = static_cast<std::size_t>(w);
      adj[u].push_back(v);
      adj[v].push_back(u);
      if (indeg) ++(*indeg)[v];
      if (outdeg) ++(*outdeg)[u];
    }
  return adj;
}
}  // namespace detail

/// Articulation points of the underlying undirected graph, as a 0/1 flag per vertex.
template <dag G>
[[nodiscard]] std::vector<char> articulation_points(const G& g) {
  const auto adj = detail::undirected_adjacency(g, nullptr, nullptr);
  const std::size_t n = adj.size();
  constexpr auto none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> disc(n, none), low(n, 0), parent(n, none);
  std::vector<char> ap(n, 0);
  std::vector<std::pair<std::size_t, std::size_t>> stack;  // vertex, next neighbour index
  std::size_t time = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (disc[root] != none) continue;
    std::size_t root_children = 0;
    disc[root] = low[root] = time++;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i < adj[v].size()) {
        const std::size_t w = adj[v][i++];
        if (disc[w] == none) {
          parent[w] = v;
          disc[w] = low[w] = time++;
          if (v == root) ++root_children;
          stack.emplace_back(w, 0);
        } else if (w != parent[v]) {
          low[v] = std::min(low[v], disc[w]);
        }
      } else {
        const std::size_t done = v;
        stack.pop_back();
        const std::size_t p = parent[done];
        if (p != none) {
          low[p] = std::min(low[p], low[done]);
          if (p != root && low[done] >= disc[p]) ap[p] = 1;
        }
      }
    }
    if (root_children > 1) ap[root] = 1;
  }
  return ap;
}

/// Reconverging vertices as a 0/1 flag per vertex.
template <dag G>
[[nodiscard]] std::vector<char> reconverging_vertices(const G& g) {
  std::vector<std::size_t> indeg, outdeg;
  (void)detail::undirected_adjacency(g, &indeg, &outdeg);
  auto ap = articulation_points(g);
  for (std::size_t v = 0; v < ap.size(); ++v) ap[v] = ap[v] && (indeg[v] > 1 || outdeg[v] > 1);
  return ap;
}

/// Undirected hop distance to the nearest reconverging vertex (`npos` where none is reachable).
template <dag G>
[[nodiscard]] std::vector<std::size_t> distance_to_reconverging(const G& g) {
  constexpr auto npos = std::numeric_limits<std::size_t>::max();
  const auto adj = detail::undirected_adjacency(g, nullptr, nullptr);
  const auto rec = reconverging_vertices(g);
  std::vector<std::size_t> dist(adj.size(), npos), queue;
  for (std::size_t v = 0; v < adj.size(); ++v)
    if (rec[v]) {
      dist[v] = 0;
      queue.push_back(v);
    }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const std::size_t v = queue[head];
    for (std::size_t w : adj[v])
      if (dist[w] == npos) {
        dist[w] = dist[v] + 1;
        queue.push_back(w);
      }
  }
  return dist;
}

}  // namespace devplace
