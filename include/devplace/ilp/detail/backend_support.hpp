#pragma once
/// \file ilp/detail/backend_support.hpp
/// What every backend does the same way around its solver call (private to ilp/backends/): the
/// feasibility test of a MIP start, keeping a proved bound on the incumbent's side, and returning
/// the start when a time limit stopped the solver before it had a solution.
#include <algorithm>
#include <cmath>

#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"

namespace devplace::ilp::detail {

/// True when `o.start` has one value per column of a non-empty `m` and is feasible for it.
[[nodiscard]] inline bool feasible_start(const model& m, const solve_options& o) {
  return o.start.size() == m.num_vars() && m.num_vars() > 0 && m.max_violation(o.start) <= 1e-9;
}

/// A bound never beats the incumbent: clamps `s.best_bound` to `s.objective` (when both are known).
inline void clamp_bound(const model& m, solution& s) {
  if (std::isnan(s.best_bound) || std::isnan(s.objective)) return;
  s.best_bound = m.sense() == objective_sense::minimize ? std::min(s.best_bound, s.objective)
                                                        : std::max(s.best_bound, s.objective);
}

/// A solve stopped by its time limit before it had a solution still has the feasible start as
/// its incumbent: put it in `s`.
inline void keep_start(const model& m, const solve_options& o, solution& s) {
  if (s.has_values() || s.status != solve_status::time_limit || !feasible_start(m, o)) return;
  s.values = o.start;
  s.objective = m.objective_value(s.values);
  clamp_bound(m, s);
}

}  // namespace devplace::ilp::detail
