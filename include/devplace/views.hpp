#pragma once
/// \file views.hpp
/// Everything of `devplace/views/` in one include: lazy graph views: all, reverse, induced,
/// quotient, with_costs.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/views/all.hpp"
#include "devplace/views/induced.hpp"
#include "devplace/views/quotient.hpp"
#include "devplace/views/reverse.hpp"
#include "devplace/views/with_costs.hpp"
