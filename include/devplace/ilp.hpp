#pragma once
/// \file ilp.hpp
/// Everything of `devplace/ilp/` in one include: the ILP model, its LP/MPS writers and builders
/// (the CBC and GLPK backends, ilp/backends/, need their own targets and are not included).
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/expr.hpp"
#include "devplace/ilp/lp_writer.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/mps_writer.hpp"
#include "devplace/ilp/solution.hpp"
#include "devplace/ilp/builders/dfmodel.hpp"
#include "devplace/ilp/builders/mapping.hpp"
#include "devplace/ilp/builders/partition.hpp"
#include "devplace/ilp/builders/phaze_schedule.hpp"
