#pragma once
/// \file algorithm/width.hpp
/// The width of a DAG: the size of its largest antichain (set of pairwise unreachable vertices).
/// It bounds how many independent branches a stage boundary can cut, and the number of
/// down-sets: n + 1 ≤ |down-sets| ≤ (n / w + 1)^w.
///
/// `dag_width(g)` is exact by Dilworth's theorem: width = n − (maximum matching of the bipartite
/// comparability graph u → v for u ⇝ v), found with Hopcroft–Karp over the reachability bitsets.
/// O(n^2 / 64 · (n + m)) for the closure plus O(C √n) for C comparable pairs; memory O(n^2 / 8).
/// `width_lower_bound(g)`: the largest longest-path level (such a level is an antichain), O(n + m).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "devplace/algorithm/reachability.hpp"
#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/concepts.hpp"

namespace devplace {

template <dag G>
[[nodiscard]] std::size_t width_lower_bound(const G& g) {
  const std::size_t n = devplace::num_vertices(g);
  if (n == 0) return 0;
  const auto topo = topological_sort(g);
  std::vector<std::size_t> level(n, 0), count(n, 0);
  for (std::size_t u : topo.order)
    for (auto w : devplace::out_edges(g, u))
      level[static_cast<std::size_t>(w)] = std::max(level[static_cast<std::size_t>(w)], level[u] + 1);
  for (std::size_t v = 0; v < n; ++v) ++count[level[v]];
  return *std::max_element(count.begin(), count.end());
}

template <dag G>
[[nodiscard]] std::size_t dag_width(const G& g) {
  const std::size_t n = devplace::num_vertices(g);
  if (n == 0) return 0;
  const reachability_index reach(g);
  std::vector<std::vector<std::size_t>> adj(n);
  for (std::size_t u = 0; u < n; ++u) reach.descendants(u).for_each([&](std::size_t v) { adj[u].push_back(v); });
  // Hopcroft–Karp, iterative.
  constexpr auto none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> match_l(n, none), match_r(n, none), dist(n), queue, it(n);
  std::size_t matching = 0;
  for (;;) {
    queue.clear();
    bool found = false;
    for (std::size_t u = 0; u < n; ++u) {
      if (match_l[u] == none) {
        dist[u] = 0;
        queue.push_back(u);
      } else {
        dist[u] = none;
      }
    }
    for (std::size_t h = 0; h < queue.size(); ++h) {
      const std::size_t u = queue[h];
      for (std::size_t v : adj[u]) {
        const std::size_t w = match_r[v];
        if (w == none) found = true;
        else if (dist[w] == none) {
          dist[w] = dist[u] + 1;
          queue.push_back(w);
        }
      }
    }
    if (!found) break;
    std::fill(it.begin(), it.end(), 0);
    std::vector<std::size_t> path;
    for (std::size_t start = 0; start < n; ++start) {
      if (match_l[start] != none) continue;
      path.assign(1, start);
      while (!path.empty()) {
        const std::size_t u = path.back();
        bool advanced = false;
        while (it[u] < adj[u].size()) {
          const std::size_t v = adj[u][it[u]++];
          const std::size_t w = match_r[v];
          if (w == none) {  // augment along the path
            std::size_t right = v;
            for (std::size_t k = path.size(); k-- > 0;) {
              const std::size_t left = path[k];
              const std::size_t next_right = match_l[left];
              match_l[left] = right;
              match_r[right] = left;
              right = next_right;
            }
            ++matching;
            path.clear();
            advanced = true;
            break;
          }
          if (dist[w] == dist[u] + 1) {
            path.push_back(w);
            advanced = true;
            break;
          }
        }
        if (!advanced) {
          dist[u] = none;  // dead end for this phase
          path.pop_back();
        }
      }
    }
  }
  return n - matching;
}

}  // namespace devplace
