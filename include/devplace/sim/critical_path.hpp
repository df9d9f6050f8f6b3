#pragma once
/// \file sim/critical_path.hpp
/// `critical_path(result)`: the chain of simulated tasks that sets the iteration time.
///
/// Every event of a simulated timeline starts when the event named by `sim_event::after` ends
/// (its latest dependency, or the link's previous transfer it waited for), or at 0 when it has
/// none. Walking `after` back from the event that ends last gives a chain e_1, ..., e_k with
/// start(e_1) = 0, start(e_i) = end(e_{i−1}) and end(e_k) = the last end, so
///
///     Σ_i (end(e_i) − start(e_i)) = iteration_ms − update_ms,
///
/// the longest path through the task graph whose edges are the dependencies, the order of each
/// device's tasks and the order of each link's transfers. Shortening any task off this chain
/// leaves the iteration as long; shortening one on it is the only way to shorten the iteration.
///
/// Complexity: O(T) for T timeline events.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/sim/pipeline_simulator.hpp"

namespace devplace {

/// The timeline indices of a critical path of `r`, first task first; empty for an empty timeline.
/// Throws std::invalid_argument when an `after` index is out of range or does not point to an
/// earlier-ending event (a timeline not produced by `simulate`).
[[nodiscard]] inline std::vector<std::size_t> critical_path(const simulation_result& r) {
  std::vector<std::size_t> path;
  if (r.timeline.empty()) return path;
  std::size_t last = 0;
  for (std::size_t i = 1; i < r.timeline.size(); ++i)
    if (r.timeline[i].end_ms > r.timeline[last].end_ms) last = i;
  for (std::size_t i = last; i != sim_event::none; i = r.timeline[i].after) {
    if (i >= r.timeline.size() || path.size() == r.timeline.size())
      throw std::invalid_argument("critical_path: timeline event " + std::to_string(path.empty() ? last : path.back()) +
                                  " names a predecessor that is out of range or on a cycle");
    path.push_back(i);
  }
  for (std::size_t k = 1; k < path.size(); ++k)
    if (r.timeline[path[k]].end_ms > r.timeline[path[k - 1]].start_ms)
      throw std::invalid_argument("critical_path: timeline event " + std::to_string(path[k - 1]) +
                                  " starts before its predecessor " + std::to_string(path[k]) + " ends");
  return {path.rbegin(), path.rend()};
}

/// Σ of the durations of the events on `path` (ms).
[[nodiscard]] inline double path_length_ms(const simulation_result& r, const std::vector<std::size_t>& path) {
  double total = 0;
  for (auto i : path) total += r.timeline.at(i).end_ms - r.timeline.at(i).start_ms;
  return total;
}

}  // namespace devplace
