#pragma once
/// \file mcm/validate.hpp
/// The static rules of multi-chip-module partitioning (Xie et al., MLSys 2022, eq. 2-4) on any
/// `dag` and chip count C, and the exact count of valid partitions by enumeration.
///
/// A partition f maps every operator to a chip 0 .. C-1. It is valid when
///   eq. 2  f(u) <= f(v) on every edge u -> v (data flows up the one-way ring);
///   eq. 3  the used chips are the prefix 0 .. K-1, K = max f + 1 <= C (no chip skipped);
///   eq. 4  every chip-graph edge a -> b (realised by some operator edge) is the only path from
///          a to b in the chip graph: the chip graph is its own transitive reduction
///          (literally: the longest chip path delta(a, b) is 1).
/// Rules are checked in that order; the result names the first violated rule with the operator
/// edge, chip or chip triple involved.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "devplace/dag/concepts.hpp"
#include "devplace/dag/csr_dag.hpp"

namespace devplace::mcm {

/// Which rule a partition breaks first.
enum class rule { none, chip_range, eq2, eq3, eq4 };

[[nodiscard]] constexpr const char* to_string(rule r) noexcept {
  switch (r) {
    case rule::none: return "valid";
    case rule::chip_range: return "chip out of range";
    case rule::eq2: return "eq2";
    case rule::eq3: return "eq3";
    case rule::eq4: return "eq4";
  }
  return "?";
}

struct validation {
  mcm::rule rule = rule::none;  ///< the first violated rule, `none` when valid
  std::size_t u = 0, v = 0;     ///< eq2 / eq4 / chip_range: the operator edge u -> v (or operator u)
  std::size_t chip_a = 0;       ///< eq2/eq4: f(u); eq3: the skipped chip
  std::size_t chip_b = 0;       ///< eq2/eq4: f(v)
  std::size_t chip_c = 0;       ///< eq4: a chip on the other path a ~> c ~> b
  std::size_t chips_used = 0;   ///< K = max f + 1
  std::string message;          ///< one line naming the rule and what is involved
  [[nodiscard]] bool valid() const noexcept { return rule == rule::none; }
  [[nodiscard]] explicit operator bool() const noexcept { return valid(); }
};

/// The chip graph of a partition: `succ[a]` holds the chips b != a with an operator edge
/// u -> v, f(u) = a, f(v) = b. Chips are < C.
struct chip_graph {
  std::size_t chips = 0;
  std::vector<std::vector<char>> adj;  ///< adj[a][b] != 0 when a -> b is a chip edge
};

namespace detail {

/// Checks eq. 2-4 on a csr_dag (the concrete core). `f` has one entry per vertex.
template <int = 0>
validation validate_core(const csr_dag& g, std::span<const int> f, std::size_t C) {
  validation r;
  const std::size_t n = g.num_vertices();
  std::size_t K = 0;
  for (std::size_t u = 0; u < n; ++u) {
    if (f[u] < 0 || static_cast<std::size_t>(f[u]) >= C) {
      r.rule = rule::chip_range;
      r.u = r.v = u;
      r.message = "operator " + std::to_string(u) + " is on chip " + std::to_string(f[u]) + ", outside 0.." +
                  std::to_string(C - 1);
      return r;
    }
    K = std::max(K, static_cast<std::size_t>(f[u]) + 1);
  }
  r.chips_used = K;
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : g.out_edges(u))
      if (f[u] > f[v]) {
        r.rule = rule::eq2;
        r.u = u, r.v = v, r.chip_a = static_cast<std::size_t>(f[u]), r.chip_b = static_cast<std::size_t>(f[v]);
        r.message = "eq2: edge " + std::to_string(u) + " -> " + std::to_string(v) + " runs from chip " +
                    std::to_string(f[u]) + " down to chip " + std::to_string(f[v]);
        return r;
      }
  std::vector<char> used(K, 0);
  for (std::size_t u = 0; u < n; ++u) used[static_cast<std::size_t>(f[u])] = 1;
  for (std::size_t d = 0; d < K; ++d)
    if (!used[d]) {
      r.rule = rule::eq3;
      r.chip_a = d;
      r.message = "eq3: chip " + std::to_string(d) + " is skipped (empty) below used chip " + std::to_string(K - 1);
      return r;
    }
  // Chip edges point upward (eq. 2 holds), so chip ids are a topological order of the chip graph.
  std::vector<std::vector<char>> adj(K, std::vector<char>(K, 0));
  for (std::size_t u = 0; u < n; ++u)
    for (auto v : g.out_edges(u))
      if (f[u] != f[v]) adj[static_cast<std::size_t>(f[u])][static_cast<std::size_t>(f[v])] = 1;
  // reach[a][b]: a path a ~> b of length >= 1.
  std::vector<std::vector<char>> reach(K, std::vector<char>(K, 0));
  for (std::size_t a = K; a-- > 0;)
    for (std::size_t b = a + 1; b < K; ++b)
      if (adj[a][b]) {
        reach[a][b] = 1;
        for (std::size_t c = b + 1; c < K; ++c) reach[a][c] |= reach[b][c];
      }
  for (std::size_t a = 0; a < K; ++a)
    for (std::size_t b = a + 1; b < K; ++b) {
      if (!adj[a][b]) continue;
      for (std::size_t c = a + 1; c < b; ++c)
        if (adj[a][c] && (c == b || reach[c][b])) {
          r.rule = rule::eq4;
          r.chip_a = a, r.chip_b = b, r.chip_c = c;
          for (std::size_t u = 0; u < n; ++u)  // name one operator edge realising a -> b
            for (auto v : g.out_edges(u))
              if (static_cast<std::size_t>(f[u]) == a && static_cast<std::size_t>(f[v]) == b) r.u = u, r.v = v;
          r.message = "eq4: chip edge " + std::to_string(a) + " -> " + std::to_string(b) + " (operator edge " +
                      std::to_string(r.u) + " -> " + std::to_string(r.v) + ") coexists with the path " +
                      std::to_string(a) + " -> " + std::to_string(c) + " ~> " + std::to_string(b);
          return r;
        }
    }
  r.message = "valid: " + std::to_string(K) + " chips used";
  return r;
}

}  // namespace detail

