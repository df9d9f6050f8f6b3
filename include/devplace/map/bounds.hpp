#pragma once
/// \file map/bounds.hpp
/// Lower bounds of the mapping objective (seed-parmesan.md §7.5).
///
/// Per-device bound b(v, d): the least time G' vertex v can have on device d, whatever the other
/// vertices' devices — `model.bound` with v alone placed (eq. 10/11 for the paper's models).
///   sorting_lower_bound     = max_v min_d b(v, d)                                 (eq. 10 / 11)
///   assignment_lower_bound  = min over injective p of max_v b(v, p(v))            (≥ eq. 10/11)
/// Both are ≤ the optimum (Prop. 1). The sorting-based approach, the bottleneck assignment and
/// their cost: docs/mapping.md, "Bounds".
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

/// b(v, d) for every G' vertex v and device d, row-major (V rows of D). `complete` is false when
/// a deadline stopped the table early (the rows not computed are 0: still lower bounds).
struct device_bound_table {
  std::size_t vertices = 0, devices = 0;
  std::vector<double> value;
  bool complete = true;
  [[nodiscard]] double operator()(std::size_t v, std::size_t d) const noexcept { return value[v * devices + d]; }
};

/// The table of `model.bound` with each vertex alone placed: O(V·D) bounds, or O(S·D) when the
/// model says its bound is the same for every replica of a stage (`replica_invariant_bound`).
/// Stops at `deadline` (checked per row) with `complete = false`.
template <mapping_cost_model C>
[[nodiscard]] device_bound_table make_device_bound_table(
    const stage_graph& g, const link_costs& L, const C& model,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  device_bound_table t{g.vertices(), L.devices(), {}};
  t.value.assign(t.vertices * t.devices, 0.0);
  std::vector<std::size_t> dev(g.vertices(), unplaced);
  const bool per_stage = model_replica_invariant_bound(model, g);
  for (std::size_t v = 0; v < t.vertices; ++v) {
    if (std::chrono::steady_clock::now() >= deadline) {
      t.complete = false;
      std::fill(t.value.begin() + static_cast<std::ptrdiff_t>(v * t.devices), t.value.end(), 0.0);
      return t;
    }
    const std::size_t s = g.stage_of_vertex(v), first = g.vertex(s, 0);
    if (per_stage && v != first) {  // the stage's first replica has its row already
      std::copy_n(t.value.begin() + static_cast<std::ptrdiff_t>(first * t.devices), t.devices,
                  t.value.begin() + static_cast<std::ptrdiff_t>(v * t.devices));
      continue;
    }
    for (std::size_t d = 0; d < t.devices; ++d) {
      dev[v] = d;
      t.value[v * t.devices + d] = static_cast<double>(model.bound(g, L, std::span<const std::size_t>(dev), v));
    }
    dev[v] = unplaced;
  }
  return t;
}

/// max_v min_d b(v, d): eq. 10 under p2p_cost, eq. 11 under allreduce_cost.
[[nodiscard]] inline double sorting_lower_bound(const device_bound_table& t) {
  double lb = 0;
  for (std::size_t v = 0; v < t.vertices; ++v) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < t.devices; ++d) best = std::min(best, t(v, d));
    lb = std::max(lb, best);
  }
  return lb;
}

template <mapping_cost_model C>
[[nodiscard]] double sorting_lower_bound(const stage_graph& g, const link_costs& L, const C& model) {
  return sorting_lower_bound(make_device_bound_table(g, L, model));
}

/// Eq. 10: the p2p lower bound t_l0^m.
[[nodiscard]] inline double p2p_lower_bound(const stage_graph& g, const link_costs& L) {
  return sorting_lower_bound(g, L, p2p_cost{});
}
/// Eq. 11: the allreduce lower bound t_l0^AR.
[[nodiscard]] inline double allreduce_lower_bound(const stage_graph& g, const link_costs& L) {
  return sorting_lower_bound(g, L, allreduce_cost{});
}

