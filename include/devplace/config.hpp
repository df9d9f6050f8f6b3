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