/// Checks eq. 2-4 of partition `f` (one chip per vertex) of `g` onto `C` chips.
/// Throws std::invalid_argument when `f.size() != num_vertices(g)` or C == 0.
template <dag G>
[[nodiscard]] validation validate(const G& g, std::span<const int> f, std::size_t C) {
  if (C == 0) throw std::invalid_argument("mcm::validate: C must be >= 1");
  if (f.size() != devplace::num_vertices(g))
    throw std::invalid_argument("mcm::validate: the partition has " + std::to_string(f.size()) +
                                " entries, the graph " + std::to_string(devplace::num_vertices(g)) + " vertices");
  if constexpr (std::is_same_v<G, csr_dag>)
    return detail::validate_core(g, f, C);
  else
    return detail::validate_core(to_csr_dag(g), f, C);
}

/// The chip graph of a partition with eq. 2 holding (chip ids < C). Throws std::invalid_argument
/// on a chip outside 0 .. C-1.
template <dag G>
[[nodiscard]] chip_graph make_chip_graph(const G& g, std::span<const int> f, std::size_t C) {
  chip_graph cg{C, std::vector<std::vector<char>>(C, std::vector<char>(C, 0))};
  const std::size_t n = devplace::num_vertices(g);
  if (f.size() != n) throw std::invalid_argument("mcm::make_chip_graph: partition size differs from the graph");
  for (std::size_t u = 0; u < n; ++u) {
    if (f[u] < 0 || static_cast<std::size_t>(f[u]) >= C) throw std::invalid_argument("mcm::make_chip_graph: chip out of range");
    for (auto v : devplace::out_edges(g, u))
      if (f[u] != f[static_cast<std::size_t>(v)])
        cg.adj[static_cast<std::size_t>(f[u])][static_cast<std::size_t>(f[static_cast<std::size_t>(v)])] = 1;
  }
  return cg;
}

/// Literal longest chip path delta(a, b) of eq. 4 (-1 standing for "unreachable", 0 for a == b).
/// Chip edges must point upward (eq. 2).
template <int = 0>
[[nodiscard]] std::vector<std::vector<int>> longest_chip_paths(const chip_graph& cg) {
  const std::size_t K = cg.chips;
  std::vector<std::vector<int>> d(K, std::vector<int>(K, -1));
  for (std::size_t a = 0; a < K; ++a) {
    d[a][a] = 0;
    for (std::size_t b = a + 1; b < K; ++b)
      for (std::size_t c = a; c < b; ++c)
        if (d[a][c] >= 0 && cg.adj[c][b]) d[a][b] = std::max(d[a][b], d[a][c] + 1);
  }
  return d;
}

/// Exact count of valid partitions by enumerating all C^N assignments, with the first violated
/// rule of every invalid one (order eq. 2, eq. 3, eq. 4).
struct count_result {
  std::uint64_t total = 0, valid = 0, fails_eq2 = 0, fails_eq3 = 0, fails_eq4 = 0;
};

/// Throws std::invalid_argument when C^N exceeds `max_assignments` (default 2^26).
template <dag G>
[[nodiscard]] count_result count_valid(const G& g, std::size_t C, std::uint64_t max_assignments = 1ull << 26) {
  if (C == 0) throw std::invalid_argument("mcm::count_valid: C must be >= 1");
  const csr_dag d = to_csr_dag(g);
  const std::size_t n = d.num_vertices();
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (total > max_assignments / C)
      throw std::invalid_argument("mcm::count_valid: C^N = " + std::to_string(C) + "^" + std::to_string(n) +
                                  " assignments is more than the limit " + std::to_string(max_assignments));
    total *= C;
  }
  count_result r;
  r.total = total;
  std::vector<int> f(n, 0);
  for (std::uint64_t k = 0; k < total; ++k) {
    const auto v = detail::validate_core(d, f, C);
    switch (v.rule) {
      case rule::none: ++r.valid; break;
      case rule::eq2: ++r.fails_eq2; break;
      case rule::eq3: ++r.fails_eq3; break;
      case rule::eq4: ++r.fails_eq4; break;
      case rule::chip_range: break;
    }
    for (std::size_t i = 0; i < n; ++i) {  // odometer, vertex 0 fastest
      if (static_cast<std::size_t>(++f[i]) < C) break;
      f[i] = 0;
    }
  }
  return r;
}

}  // namespace devplace::mcm
