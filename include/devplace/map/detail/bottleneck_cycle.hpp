#pragma once
/// \file map/detail/bottleneck_cycle.hpp
/// The cycle through n items whose largest link cost is least (a bottleneck travelling-salesman
/// tour): Held–Karp over the subsets that hold item 0, with max instead of +, then a walk back.
/// O(2^n · n²) time, O(2^n · n) memory; the line ring cover calls it with n = R ≤ 12.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace devplace::detail {

/// The least largest cost w(i, j) along a cycle through items 0..n−1 (w(i, j) for the link from
/// i to j), and such a cycle as the items in order from item 0; {+inf, {}} when n < 2 or every
/// cycle has an infinite link.
template <class Cost>
[[nodiscard]] std::pair<double, std::vector<std::size_t>> min_bottleneck_cycle(std::size_t n, Cost&& w) {
  const double inf = std::numeric_limits<double>::infinity();
  if (n < 2) return {inf, {}};
  const std::size_t full = (std::size_t{1} << n) - 1;
  std::vector<double> best((full + 1) * n, inf);  // [mask · n + j]: path from item 0 over mask to j
  best[1 * n + 0] = 0;
  for (std::size_t mask = 1; mask <= full; mask += 2)
    for (std::size_t j = 0; j < n; ++j) {
      const double b = best[mask * n + j];
      if (b == inf) continue;
      for (std::size_t k = 1; k < n; ++k)
        if (!((mask >> k) & 1u)) {
          auto& x = best[(mask | (std::size_t{1} << k)) * n + k];
          x = std::min(x, std::max(b, w(j, k)));
        }
    }
  double W = inf;
  std::size_t last = 0;
  for (std::size_t j = 1; j < n; ++j)
    if (const double c = std::max(best[full * n + j], w(j, 0)); c < W) W = c, last = j;
  if (W == inf) return {inf, {}};
  // walk back: a predecessor whose path and link stay within the path's value
  std::vector<std::size_t> order(n, 0);
  std::size_t mask = full, j = last;
  for (std::size_t q = n; q-- > 1;) {
    order[q] = j;
    const std::size_t prev = mask & ~(std::size_t{1} << j);
    for (std::size_t i = 0; i < n; ++i)
      if (((prev >> i) & 1u) && std::max(best[prev * n + i], w(i, j)) <= best[mask * n + j]) {
        mask = prev, j = i;
        break;
      }
  }
  return {W, std::move(order)};
}

}  // namespace devplace::detail
