#pragma once
/// \file map/symmetry.hpp
/// Device symmetries of a topology, for sound symmetry breaking in the mapper.
///
/// An automorphism of a topology is a permutation σ of the devices with w(σa, σb) = w(a, b) and
/// latency(σa, σb) = latency(a, b) for all pairs: relabelling a mapping by σ leaves every stage
/// time, hence the objective, unchanged (for any cost model that reads devices only through the
/// link costs). Two kinds are used:
///   * twins: devices d < d' whose swap is an automorphism (identical rows and columns, e.g. the
///     GPUs of one node of a two-level system). Found exactly, O(D²) typical, O(D³) worst.
///   * orbits of the automorphism group and of the stabiliser of one device (mesh, torus, the
///     nodes of a cluster). Found by a bounded backtracking search for automorphisms; only verified
///     automorphisms merge orbits, so the orbits found are a refinement of the true ones (sound).
/// The mapper turns them into lex-leader constraints over its fixed mapping order (docs/mapping.md).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "devplace/map/cost_models.hpp"

namespace devplace {

using symmetry_clock = std::chrono::steady_clock;

namespace detail {

template <int = 0>
bool same_link(const link_costs& L, std::size_t a, std::size_t b, std::size_t c, std::size_t d) {
  return L.ms_per_byte(a, b) == L.ms_per_byte(c, d) && L.latency_ms(a, b) == L.latency_ms(c, d);
}

/// A cheap invariant of a device: its sorted outgoing and incoming link rows, then its sorted
/// outgoing and incoming latencies.
template <int = 0>
std::vector<double> device_signature(const link_costs& L, std::size_t a) {
  std::vector<double> s, l;
  s.reserve(4 * L.devices());
  for (std::size_t x = 0; x < L.devices(); ++x)
    if (x != a) s.push_back(L.ms_per_byte(a, x)), s.push_back(L.ms_per_byte(x, a));
  for (std::size_t x = 0; x < L.devices(); ++x)
    if (x != a) l.push_back(L.latency_ms(a, x)), l.push_back(L.latency_ms(x, a));
  std::sort(s.begin(), s.end());
  std::sort(l.begin(), l.end());
  s.insert(s.end(), l.begin(), l.end());
  return s;
}

}  // namespace detail

/// Devices numbered by the class of their signature (sorted link rows and latencies): devices of
/// different classes are in different orbits. Equal 64-bit hashes are confirmed by comparing the
/// signatures themselves, so the classes are exact. O(D² log D) time, memory O(D) beyond one
/// signature per class met twice. Past `deadline` the devices left get classes of their own
/// (finer classes: sound, fewer symmetries found).
template <int = 0>
[[nodiscard]] std::vector<std::size_t> device_signature_classes(
    const link_costs& L, symmetry_clock::time_point deadline = symmetry_clock::time_point::max()) {
  const std::size_t D = L.devices();
  std::vector<std::size_t> cls(D, 0);
  struct known {
    std::uint64_t hash;
    std::size_t id, rep;
    std::vector<double> signature;  // filled when a second device has this hash
  };
  std::vector<known> classes;  // sorted by hash
  std::size_t next_id = 0;
  for (std::size_t a = 0; a < D; ++a) {
    if (symmetry_clock::now() >= deadline) {
      for (; a < D; ++a) cls[a] = next_id++;
      break;
    }
    auto sig = detail::device_signature(L, a);
    std::uint64_t h = 1469598103934665603ull;
    for (double x : sig) h = (h ^ std::bit_cast<std::uint64_t>(x + 0.0)) * 1099511628211ull;
    auto it = std::lower_bound(classes.begin(), classes.end(), h, [](const known& k, std::uint64_t v) { return k.hash < v; });
    auto j = it;  // the class of an equal signature among those of hash h, if any
    for (; j != classes.end() && j->hash == h; ++j) {
      if (j->signature.empty()) j->signature = detail::device_signature(L, j->rep);
      if (j->signature == sig) break;
    }
    if (j != classes.end() && j->hash == h) {
      cls[a] = j->id;
    } else {
      cls[a] = next_id++;
      classes.insert(it, known{h, cls[a], a, {}});
    }
  }
  return cls;
}

/// For every device d, the next smaller device whose swap with d is an automorphism (`unplaced`
/// if none). Twins form cliques, so this chains each class in index order. Past `deadline` the
/// devices left get no twin (sound).
template <int = 0>
[[nodiscard]] std::vector<std::size_t> device_twins(const link_costs& L,
                                                           symmetry_clock::time_point deadline = symmetry_clock::time_point::max()) {
  const std::size_t D = L.devices();
  std::vector<std::size_t> prev(D, unplaced);
  auto twins = [&](std::size_t a, std::size_t b) {
    if (!detail::same_link(L, a, b, b, a)) return false;
    for (std::size_t x = 0; x < D; ++x) {
      if (x == a || x == b) continue;
      if (!detail::same_link(L, a, x, b, x) || !detail::same_link(L, x, a, x, b)) return false;
    }
    return true;
  };
  std::vector<std::size_t> last_of_class;  // last member of each class found so far, by class
  std::vector<std::size_t> class_rep;
  for (std::size_t d = 0; d < D; ++d) {
    if (symmetry_clock::now() >= deadline) break;
    const auto k = static_cast<std::size_t>(
        std::find_if(class_rep.begin(), class_rep.end(), [&](std::size_t c) { return twins(c, d); }) - class_rep.begin());
    if (k < class_rep.size()) prev[d] = std::exchange(last_of_class[k], d);
    else class_rep.push_back(d), last_of_class.push_back(d);
  }
  return prev;
}

/// Searches for an automorphism σ with σ(a) = b for every pair (a, b) of `fixed`, spending at most
/// `budget` link comparisons (decremented), mapping devices only within their signature class
/// (`device_signature_classes`). Returns σ, or nothing if none exists, the budget ran out or
/// `deadline` passed.
template <int = 0>
[[nodiscard]] std::optional<std::vector<std::size_t>> find_automorphism(
    const link_costs& L, const std::vector<std::size_t>& cls, const std::vector<std::pair<std::size_t, std::size_t>>& fixed,
    std::uint64_t& budget, symmetry_clock::time_point deadline = symmetry_clock::time_point::max()) {
  const std::size_t D = L.devices();
  std::vector<std::size_t> sigma(D, unplaced), inv(D, unplaced), mapped;  // mapped: domain in order
  std::uint64_t until_clock = 4096;
  auto spend = [&] {  // one link comparison; false when the budget or the time is spent
    if (budget == 0) return false;
    --budget;
    if (--until_clock == 0) {
      until_clock = 4096;
      if (symmetry_clock::now() >= deadline) return budget = 0, false;
    }
    return true;
  };
  // x ↦ y against the links of the devices mapped so far: 1 kept, 0 not, -1 budget or time spent
  auto consistent = [&](std::size_t x, std::size_t y) {
    for (auto z : mapped) {
      if (!spend()) return -1;
      if (!detail::same_link(L, x, z, y, sigma[z]) || !detail::same_link(L, z, x, sigma[z], y)) return 0;
    }
    return 1;
  };
  for (auto [a, b] : fixed) {
    if (cls[a] != cls[b]) return std::nullopt;
    if (sigma[a] != unplaced || inv[b] != unplaced) {
      if (sigma[a] != b) return std::nullopt;
      continue;
    }
    if (consistent(a, b) != 1) return std::nullopt;
    sigma[a] = b, inv[b] = a, mapped.push_back(a);
  }
  // the devices of each class, in index order: x is only tried on devices y of its class
  std::vector<std::size_t> class_start(D + 1, 0), by_class(D);
  for (std::size_t x = 0; x < D; ++x) ++class_start[cls[x] + 1];
  for (std::size_t c = 0; c < D; ++c) class_start[c + 1] += class_start[c];
  {
    std::vector<std::size_t> fill(class_start.begin(), class_start.end() - 1);
    for (std::size_t x = 0; x < D; ++x) by_class[fill[cls[x]]++] = x;
  }
  std::vector<std::size_t> todo;  // the devices left to map, in index order
  for (std::size_t x = 0; x < D; ++x)
    if (sigma[x] == unplaced) todo.push_back(x);
  std::vector<std::size_t> next_y(todo.size() + 1, 0);  // position in x's class
  std::size_t k = 0;  // index into todo
  while (k < todo.size()) {
    const std::size_t x = todo[k];
    const std::size_t c0 = class_start[cls[x]], c1 = class_start[cls[x] + 1];
    bool placed = false;
    for (std::size_t& i = next_y[k]; c0 + i < c1; ++i) {
      const std::size_t y = by_class[c0 + i];
      if (inv[y] != unplaced) continue;
      const int ok = consistent(x, y);
      if (ok < 0) return std::nullopt;
      if (ok == 0) continue;
      sigma[x] = y, inv[y] = x, mapped.push_back(x);
      ++i;
      placed = true;
      break;
    }
    if (placed) {
      ++k;
      if (k < next_y.size()) next_y[k] = 0;
      continue;
    }
    if (k == 0) return std::nullopt;  // exhausted
    --k;
    const std::size_t px = todo[k];
    inv[sigma[px]] = unplaced, sigma[px] = unplaced, mapped.pop_back();
  }
  return sigma;
}

/// For every device, the smallest device known to be in its orbit under the automorphisms that
/// fix every device of `fixed_points` (found within `budget` link comparisons and before
/// `deadline`; devices whose orbit could not be settled stay alone, which is sound for lex-leader
/// symmetry breaking).
template <int = 0>
[[nodiscard]] std::vector<std::size_t> device_orbit_minima(const link_costs& L, const std::vector<std::size_t>& cls,
                                                                  const std::vector<std::size_t>& fixed_points,
                                                                  std::uint64_t& budget,
                                                                  symmetry_clock::time_point deadline = symmetry_clock::time_point::max()) {
  const std::size_t D = L.devices();
  std::vector<std::size_t> parent(D);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](std::size_t a, std::size_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the root is the orbit minimum
  };
  std::vector<char> is_fixed(D, 0);
  for (auto f : fixed_points) is_fixed[f] = 1;
  std::vector<std::vector<std::size_t>> members(D);  // the devices of each class met so far, in index order
  for (std::size_t b = 0; b < D && budget > 0; ++b) {
    if (symmetry_clock::now() >= deadline) break;
    auto& same = members[cls[b]];
    const bool candidate = !is_fixed[b] && find(b) == b;
    if (candidate)
      for (std::size_t a : same) {  // a < b, same class
        if (budget == 0) break;
        if (is_fixed[a] || find(a) != a) continue;
        std::vector<std::pair<std::size_t, std::size_t>> pairs;
        for (auto f : fixed_points) pairs.emplace_back(f, f);
        pairs.emplace_back(a, b);
        if (auto sigma = find_automorphism(L, cls, pairs, budget, deadline)) {
          for (std::size_t x = 0; x < D; ++x) unite(x, (*sigma)[x]);
          break;
        }
      }
    same.push_back(b);
  }
  std::vector<std::size_t> m(D);
  for (std::size_t x = 0; x < D; ++x) m[x] = find(x);
  return m;
}

}  // namespace devplace
