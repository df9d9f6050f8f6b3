#pragma once
/// \file algorithm/topological_sort.hpp
/// Deterministic topological order (Kahn's algorithm, smallest ready id first), iterative.
/// On a cycle, the result has `status::cycle_detected` and lists the vertices of one cycle.
///
/// Complexity: O((n + m) log n) time, O(n) extra memory.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <queue>
#include <vector>

#include "devplace/dag/concepts.hpp"
#include "devplace/status.hpp"

namespace devplace {

struct topological_sort_result {
  devplace::status status = status::optimal;  ///< `optimal` (an order exists) or `cycle_detected`
  std::vector<std::size_t> order;             ///< all vertices, each before its successors
  std::vector<std::size_t> cycle;             ///< on a cycle: v0 -> v1 -> ... -> v0 (v0 listed once)
  [[nodiscard]] explicit operator bool() const noexcept { return status == status::optimal; }
};

/// Works on any graph reached through `devplace::out_edges` (acyclicity is what it checks).
template <class G>
  requires requires(const G& g, std::size_t u) {
    devplace::num_vertices(g);
    devplace::out_edges(g, u);
  }
[[nodiscard]] topological_sort_result topological_sort(const G& g) {
  const std::size_t n = devplace::num_vertices(g);
  topological_sort_result r;
  std::vector<std::size_t> indeg(n, 0);
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : devplace::out_edges(g, u)) ++indeg[static_cast<std::size_t>(v)];
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t u = 0; u < n; ++u)
    if (indeg[u] == 0) ready.push(u);
  r.order.reserve(n);
  while (!ready.empty()) {
    const std::size_t u = ready.top();
    ready.pop();
    r.order.push_back(u);
    for (auto v : devplace::out_edges(g, u))
      if (--indeg[static_cast<std::size_t>(v)] == 0) ready.push(static_cast<std::size_t>(v));
  }
  if (r.order.size() == n) return r;

  // The vertices never emitted keep indeg > 0, so each has a predecessor that was not emitted
  // either. Walking such predecessors must repeat a vertex: that closes a cycle.
  r.status = status::cycle_detected;
  std::vector<char> left(n, 0);
  for (std::size_t u = 0; u < n; ++u) left[u] = indeg[u] > 0;
  std::vector<std::size_t> pred_of(n, n);
  for (std::size_t u = 0; u < n; ++u)
    if (left[u])
      for (auto v : devplace::out_edges(g, u))
        if (left[static_cast<std::size_t>(v)]) pred_of[static_cast<std::size_t>(v)] = u;
  std::size_t start = 0;
  while (!left[start]) ++start;
  std::vector<std::size_t> seen_at(n, n);
  std::vector<std::size_t> walk;
  std::size_t x = start;
  while (seen_at[x] == n) {
    seen_at[x] = walk.size();
    walk.push_back(x);
    x = pred_of[x];  // every leftover vertex has a leftover predecessor (its indeg stayed > 0)
  }
  r.cycle.assign(walk.begin() + static_cast<std::ptrdiff_t>(seen_at[x]), walk.end());
  std::reverse(r.cycle.begin(), r.cycle.end());  // predecessor walk reversed = edge direction
  return r;
}

}  // namespace devplace
