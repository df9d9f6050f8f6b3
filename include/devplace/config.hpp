#pragma once
/// \file config.hpp
/// Configuration macros. `DEVPLACE_EXPECTS(cond, what)` checks a precondition of a public function
/// in every build type (it is not an `assert`): when `cond` is false it throws
/// `std::invalid_argument` with the message `what` (a string naming the argument and the reason).
/// Define `DEVPLACE_EXPECTS` before including any devplace header to report differently.
#include <stdexcept>
#include <string>

#include "devplace/version.hpp"

namespace devplace::detail {
[[noreturn]] inline void precondition_failed(const std::string& what) { throw std::invalid_argument(what); }
}  // namespace devplace::detail

#ifndef DEVPLACE_EXPECTS
#define DEVPLACE_EXPECTS(cond, what) ((cond) ? void(0) : ::devplace::detail::precondition_failed(what))
#endif

/// Header-only (the default) or compiled mode, as fmt and spdlog offer. Header-only, a few heavy
/// non-template functions (`map_devices` with a `cost_choice`, `search_plan` on an `op_graph`, …;
/// docs/compile-time.md lists them) are defined inline by their headers, which include their
/// definitions from a `.ipp` file next to them, and every translation unit that includes such a
/// header compiles them and the templates they use. Linking the CMake target `devplace::core`
/// defines `DEVPLACE_COMPILED`: those headers then only declare the functions, which the library
/// defines once. Both modes behave the same; only the build time differs.
#if defined(DEVPLACE_COMPILED)
#define DEVPLACE_HEADER_ONLY 0
#define DEVPLACE_INLINE
#else
#define DEVPLACE_HEADER_ONLY 1
#define DEVPLACE_INLINE inline
#endif
