#pragma once
// The solvers the ILP tests run against: the enumeration reference solver always, CBC and GLPK
// when CMake found them (test_ilp links devplace::cbc / devplace::glpk, which define
// DEVPLACE_HAS_CBC / DEVPLACE_HAS_GLPK).
#include <type_traits>

#include "ilp/reference_solver.hpp"
#ifdef DEVPLACE_HAS_CBC
#include "devplace/ilp/backends/cbc.hpp"
#endif
#ifdef DEVPLACE_HAS_GLPK
#include "devplace/ilp/backends/glpk.hpp"
#endif

#if defined(DEVPLACE_HAS_CBC) && defined(DEVPLACE_HAS_GLPK)
#define DEVPLACE_ILP_BACKENDS devplace::ilp::cbc_solver, devplace::ilp::glpk_solver
#define DEVPLACE_ILP_ALL_SOLVERS devplace::test::reference_solver, devplace::ilp::cbc_solver, devplace::ilp::glpk_solver
#elif defined(DEVPLACE_HAS_CBC)
#define DEVPLACE_ILP_BACKENDS devplace::ilp::cbc_solver
#define DEVPLACE_ILP_ALL_SOLVERS devplace::test::reference_solver, devplace::ilp::cbc_solver
#elif defined(DEVPLACE_HAS_GLPK)
#define DEVPLACE_ILP_BACKENDS devplace::ilp::glpk_solver
#define DEVPLACE_ILP_ALL_SOLVERS devplace::test::reference_solver, devplace::ilp::glpk_solver
#else
// No backend: the tests that compare a backend with the reference solver are skipped (never run
// the reference solver against itself).
#define DEVPLACE_ILP_BACKENDS devplace::test::no_backend
#define DEVPLACE_ILP_ALL_SOLVERS devplace::test::reference_solver
#endif

#include "support/skip.hpp"

namespace devplace::test {
/// Stands for "no ILP backend was found"; a test templated on it skips itself.
struct no_backend : reference_solver {};
/// False (and the test case is marked skipped) when `S` is `no_backend`.
template <class S>
bool backend_available() {
  if constexpr (std::is_same_v<S, no_backend>) {
    skip("no ILP backend (CBC or GLPK) was found at build time");
    return false;
  } else {
    return true;
  }
}
}  // namespace devplace::test
