// devplace::core: the library of compiled mode (see include/devplace/config.hpp). Built with
// DEVPLACE_COMPILED, the headers below only declare their heavy non-template functions; this
// translation unit includes their definitions (the .ipp files) and compiles them once.
#include "devplace/io/read_graph.hpp"
#include "devplace/io/read_graph.ipp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/mapper.ipp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/sim/plan_search.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif
