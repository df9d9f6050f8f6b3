#pragma once
/// \file sweep/dfmodel_space.hpp
/// The `dfmodel` generator: DFModel systems (docs/dfmodel.md, docs/sweep.md). Every point is
/// `dfmodel::run_setup` of one setup file with some of its system's figures replaced:
///
///   "space": {"setups": ["dfmodel_4x2.json", ...],   devplace.dfmodel.setup/1 files
///             "chips": [8, 16],          optional: the chip count (setups with a free dimension)
///             "link_gbps": [25, 50],     optional: every network dimension's link bandwidth
///             "dram_gbps": [100, 200],   optional: DRAM bandwidth
///             "sram_bytes": [3.2e8]}     optional: on-chip SRAM
///
/// Point order: setup, then chips, link_gbps, dram_gbps, sram_bytes (the last fastest). An axis
/// left out keeps the setup's own value and is not part of the inputs.
///
/// Declared here, defined in dfmodel_space.ipp, which this header does not include (it reads
/// DFModel setups and runs the DFModel model): header-only, a file that calls
/// `prepare_dfmodel_space` includes `devplace/sweep/dfmodel_space.ipp` too (or
/// `devplace/sweep/registry.ipp`, or `devplace/sweep.hpp`); compiled mode (`devplace::core`, see
/// config.hpp) needs nothing more.
#include "devplace/config.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

namespace detail {
/// The definition of `prepare_dfmodel_space` below, in sweep/dfmodel_space.ipp; where that file is
/// not included (header-only mode) and `devplace::core` not linked, a call does not compile: this
/// type is incomplete.
template <int>
struct prepare_dfmodel_space_defined_in_sweep_dfmodel_space_ipp;
}  // namespace detail

/// The `dfmodel` generator's `prepare`. Throws io::input_error naming the space file, the field
/// and the reason. Called as `prepare_dfmodel_space(f, ctx)`: the template parameter is never given.
template <int N = 0>
[[nodiscard]] point_space prepare_dfmodel_space(const space_file& f, const prepare_context& ctx = {}) {
  return detail::prepare_dfmodel_space_defined_in_sweep_dfmodel_space_ipp<N>::run(f, ctx);
}

}  // namespace devplace::sweep

#if !DEVPLACE_HEADER_ONLY
namespace devplace::sweep {
extern template point_space prepare_dfmodel_space<0>(const space_file&, const prepare_context&);
}  // namespace devplace::sweep
#endif
