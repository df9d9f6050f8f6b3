#pragma once
/// \file algorithm.hpp
/// Everything of `devplace/algorithm/` in one include: graph algorithms on any `dag`: topological
/// order, reachability, convexity, reconverging vertices, width, longest path, down-set
/// enumeration.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/algorithm/antichain_states.hpp"
#include "devplace/algorithm/convexity.hpp"
#include "devplace/algorithm/downset_growth.hpp"
#include "devplace/algorithm/downsets.hpp"
#include "devplace/algorithm/longest_path.hpp"
#include "devplace/algorithm/reachability.hpp"
#include "devplace/algorithm/reconverging.hpp"
#include "devplace/algorithm/sources_sinks.hpp"
#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/algorithm/width.hpp"
