#pragma once
/// \file partition.hpp
/// Everything of `devplace/partition/` in one include: pipeline partitioning: stage cost model,
/// exact and fixed-order DPs, even split, the Parmesan flow, the general DP.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/partition/even_split.hpp"
#include "devplace/partition/general_dp.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/result.hpp"
#include "devplace/partition/stage_cost.hpp"
#include "devplace/partition/successor_dp.hpp"
#include "devplace/partition/topo_dp.hpp"
