#pragma once
// The solvers the ILP tests run against: the enumeration reference solver always, CBC and GLPK
// when CMake found them (test_ilp links devplace::cbc / devplace::glpk, which define
// DEVPLACE_HAS_CBC / DEVPLACE_HAS_GLPK).
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
#define DEVPLACE_ILP_BACKENDS devplace::test::reference_solver
#define DEVPLACE_ILP_ALL_SOLVERS devplace::test::reference_solver
#endif
