#pragma once
/// \file map/detail/search_state.hpp
/// The state of one depth-first search of `mapping_search` (Algorithm 2) at a target t: the
/// devices each vertex may take at t and the groups of vertices with equal device sets, the
/// partial mapping with its used-device bitset, the candidate lists of every level, and the
/// counting (Hall) check that the free devices can still host the vertices left to place.
/// Independent of the cost model, so it is not a template.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"

namespace devplace::detail {

/// One candidate device of a level, in the order the search tries them.
struct mapping_candidate {
  double key;  // ordering: onward moves (allreduce), then the own time, then the device
  double x;    // the own time (or bound) of the vertex on d
  std::size_t d;
  bool operator<(const mapping_candidate& o) const noexcept {
    return key != o.key ? key < o.key : x != o.x ? x < o.x : d < o.d;
  }
};

/// Everything one depth-first search at target t works on. Device sets are bitsets of
/// `words` 64-bit words per vertex.
struct mapping_search_state {
  double t = 0;
  bool warnsdorff = false;
  std::uint64_t shuffle = 0;  ///< nonzero: the seed of a randomised value order (a restart)
  // per-target static data: the devices each vertex may take (b(v, d) ≤ t) and, for the others,
  // the smallest b(v, d) > t; vertices with equal device sets form groups
  std::vector<std::uint64_t> allowed;
  std::vector<double> above;
  std::vector<std::size_t> group, group_rep, group_size;
  std::vector<double> group_above;
  std::vector<std::size_t> groups_by_freedom;  // group ids, fewest allowed devices first
  std::vector<std::uint64_t> reach;            // Warnsdorff: devices reachable within t (built-in models)
  bool reach_ready = false;
  std::vector<std::uint64_t> free_union;       // scratch of the counting check
  std::vector<std::size_t> free_cands;         // scratch of the free-link checks
  // the partial mapping
  std::vector<std::size_t> dev;
  std::vector<std::uint64_t> used;
  std::vector<double> tp;  // t_p after each level
  std::vector<std::vector<mapping_candidate>> cands;
  std::vector<std::size_t> next;
  std::vector<std::size_t> left;  // vertices of each group still to place
  /// The smallest value that pruned the search so far: a complete failure proves every
  /// mapping has objective ≥ it.
  double smallest_pruning_value = std::numeric_limits<double>::infinity();
  void pruned_by(double x) noexcept { smallest_pruning_value = std::min(smallest_pruning_value, x); }

  [[nodiscard]] bool is_used(std::size_t d) const noexcept { return (used[d / 64] >> (d % 64)) & 1u; }
  /// Places vertex v (of group `g`) on device d.
  void occupy(std::size_t v, std::size_t d, std::size_t g) noexcept {
    dev[v] = d;
    used[d / 64] |= std::uint64_t{1} << (d % 64);
    --left[g];
  }
  /// Takes vertex v (of group `g`) off its device.
  void release(std::size_t v, std::size_t g) noexcept {
    const std::size_t d = dev[v];
    dev[v] = unplaced;
    used[d / 64] &= ~(std::uint64_t{1} << (d % 64));
    ++left[g];
  }
};

/// The allowed devices of every vertex at target `st.t` (every device when `extra_pruning` is
/// off), and for every vertex the smallest bound above the target.
template <int = 0>
void compute_allowed_devices(mapping_search_state& st, const device_bound_table& table, std::size_t vertices,
                                    std::size_t devices, std::size_t words, bool extra_pruning) {
  const std::size_t V = vertices, D = devices, W = words;
  st.allowed.assign(V * W, 0);
  st.above.assign(V, std::numeric_limits<double>::infinity());
  for (std::size_t v = 0; v < V; ++v)
    for (std::size_t d = 0; d < D; ++d) {
      const double b = table(v, d);
      if (!extra_pruning || b <= st.t) st.allowed[v * W + d / 64] |= std::uint64_t{1} << (d % 64);
      else st.above[v] = std::min(st.above[v], b);
    }
}

/// Groups the vertices by equal allowed sets (after `compute_allowed_devices` and any filtering),
/// fewest allowed devices first.
template <int = 0>
void group_allowed_devices(mapping_search_state& st, std::size_t vertices, std::size_t words) {
  const std::size_t V = vertices, W = words;
  st.group.assign(V, unplaced);
  auto same_set = [&](std::size_t v, std::size_t u) {
    return std::equal(st.allowed.begin() + static_cast<std::ptrdiff_t>(v * W),
                      st.allowed.begin() + static_cast<std::ptrdiff_t>(v * W + W),
                      st.allowed.begin() + static_cast<std::ptrdiff_t>(u * W));
  };
  for (std::size_t v = 0; v < V; ++v) {
    for (std::size_t k = 0; k < st.group_rep.size() && st.group[v] == unplaced; ++k)
      if (same_set(v, st.group_rep[k])) {
        st.group[v] = k;
        ++st.group_size[k];
        st.group_above[k] = std::min(st.group_above[k], st.above[v]);
      }
    if (st.group[v] == unplaced) {
      st.group[v] = st.group_rep.size();
      st.group_rep.push_back(v);
      st.group_size.push_back(1);
      st.group_above.push_back(st.above[v]);
    }
  }
  st.groups_by_freedom.resize(st.group_rep.size());
  std::iota(st.groups_by_freedom.begin(), st.groups_by_freedom.end(), std::size_t{0});
  auto allowed_count = [&](std::size_t k) {
    std::size_t c = 0;
    for (std::size_t w = 0; w < W; ++w) c += static_cast<std::size_t>(std::popcount(st.allowed[st.group_rep[k] * W + w]));
    return c;
  };
  std::stable_sort(st.groups_by_freedom.begin(), st.groups_by_freedom.end(),
                   [&](std::size_t a, std::size_t b) { return allowed_count(a) < allowed_count(b); });
}

/// The counting (Hall) check: the free devices can still host the vertices left to place,
/// group by group and for every union of groups taken fewest-devices first. On failure, records
/// the value that pruned (`pruned_by`).
template <int = 0>
[[nodiscard]] bool free_devices_suffice(mapping_search_state& st, std::size_t words) {
  const std::size_t W = words;
  st.free_union.assign(W, 0);
  std::size_t need = 0;
  double worst = std::numeric_limits<double>::infinity();
  for (auto k : st.groups_by_freedom) {
    if (st.left[k] == 0) continue;
    need += st.left[k];
    worst = std::min(worst, st.group_above[k]);
    std::size_t own = 0, all = 0;
    const std::uint64_t* a = &st.allowed[st.group_rep[k] * W];
    for (std::size_t w = 0; w < W; ++w) {
      const std::uint64_t f = a[w] & ~st.used[w];
      own += static_cast<std::size_t>(std::popcount(f));
      st.free_union[w] |= f;
      all += static_cast<std::size_t>(std::popcount(st.free_union[w]));
    }
    if (own < st.left[k]) {
      st.pruned_by(st.group_above[k]);
      return false;
    }
    if (all < need) {
      st.pruned_by(worst);
      return false;
    }
  }
  return true;
}

}  // namespace devplace::detail
