#pragma once
/// \file sim/from_plan.hpp
/// `simulation_options_of(p)`: the simulation settings a plan records (`plan::settings`, or the
/// defaults for a plan that records none), so that simulating a written plan reproduces the
/// figures it was written with.
#include "devplace/plan.hpp"
#include "devplace/sim/pipeline_simulator.hpp"

namespace devplace {

[[nodiscard]] inline simulation_options simulation_options_of(const plan& p) {
  const plan_settings st = p.settings.value_or(plan_settings{});
  return {.micro_batches = p.micro_batches,
          .micro_batch_size = st.micro_batch_size,
          .schedule = st.schedule == "1f1b" ? pipeline_schedule::one_f_one_b : pipeline_schedule::gpipe,
          .recompute = st.recompute,
          .blocking_sends = st.blocking_sends,
          .dp_bucket_bytes = st.dp_bucket_bytes};
}

}  // namespace devplace
