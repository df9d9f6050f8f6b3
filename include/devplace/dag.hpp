#pragma once
/// \file dag.hpp
/// Everything of `devplace/dag/` in one include: graph concepts and customisation points,
/// `csr_dag`, `op_graph`.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/dag/access.hpp"
#include "devplace/dag/concepts.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/dag/operator_properties.hpp"
#include "devplace/dag/properties.hpp"
