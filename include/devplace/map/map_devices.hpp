#pragma once
/// \file map/map_devices.hpp
/// The declaration of `map_devices(stage_graph, link_costs, mapper_options)`, the mapper with the
/// cost model chosen at run time (`mapper_options::cost`), for the code that calls it without the
/// mapper's templates: `sim/iteration_mapping.hpp`, say. Its definition is map/mapper.ipp, which
/// map/mapper.hpp includes in header-only mode: a file that calls this function includes
/// map/mapper.hpp there (or links `devplace::core`, which compiles it once; see config.hpp).
#include "devplace/config.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/mapper_options.hpp"
#include "devplace/map/mapping_result.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

namespace detail {
/// The body of `map_devices` below, in map/mapper.ipp (which map/mapper.hpp includes in
/// header-only mode). Where neither that file is included nor `devplace::core` linked, a call does
/// not compile: this type is incomplete.
template <int>
struct map_devices_defined_in_map_mapper_ipp;
}  // namespace detail

/// Maps with the model chosen by `o.cost` (automatic: the paper's ratio rule; combined with
/// `o.micro_batches`, warm-started from the p2p and allreduce optima). Defined in mapper.ipp
/// (compiled once by `devplace::core` in compiled mode; see config.hpp). Called as
/// `map_devices(g, L, o)`: the template parameter is never given, it only makes a translation
/// unit compile the mapper for the three cost models where it calls this, not where it includes
/// the header.
template <int N = 0>
[[nodiscard]] mapping_result map_devices(const stage_graph& g, const link_costs& L, const mapper_options& o = {}) {
  return detail::map_devices_defined_in_map_mapper_ipp<N>::run(g, L, o);
}

}  // namespace devplace

#if !DEVPLACE_HEADER_ONLY
namespace devplace {
extern template mapping_result map_devices<0>(const stage_graph&, const link_costs&, const mapper_options&);
}  // namespace devplace
#endif
