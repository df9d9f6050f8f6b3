#pragma once
/// \file refine.hpp
/// Everything of `devplace/refine/` in one include: boundary refinement of a partition.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/refine/boundary_refine.hpp"
