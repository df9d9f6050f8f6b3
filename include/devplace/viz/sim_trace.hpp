#pragma once
/// \file viz/sim_trace.hpp
/// `simulation_trace(result, model, options, labels)`: a simulated iteration in the Chrome Trace
/// Event format (viz/trace.hpp), to open in Perfetto or chrome://tracing.
///
/// One process per node (named after it, in node order) holding the devices the plan uses; per
/// device a compute thread ("gpu3: stage 1, replica 2") and as many transfer threads ("gpu3
/// sends", "gpu3 sends 2", ...) as its overlapping outgoing transfers need, so that the slices of
/// a thread never overlap. Every timeline event is one complete event ("X") on its device's
/// thread (the allreduce on its ring's first device), named after its kind and micro-batch, in
/// the category of its kind ("forward", "backward", "activation", "gradient", "allreduce"), with
/// args stage, replica, micro_batch, device names, bytes for transfers and the allreduce, and
/// "critical": true on the critical path (sim/critical_path.hpp). The optimizer step, when
/// update_ms > 0, is one more event per device in category "optimizer". Every send has a flow
/// arrow from the send (or, for a send of no duration, the compute task that issued it) to the
/// compute task that receives it. "otherData" holds the iteration time, samples/s, bubble
/// fraction, schedule, micro-batches and the critical path's length.
///
/// Times are in µs (the format's unit) from the start of the iteration.
/// Complexity: O(T log T) for T timeline events.
///
/// Declared here, defined in sim_trace.ipp, which this header does not include (it reads the
/// simulator's timeline and its critical path): header-only, a file that calls `simulation_trace`
/// includes `devplace/viz/sim_trace.ipp` too (or `devplace/viz.hpp`); compiled mode
/// (`devplace::core`, see config.hpp) needs nothing more. The simulation's types and the labels
/// are only declared here: the caller, which simulated the iteration and labelled its devices, has
/// included sim/pipeline_simulator.hpp and viz/labels.hpp.
#include <string>

#include "devplace/config.hpp"
#include "devplace/viz/trace.hpp"

namespace devplace {
struct pipeline_model;      // sim/pipeline_model.hpp
struct simulation_options;  // sim/pipeline_simulator.hpp
struct simulation_result;   // sim/pipeline_simulator.hpp
}  // namespace devplace

namespace devplace::viz {

struct device_labels;  // viz/labels.hpp

struct sim_trace_options {
  std::string title;  ///< stored in otherData
};

namespace detail {
/// The definition of `simulation_trace` below, in viz/sim_trace.ipp; where that file is not
/// included (header-only mode) and `devplace::core` not linked, a call does not compile: this type
/// is incomplete.
template <int>
struct simulation_trace_defined_in_viz_sim_trace_ipp;
}  // namespace detail

/// The trace of `r`, the simulation of `m` with `o` on the devices `l` names. Throws
/// std::invalid_argument when `m` is not a model on l.num_devices() devices or `r` names a device
/// outside it.
/// Called as `simulation_trace(r, m, o, l, opt)`: the template parameter is never given.
template <int N = 0>
[[nodiscard]] trace_builder simulation_trace(const simulation_result& r, const pipeline_model& m, const simulation_options& o,
                                             const device_labels& l, const sim_trace_options& opt = {}) {
  return detail::simulation_trace_defined_in_viz_sim_trace_ipp<N>::run(r, m, o, l, opt);
}

}  // namespace devplace::viz

#if !DEVPLACE_HEADER_ONLY
namespace devplace::viz {
extern template trace_builder simulation_trace<0>(const simulation_result&, const pipeline_model&, const simulation_options&,
                                                  const device_labels&, const sim_trace_options&);
}  // namespace devplace::viz
#endif
