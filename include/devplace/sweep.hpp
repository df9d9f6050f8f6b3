#pragma once
/// \file sweep.hpp
/// Everything of `devplace/sweep/` in one include but the MPI channel (`sweep/mpi.hpp`, with the
/// `devplace::mpi` component): design-space files, the generator table, result lines and the
/// resumable driver.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/sweep/dfmodel_space.hpp"
#include "devplace/sweep/driver.hpp"
#include "devplace/sweep/llm_space.hpp"
#include "devplace/sweep/phaze_space.hpp"
#include "devplace/sweep/registry.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sweep/registry.ipp"  // every generator's definition (compiled mode: devplace::core)
#endif
#include "devplace/sweep/results.hpp"
#include "devplace/sweep/space.hpp"
