#pragma once
/// \file algorithm/sources_sinks.hpp
/// `sources(g)`: vertices without predecessors; `sinks(g)`: vertices without successors; both in
/// increasing id order. O(n + m) on any `dag`.
#include <cstddef>
#include <iterator>
#include <ranges>
#include <vector>

#include "devplace/dag/concepts.hpp"

namespace devplace {

template <dag G>
[[nodiscard]] std::vector<std::size_t> sources(const G& g) {
  const std::size_t n = devplace::num_vertices(g);
  std::vector<char> has_pred(n, 0);
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : devplace::out_edges(g, u)) has_pred[static_cast<std::size_t>(v)] = 1;
  std::vector<std::size_t> r;
  for (std::size_t v = 0; v < n; ++v)
    if (!has_pred[v]) r.push_back(v);
  return r;
}

template <dag G>
[[nodiscard]] std::vector<std::size_t> sinks(const G& g) {
  const std::size_t n = devplace::num_vertices(g);
  std::vector<std::size_t> r;
  for (std::size_t v = 0; v < n; ++v) {
    auto&& outs = devplace::out_edges(g, v);
    if (std::ranges::begin(outs) == std::ranges::end(outs)) r.push_back(v);
  }
  return r;
}

}  // namespace devplace
