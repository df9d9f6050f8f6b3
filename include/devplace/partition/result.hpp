#pragma once
/// \file partition/result.hpp
/// Options and result shared by the partitioners (pipeline_dp, topo_dp, the Parmesan flow).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "devplace/partition/stage_cost.hpp"
#include "devplace/status.hpp"

namespace devplace {

struct partition_options {
  std::size_t stages = 1;          ///< S: exactly S non-empty stages
  std::size_t replicas = 1;        ///< R: replicas of every stage
  std::size_t micro_batches = 1;   ///< MB of eq. 14
  double device_memory_bytes = std::numeric_limits<double>::infinity();
  double bandwidth_gbps = 10.0;    ///< constant bandwidth β̄ of phase 1
  std::uint64_t max_downsets = 2'000'000;  ///< pipeline_dp: cap on the down-sets it may create
  /// pipeline_dp: seek only partitions with objective <= this; when none exists the status is
  /// `infeasible` (read: none under the bound). Cuts the search when a good partition is known.
  double upper_bound_ms = std::numeric_limits<double>::infinity();

  [[nodiscard]] stage_cost_options cost() const noexcept {
    return {.replicas = replicas, .micro_batches = micro_batches, .device_memory_bytes = device_memory_bytes,
            .bandwidth_gbps = bandwidth_gbps};
  }
};

struct partition_result {
  devplace::status status = status::infeasible;  ///< optimal / feasible / infeasible / limit_reached
  std::vector<std::size_t> stage_of;             ///< stage of every operator (empty without a solution)
  double objective_ms = 0;                       ///< max stage time
  std::vector<double> stage_time_ms;
  std::vector<double> stage_memory_bytes;
  std::uint64_t downsets = 0;                    ///< down-sets created (pipeline_dp) or prefixes (topo_dp)
  double time_s = 0;                             ///< wall time
};

/// Fills objective, stage times and memory of `r` from `r.stage_of` (eq. 3 and 14).
inline void finish_partition(const op_graph& g, const partition_options& o, partition_result& r) {
  const auto e = evaluate_partition(g, r.stage_of, o.stages, o.cost());
  r.objective_ms = e.objective_ms;
  r.stage_time_ms = e.stage_time_ms;
  r.stage_memory_bytes = e.stage_memory_bytes;
}

}  // namespace devplace
