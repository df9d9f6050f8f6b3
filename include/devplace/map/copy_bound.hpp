#pragma once
/// \file map/copy_bound.hpp
/// The copy-component lower bound of the p2p model, the p2p analogue of the ring-component
/// bound (map/ring_bound.hpp). At a target t, edge e = (s, s') of a copy may use link {a, b} only
/// if its threshold τ_e(a, b) ≤ t; ordering the edges by how many links they may use, the pieces
/// of the R copies at each level must pack into the components of the links allowed so far
/// (`copy_component_test::holds`: count, volume and per-stage conditions). The least t that
/// passes is a lower bound, found by bisection over the event values. The thresholds, the three
/// conditions, soundness and cost: docs/mapping.md, "Bounds" ("Copy-component bound").
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "devplace/detail/disjoint_sets.hpp"
#include "devplace/map/detail/event_bisection.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

namespace detail {

/// The copy-component condition of `copy_component_lower_bound` at targets t.
template <int = 0>
class basic_copy_component_test {
 public:
  using clock = std::chrono::steady_clock;
  /// The most (edge, link) thresholds kept, 16 bytes each: an edge of E keeps its
  /// max_entries / E smallest, and past the last one kept it may use every link (a relaxation).
  static constexpr std::size_t max_entries = std::size_t{1} << 20;

