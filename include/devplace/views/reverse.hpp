#pragma once
/// \file views/reverse.hpp
/// `views::reverse(g)`: the same vertices with every edge turned around (successors become
/// predecessors). Requires a `bidirectional_dag`; a reversed `profiled_dag` is a `profiled_dag`
/// (edge u -> v of the view carries the bytes of v -> u). O(1) to build, no allocation.
#include <cstddef>
#include <utility>

#include "devplace/views/all.hpp"

namespace devplace {

template <dag_view V>
  requires bidirectional_dag<V>
class reverse_view {
 public:
  explicit reverse_view(V base) : base_(std::move(base)) {}
  [[nodiscard]] const V& base() const noexcept { return base_; }

  [[nodiscard]] std::size_t num_vertices() const { return devplace::num_vertices(base_); }
  [[nodiscard]] decltype(auto) out_edges(std::size_t u) const { return devplace::in_edges(base_, u); }
  [[nodiscard]] decltype(auto) in_edges(std::size_t u) const { return devplace::out_edges(base_, u); }

  [[nodiscard]] double forward_ms(std::size_t v) const requires profiled_dag<V> { return devplace::forward_ms(base_, v); }
  [[nodiscard]] double backward_ms(std::size_t v) const requires profiled_dag<V> { return devplace::backward_ms(base_, v); }
  [[nodiscard]] double compute_ms(std::size_t v) const requires profiled_dag<V> { return devplace::compute_ms(base_, v); }
  [[nodiscard]] double memory_bytes(std::size_t v) const requires profiled_dag<V> { return devplace::memory_bytes(base_, v); }
  [[nodiscard]] double param_bytes(std::size_t v) const requires profiled_dag<V> { return devplace::param_bytes(base_, v); }
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const requires profiled_dag<V> {
    return devplace::edge_bytes(base_, v, u);
  }

 private:
  V base_;
};

template <class V>
inline constexpr bool enable_dag_view<reverse_view<V>> = true;

namespace views {
namespace detail {
struct reverse_fn {
  template <class G>
    requires bidirectional_dag<std::remove_cvref_t<G>> && requires(G&& g) { views::all(std::forward<G>(g)); }
  [[nodiscard]] auto operator()(G&& g) const {
    return reverse_view<views::all_t<G>>(views::all(std::forward<G>(g)));
  }
};
}  // namespace detail
inline constexpr detail::reverse_fn reverse{};
}  // namespace views

}  // namespace devplace
