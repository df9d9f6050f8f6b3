#pragma once
/// \file sim/from_plan.hpp
/// `simulation_options_of(p)`: the simulation settings a plan records (`plan::settings`, or the
/// defaults for a plan that records none) and its `virtual_stages`, so that simulating a written plan reproduces the
/// figures it was written with.
#include <algorithm>
#include <cstddef>

#include "devplace/plan.hpp"
#include "devplace/sim/pipeline_simulator.hpp"

namespace devplace {

[[nodiscard]] inline simulation_options simulation_options_of(const plan& p) {
  const plan_settings st = p.settings.value_or(plan_settings{});
  return {.micro_batches = p.micro_batches,
          .micro_batch_size = st.micro_batch_size,
          .schedule = st.schedule == "1f1b"                                ? pipeline_schedule::one_f_one_b
                      : st.schedule == "interleaved" || p.virtual_stages > 1 ? pipeline_schedule::interleaved
                                                     : pipeline_schedule::gpipe,
          .recompute = st.recompute,
          .blocking_sends = st.blocking_sends,
          .virtual_stages = std::max<std::size_t>(p.virtual_stages, 1),
          .dp_bucket_bytes = st.dp_bucket_bytes};
}

}  // namespace devplace