namespace detail {

/// Groups of vertices whose rows of the table are identical: (representative vertex, count).
/// Past `deadline` the remaining vertices are groups of their own (a finer grouping, same answer).
template <int = 0>
std::vector<std::pair<std::size_t, std::size_t>> identical_rows(
    const device_bound_table& t, std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  bool late = false;
  for (std::size_t v = 0; v < t.vertices; ++v) {
    bool placed = false;
    late = late || std::chrono::steady_clock::now() >= deadline;
    if (!late)
      for (auto& [rep, n] : groups)
        if (std::equal(t.value.begin() + static_cast<std::ptrdiff_t>(rep * t.devices),
                       t.value.begin() + static_cast<std::ptrdiff_t>(rep * t.devices + t.devices),
                       t.value.begin() + static_cast<std::ptrdiff_t>(v * t.devices))) {
          ++n;
          placed = true;
          break;
        }
    if (!placed) groups.emplace_back(v, 1);
  }
  return groups;
}

/// The most groups whose fit is decided by Hall's condition over every subset of groups (2^G
/// unions of device bitsets) rather than by augmenting paths.
inline constexpr std::size_t hall_max_groups = 12;

/// Hall's theorem for the groups: they fit iff every subset X of groups has at least Σ_X count
/// devices allowed to one of its members. O(2^G · D/64) words, exact (same answer as matching).
template <int = 0>
bool groups_fit_hall(const device_bound_table& t, const std::vector<std::pair<std::size_t, std::size_t>>& groups,
                            double theta) {
  const std::size_t G = groups.size(), W = (t.devices + 63) / 64;
  std::vector<std::uint64_t> allowed(G * W, 0);
  for (std::size_t i = 0; i < G; ++i)
    for (std::size_t d = 0; d < t.devices; ++d)
      if (t(groups[i].first, d) <= theta) allowed[i * W + d / 64] |= std::uint64_t{1} << (d % 64);
  std::vector<std::uint64_t> uni((std::size_t{1} << G) * W, 0);  // union of the allowed devices of subset X
  std::vector<std::size_t> need(std::size_t{1} << G, 0);
  for (std::size_t X = 1; X < (std::size_t{1} << G); ++X) {
    const std::size_t i = static_cast<std::size_t>(std::countr_zero(X)), rest = X & (X - 1);
    need[X] = need[rest] + groups[i].second;
    std::size_t have = 0;
    for (std::size_t w = 0; w < W; ++w) {
      uni[X * W + w] = uni[rest * W + w] | allowed[i * W + w];
      have += static_cast<std::size_t>(std::popcount(uni[X * W + w]));
    }
    if (have < need[X]) return false;
  }
  return true;
}

/// The same by augmenting paths over the devices (any number of groups); nothing when
/// `deadline` passed before it was settled.
template <int = 0>
std::optional<bool> groups_fit_augmenting(const device_bound_table& t,
                                                 const std::vector<std::pair<std::size_t, std::size_t>>& groups,
                                                 double theta, std::chrono::steady_clock::time_point deadline) {
  const std::size_t D = t.devices;
  std::vector<std::size_t> owner(D, unplaced);
  std::vector<char> seen(D, 0);
  std::function<bool(std::size_t)> augment = [&](std::size_t gi) -> bool {
    const std::size_t rep = groups[gi].first;
    for (std::size_t d = 0; d < D; ++d) {
      if (seen[d] || t(rep, d) > theta) continue;
      seen[d] = 1;
      if (owner[d] == unplaced || augment(owner[d])) {
        owner[d] = gi;
        return true;
      }
    }
    return false;
  };
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (std::size_t k = 0; k < groups[gi].second; ++k) {
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::fill(seen.begin(), seen.end(), 0);
      if (!augment(gi)) return false;
    }
  return true;
}

/// Whether every group can get `count` distinct devices d with b(rep, d) ≤ theta; nothing when
/// `deadline` passed before it was settled.
template <int = 0>
std::optional<bool> groups_fit(const device_bound_table& t,
                                      const std::vector<std::pair<std::size_t, std::size_t>>& groups, double theta,
                                      std::chrono::steady_clock::time_point deadline) {
  if (groups.size() <= hall_max_groups) return groups_fit_hall(t, groups, theta);
  return groups_fit_augmenting(t, groups, theta, deadline);
}

}  // namespace detail

/// The bottleneck-assignment bound: min over injective p of max_v b(v, p(v)); +inf if the
/// vertices outnumber the devices. A binary search over the table's values; when `deadline`
/// stops it, the smallest value not yet ruled out (≥ the sorting bound, still a lower bound).
template <int = 0>
[[nodiscard]] double assignment_lower_bound(
    const device_bound_table& t, std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  if (t.vertices > t.devices) return std::numeric_limits<double>::infinity();
  if (t.vertices == 0) return 0.0;
  const auto groups = detail::identical_rows(t, deadline);
  std::vector<double> values;
  values.reserve(groups.size() * t.devices);
  for (auto [rep, n] : groups)
    for (std::size_t d = 0; d < t.devices; ++d) values.push_back(t(rep, d));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::size_t hi = values.size() - 1;  // values[hi] always fits (every device allowed)
  // the answer is at least the sorting bound: start there
  auto lo = static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), sorting_lower_bound(t)) - values.begin());
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const auto fit = detail::groups_fit(t, groups, values[mid], deadline);
    if (!fit) break;  // out of time: values[lo] is not ruled out, a valid bound
    if (*fit) hi = mid;
    else lo = mid + 1;
  }
  return values[lo];
}

template <mapping_cost_model C>
[[nodiscard]] double assignment_lower_bound(const stage_graph& g, const link_costs& L, const C& model) {
  return assignment_lower_bound(make_device_bound_table(g, L, model));
}

}  // namespace devplace
