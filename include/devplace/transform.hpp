#pragma once
/// \file transform.hpp
/// Everything of `devplace/transform/` in one include: graph transforms: class contraction and
/// quotient, vertex removal.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/transform/class_contraction.hpp"
#include "devplace/transform/class_quotient.hpp"
#include "devplace/transform/remove_vertices.hpp"
