#pragma once
/// \file mcm.hpp
/// Everything of `devplace/mcm/` in one include: MCM partitioning (Xie et al. 2022): validator,
/// constraint engine, evaluators, searches.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/mcm/broadcast.hpp"
#include "devplace/mcm/chain_dp.hpp"
#include "devplace/mcm/chip_mask.hpp"
#include "devplace/mcm/engine.hpp"
#include "devplace/mcm/evaluate.hpp"
#include "devplace/mcm/policy.hpp"
#include "devplace/mcm/random.hpp"
#include "devplace/mcm/repair.hpp"
#include "devplace/mcm/search.hpp"
#include "devplace/mcm/topology.hpp"
#include "devplace/mcm/validate.hpp"
