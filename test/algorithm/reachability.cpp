#include "devplace/algorithm/reachability.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

using namespace devplace;

namespace {
// Oracle: depth-first search from every vertex, explicit stack.
bool reaches_by_dfs(const std::vector<std::vector<int>>& g, std::size_t u, std::size_t v) {
  std::vector<char> seen(g.size(), 0);
  std::vector<std::size_t> stack{u};
  while (!stack.empty()) {
    auto x = stack.back();
    stack.pop_back();
    for (int y : g[x]) {
      if (static_cast<std::size_t>(y) == v) return true;
      if (!seen[static_cast<std::size_t>(y)]) {
        seen[static_cast<std::size_t>(y)] = 1;
        stack.push_back(static_cast<std::size_t>(y));
      }
    }
  }
  return false;
}
}  // namespace

TEST_CASE("reachability_index agrees with DFS on seeded random DAGs") {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 30; ++trial) {
    const std::size_t n = 2 + rng() % 90;
    std::vector<std::vector<int>> g(n);
    for (std::size_t u = 0; u < n; ++u)
      for (std::size_t v = u + 1; v < n; ++v)
        if (rng() % 100 < 6) g[u].push_back(static_cast<int>(v));
    const reachability_index r(g);
    for (std::size_t u = 0; u < n; ++u)
      for (std::size_t v = 0; v < n; ++v) {
        const bool expect = reaches_by_dfs(g, u, v);
        CHECK(r.reaches(u, v) == expect);
        CHECK(r.ancestors(v).test(u) == expect);
      }
  }
}
