#pragma once
/// \file detail/disjoint_sets.hpp
/// Disjoint sets (union-find) with path halving and union by size: near-constant time per
/// operation. Private helper (the ring-component bound). The union-finds of the clustering, the
/// class contraction and the device orbits keep their own: their roots follow rules that their
/// results depend on (the surviving cluster, the contraction's merge order, the orbit minimum).
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace devplace::detail {

/// Disjoint sets, path halving and union by size.
struct disjoint_sets {
  std::vector<std::size_t> parent, size;
  explicit disjoint_sets(std::size_t n) : parent(n), size(n, 1) { std::iota(parent.begin(), parent.end(), std::size_t{0}); }
  std::size_t find(std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (size[a] < size[b]) std::swap(a, b);
    parent[b] = a;
    size[a] += size[b];
  }
};

}  // namespace devplace::detail
