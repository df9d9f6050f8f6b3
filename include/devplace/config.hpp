#pragma once
/// \file config.hpp
/// Configuration macros. `DEVPLACE_EXPECTS(cond)` checks a precondition the caller can check
/// cheaply (a caller bug, not an algorithmic outcome). It asserts by default; define it before
/// including any devplace header to throw or log instead.
#include <cassert>

#include "devplace/version.hpp"

#ifndef DEVPLACE_EXPECTS
#define DEVPLACE_EXPECTS(cond) assert(cond)
#endif
