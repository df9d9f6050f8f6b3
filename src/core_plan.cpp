// devplace::core: the library of compiled mode (see include/devplace/config.hpp). Built with
// DEVPLACE_COMPILED, the headers only declare their heavy functions (templates called with their
// default argument) and an explicit instantiation of each; the library's translation units
// include their definitions (the .ipp files) and instantiate each once: this one the (S, R) plan
// search, core_map.cpp the mapper (which the search calls, declared here), core_io.cpp the readers
// and writers. Three units, so that a build on several cores compiles them in parallel.
#include "devplace/sim/plan_search.hpp"
#include "devplace/sim/plan_search.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif

namespace devplace {
template plan_search_result search_plan<0>(const op_graph&, const matrix_topology&, const plan_search_options&);
}  // namespace devplace
