// devplace::core: the library of compiled mode (see include/devplace/config.hpp). Built with
// DEVPLACE_COMPILED, the headers below only declare their heavy functions (templates called with
// their default argument) and an explicit instantiation of each; this translation unit includes
// their definitions (the .ipp files) and instantiates them once.
#include "devplace/io/read_graph.hpp"
#include "devplace/io/read_graph.ipp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/mapper.ipp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/sim/plan_search.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif

namespace devplace {
template mapping_result map_devices<0>(const stage_graph&, const link_costs&, const mapper_options&);
template plan_search_result search_plan<0>(const op_graph&, const matrix_topology&, const plan_search_options&);
namespace io {
template op_graph read_graph<0>(const std::filesystem::path&, const std::string&);
}  // namespace io
}  // namespace devplace
