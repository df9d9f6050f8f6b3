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

/// Header-only (the default) or compiled mode, as fmt and spdlog offer. A few heavy functions
/// (`map_devices` with a `cost_choice`, `search_plan` on an `op_graph`, `io::read_graph`, the
/// readers and writers of plan, topology, cluster, Piper, Tarnawski and DFModel setup files;
/// docs/compile-time.md lists them) are templates with one defaulted parameter, called without
/// it, so that a translation unit compiles them (and the templates they use) only where it calls
/// them. Their definitions are in `.ipp` files next to their headers. Header-only,
/// `map/mapper.hpp` includes its `.ipp`; the other headers (`sim/plan_search.hpp`,
/// `io/read_graph.hpp`, `io/plan_json.hpp`, ..., and `sim/iteration_mapping.hpp`) only declare
/// theirs: a file that calls them includes the `.ipp` too (`sim/plan_search.ipp`,
/// `io/read_graph.ipp`, ..., or `map/mapper.hpp`), or the module header; otherwise the call does
/// not compile. Linking the CMake target `devplace::core` defines `DEVPLACE_COMPILED`: those
/// headers then only declare the functions and their explicit instantiation (`extern template`),
/// which the library compiles once, and include no `.ipp`. Both modes behave the same; only the
/// build time differs.
#if defined(DEVPLACE_COMPILED)
#define DEVPLACE_HEADER_ONLY 0
#else
#define DEVPLACE_HEADER_ONLY 1
#endif
