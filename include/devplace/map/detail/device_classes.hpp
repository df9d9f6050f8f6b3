#pragma once
/// \file map/detail/device_classes.hpp
/// The classes of devices the oracles work on, found in one place: link classes (sets of
/// devices whose links to every device outside cost the same: the quotient copy and line ring
/// covers, with `quotient_link_costs`), the node structure (one cost inside each node, one between nodes:
/// the node-group cover) and a line order of the classes (Robinsonian costs: the line ring
/// cover). Twins, the link classes of two devices with identical rows and columns, are
/// `device_twins` (map/symmetry.hpp): the copy cover's twin classes and the symmetry breaking.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "devplace/map/link_costs.hpp"

namespace devplace::detail {

/// The link classes of `L`: every device in exactly one class, classes of two or
/// more devices grown from pairs (the smallest class holding the pair, at most `max_size`
/// devices), the others alone; ascending devices, classes by their first device. Symmetric
/// per-byte costs are read (`ms_per_byte`). O(D³); O(D² · max_size) when the rows of most pairs
/// differ on more than max_size − 2 devices (a mesh, a torus: such a pair is skipped after its
/// first max_size − 1 differences, and a pair once the class would be no smaller than the best
/// one found for its first device); at `deadline` the classes found so far and singletons for
/// the rest.
template <int = 0>
[[nodiscard]] std::vector<std::vector<std::size_t>> find_link_classes(
    const link_costs& L, std::size_t max_size = 16, std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  const std::size_t D = L.devices();
  std::vector<char> assigned(D, 0), in(D, 0);
  std::vector<std::vector<std::size_t>> classes;
  std::vector<std::size_t> cls, best;
  for (std::size_t a = 0; a < D; ++a) {
    if (assigned[a]) continue;
    best = {a};
    if (std::chrono::steady_clock::now() < deadline) {
      for (std::size_t b = a + 1; b < D && best.size() != 2; ++b) {
        if (assigned[b]) continue;
        // the most devices a class may hold: max_size, and fewer than the best one so far
        const std::size_t cap = best.size() > 1 ? std::min(max_size, best.size() - 1) : max_size;
        // every device on which a and b differ must join: more than cap − 2 of them, none
        std::size_t differ = 0;
        for (std::size_t c = 0; c < D && differ + 2 <= cap; ++c)
          if (c != a && c != b && L.ms_per_byte(b, c) != L.ms_per_byte(a, c)) ++differ;
        if (differ + 2 > cap) continue;
        // grow {a, b} until every member's links outside it equal a's
        cls = {a, b};
        in[a] = in[b] = 1;
        bool ok = true;
        for (std::size_t i = 1; i < cls.size() && ok; ++i) {
          const std::size_t x = cls[i];
          for (std::size_t c = 0; c < D && ok; ++c) {
            if (in[c] || L.ms_per_byte(x, c) == L.ms_per_byte(a, c)) continue;
            // c must join: x and a differ on it (members before x agree with a outside the class)
            if (assigned[c] || cls.size() == cap) ok = false;
            else in[c] = 1, cls.push_back(c);
          }
        }
        for (const auto x : cls) in[x] = 0;
        if (ok && (best.size() == 1 || cls.size() < best.size())) best = cls;
      }
    }
    std::sort(best.begin(), best.end());
    for (const auto x : best) assigned[x] = 1;
    classes.push_back(best);
  }
  return classes;
}

/// The nodes of a topology whose links cost w_k inside node k and w_x between nodes.
struct node_structure {
  std::vector<std::vector<std::size_t>> nodes;  ///< the devices of every node, ascending
  std::vector<double> w_in;                     ///< w_k (w_x for a node of one device)
  double w_out = 0;                             ///< w_x
};

/// The node structure of `L`, or nothing when its links do not have one (latency, or a pair that
/// breaks it). Two devices share a node iff their link costs less than the largest one. O(D²).
template <int = 0>
[[nodiscard]] std::optional<node_structure> find_node_structure(const link_costs& L) {
  const std::size_t D = L.devices();
  if (D < 2 || L.has_latency()) return std::nullopt;
  double wx = 0;
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) wx = std::max(wx, L.ms_per_byte(a, b));
  node_structure n;
  n.w_out = wx;
  std::vector<std::size_t> node_of(D, D);
  for (std::size_t a = 0; a < D; ++a) {
    if (node_of[a] != D) continue;
    node_of[a] = n.nodes.size();
    n.nodes.push_back({a});
    n.w_in.push_back(wx);
    for (std::size_t b = a + 1; b < D; ++b)
      if (L.ms_per_byte(a, b) < wx) {
        if (node_of[b] != D) return std::nullopt;
        node_of[b] = node_of[a];
        n.nodes.back().push_back(b);
        n.w_in.back() = L.ms_per_byte(a, b);
      }
  }
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b && L.ms_per_byte(a, b) != (node_of[a] == node_of[b] ? n.w_in[node_of[a]] : wx)) return std::nullopt;
  return n;
}

