#pragma once
/// \file algorithm/reachability.hpp
/// Transitive reachability as bitsets: for every vertex v, `ancestors(v)` (every u with a path
/// u ~> v, v excluded) and `descendants(v)` (every w with v ~> w, v excluded).
///
/// Complexity: O(n + m) bitset unions of n/64 words each, i.e. O((n + m) n / 64) time and
/// O(n^2 / 32) bits of memory. Works on any `dag`; predecessors are derived internally.
#include <cstddef>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/config.hpp"
#include "devplace/dag/concepts.hpp"
#include "devplace/detail/bitset.hpp"

namespace devplace {

class reachability_index {
 public:
  reachability_index() = default;

  /// Precondition: `g` is acyclic (DEVPLACE_EXPECTS).
  template <dag G>
  explicit reachability_index(const G& g) {
    const std::size_t n = devplace::num_vertices(g);
    const auto topo = topological_sort(g);
    DEVPLACE_EXPECTS(topo.status == status::optimal, "reachability_index: the graph has a cycle");
    order_ = topo.order;
    anc_.assign(n, detail::dynamic_bitset(n));
    desc_.assign(n, detail::dynamic_bitset(n));
    for (std::size_t u : order_)  // forward: ancestors of successors grow from u
      for (auto v : devplace::out_edges(g, u)) {
        auto& a = anc_[static_cast<std::size_t>(v)];
        a |= anc_[u];
        a.set(u);
      }
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const std::size_t u = *it;
      for (auto v : devplace::out_edges(g, u)) {
        desc_[u] |= desc_[static_cast<std::size_t>(v)];
        desc_[u].set(static_cast<std::size_t>(v));
      }
    }
  }

  [[nodiscard]] std::size_t num_vertices() const noexcept { return anc_.size(); }
  [[nodiscard]] const detail::dynamic_bitset& ancestors(std::size_t v) const noexcept { return anc_[v]; }
  [[nodiscard]] const detail::dynamic_bitset& descendants(std::size_t v) const noexcept { return desc_[v]; }
  /// True when there is a directed path u ~> v of length >= 1.
  [[nodiscard]] bool reaches(std::size_t u, std::size_t v) const noexcept { return desc_[u].test(v); }
  /// u and v are comparable: one reaches the other (or u == v).
  [[nodiscard]] bool comparable(std::size_t u, std::size_t v) const noexcept {
    return u == v || desc_[u].test(v) || anc_[u].test(v);
  }
  /// The topological order used to build the index.
  [[nodiscard]] const std::vector<std::size_t>& topological_order() const noexcept { return order_; }

 private:
  std::vector<detail::dynamic_bitset> anc_, desc_;
  std::vector<std::size_t> order_;
};

}  // namespace devplace
