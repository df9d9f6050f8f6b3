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
  stage_cost_options cost;         ///< R, MB, device memory, β̄: the stage cost model (stage_cost.hpp)
  std::uint64_t max_downsets = 2'000'000;  ///< pipeline_dp: cap on the down-sets it may create
  /// pipeline_dp: cap on the down-sets it may visit in one pass, kept or not (a graph with many
  /// independent parts has astronomically many, nearly all over the bound); status `work_limit`.
  std::uint64_t max_visits = 50'000'000;
  /// pipeline_dp: seek only partitions with objective <= this; when none exists the status is
  /// `infeasible` (read: none under the bound). Cuts the search when a good partition is known.
  double upper_bound_ms = std::numeric_limits<double>::infinity();
};

struct partition_result {
  devplace::status status = status::infeasible;  ///< optimal / feasible / infeasible / work_limit (with the fixed-order split attached)
  std::vector<std::size_t> stage_of;             ///< stage of every operator (empty without a solution)
  double objective_ms = 0;                       ///< max stage time
  std::vector<double> stage_time_ms;
  std::vector<double> stage_memory_bytes;
  std::uint64_t downsets = 0;                    ///< down-sets created (pipeline_dp) or prefixes (topo_dp)
  double time_s = 0;                             ///< wall time

  /// Whether a partition is attached (a run stopped by a limit may carry one too).
  [[nodiscard]] bool has_solution() const noexcept { return !stage_of.empty(); }
};

/// Fills objective, stage times and memory of `r` from `r.stage_of` (eq. 3 and 14).
template <profiled_dag G>
void finish_partition(const G& g, const partition_options& o, partition_result& r) {
  const auto e = evaluate_partition(g, r.stage_of, o.stages, o.cost);
  r.objective_ms = e.objective_ms;
  r.stage_time_ms = e.stage_time_ms;
  r.stage_memory_bytes = e.stage_memory_bytes;
}

}  // namespace devplace
