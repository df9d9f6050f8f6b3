#pragma once
/// \file devplace.hpp
/// All of devplace in one include: every module header (devplace/<module>.hpp) and the shared
/// headers. Convenient, and the slowest to compile of all: a program that includes only the
/// module headers it uses compiles several times faster (docs/compile-time.md). The optional
/// components (ilp/backends/cbc.hpp, ilp/backends/glpk.hpp, map/scotch.hpp) need their own
/// targets and are not included.
#include "devplace/config.hpp"
#include "devplace/executor.hpp"
#include "devplace/plan.hpp"
#include "devplace/status.hpp"
#include "devplace/version.hpp"
#include "devplace/algorithm.hpp"
#include "devplace/cluster.hpp"
#include "devplace/cost.hpp"
#include "devplace/dag.hpp"
#include "devplace/dfmodel.hpp"
#include "devplace/ilp.hpp"
#include "devplace/io.hpp"
#include "devplace/map.hpp"
#include "devplace/mcm.hpp"
#include "devplace/partition.hpp"
#include "devplace/peers.hpp"
#include "devplace/phaze.hpp"
#include "devplace/refine.hpp"
#include "devplace/llm.hpp"
#include "devplace/sim.hpp"
#include "devplace/sweep.hpp"
#include "devplace/topology.hpp"
#include "devplace/transform.hpp"
#include "devplace/views.hpp"
#include "devplace/viz.hpp"
