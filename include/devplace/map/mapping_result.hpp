#pragma once
/// \file map/mapping_result.hpp
/// What the device mapper (map/mapper.hpp) returns, `mapping_result`, and the most devices it
/// takes (`max_mapper_devices`, `mapper_device_limit` for the topology readers): the types alone,
/// for code that reads, stores or checks mappings without running the mapper (the mapping ILP,
/// the readers, the tool), so that it does not parse the mapper.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/oracle.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/status.hpp"
#include "devplace/topology/device_limit.hpp"

namespace devplace {

/// The most devices the mapper takes. Its set-up (bound tables, symmetry detection, the ring
/// tables) runs under the time limit, and past it the mapper returns the best baseline map; what
/// no time limit stops is building the dense matrices before the mapper starts: the topology's
/// own (16 D² bytes) and the link tables (`link_costs`, O(D² log D) time, 28 D² bytes on a
/// symmetric topology without latency, up to 64 D²): 0.19 GB and about 0.6 s CPU at 2,048 devices,
/// 4.4 GB at 10^4 (docs/mapping.md, "Set-up under the time limit; limits").
/// `map_devices` on a larger topology throws std::invalid_argument before building anything;
/// `devplace map` and `plan` read topologies with `mapper_device_limit`, so that a larger one is
/// an input error before its matrices are built.
inline constexpr std::size_t max_mapper_devices = 2048;
inline constexpr device_limit mapper_device_limit{
    max_mapper_devices, "the most devices devplace maps onto: its dense link tables and the topology's take 44 D^2 bytes or more, 0.19 GB at 2048 devices, and are built before the time limit applies"};

namespace detail {
inline void check_mapper_devices(std::size_t D) {
  if (D > max_mapper_devices)
    throw std::invalid_argument("mapping: the topology has " + std::to_string(D) + " devices, more than the limit of " +
                                std::to_string(max_mapper_devices) + " (" + std::string(mapper_device_limit.reason) + ")");
}
/// The stage replicas of `g` need as many devices: checked before any baseline or search runs.
inline void check_mapping_fits(const stage_graph& g, std::size_t D) {
  if (g.vertices() > D)
    throw std::invalid_argument("mapping: " + std::to_string(g.stages()) + " stages with " + std::to_string(g.vertices()) +
                                " stage replicas need as many devices, the topology has " + std::to_string(D));
}
}  // namespace detail

struct mapping_result {
  devplace::status status = status::infeasible;  ///< optimal / feasible / time_limit (with the best mapping found)
  device_mapping device_of;                      ///< S rows of R device ids
  double objective_ms = 0;
  double lower_bound_ms = 0;                     ///< proved: no mapping is faster
  double initial_lower_bound_ms = 0;             ///< t_l0
  double initial_upper_bound_ms = 0;             ///< t_r0 (best baseline)
  std::string initial_mapping;                   ///< what gave t_r0: cs, p2p, random, bisection, warm start
  bool optimal = false;                          ///< proved optimal (within ε)
  std::uint64_t nodes_explored = 0;
  std::size_t searches = 0;                      ///< inner searches started
  std::size_t searches_timed_out = 0;            ///< stopped by target_timeout_s
  /// What every oracle of the portfolio that applied did (mapper_options::oracles, map/oracle.hpp)
  std::vector<oracle_stats> oracles;
  std::size_t local_search_changes = 0;          ///< moves and swaps the incumbent improvement accepted
  std::size_t neighbourhood_changes = 0;         ///< sub-mappings the large-neighbourhood search accepted
  /// Proved optimal, and the mapping is the one a fresh search found at the optimum
  /// (`mapper_options::settle_nodes`): the same for any thread count
  bool settled = false;
  double time_s = 0;
  std::string cost;                              ///< the model's name

  /// Whether a mapping is attached (always, once the bracket had a baseline).
  [[nodiscard]] bool has_solution() const noexcept { return !device_of.empty(); }
  /// Searches the oracle `name` answered (found or refuted); 0 when it did not apply.
  [[nodiscard]] std::size_t answered_by(std::string_view name) const noexcept {
    for (const auto& x : oracles)
      if (x.name == name) return x.answered();
    return 0;
  }
};

}  // namespace devplace
