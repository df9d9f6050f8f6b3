#pragma once
/// \file map/detail/event_bisection.hpp
/// The bisection shared by the component bounds (map/ring_bound.hpp, map/copy_bound.hpp): a
/// condition that fails at `lo` and holds at `hi` and changes only at the test's event values
/// (`next_event(t)`: the least value above t at which it can change). Private helper.
#include <algorithm>
#include <chrono>

namespace devplace::detail {

/// Narrows [lo, hi] (failing at lo, holding at hi) by at most 100 tests of `test.holds`, never
/// testing between two events, until the deadline; returns the next event above the largest
/// failing value found (≤ hi): no value below it passes.
template <class Test>
[[nodiscard]] double bisect_events(const Test& test, double lo, double hi, std::chrono::steady_clock::time_point deadline) {
  for (int it = 0; it < 100 && std::chrono::steady_clock::now() < deadline; ++it) {
    const double next = test.next_event(lo);
    if (next >= hi) break;
    const double mid = std::max(next, lo + (hi - lo) / 2);
    if (mid >= hi) break;
    if (test.holds(mid)) hi = mid;
    else lo = mid;
  }
  return std::max(lo, std::min(test.next_event(lo), hi));
}

}  // namespace devplace::detail