  /// Stage s costs at least offset_ms[s] + its p2p sends (equal replica counts). Past
  /// `deadline` the remaining edges are left out (fewer conditions: still sound). `entries`
  /// replaces `max_entries` (tests).
  basic_copy_component_test(const stage_graph& g, const link_costs& L, std::span<const double> offset_ms,
                      clock::time_point deadline = clock::time_point::max(), std::size_t entries = max_entries)
      : D_(L.devices()), S_(g.stages()), R_(g.replicas()) {
    // b(s, d): offset + eq. 10 without latency, the least time of s on d.
    device_bound_.assign(S_ * D_, 0.0);
    std::size_t E = 0;
    for (std::size_t s = 0; s < S_; ++s) {
      const auto nb = g.neighbours(s);
      E += nb.size();
      for (std::size_t d = 0; d < D_; ++d) {
        const auto ow = L.out_sorted(d);
        double c = offset_ms[s];
        for (std::size_t k = 0; k < nb.size() && k < ow.size(); ++k) c += g.message_bytes(s, nb[k]) * ow[k];
        device_bound_[s * D_ + d] = c;
      }
    }
    bound_values_ = device_bound_;
    std::sort(bound_values_.begin(), bound_values_.end());
    const std::size_t pairs = D_ * (D_ - 1) / 2, keep = std::max<std::size_t>(1, entries / std::max<std::size_t>(E / 2, 1));
    std::vector<double> rest_s, rest_t;
    std::vector<link> all;
    for (std::size_t s = 0; s < S_; ++s)
      for (const std::size_t t : g.neighbours(s)) {
        if (t < s) continue;
        if (clock::now() >= deadline) return;
        const double M = g.message_bytes(s, t);
        rest_table(g, L, s, t, rest_s);
        rest_table(g, L, t, s, rest_t);
        // s on x, t on y: both ends' bounds with e on the link x -> y (y -> x for t).
        auto orient = [&](std::size_t x, std::size_t y) {
          return std::max({device_bound_[s * D_ + x], device_bound_[t * D_ + y],
                           offset_ms[s] + rest_s[x * D_ + y] + M * L.ms_per_byte(x, y),
                           offset_ms[t] + rest_t[y * D_ + x] + M * L.ms_per_byte(y, x)});
        };
        all.clear();
        all.reserve(pairs);
        for (std::size_t a = 0; a < D_; ++a)
          for (std::size_t b = a + 1; b < D_; ++b)
            all.push_back({std::min(orient(a, b), orient(b, a)), static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)});
        const auto by_t = [](const link& p, const link& q) { return p.t < q.t; };
        edge e{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(t), {}, std::numeric_limits<double>::infinity()};
        if (all.size() > keep) {
          std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), by_t);
          all.resize(keep + 1);
          e.every_link = all.back().t;  // the least threshold left out: from it on, every link
          all.pop_back();
        }
        std::sort(all.begin(), all.end(), by_t);
        e.links = all;
        edges_.push_back(std::move(e));
      }
  }

  [[nodiscard]] bool has_edges() const noexcept { return !edges_.empty() && D_ >= 2; }

  /// Any t at which every edge may use every link and every stage every device (the condition
  /// then holds).
  [[nodiscard]] double all_links() const noexcept {
    double t = bound_values_.empty() ? 0.0 : bound_values_.back();
    for (const auto& e : edges_)
      t = std::max(t, std::isfinite(e.every_link) ? e.every_link : e.links.empty() ? 0.0 : e.links.back().t);
    return t;
  }

  /// The smallest value above t at which some edge gains a link or some stage a device (+inf: none).
  [[nodiscard]] double next_event(double t) const {
    double next = std::numeric_limits<double>::infinity();
    if (const auto it = std::upper_bound(bound_values_.begin(), bound_values_.end(), t); it != bound_values_.end())
      next = *it;
    for (const auto& e : edges_) {
      const std::size_t k = prefix(e, t);
      if (k < e.links.size()) next = std::min(next, e.links[k].t);
      else if (t < e.every_link) next = std::min(next, e.every_link);
    }
    return next;
  }

  /// Whether the copies' pieces can be packed into the link components at every level at t.
  [[nodiscard]] bool holds(double t) const {
    const std::size_t E = edges_.size();
    std::vector<std::size_t> pre(E), order(E);
    for (std::size_t i = 0; i < E; ++i) pre[i] = t >= edges_[i].every_link ? D_ * D_ : prefix(edges_[i], t);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pre[a] < pre[b]; });
    disjoint_sets devices(D_), stages(S_);
    std::vector<std::size_t> bins, pieces, room(D_), slots(S_ * D_);
    // Devices on which some stage fits the target (the others hold no vertex at t).
    std::vector<char> usable(D_, 0);
    for (std::size_t s = 0; s < S_; ++s)
      for (std::size_t d = 0; d < D_; ++d) usable[d] = usable[d] || device_bound_[s * D_ + d] <= t;
    // Level i: the links the first i + 1 edges (fewest links first) may use, and their pieces.
    for (std::size_t i = 0; i < E; ++i) {
      const auto& e = edges_[order[i]];
      if (t >= e.every_link) {
        for (std::size_t d = 1; d < D_; ++d) devices.unite(0, d);
      } else {
        for (std::size_t k = 0; k < pre[order[i]]; ++k) devices.unite(e.links[k].a, e.links[k].b);
      }
      if (stages.find(e.a) == stages.find(e.b)) continue;  // same pieces, coarser components: weaker
      stages.unite(e.a, e.b);
      bins.clear();
      pieces.clear();
      std::fill(room.begin(), room.end(), 0);
      std::fill(slots.begin(), slots.end(), 0);
      for (std::size_t d = 0; d < D_; ++d) {
        const std::size_t j = devices.find(d);
        room[j] += usable[d];
        for (std::size_t s = 0; s < S_; ++s) slots[s * D_ + j] += device_bound_[s * D_ + d] <= t;
      }
      for (std::size_t d = 0; d < D_; ++d)
        if (devices.find(d) == d && room[d] > 0) bins.push_back(room[d]);
      for (std::size_t s = 0; s < S_; ++s)
        if (stages.find(s) == s) pieces.push_back(stages.size[s]);
      if (bins.empty() || !packable(pieces, bins)) return false;
      // Stage s: its R pieces of z devices each need a device where s fits, in a component
      // with room for z (at most ⌊room / z⌋ such pieces there).
      for (std::size_t s = 0; s < S_; ++s) {
        const std::size_t z = stages.size[stages.find(s)];
        std::size_t fit = 0;
        for (std::size_t j = 0; j < D_ && fit < R_; ++j)
          if (devices.find(j) == j && room[j] >= z) fit += std::min(room[j] / z, slots[s * D_ + j]);
        if (fit < R_) return false;
      }
    }
    return true;
  }

 private:
  struct link {
    double t;  ///< the least target at which the edge may use this link
    std::uint32_t a, b;
  };
  struct edge {
    std::uint32_t a, b;
    std::vector<link> links;  ///< the links with the smallest thresholds, by t ascending
    double every_link;        ///< from this t on every link (+inf when `links` holds them all)
  };

  /// rest[x · D + y]: the least sends of stage s on device x apart from its edge to stage t, when
  /// that edge takes the link to device y: the other messages, largest first, on the fastest
  /// links out of x other than the one to y (eq. 10 without e, latency dropped).
  void rest_table(const stage_graph& g, const link_costs& L, std::size_t s, std::size_t t,
                  std::vector<double>& rest) const {
    std::vector<double> others;
    for (const std::size_t u : g.neighbours(s))  // largest first
      if (u != t) others.push_back(g.message_bytes(s, u));
    const std::size_t n = others.size();
    rest.assign(D_ * D_, 0.0);
    std::vector<double> before(n + 1, 0.0), after(n + 1, 0.0);
    for (std::size_t x = 0; x < D_; ++x) {
      const auto ow = L.out_sorted(x);
      const auto ox = L.out_sorted_devices(x);
      // before[k] = Σ_{j<k} m_j · w_j; after[k] = Σ_{j≥k} m_j · w_{j+1} (the link to y skipped)
      for (std::size_t j = 0; j < n; ++j) before[j + 1] = before[j] + others[j] * ow[j];
      after[n] = 0;
      for (std::size_t j = n; j-- > 0;) after[j] = after[j + 1] + (j + 1 < ow.size() ? others[j] * ow[j + 1] : 0.0);
      for (std::size_t p = 0; p < ow.size(); ++p) {
        const std::size_t k = std::min(p, n);
        rest[x * D_ + ox[p]] = before[k] + after[k];
      }
    }
  }

  /// The links edge e may use at t: those whose threshold is ≤ t (a prefix of its list).
  [[nodiscard]] static std::size_t prefix(const edge& e, double t) {
    return static_cast<std::size_t>(
        std::partition_point(e.links.begin(), e.links.end(), [&](const link& l) { return l.t <= t; }) - e.links.begin());
  }

  /// The count and volume conditions for R copies of `pieces` (sizes) in bins `bins`.
  [[nodiscard]] bool packable(std::vector<std::size_t>& pieces, std::vector<std::size_t>& bins) const {
    std::sort(pieces.begin(), pieces.end(), std::greater<>());
    std::sort(bins.begin(), bins.end(), std::greater<>());
    if (pieces.front() == 1) return true;  // singletons fit anywhere (S·R ≤ D)
    const std::size_t cmax = bins.front();
    std::vector<char> reach(cmax + 1);
    std::size_t count = 0, volume = 0;
    for (std::size_t i = 0; i < pieces.size() && pieces[i] > 1; ++i) {
      const std::size_t z = pieces[i];
      count += R_;
      volume += R_ * z;
      if (i + 1 < pieces.size() && pieces[i + 1] == z) continue;  // all pieces of size z first
      if (z > cmax) return false;
      // count: at most ⌊c / z⌋ pieces of ≥ z devices in a bin of c
      std::size_t slots = 0;
      for (const std::size_t c : bins) {
        if (c < z) break;
        slots += c / z;
      }
      if (slots < count) return false;
      // volume: g_z(c), the largest sum ≤ c of sizes ≥ z present (unbounded knapsack)
      std::fill(reach.begin(), reach.end(), 0);
      reach[0] = 1;
      for (std::size_t j = 0; j <= i; ++j) {
        if (j > 0 && pieces[j] == pieces[j - 1]) continue;
        for (std::size_t c = pieces[j]; c <= cmax; ++c) reach[c] = reach[c] || reach[c - pieces[j]];
      }
      std::size_t room = 0, best = 0, c_prev = 0;
      for (auto it = bins.rbegin(); it != bins.rend(); ++it) {  // ascending sizes: best reachable ≤ c
        if (*it < z) continue;
        for (std::size_t c = c_prev; c <= *it; ++c)
          if (reach[c]) best = c;
        c_prev = *it;
        room += best;
      }
      if (room < volume) return false;
    }
    return true;
  }

  std::size_t D_, S_, R_;
  std::vector<edge> edges_;
  std::vector<double> device_bound_;  // b(s, d), row-major
  std::vector<double> bound_values_;  // b(s, d) sorted
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using copy_component_test = basic_copy_component_test<>;

}  // namespace detail

