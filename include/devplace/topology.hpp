#pragma once
/// \file topology.hpp
/// Everything of `devplace/topology/` in one include: the topology concept, `matrix_topology` and
/// the Parmesan generators.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/topology/concepts.hpp"
#include "devplace/topology/device_limit.hpp"
#include "devplace/topology/generators.hpp"
#include "devplace/topology/matrix_topology.hpp"
