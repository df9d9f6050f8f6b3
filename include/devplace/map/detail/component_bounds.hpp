#pragma once
/// \file map/detail/component_bounds.hpp
/// The mapper's initial bound raised by the component bounds, per model: the ring-component bound
/// (map/ring_bound.hpp) for the models with rings (forms rings and copies_and_rings:
/// allreduce, combined) and the copy-component bound (map/copy_bound.hpp) for the models with p2p
/// sends between copies (forms copies and copies_and_rings: p2p, combined; equal replica counts).
/// For the copies_and_rings form each adds, per stage, a lower bound of the other
/// part's time (one vertex alone, on any device). Private helpers of `mapping_search::setup`.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "devplace/map/copy_bound.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/ring_bound.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

/// The allreduce term of a model of the copies_and_rings form: its `ring` member (with the
/// ring-closure tables once prepared) when it has one, else a plain `allreduce_cost`.
template <class C>
[[nodiscard]] allreduce_cost ring_part(const C& model) {
  if constexpr (requires { { model.ring } -> std::convertible_to<allreduce_cost>; })
    return model.ring;
  else
    return allreduce_cost{};
}

/// MB of a model of the copies_and_rings form (its `micro_batches` member, at least 1).
template <class C>
[[nodiscard]] double ring_divisor(const C& model) {
  static_assert(requires { { model.micro_batches } -> std::convertible_to<std::size_t>; },
                "a model of the copies_and_rings form has a micro_batches member (combined_cost's MB)");
  return static_cast<double>(std::max<std::size_t>(model.micro_batches, 1));
}

/// Per stage s, the least `value(dev, v)` over the devices d, a replica v of s alone on d (each
/// replica with unequal counts); nothing once `deadline` has passed.
template <class Value>
[[nodiscard]] std::optional<std::vector<double>> least_alone(const stage_graph& g, const link_costs& L,
                                                             std::chrono::steady_clock::time_point deadline, Value&& value) {
  std::vector<double> least(g.stages(), std::numeric_limits<double>::infinity());
  std::vector<std::size_t> dev(g.vertices(), unplaced);
  for (std::size_t s = 0; s < g.stages(); ++s)
    for (std::size_t r = 0; r < (g.uniform_replicas() ? 1 : g.replicas(s)); ++r) {
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      const std::size_t v = g.vertex(s, r);
      for (std::size_t d = 0; d < L.devices(); ++d) {
        dev[v] = d;
        least[s] = std::min(least[s], static_cast<double>(value(std::span<const std::size_t>(dev), v)));
      }
      dev[v] = unplaced;
    }
  return least;
}

/// `lb` raised to the ring-component bound under `model` (unchanged for models without rings);
/// stops at `deadline` with the bound reached so far.
template <mapping_cost_model C>
[[nodiscard]] double raise_by_ring_components(const stage_graph& g, const link_costs& L, const C& model, double lb,
                                              std::chrono::steady_clock::time_point deadline) {
  if constexpr (cost_model_form_v<C> == model_form::rings) {
    return ring_component_lower_bound(g, L, lb, deadline);
  } else if constexpr (cost_model_form_v<C> == model_form::copies_and_rings) {
    // Stage s costs at least c(s) + its least p2p sends (one vertex alone, any device) + ring / MB.
    const auto offset = least_alone(g, L, deadline, [&](auto dev, std::size_t v) { return p2p_cost{}.bound(g, L, dev, v); });
    return offset ? ring_component_lower_bound(g, L, *offset, ring_divisor(model), lb, deadline) : lb;
  } else {
    return lb;
  }
}

/// `lb` raised to the copy-component bound under `model` (unchanged for models without p2p sends
/// and for unequal replica counts), within a quarter of the time left to `deadline` (cut short,
/// the bound is only lower).
template <mapping_cost_model C>
[[nodiscard]] double raise_by_copy_components(const stage_graph& g, const link_costs& L, const C& model, double lb,
                                              std::chrono::steady_clock::time_point deadline) {
  using clock = std::chrono::steady_clock;
  const auto now = clock::now();
  if (!g.uniform_replicas() || now >= deadline) return lb;
  const auto until = deadline == clock::time_point::max() ? deadline : now + (deadline - now) / 4;
  if constexpr (cost_model_form_v<C> == model_form::copies) {
    return copy_component_lower_bound(g, L, lb, until);
  } else if constexpr (cost_model_form_v<C> == model_form::copies_and_rings) {
    // Stage s costs at least c_u(s) + its sends + its least ring term (alone, any device) / MB.
    const double mb = ring_divisor(model);
    const allreduce_cost ring = ring_part(model);
    auto offset = least_alone(g, L, deadline, [&](auto dev, std::size_t v) { return ring.ring_bound_ms(g, L, dev, v) / mb; });
    if (!offset) return lb;
    for (std::size_t s = 0; s < g.stages(); ++s) (*offset)[s] += g.replica_compute_ms(s);
    return copy_component_lower_bound(g, L, *offset, lb, until);
  } else {
    return lb;
  }
}

}  // namespace devplace::detail
