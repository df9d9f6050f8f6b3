#pragma once
/// \file cost.hpp
/// Everything of `devplace/cost/` in one include: the transfer-time and ring-allreduce cost model.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/cost/transfer.hpp"
