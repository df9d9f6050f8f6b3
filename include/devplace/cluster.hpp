#pragma once
/// \file cluster.hpp
/// Everything of `devplace/cluster/` in one include: operator clustering (`greedy_cluster`).
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/cluster/greedy_cluster.hpp"
