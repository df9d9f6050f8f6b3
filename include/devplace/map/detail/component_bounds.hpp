#pragma once
/// \file map/detail/component_bounds.hpp
/// The mapper's initial bound raised by the component bounds, per model: the ring-component bound
/// (map/ring_bound.hpp) for the models with rings (allreduce, combined) and the copy-component
/// bound (map/copy_bound.hpp) for the models with p2p sends between copies (p2p, combined, equal
/// replica counts). For the combined model each adds, per stage, a lower bound of the other
/// part's time (one vertex alone, on any device). Private helpers of `mapping_search::setup`.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "devplace/map/copy_bound.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/ring_bound.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

/// `lb` raised to the ring-component bound under `model` (unchanged for models without rings);
/// stops at `deadline` with the bound reached so far.
template <mapping_cost_model C>
[[nodiscard]] double raise_by_ring_components(const stage_graph& g, const link_costs& L, const C& model, double lb,
                                              std::chrono::steady_clock::time_point deadline) {
  if constexpr (std::is_same_v<C, allreduce_cost>) {
    return ring_component_lower_bound(g, L, lb, deadline);
  } else if constexpr (std::is_same_v<C, combined_cost>) {
    // Stage s costs at least c(s) + its least p2p sends (one vertex alone, any device) + ring / MB.
    std::vector<double> offset(g.stages(), std::numeric_limits<double>::infinity());
    std::vector<std::size_t> dev(g.vertices(), unplaced);
    for (std::size_t s = 0; s < g.stages(); ++s)
      for (std::size_t r = 0; r < (g.uniform_replicas() ? 1 : g.replicas(s)); ++r) {
        if (std::chrono::steady_clock::now() >= deadline) return lb;
        const std::size_t v = g.vertex(s, r);
        for (std::size_t d = 0; d < L.devices(); ++d) {
          dev[v] = d;
          offset[s] = std::min(offset[s], p2p_cost{}.bound(g, L, std::span<const std::size_t>(dev), v));
        }
        dev[v] = unplaced;
      }
    return ring_component_lower_bound(g, L, offset, static_cast<double>(std::max<std::size_t>(model.micro_batches, 1)), lb, deadline);
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
  if constexpr (std::is_same_v<C, p2p_cost>) {
    return copy_component_lower_bound(g, L, lb, until);
  } else if constexpr (std::is_same_v<C, combined_cost>) {
    // Stage s costs at least c_u(s) + its sends + its least ring term (alone, any device) / MB.
    std::vector<double> offset(g.stages(), std::numeric_limits<double>::infinity());
    std::vector<std::size_t> dev(g.vertices(), unplaced);
    const double mb = static_cast<double>(std::max<std::size_t>(model.micro_batches, 1));
    for (std::size_t s = 0; s < g.stages(); ++s) {
      if (clock::now() >= deadline) return lb;
      const std::size_t v = g.vertex(s, 0);
      for (std::size_t d = 0; d < L.devices(); ++d) {
        dev[v] = d;
        offset[s] = std::min(offset[s], model.ring.ring_bound_ms(g, L, std::span<const std::size_t>(dev), v) / mb);
      }
      dev[v] = unplaced;
      offset[s] += g.replica_compute_ms(s);
    }
    return copy_component_lower_bound(g, L, offset, lb, until);
  } else {
    return lb;
  }
}

}  // namespace devplace::detail
