#pragma once
/// \file dag/access.hpp
/// Customisation points through which every devplace algorithm reads a graph:
///
///   devplace::num_vertices(g)   -> std::size_t                 number of vertices, ids are 0 .. n-1
///   devplace::out_edges(g, u)   -> forward range of vertex ids  successors of u
///   devplace::in_edges(g, u)    -> forward range of vertex ids  predecessors of u (bidirectional)
///
/// Each one tries, in order:
///   1. a specialisation of `devplace::dag_traits<G>` with a static function of the same name;
///   2. a member function: `g.num_vertices()`, `g.out_edges(u)`, `g.in_edges(u)`;
///   3. a free function found by argument-dependent lookup: `num_vertices(g)`, ...;
///   4. for a random-access range of ranges of integers (e.g. `std::vector<std::vector<int>>`),
///      `size(g)` and `g[u]` (there is no default for `in_edges`).
#include <concepts>
#include <cstddef>
#include <ranges>
#include <type_traits>
#include <utility>

namespace devplace {

/// Escape hatch for types that can be changed neither by members nor by free functions:
/// specialise with static `num_vertices(const G&)`, `out_edges(const G&, std::size_t)` and,
/// optionally, `in_edges(const G&, std::size_t)`.
template <class G>
struct dag_traits {};

namespace detail {

template <class G>
concept range_of_id_ranges =
    std::ranges::random_access_range<const G> && std::ranges::sized_range<const G> &&
    std::ranges::forward_range<std::ranges::range_reference_t<const G>> &&
    std::integral<std::remove_cvref_t<
        std::ranges::range_reference_t<std::ranges::range_reference_t<const G>>>>;

namespace access_cpo {

void num_vertices() = delete;  // poison pills: only ADL finds user overloads
void out_edges() = delete;
void in_edges() = delete;

template <class G>
concept traits_num_vertices = requires(const G& g) {
  { dag_traits<G>::num_vertices(g) } -> std::integral;
};
template <class G>
concept member_num_vertices = requires(const G& g) {
  { g.num_vertices() } -> std::integral;
};
template <class G>
concept adl_num_vertices = requires(const G& g) {
  { num_vertices(g) } -> std::integral;
};

struct num_vertices_fn {
  template <class G>
    requires traits_num_vertices<G> || member_num_vertices<G> || adl_num_vertices<G> ||
             range_of_id_ranges<G>
  [[nodiscard]] constexpr std::size_t operator()(const G& g) const {
    if constexpr (traits_num_vertices<G>)
      return static_cast<std::size_t>(dag_traits<G>::num_vertices(g));
    else if constexpr (member_num_vertices<G>)
      return static_cast<std::size_t>(g.num_vertices());
    else if constexpr (adl_num_vertices<G>)
      return static_cast<std::size_t>(num_vertices(g));
    else
      return static_cast<std::size_t>(std::ranges::size(g));
  }
};

template <class G>
concept traits_out_edges = requires(const G& g, std::size_t u) {
  { dag_traits<G>::out_edges(g, u) } -> std::ranges::forward_range;
};
template <class G>
concept member_out_edges = requires(const G& g, std::size_t u) {
  { g.out_edges(u) } -> std::ranges::forward_range;
};
template <class G>
concept adl_out_edges = requires(const G& g, std::size_t u) {
  { out_edges(g, u) } -> std::ranges::forward_range;
};

struct out_edges_fn {
  template <class G, std::integral I>
    requires traits_out_edges<G> || member_out_edges<G> || adl_out_edges<G> ||
             range_of_id_ranges<G>
  [[nodiscard]] constexpr decltype(auto) operator()(const G& g, I u) const {
    const auto uu = static_cast<std::size_t>(u);
    if constexpr (traits_out_edges<G>)
      return dag_traits<G>::out_edges(g, uu);
    else if constexpr (member_out_edges<G>)
      return g.out_edges(uu);
    else if constexpr (adl_out_edges<G>)
      return out_edges(g, uu);
    else
      return g[static_cast<std::ranges::range_difference_t<const G>>(uu)];
  }
};

template <class G>
concept traits_in_edges = requires(const G& g, std::size_t u) {
  { dag_traits<G>::in_edges(g, u) } -> std::ranges::forward_range;
};
template <class G>
concept member_in_edges = requires(const G& g, std::size_t u) {
  { g.in_edges(u) } -> std::ranges::forward_range;
};
template <class G>
concept adl_in_edges = requires(const G& g, std::size_t u) {
  { in_edges(g, u) } -> std::ranges::forward_range;
};

struct in_edges_fn {
  template <class G, std::integral I>
    requires traits_in_edges<G> || member_in_edges<G> || adl_in_edges<G>
  [[nodiscard]] constexpr decltype(auto) operator()(const G& g, I u) const {
    const auto uu = static_cast<std::size_t>(u);
    if constexpr (traits_in_edges<G>)
      return dag_traits<G>::in_edges(g, uu);
    else if constexpr (member_in_edges<G>)
      return g.in_edges(uu);
    else
      return in_edges(g, uu);
  }
};

}  // namespace access_cpo
}  // namespace detail

inline namespace cpo {
inline constexpr detail::access_cpo::num_vertices_fn num_vertices{};
inline constexpr detail::access_cpo::out_edges_fn out_edges{};
inline constexpr detail::access_cpo::in_edges_fn in_edges{};
}  // namespace cpo

/// The vertex id type of a graph: the value type of its successor ranges.
template <class G>
using vertex_id_t = std::remove_cvref_t<std::ranges::range_reference_t<
    decltype(devplace::out_edges(std::declval<const G&>(), std::size_t{}))>>;

}  // namespace devplace
