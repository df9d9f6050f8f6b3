#pragma once
/// \file dag/properties.hpp
/// Customisation points for the profiled attributes of operators and edges, and the concept
/// `profiled_dag`. Units follow docs/formats.md: milliseconds per micro-batch and bytes.
///
///   devplace::forward_ms(g, v)     forward time of operator v
///   devplace::backward_ms(g, v)    backward time of operator v
///   devplace::compute_ms(g, v)     c_u(v); defaults to forward_ms + backward_ms
///   devplace::memory_bytes(g, v)   peak extra memory of v, max(fwd_mem, bwd_mem) (eq. 14)
///   devplace::param_bytes(g, v)    bytes of trainable parameters owned by v
///   devplace::edge_bytes(g, u, v)  bytes sent along the edge u -> v per micro-batch
///
/// Each tries a member (`g.forward_ms(v)`), then an ADL free function (`forward_ms(g, v)`).
/// Attach attributes to any `dag` without touching its type with `views::with_costs`
/// (<devplace/views/with_costs.hpp>).
#include <concepts>
#include <cstddef>

#include "devplace/dag/concepts.hpp"

namespace devplace {
namespace detail::property_cpo {

void forward_ms() = delete;
void backward_ms() = delete;
void compute_ms() = delete;
void memory_bytes() = delete;
void param_bytes() = delete;
void edge_bytes() = delete;

#define DEVPLACE_DETAIL_VERTEX_PROPERTY(name)                                                   \
  template <class G>                                                                            \
  concept member_##name = requires(const G& g, std::size_t v) {                                 \
    { g.name(v) } -> std::convertible_to<double>;                                               \
  };                                                                                            \
  template <class G>                                                                            \
  concept adl_##name = requires(const G& g, std::size_t v) {                                    \
    { name(g, v) } -> std::convertible_to<double>;                                              \
  };                                                                                            \
  struct name##_fn {                                                                            \
    template <class G, std::integral I>                                                         \
      requires member_##name<G> || adl_##name<G>                                                \
    [[nodiscard]] constexpr double operator()(const G& g, I v) const {                          \
      if constexpr (member_##name<G>)                                                           \
        return static_cast<double>(g.name(static_cast<std::size_t>(v)));                        \
      else                                                                                      \
        return static_cast<double>(name(g, static_cast<std::size_t>(v)));                       \
    }                                                                                           \
  };

DEVPLACE_DETAIL_VERTEX_PROPERTY(forward_ms)
DEVPLACE_DETAIL_VERTEX_PROPERTY(backward_ms)
DEVPLACE_DETAIL_VERTEX_PROPERTY(memory_bytes)
DEVPLACE_DETAIL_VERTEX_PROPERTY(param_bytes)
#undef DEVPLACE_DETAIL_VERTEX_PROPERTY

template <class G>
concept member_compute_ms = requires(const G& g, std::size_t v) {
  { g.compute_ms(v) } -> std::convertible_to<double>;
};
template <class G>
concept adl_compute_ms = requires(const G& g, std::size_t v) {
  { compute_ms(g, v) } -> std::convertible_to<double>;
};

struct compute_ms_fn {
  template <class G, std::integral I>
    requires member_compute_ms<G> || adl_compute_ms<G> ||
             (std::invocable<forward_ms_fn, const G&, I> && std::invocable<backward_ms_fn, const G&, I>)
  [[nodiscard]] constexpr double operator()(const G& g, I v) const {
    const auto vv = static_cast<std::size_t>(v);
    if constexpr (member_compute_ms<G>)
      return static_cast<double>(g.compute_ms(vv));
    else if constexpr (adl_compute_ms<G>)
      return static_cast<double>(compute_ms(g, vv));
    else
      return forward_ms_fn{}(g, vv) + backward_ms_fn{}(g, vv);
  }
};

template <class G>
concept member_edge_bytes = requires(const G& g, std::size_t u, std::size_t v) {
  { g.edge_bytes(u, v) } -> std::convertible_to<double>;
};
template <class G>
concept adl_edge_bytes = requires(const G& g, std::size_t u, std::size_t v) {
  { edge_bytes(g, u, v) } -> std::convertible_to<double>;
};

struct edge_bytes_fn {
  template <class G, std::integral I, std::integral J>
    requires member_edge_bytes<G> || adl_edge_bytes<G>
  [[nodiscard]] constexpr double operator()(const G& g, I u, J v) const {
    if constexpr (member_edge_bytes<G>)
      return static_cast<double>(g.edge_bytes(static_cast<std::size_t>(u), static_cast<std::size_t>(v)));
    else
      return static_cast<double>(edge_bytes(g, static_cast<std::size_t>(u), static_cast<std::size_t>(v)));
  }
};

}  // namespace detail::property_cpo

inline namespace cpo {
inline constexpr detail::property_cpo::forward_ms_fn forward_ms{};
inline constexpr detail::property_cpo::backward_ms_fn backward_ms{};
inline constexpr detail::property_cpo::compute_ms_fn compute_ms{};
inline constexpr detail::property_cpo::memory_bytes_fn memory_bytes{};
inline constexpr detail::property_cpo::param_bytes_fn param_bytes{};
inline constexpr detail::property_cpo::edge_bytes_fn edge_bytes{};
}  // namespace cpo

/// \concept profiled_dag
/// A `dag` whose operators and edges carry the profiled attributes above. (Algorithms that need
/// predecessors copy the graph once into an `op_graph`, so successor lists are enough.)
/// Valid expressions: `forward_ms(g, v)`, `backward_ms(g, v)`, `compute_ms(g, v)`,
/// `memory_bytes(g, v)`, `param_bytes(g, v)`, `edge_bytes(g, u, v)` for every edge u -> v; all
/// return `double`, are >= 0 and finite. `edge_bytes` of a pair that is not an edge is unspecified.
/// Models: `op_graph`, `views::with_costs(g, ...)` over any dag (e.g. `std::vector<std::vector<int>>`).
template <class G>
concept profiled_dag = dag<G> && requires(const G& g, std::size_t v) {
  { devplace::forward_ms(g, v) } -> std::same_as<double>;
  { devplace::backward_ms(g, v) } -> std::same_as<double>;
  { devplace::compute_ms(g, v) } -> std::same_as<double>;
  { devplace::memory_bytes(g, v) } -> std::same_as<double>;
  { devplace::param_bytes(g, v) } -> std::same_as<double>;
  { devplace::edge_bytes(g, v, v) } -> std::same_as<double>;
};

}  // namespace devplace
