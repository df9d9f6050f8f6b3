#pragma once
/// \file map.hpp
/// Everything of `devplace/map/` in one include: device mapping: stage graph, cost models, bounds,
/// baselines, the mapper and its searches (the Scotch baseline, map/scotch.hpp, needs
/// devplace::scotch and is not included).
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/map/baselines.hpp"
#include "devplace/map/bisection_map.hpp"
#include "devplace/map/bounds.hpp"
#include "devplace/map/copy_bound.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/local_search.hpp"
#include "devplace/map/map_devices.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/mapper_options.hpp"
#include "devplace/map/mapping_result.hpp"
#include "devplace/map/mapping_search.hpp"
#include "devplace/map/neighbourhood_search.hpp"
#include "devplace/map/oracle.hpp"
#include "devplace/map/ring_bound.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/map/symmetry.hpp"
