#pragma once
/// \file dfmodel.hpp
/// Everything of `devplace/dfmodel/` in one include: DFModel: networks, sharding, intra-chip
/// fusion, step time, cost and power, and its setup readers.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/dfmodel/concepts.hpp"
#include "devplace/dfmodel/fusion.hpp"
#include "devplace/dfmodel/intra_chip.hpp"
#include "devplace/dfmodel/network.hpp"
#include "devplace/dfmodel/network_topology.hpp"
#include "devplace/dfmodel/setup.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/dfmodel/setup.ipp"  // the setup reader's and result_json's definitions (compiled mode: devplace::core)
#endif
#include "devplace/dfmodel/setup_txt.hpp"
#include "devplace/dfmodel/sharding.hpp"
#include "devplace/dfmodel/system.hpp"
#include "devplace/dfmodel/workload.hpp"