/// Whether `order` (a permutation of 0..K−1) makes the symmetric K × K costs `w` Robinsonian:
/// for every i, w(o_i, o_j) does not fall as j moves away from i, both ways (the diagonal
/// ignored). O(K²).
template <int = 0>
[[nodiscard]] bool is_robinson_order(std::span<const double> w, std::size_t K, std::span<const std::size_t> order) {
  if (order.size() != K || w.size() != K * K) return false;
  for (std::size_t i = 0; i < K; ++i) {
    const std::size_t x = order[i];
    for (std::size_t j = i + 2; j < K; ++j)
      if (w[x * K + order[j]] < w[x * K + order[j - 1]]) return false;
    for (std::size_t j = i; j-- > 1;)
      if (w[x * K + order[j - 1]] < w[x * K + order[j]]) return false;
  }
  return true;
}

/// An order of K items in which the symmetric costs `w` (K × K) are Robinsonian, or empty. The
/// items whose row holds the largest cost (the ends of any such order do) are tried as the first
/// one p, at most 16 of them: the others follow by ascending cost from p, ties by descending
/// cost from the item farthest from p; on K ≤ 64 items, when that fails, they are
/// placed greedily: next an item that every placed item's row ranks first among those left
/// (ties: the one with the largest total cost to the others left). The first order that
/// `is_robinson_order` accepts is returned. Exact on costs that grow strictly with the distance
/// along a line (the candidate from an end is the line); with ties it may miss an order (the test
/// only accepts a Robinsonian one). O(K³), the greedy pass O(K⁴).
template <int = 0>
[[nodiscard]] std::vector<std::size_t> find_robinson_order(std::span<const double> w, std::size_t K) {
  if (w.size() != K * K) return {};
  std::vector<std::size_t> order(K);
  auto farthest = [&](std::size_t p) {
    std::size_t far = p;
    for (std::size_t y = 0; y < K; ++y)
      if (y != p && (far == p || w[p * K + y] >= w[p * K + far])) far = y;  // the last of the farthest
    return far;
  };
  // the two ends of a Robinsonian order hold the largest cost: the first item is one of those
  // whose row reaches it (at most 16 of them tried)
  double top = -std::numeric_limits<double>::infinity();
  std::vector<double> row_max(K, -std::numeric_limits<double>::infinity());
  for (std::size_t x = 0; x < K; ++x) {
    for (std::size_t y = 0; y < K; ++y)
      if (y != x) row_max[x] = std::max(row_max[x], w[x * K + y]);
    top = std::max(top, row_max[x]);
  }
  for (std::size_t p = 0, tried = 0; p < K && tried < 16; ++p) {
    if (K > 1 && row_max[p] != top) continue;
    ++tried;
    const std::size_t far = farthest(p);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::swap(order[0], order[p]);
    std::sort(order.begin() + 1, order.end(), [&](std::size_t x, std::size_t y) {
      if (w[p * K + x] != w[p * K + y]) return w[p * K + x] < w[p * K + y];
      if (w[far * K + x] != w[far * K + y]) return w[far * K + x] > w[far * K + y];
      return x < y;
    });
    if (is_robinson_order(w, K, order)) return order;
  }
  if (K > 64) return {};
  std::vector<char> left(K);
  for (std::size_t p = 0; p < K; ++p) {
    if (row_max[p] != top) continue;
    std::fill(left.begin(), left.end(), 1);
    order.assign(1, p);
    left[p] = 0;
    while (order.size() < K) {
      std::size_t best = K;
      double best_total = 0;
      for (std::size_t y = 0; y < K; ++y) {
        if (!left[y]) continue;
        bool first = true;  // first in every placed row among the items left
        for (const auto x : order)
          for (std::size_t z = 0; z < K && first; ++z)
            if (left[z] && w[x * K + z] < w[x * K + y]) first = false;
        if (!first) continue;
        double total = 0;
        for (std::size_t z = 0; z < K; ++z)
          if (left[z] && z != y) total += w[y * K + z];
        if (best == K || total > best_total) best = y, best_total = total;
      }
      if (best == K) break;
      order.push_back(best);
      left[best] = 0;
    }
    if (order.size() == K && is_robinson_order(w, K, order)) return order;
  }
  return {};
}

/// The link costs of the quotient by `classes` (a partition of the devices into link classes):
/// [x · K + y] = w(x, y), the cost of every link between classes x ≠ y, and w(x, x) the cheapest
/// link inside x (+inf for a class of one device). Reads `ms_per_byte`.
template <int = 0>
[[nodiscard]] std::vector<double> quotient_link_costs(const link_costs& L, const std::vector<std::vector<std::size_t>>& classes) {
  const std::size_t K = classes.size();
  std::vector<double> w(K * K, std::numeric_limits<double>::infinity());
  for (std::size_t x = 0; x < K; ++x)
    for (std::size_t y = 0; y < K; ++y) {
      if (x != y) {
        w[x * K + y] = L.ms_per_byte(classes[x][0], classes[y][0]);
        continue;
      }
      for (const auto a : classes[x])
        for (const auto b : classes[x])
          if (a != b) w[x * K + x] = std::min(w[x * K + x], L.ms_per_byte(a, b));
    }
  return w;
}

}  // namespace devplace::detail