/// The copy-component bound (file comment) of a model whose stage s costs at least
/// offset_ms[s] + its p2p sends (p2p: offset c_u(s); combined: c_u(s) + the least allreduce
/// term): a lower bound of the objective of every mapping of `g` onto `L`, and at least
/// `at_least` when that is one too. With unequal replica counts it returns `at_least` (the
/// replicas are then no copies). Stops at `deadline` with the best bound proved so far.
template <int I = 0>
[[nodiscard]] double copy_component_lower_bound(
    const stage_graph& g, const link_costs& L, std::span<const double> offset_ms, double at_least = 0,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  if (offset_ms.size() != g.stages())
    throw std::invalid_argument("copy_component_lower_bound: one offset per stage is needed");
  if (!g.uniform_replicas() || g.vertices() > L.devices() || L.devices() < 2) return at_least;
  const detail::basic_copy_component_test<I> test(g, L, offset_ms, deadline);
  double lo = at_least;
  if (!test.has_edges() || test.holds(lo)) return lo;
  double hi = test.all_links();
  if (!test.holds(hi)) return lo;  // cannot happen when the vertices fit: one component of D
  const double bound = detail::bisect_events(test, lo, hi, deadline);  // fails at lo, holds at hi
  // The edges' bounds sum their terms in another order than the model's times: a relative 1e-12
  // below absorbs the rounding.
  return bound > at_least ? std::max(at_least, bound * (1 - 1e-12)) : at_least;
}

/// The copy-component bound of `p2p_cost`: offsets c_u(s).
template <int I = 0>
[[nodiscard]] double copy_component_lower_bound(
    const stage_graph& g, const link_costs& L, double at_least = 0,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  std::vector<double> offset(g.stages());
  for (std::size_t s = 0; s < g.stages(); ++s) offset[s] = g.replica_compute_ms(s);
  return copy_component_lower_bound(g, L, offset, at_least, deadline);
}

}  // namespace devplace
