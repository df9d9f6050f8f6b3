// devplace::core, the sweep generators: each reads its inputs (operator graphs and PHAZE
// configurations, DFModel setups, LLM systems and models) and runs its model. One of the
// library's translation units (see core_plan.cpp), compiled in parallel with the others.
#include "devplace/sweep/registry.hpp"
#include "devplace/sweep/registry.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif

namespace devplace::sweep {
template point_space prepare_phaze_space<0>(const space_file&, const prepare_context&);
template point_space prepare_dfmodel_space<0>(const space_file&, const prepare_context&);
template point_space prepare_llm_space<0>(const space_file&, const prepare_context&);
}  // namespace devplace::sweep
