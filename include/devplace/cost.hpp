#pragma once
/// \file cost.hpp
/// Everything of `devplace/cost/` in one include: the transfer-time model and the ring collectives built on it.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/cost/collective.hpp"
#include "devplace/cost/transfer.hpp"
