#pragma once
/// \file status.hpp
/// The outcome vocabulary shared by every algorithm, the ILP decoders and the plan files.
/// Algorithmic outcomes (infeasible, a limit stopped the work) are values of `status` in a result,
/// never exceptions.
///
/// A status says *why the run ended* and what it proved; it does not say whether the result
/// carries a solution. A run stopped by a limit may still return its best solution so far: ask the
/// result (`r.has_solution()`: a non-empty `stage_of` / `device_of`), not the status.
///
///   optimal       ended by proving its solution optimal (under the algorithm's cost model)
///   feasible      ended with a solution whose optimality it does not claim (a heuristic)
///   infeasible    proved that no solution satisfies the constraints (or the given bound)
///   work_limit    a caller-given size limit (e.g. the number of down-sets) stopped it early
///   time_limit    the time limit stopped it early (the same word as ilp::solve_status)
///   cycle_detected  the input graph is not acyclic
///   pruned        not run: a proved bound shows it cannot beat a solution already found (a
///                 configuration skipped by a bound-pruned search; it may well be feasible)
#include <string_view>

namespace devplace {

enum class status {
  optimal,
  feasible,
  infeasible,
  work_limit,
  time_limit,
  cycle_detected,
  pruned,
  limit_reached [[deprecated("use status::work_limit")]] = work_limit,
  timed_out [[deprecated("use status::time_limit")]] = time_limit,
};

[[nodiscard]] constexpr std::string_view to_string(status s) noexcept {
  switch (s) {
    case status::optimal: return "optimal";
    case status::feasible: return "feasible";
    case status::infeasible: return "infeasible";
    case status::work_limit: return "work_limit";
    case status::time_limit: return "time_limit";
    case status::cycle_detected: return "cycle_detected";
    case status::pruned: return "pruned";
  }
  return "unknown";
}

/// True when a limit (time or work) stopped the run before it could finish.
[[nodiscard]] constexpr bool stopped_early(status s) noexcept {
  return s == status::work_limit || s == status::time_limit;
}

/// True when the status itself guarantees a solution: `optimal` or `feasible`. A run that stopped
/// early may carry one too: prefer the result's own `has_solution()`.
[[nodiscard]] constexpr bool has_solution(status s) noexcept {
  return s == status::optimal || s == status::feasible;
}

}  // namespace devplace
