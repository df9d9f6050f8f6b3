// devplace::core, the mapper: `map_devices` for the stage graph and the three built-in cost models
// (the bracket search, the backtracking search, the covers, local search). One of the library's
// translation units (see core_plan.cpp), compiled in parallel with the others.
#include "devplace/map/mapper.hpp"
#include "devplace/map/mapper.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif

namespace devplace {
template mapping_result map_devices<0>(const stage_graph&, const link_costs&, const mapper_options&);
}  // namespace devplace
