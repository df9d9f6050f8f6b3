#pragma once
/// \file phaze.hpp
/// Everything of `devplace/phaze/` in one include: PHAZE: placement DP, architecture sweep,
/// operator latencies, per-layer scheduling.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/phaze/architecture.hpp"
#include "devplace/phaze/cores_json.hpp"
#include "devplace/phaze/estimator.hpp"
#include "devplace/phaze/evaluation_cache.hpp"
#include "devplace/phaze/layer_schedule.hpp"
#include "devplace/phaze/operator_graph.hpp"
#include "devplace/phaze/placement.hpp"
#include "devplace/phaze/stage_load.hpp"
#include "devplace/phaze/sweep.hpp"
#include "devplace/phaze/workload.hpp"
