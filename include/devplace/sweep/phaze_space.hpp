#pragma once
/// \file sweep/phaze_space.hpp
/// The `phaze` generator: PHAZE accelerator configurations × operator graphs × device counts
/// (docs/phaze.md, docs/sweep.md). Every point is `phaze::evaluate_architecture` of one
/// configuration on one graph at one K (the placement DP over the micro-batch sizes, both
/// activation policies and the HBM sizes; layers list-scheduled, or by the per-layer ILP), i.e.
/// an exhaustive architecture sweep with no hysteresis stop.
///
///   "space": {"cores": "cores.json",             PHAZE's configurations with their areas, or
///             "configurations": [{...}, ...],    the same objects inline (one of the two)
///             "graphs": ["bert_large_mbs4.json"],
///             "devices": [1024], "batch": 4096,  K values; global batch B · b (samples)
///             "layers": 24, "micro_batches": [1, 2, 4, 8], "hbm_gib": [32, 64, 80],
///             "bandwidth_gbps": 4.294967296,     (optional, PHAZE's defaults as shown)
///             "ilp_time_limit_s": 0}             per layer pass; > 0: the per-layer scheduling
///                                                ILP (the program's solver, prepare_context)
///
/// Point order: graph, then K, then configuration (file order, fastest). The points of a space
/// share one `phaze::evaluation_cache` per process (schedules and placements keyed by exactly
/// what they read; the results are those without it), and a run of configurations that differ
/// only in the global buffer and the area (which the evaluation does not read) is one `group`.
///
/// Declared here, defined in phaze_space.ipp, which this header does not include (it reads operator
/// graphs and runs PHAZE's evaluation): header-only, a file that calls `prepare_phaze_space`
/// includes `devplace/sweep/phaze_space.ipp` too (or `devplace/sweep/registry.ipp`, or
/// `devplace/sweep.hpp`); compiled mode (`devplace::core`, see config.hpp) needs nothing more.
#include "devplace/config.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

namespace detail {
/// The definition of `prepare_phaze_space` below, in sweep/phaze_space.ipp; where that file is not
/// included (header-only mode) and `devplace::core` not linked, a call does not compile: this type
/// is incomplete.
template <int>
struct prepare_phaze_space_defined_in_sweep_phaze_space_ipp;
}  // namespace detail

/// The `phaze` generator's `prepare`. Throws io::input_error naming the space file, the field and
/// the reason. Called as `prepare_phaze_space(f, ctx)`: the template parameter is never given.
template <int N = 0>
[[nodiscard]] point_space prepare_phaze_space(const space_file& f, const prepare_context& ctx = {}) {
  return detail::prepare_phaze_space_defined_in_sweep_phaze_space_ipp<N>::run(f, ctx);
}

}  // namespace devplace::sweep

#if !DEVPLACE_HEADER_ONLY
namespace devplace::sweep {
extern template point_space prepare_phaze_space<0>(const space_file&, const prepare_context&);
}  // namespace devplace::sweep
#endif
