#pragma once
/// \file ilp/solution.hpp
/// What a solver returns: a status, the objective of the best solution found, the best proved
/// bound on the optimum, and the values of the columns.
///
///   status       meaning                                          values   objective  best_bound
///   optimal      solution proved optimal (within the solver's     yes      yes        = objective
///                integrality tolerance; no gap was allowed)
///   feasible     a solution, not proved optimal (stopped on a     yes      yes        proved bound
///                requested relative gap)
///   time_limit   the time limit stopped the search                maybe    if values  proved bound or NaN
///   infeasible   proved that no solution exists                   no       NaN        NaN
///   unbounded    the objective is unbounded (or the LP relaxation no       NaN        NaN
///                is, and no solution is known)
///   error        the solver failed; `message` says why            no       NaN        NaN
///
/// `best_bound` is a lower bound for a minimisation, an upper bound for a maximisation.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devplace/ilp/model.hpp"
#include "devplace/status.hpp"

namespace devplace::ilp {

enum class solve_status { optimal, feasible, infeasible, time_limit, unbounded, error };

[[nodiscard]] constexpr std::string_view to_string(solve_status s) noexcept {
  switch (s) {
    case solve_status::optimal: return "optimal";
    case solve_status::feasible: return "feasible";
    case solve_status::infeasible: return "infeasible";
    case solve_status::time_limit: return "time_limit";
    case solve_status::unbounded: return "unbounded";
    case solve_status::error: return "error";
  }
  return "unknown";
}

struct solution {
  solve_status status = solve_status::error;
  double objective = std::numeric_limits<double>::quiet_NaN();   ///< of `values`, when there are values
  double best_bound = std::numeric_limits<double>::quiet_NaN();  ///< proved bound on the optimum
  std::vector<double> values;  ///< one per column; empty when no solution is known
  double time_s = 0;           ///< wall time of the solve
  std::string solver;          ///< "cbc", "glpk", ...
  std::string message;         ///< the solver's own words where useful (errors, limits)

  [[nodiscard]] bool has_values() const noexcept { return !values.empty(); }
  [[nodiscard]] double value(var v) const { return values.at(v.index); }
  /// |objective − best_bound| / max(1, |objective|); NaN when either is unknown.
  [[nodiscard]] double relative_gap() const noexcept {
    if (std::isnan(objective) || std::isnan(best_bound)) return std::numeric_limits<double>::quiet_NaN();
    return std::abs(objective - best_bound) / std::max(1.0, std::abs(objective));
  }
};

/// The library status of a solve, for the builders' decoders: optimal, feasible and infeasible
/// map to themselves, `time_limit` to `time_limit`. `unbounded` and `error` mean the model or the
/// solver is broken (a builder never makes an unbounded model): std::runtime_error with the
/// solver's message.
template <int = 0>
[[nodiscard]] devplace::status result_status(const solution& s) {
  switch (s.status) {
    case solve_status::optimal: return devplace::status::optimal;
    case solve_status::feasible: return devplace::status::feasible;
    case solve_status::infeasible: return devplace::status::infeasible;
    case solve_status::time_limit: return devplace::status::time_limit;
    case solve_status::unbounded:
    case solve_status::error: break;
  }
  throw std::runtime_error("ilp: the " + (s.solver.empty() ? std::string("solver") : s.solver) + " solve ended with " +
                           std::string(to_string(s.status)) + (s.message.empty() ? "" : ": " + s.message));
}

}  // namespace devplace::ilp
