#pragma once
/// \file views/all.hpp
/// The ownership rule every devplace view follows (range-v3's `views::all`):
///   * an lvalue graph that is not a view becomes `dag_ref_view<G>`, which holds `const G*`;
///   * a view is held by value (views are cheap to copy);
///   * an rvalue graph that is not a view is rejected at compile time (it would dangle).
/// A type is a view when `enable_dag_view<V>` is true.
#include <cstddef>
#include <type_traits>
#include <utility>

#include "devplace/dag/concepts.hpp"
#include "devplace/dag/properties.hpp"

namespace devplace {

/// Opt-in trait: true for the devplace views; specialise it for your own view types.
template <class V>
inline constexpr bool enable_dag_view = false;

/// \concept dag_view
/// A `dag` that is a view: cheap to copy, non-owning, held by value by other views.
template <class V>
concept dag_view = dag<std::remove_cvref_t<V>> && enable_dag_view<std::remove_cvref_t<V>>;

/// A non-owning reference to a graph. Models whatever the referenced graph models (dag,
/// bidirectional_dag, profiled_dag).
template <dag G>
class dag_ref_view {
 public:
  explicit dag_ref_view(const G& g) noexcept : g_(&g) {}
  [[nodiscard]] const G& base() const noexcept { return *g_; }

  [[nodiscard]] std::size_t num_vertices() const { return devplace::num_vertices(*g_); }
  [[nodiscard]] decltype(auto) out_edges(std::size_t u) const { return devplace::out_edges(*g_, u); }
  [[nodiscard]] decltype(auto) in_edges(std::size_t u) const requires bidirectional_dag<G> {
    return devplace::in_edges(*g_, u);
  }
  [[nodiscard]] double forward_ms(std::size_t v) const requires profiled_dag<G> { return devplace::forward_ms(*g_, v); }
  [[nodiscard]] double backward_ms(std::size_t v) const requires profiled_dag<G> { return devplace::backward_ms(*g_, v); }
  [[nodiscard]] double compute_ms(std::size_t v) const requires profiled_dag<G> { return devplace::compute_ms(*g_, v); }
  [[nodiscard]] double memory_bytes(std::size_t v) const requires profiled_dag<G> { return devplace::memory_bytes(*g_, v); }
  [[nodiscard]] double param_bytes(std::size_t v) const requires profiled_dag<G> { return devplace::param_bytes(*g_, v); }
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const requires profiled_dag<G> {
    return devplace::edge_bytes(*g_, u, v);
  }

 private:
  const G* g_;
};

template <class G>
inline constexpr bool enable_dag_view<dag_ref_view<G>> = true;

namespace views {
namespace detail {
struct all_fn {
  template <class V>
    requires dag_view<V>
  [[nodiscard]] constexpr std::remove_cvref_t<V> operator()(V&& v) const {
    return std::forward<V>(v);
  }
  template <dag G>
    requires(!dag_view<G>)
  [[nodiscard]] constexpr dag_ref_view<G> operator()(const G& g) const noexcept {
    return dag_ref_view<G>(g);
  }
  template <dag G>
    requires(!dag_view<G> && !std::is_lvalue_reference_v<G>)
  void operator()(G&&) const = delete;  // a view over a temporary graph would dangle
};
}  // namespace detail

inline constexpr detail::all_fn all{};

/// The type `views::all(g)` gives for an argument of type `G`.
template <class G>
using all_t = decltype(views::all(std::declval<G>()));

}  // namespace views
}  // namespace devplace
