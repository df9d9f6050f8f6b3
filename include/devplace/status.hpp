#pragma once
/// \file status.hpp
/// The outcome vocabulary shared by every algorithm. Algorithmic outcomes (infeasible, a limit
/// was reached, timed out) are values of `status` in a result, never exceptions.
#include <string_view>

namespace devplace {

enum class status {
  optimal,        ///< a solution was found and proved optimal under the algorithm's cost model
  feasible,       ///< a solution was found; optimality was not proved
  infeasible,     ///< proved that no solution satisfies the constraints
  limit_reached,  ///< a caller-given size limit (e.g. number of down-sets) stopped the work
  timed_out,      ///< the time limit stopped the work (a solution may still be attached)
  cycle_detected  ///< the input graph is not acyclic
};

[[nodiscard]] constexpr std::string_view to_string(status s) noexcept {
  switch (s) {
    case status::optimal: return "optimal";
    case status::feasible: return "feasible";
    case status::infeasible: return "infeasible";
    case status::limit_reached: return "limit_reached";
    case status::timed_out: return "timed_out";
    case status::cycle_detected: return "cycle_detected";
  }
  return "unknown";
}

/// True when the status carries a usable solution.
[[nodiscard]] constexpr bool has_solution(status s) noexcept {
  return s == status::optimal || s == status::feasible;
}

}  // namespace devplace
