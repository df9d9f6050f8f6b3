#pragma once
/// \file sim.hpp
/// Everything of `devplace/sim/` in one include: the pipeline simulator, closed forms, the polish and the (S,
/// R) plan search.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/sim/closed_form.hpp"
#include "devplace/sim/critical_path.hpp"
#include "devplace/sim/from_plan.hpp"
#include "devplace/sim/iteration_mapping.hpp"
#include "devplace/sim/pipeline_model.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/plan_search.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/map/mapper.hpp"  // map_for_iteration's mapper (compiled mode: devplace::core)
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif
#include "devplace/sim/polish.hpp"
#include "devplace/sim/schedule.hpp"
