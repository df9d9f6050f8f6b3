#pragma once
/// \file dag/concepts.hpp
/// The graph concepts. See docs/concepts.md for the long form.
#include <concepts>
#include <cstddef>
#include <functional>
#include <ranges>
#include <type_traits>

#include "devplace/dag/access.hpp"

namespace devplace {

/// \concept dag
/// A directed acyclic graph over the dense vertex ids `0 .. n-1`.
///
/// Notation: `g` is a `const G&`, `u` a `std::size_t` with `u < num_vertices(g)`.
/// Valid expressions (customise through the CPOs of <devplace/dag/access.hpp>):
///   1. `devplace::num_vertices(g)` -> `std::size_t`                                  O(1)
///   2. `devplace::out_edges(g, u)` -> `std::ranges::forward_range` of integral ids   O(1) to obtain
/// Semantic requirements (not checked): acyclic; every id in `out_edges(g, u)` is `< n`; no
/// self-loops. Parallel edges are allowed by the concept; algorithms that need unique edges say so.
/// Models: `std::vector<std::vector<int>>`, `csr_dag`, `op_graph`, every devplace view over a dag.
/// Refined by: `bidirectional_dag`.  Archetype: test/archetypes/minimal_dag.hpp
template <class G>
concept dag = requires(const G& g, std::size_t u) {
  { devplace::num_vertices(g) } -> std::same_as<std::size_t>;
  { devplace::out_edges(g, u) } -> std::ranges::forward_range;
} && std::integral<vertex_id_t<G>>;

/// \concept bidirectional_dag
/// A `dag` that also lists predecessors.
/// Valid expressions: 3. `devplace::in_edges(g, u)` -> forward range of integral ids, O(1) to obtain.
/// Semantic requirement: `v` in `out_edges(g, u)` exactly when `u` in `in_edges(g, v)`, with equal
/// multiplicity. Models: `csr_dag`, `op_graph`, the views over a bidirectional dag.
template <class G>
concept bidirectional_dag = dag<G> && requires(const G& g, std::size_t u) {
  { devplace::in_edges(g, u) } -> std::ranges::forward_range;
};

/// \concept vertex_cost_fn
/// A cost on vertices: `f(g, u)` returns something convertible to `double`.
template <class F, class G>
concept vertex_cost_fn = dag<G> && std::regular_invocable<const F&, const G&, vertex_id_t<G>> &&
    std::convertible_to<std::invoke_result_t<const F&, const G&, vertex_id_t<G>>, double>;

/// \concept edge_cost_fn
/// A cost on edges: `f(g, u, v)` for an edge u -> v returns something convertible to `double`.
template <class F, class G>
concept edge_cost_fn =
    dag<G> && std::regular_invocable<const F&, const G&, vertex_id_t<G>, vertex_id_t<G>> &&
    std::convertible_to<std::invoke_result_t<const F&, const G&, vertex_id_t<G>, vertex_id_t<G>>,
                        double>;

/// A vertex cost read from a random-access range indexed by vertex id (std::vector<double>,
/// Eigen::VectorXd, ...): `by_vertex(values)` models `vertex_cost_fn`. Holds a pointer: the
/// range must outlive the cost object.
template <std::ranges::random_access_range R>
struct by_vertex {
  const R* values;
  explicit by_vertex(const R& r) : values(&r) {}
  template <class G, std::integral I>
  double operator()(const G&, I u) const {
    return static_cast<double>((*values)[static_cast<std::ranges::range_difference_t<const R>>(u)]);
  }
};

/// The cost that is 1 on every vertex (or edge). There is no implicit default cost: name it.
struct unit_cost {
  template <class G, std::integral I>
  constexpr double operator()(const G&, I) const noexcept { return 1.0; }
  template <class G, std::integral I>
  constexpr double operator()(const G&, I, I) const noexcept { return 1.0; }
};

}  // namespace devplace
