#pragma once
/// \file ilp/concepts.hpp
/// The `ilp_solver` concept and the options every backend understands.
#include <concepts>
#include <limits>
#include <vector>

#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"

namespace devplace::ilp {

struct solve_options {
  double time_limit_s = std::numeric_limits<double>::infinity();  ///< wall-clock limit of one solve
  unsigned threads = 1;        ///< solver threads (backends that cannot use threads ignore it)
  double relative_gap = 0;     ///< stop once (incumbent − bound) / |incumbent| <= this; the status
                               ///< is then `feasible`, never `optimal`, unless the gap closed
  bool verbose = false;        ///< let the solver print its log to stdout
  /// A MIP start: one value per column (empty: none), e.g. `mapping_ilp::start(mapping)` for the
  /// mapper's answer. The solver begins with it as its incumbent when it is feasible and ignores
  /// it otherwise; a wrong size is ignored too. It never changes the optimum, only how soon a
  /// good solution is known (and what a time-limited solve returns).
  std::vector<double> start;
};

/// \concept ilp_solver
/// Notation: `s` a `const S&`, `m` a `const model&`, `o` a `const solve_options&`.
/// Valid expressions: `s.solve(m, o)` -> `solution` (ilp/solution.hpp).
/// Semantic requirements: `optimal` only when the solver proved it; `values` satisfy the model's
/// bounds, rows and integrality within the solver's tolerances; `solve` does not modify shared
/// state (it may be called from several threads on different models when the backend allows it).
/// Models: `cbc_solver` (ilp/backends/cbc.hpp), `glpk_solver` (ilp/backends/glpk.hpp), the
/// enumeration solver of the tests (test/ilp/reference_solver.hpp).
template <class S>
concept ilp_solver = requires(const S& s, const model& m, const solve_options& o) {
  { s.solve(m, o) } -> std::same_as<solution>;
};

}  // namespace devplace::ilp
