#pragma once
/// \file algorithm/convexity.hpp
/// `is_convex(g, in_set)`: whether a vertex set S is convex (Parmesan Def. 4): no directed path
/// between two vertices of S passes through a vertex outside S. Equivalently, no vertex of S is
/// reachable from S by a path that has left S. `in_set` is indexable by vertex id
/// (`std::vector<bool>`, `std::vector<char>`, ...). O(n + m), iterative, on any `dag`.
#include <cstddef>
#include <vector>

#include "devplace/dag/concepts.hpp"

namespace devplace {

template <dag G, class Set>
  requires requires(const Set& s, std::size_t v) { static_cast<bool>(s[v]); }
[[nodiscard]] bool is_convex(const G& g, const Set& in_set) {
  const std::size_t n = devplace::num_vertices(g);
  std::vector<char> outside_reached(n, 0);  // outside S and reachable from S after leaving it
  std::vector<std::size_t> stack;
  for (std::size_t u = 0; u < n; ++u)
    if (static_cast<bool>(in_set[u]))
      for (auto w : devplace::out_edges(g, u)) {
        const auto v = static_cast<std::size_t>(w);
        if (!static_cast<bool>(in_set[v]) && !outside_reached[v]) {
          outside_reached[v] = 1;
          stack.push_back(v);
        }
      }
  while (!stack.empty()) {
    const std::size_t x = stack.back();
    stack.pop_back();
    for (auto w : devplace::out_edges(g, x)) {
      const auto v = static_cast<std::size_t>(w);
      if (static_cast<bool>(in_set[v])) return false;
      if (!outside_reached[v]) {
        outside_reached[v] = 1;
        stack.push_back(v);
      }
    }
  }
  return true;
}

}  // namespace devplace
