#pragma once
/// \file views/with_costs.hpp
/// `views::with_costs(g, costs{...})`: attaches profiled attributes to any bidirectional dag, so
/// that it models `profiled_dag` without touching its type. Each attribute is a callable taking
/// the base graph and vertex id(s); attributes left out are zero (`zero_cost`).
///
///   std::vector<double> t = ...;                           // one time per vertex
///   auto pg = devplace::views::with_costs(csr, devplace::costs{
///       .forward_ms = [&](const auto&, std::size_t v) { return t[v]; },
///       .edge_bytes = [](const auto&, std::size_t, std::size_t) { return 4096.0; }});
#include <cstddef>
#include <utility>

#include "devplace/views/all.hpp"

namespace devplace {

/// The attribute that is 0 everywhere.
struct zero_cost {
  template <class... A>
  constexpr double operator()(const A&...) const noexcept { return 0.0; }
};

/// Callables for each attribute (base graph, vertex) or (base graph, u, v) for `edge_bytes`.
template <class Fwd = zero_cost, class Bwd = zero_cost, class Mem = zero_cost, class Par = zero_cost,
          class Edge = zero_cost>
struct costs {
  Fwd forward_ms{};
  Bwd backward_ms{};
  Mem memory_bytes{};
  Par param_bytes{};
  Edge edge_bytes{};
};

template <dag_view V, class C>
class with_costs_view {
 public:
  with_costs_view(V base, C c) : base_(std::move(base)), c_(std::move(c)) {}
  [[nodiscard]] const V& base() const noexcept { return base_; }
  [[nodiscard]] std::size_t num_vertices() const { return devplace::num_vertices(base_); }
  [[nodiscard]] decltype(auto) out_edges(std::size_t u) const { return devplace::out_edges(base_, u); }
  [[nodiscard]] decltype(auto) in_edges(std::size_t u) const
    requires bidirectional_dag<V>
  {
    return devplace::in_edges(base_, u);
  }
  [[nodiscard]] double forward_ms(std::size_t v) const { return static_cast<double>(c_.forward_ms(base_, v)); }
  [[nodiscard]] double backward_ms(std::size_t v) const { return static_cast<double>(c_.backward_ms(base_, v)); }
  [[nodiscard]] double memory_bytes(std::size_t v) const { return static_cast<double>(c_.memory_bytes(base_, v)); }
  [[nodiscard]] double param_bytes(std::size_t v) const { return static_cast<double>(c_.param_bytes(base_, v)); }
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const {
    return static_cast<double>(c_.edge_bytes(base_, u, v));
  }

 private:
  V base_;
  C c_;
};

template <class V, class C>
inline constexpr bool enable_dag_view<with_costs_view<V, C>> = true;

namespace views {
namespace detail {
struct with_costs_fn {
  template <class G, class C>
    requires dag<std::remove_cvref_t<G>> && requires(G&& g) { views::all(std::forward<G>(g)); }
  [[nodiscard]] auto operator()(G&& g, C c) const {
    return with_costs_view<views::all_t<G>, C>(views::all(std::forward<G>(g)), std::move(c));
  }
};
}  // namespace detail
inline constexpr detail::with_costs_fn with_costs{};
}  // namespace views

}  // namespace devplace
