#pragma once
/// \file map/detail/quotient_ring.hpp
/// The quotient ring cover of the allreduce model: a relaxation of the ring cover
/// (map/detail/ring_cover.hpp) on *link classes*, where a ring is a count vector over the classes
/// with cost W(c); per target the count vectors with W ≤ max θ are listed and S of them packed
/// within the class sizes (`class_cover_packing`, one slot class per stage); `realise` then gives
/// the stages real devices. The method, its bound and cost: docs/mapping-oracles.md, "Quotient
/// ring cover".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "devplace/map/detail/class_cover.hpp"
#include "devplace/map/detail/cover_common.hpp"
#include "devplace/map/detail/device_classes.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

/// The link costs of the quotient by `classes` (a partition of the devices into link classes):
/// [x · K + y] = w(x, y), the cost of every link between classes x ≠ y, and w(x, x) the cheapest
/// link inside x (+inf for a class of one device). Reads `ms_per_byte`.
template <int = 0>
[[nodiscard]] std::vector<double> quotient_link_costs(const link_costs& L, const std::vector<std::vector<std::size_t>>& classes) {
  const std::size_t K = classes.size();
  std::vector<double> w(K * K, std::numeric_limits<double>::infinity());
  for (std::size_t x = 0; x < K; ++x)
    for (std::size_t y = 0; y < K; ++y) {
      if (x != y) {
        w[x * K + y] = L.ms_per_byte(classes[x][0], classes[y][0]);
        continue;
      }
      for (const auto a : classes[x])
        for (const auto b : classes[x])
          if (a != b) w[x * K + x] = std::min(w[x * K + x], L.ms_per_byte(a, b));
    }
  return w;
}

/// The distinct finite values of `w`, ascending.
template <int = 0>
[[nodiscard]] std::vector<double> distinct_finite(std::vector<double> w) {
  w.erase(std::remove_if(w.begin(), w.end(), [](double x) { return !std::isfinite(x); }), w.end());
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

/// The ring realisation of the relaxed ring covers (quotient and line): a mapping at t from
/// per-stage counts over the classes (`counts[s·K + x]`, the classes taken in `order`), if one
/// of `tries` draws realises them. Each stage takes its counts from the devices of each class (in
/// order, then shuffled per draw: Fisher–Yates on a 64-bit LCG); `ring_of(set)` reorders its devices into a ring and returns
/// the ring's largest per-byte cost; the stage must then meet t. The device of every vertex
/// s·R + q, or empty.
template <class RingOf>
[[nodiscard]] std::vector<std::size_t> realise_rings(const stage_graph& g, const std::vector<std::vector<std::size_t>>& classes,
                                                     std::span<const std::uint32_t> counts, std::span<const std::size_t> order,
                                                     double t, std::size_t tries, RingOf&& ring_of) {
  const std::size_t S = g.stages(), R = g.replicas(), K = classes.size();
  if (counts.size() != S * K) return {};
  std::vector<std::vector<std::size_t>> pool(classes);
  std::uint64_t z = 0x853C49E6748FEA9Bull;
  std::vector<std::size_t> dev(g.vertices()), ring;
  for (std::size_t draw = 0; draw < tries; ++draw) {
    for (auto& p : pool)
      for (std::size_t i = p.size(); i > 1 && draw > 0; --i) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        std::swap(p[i - 1], p[(z >> 33) % i]);
      }
    std::vector<std::size_t> next(K, 0);
    bool ok = true;
    for (std::size_t s = 0; s < S && ok; ++s) {
      ring.clear();
      for (const std::size_t x : order)
        for (std::uint32_t c = 0; c < counts[s * K + x]; ++c) ring.push_back(pool[x][next[x]++]);
      if (ring.size() != R) return {};
      const double W = ring_of(ring);
      ok = ring.size() == R && g.ring_stage_ms(s, W) <= t;
      for (std::size_t q = 0; q < ring.size() && ok; ++q) dev[g.vertex(s, q)] = ring[q];
    }
    if (ok) return dev;
  }
  return {};
}

template <int = 0>
class basic_quotient_ring_search {
 public:
  using clock = std::chrono::steady_clock;

  using limits = count_vector_limits;  ///< (the bin packing's limits unused)

  /// The quotient of `L` by `classes` (a partition of the devices into link classes, e.g.
  /// `find_link_classes`). `applies()` is false unless `g` has equal replica counts R ≥ 2 and
  /// every stage parameters, `L` has symmetric links without latency and no more stage replicas
  /// than devices, and some class holds two or more devices. Keeps a pointer to `g`.
  basic_quotient_ring_search(const stage_graph& g, const link_costs& L, const std::vector<std::vector<std::size_t>>& classes)
      : g_(&g), L_(&L), classes_(classes), S_(g.stages()), R_(g.uniform_replicas() ? g.replicas() : 0), K_(classes.size()) {
    if (!nested_rings_apply(g, L) || !L.symmetric() || K_ == 0) return;
    std::size_t devices = 0, largest = 0;
    for (const auto& c : classes) devices += c.size(), largest = std::max(largest, c.size());
    if (devices != L.devices() || largest < 2) return;
    size_.resize(K_);
    for (std::size_t x = 0; x < K_; ++x) size_[x] = static_cast<std::uint32_t>(classes[x].size());
    cost_ = quotient_link_costs(L, classes);
    values_ = distinct_finite(cost_);
    applies_ = true;
  }

  [[nodiscard]] bool applies() const noexcept { return applies_; }

  /// W(c) of the count vector `count` (K entries, Σ = R) in the relaxed topology: the least
  /// largest cost over its cyclic orders (+inf when it has none); NaN when the programme would
  /// exceed `max_states` states. `scratch` (optional): the programme's table, reused between calls.
  [[nodiscard]] double ring_cost(std::span<const std::uint32_t> count, std::size_t max_states = std::size_t{1} << 16,
                                 std::vector<double>* scratch = nullptr) const {
    std::vector<double> own;
    auto& best = scratch ? *scratch : own;
    std::vector<std::size_t> ks;
    for (std::size_t x = 0; x < K_; ++x)
      if (count[x] > 0) ks.push_back(x);
    const std::size_t m = ks.size();
    if (m == 0) return std::numeric_limits<double>::infinity();
    if (m == 1) return count[ks[0]] >= 2 ? cost_[ks[0] * K_ + ks[0]] : std::numeric_limits<double>::infinity();
    std::vector<std::size_t> radix(m + 1, 1);
    for (std::size_t j = 0; j < m; ++j) {
      radix[j + 1] = radix[j] * (count[ks[j]] + 1);
      if (radix[j + 1] * m > max_states) return std::numeric_limits<double>::quiet_NaN();
    }
    const std::size_t states = radix[m];
    const double inf = std::numeric_limits<double>::infinity();
    best.assign(states * m, inf);  // [used · m + last]: least largest cost of a path from ks[0]
    best[radix[0] * m + 0] = 0;
    for (std::size_t st = 0; st < states; ++st)
      for (std::size_t l = 0; l < m; ++l) {
        const double v = best[st * m + l];
        if (v == inf) continue;
        for (std::size_t j = 0; j < m; ++j) {
          if ((st / radix[j]) % (count[ks[j]] + 1) == count[ks[j]]) continue;
          auto& x = best[(st + radix[j]) * m + j];
          x = std::min(x, std::max(v, cost_[ks[l] * K_ + ks[j]]));
        }
      }
    double W = inf;
    for (std::size_t l = 0; l < m; ++l) W = std::min(W, std::max(best[(states - 1) * m + l], cost_[ks[l] * K_ + ks[0]]));
    return W;
  }

  /// Drops the cached listing (no solve may run meanwhile): the next solve lists afresh, as the
  /// first one did.
  void forget() { cache_.clear(); }

  /// Decides the relaxation at target t (file comment): none (no mapping below `next_change`),
  /// relaxed_found (no answer about the real topology), or unknown at a limit, `*stop` or
  /// `deadline`.
  [[nodiscard]] cover_answer solve(double t, const limits& lim, const std::atomic<bool>* stop = nullptr,
                                   clock::time_point deadline = clock::time_point::max()) const {
    cover_answer a;
    if (!applies_) return a;
    const auto& g = *g_;
    double theta = -std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < S_; ++s) theta = std::max(theta, g.ring_cost_within(s, t));
    theta *= 1 + 1e-9;  // a vector whose time rounds to t is listed (the times are checked exactly)
    // every vector not listed costs at least the cheapest value above θ
    const auto above = std::upper_bound(values_.begin(), values_.end(), theta);
    a.next_change = above == values_.end() ? std::numeric_limits<double>::infinity() : g.least_ring_stage_ms(*above);
    // 1. the count vectors with W ≤ θ, from the listing at the largest θ so far when it covers θ
    const auto lst = cache_.covering(theta, [&](listing& fresh, const listing*) { return list(theta, lim, stop, deadline, fresh, a); });
    if (!lst) {
      a.capped = !interrupted(stop, deadline);
      return a;
    }
    a.rows = lst->W.size();
    const auto& flat = lst->flat;
    const auto& W = lst->W;
    // 2. the rows (vector, stage) within t and the packing over the classes and the stage slots
    std::vector<std::uint32_t> sizes(size_);
    sizes.insert(sizes.end(), S_, 1u);
    std::vector<class_cover_packing::entry> entries;
    std::vector<std::size_t> starts{0};
    for (std::size_t e = 0; e < W.size(); ++e)
      for (std::size_t s = 0; s < S_; ++s) {
        const double time = g.ring_stage_ms(s, W[e]);
        if (time > t) {
          a.next_change = std::min(a.next_change, time);
          continue;
        }
        for (std::size_t x = 0; x < K_; ++x)
          if (flat[e * K_ + x] > 0) entries.push_back({static_cast<std::uint32_t>(x), flat[e * K_ + x]});
        entries.push_back({static_cast<std::uint32_t>(K_ + s), 1});
        starts.push_back(entries.size());
      }
    if (starts.size() == 1) {  // no stage takes any vector
      a.answer = cover_answer::kind::none;
      return a;
    }
    class_cover_packing pack{std::span<const std::uint32_t>(sizes), std::span<const class_cover_packing::entry>(entries),
                             std::span<const std::size_t>(starts)};
    pack.set_branching(class_cover_packing::branching::fewest_per_capacity);
    const auto o = pack.solve(S_, lim.packing_nodes, stop, deadline);
    a.nodes += pack.nodes();
    if (o == class_cover_packing::outcome::none) a.answer = cover_answer::kind::none;
    if (o != class_cover_packing::outcome::found) return a;
    a.answer = cover_answer::kind::relaxed_found;
    a.counts.assign(S_ * K_, 0);
    for (const auto row : pack.solution()) {
      const std::size_t s = entries[starts[row + 1] - 1].cls - K_;  // the row's stage slot, its last entry
      for (std::size_t j = starts[row]; j + 1 < starts[row + 1]; ++j) a.counts[s * K_ + entries[j].cls] = entries[j].count;
    }
    return a;
  }

  /// A mapping at t from the count vectors of a relaxed_found answer (`realise_rings`), each
  /// stage's ring the best cycle over its devices under the real links (R ≤ 12); or empty.
  [[nodiscard]] std::vector<std::size_t> realise(const cover_answer& a, double t, std::size_t tries = 16) const {
    if (a.answer != cover_answer::kind::relaxed_found || R_ > 12) return {};
    std::vector<std::size_t> order(K_);
    std::iota(order.begin(), order.end(), std::size_t{0});
    return realise_rings(*g_, classes_, a.counts, order, t, tries, [&](std::vector<std::size_t>& set) { return best_ring(*L_, set); });
  }

 private:
  /// The count vectors with W ≤ θ (K entries each) and their W; `t` is θ.
  struct listing {
    double t = 0;
    std::vector<std::uint32_t> flat;
    std::vector<double> W;
  };

  /// Lists the count vectors with W ≤ θ into `out`: connected supports (ESU), compositions, the
  /// programme; false (the answer unknown, the steps in `a.nodes`) at a limit, `*stop` or
  /// `deadline`.
  bool list(double theta, const limits& lim, const std::atomic<bool>* stop, clock::time_point deadline, listing& out,
            cover_answer& a) const {
    out.t = theta;
    auto& flat = out.flat;
    auto& W = out.W;
    std::vector<double> scratch;
    std::vector<std::vector<std::uint32_t>> adj(K_);
    for (std::size_t x = 0; x < K_; ++x)
      for (std::size_t y = 0; y < K_; ++y)
        if (x != y && cost_[x * K_ + y] <= theta) adj[x].push_back(static_cast<std::uint32_t>(y));
    std::vector<std::uint32_t> count(K_, 0), sub;
    work_counter work{.most = work_counter::at_most(lim.listing_steps), .stop = stop, .deadline = deadline};
    bool& capped = work.aborted;  // also at the programme's limit or `lim.vectors`
    auto compose = [&](auto&& self, std::size_t j, std::uint32_t left, std::uint32_t room) -> void {
      if (!work.step()) return;
      if (j == sub.size()) {
        const double w = ring_cost(count, std::size_t{1} << 16, &scratch);
        if (std::isnan(w)) {
          capped = true;  // the programme's limit: the vector is unknown
          return;
        }
        if (w > theta) return;
        if (W.size() >= lim.vectors) {
          capped = true;
          return;
        }
        flat.insert(flat.end(), count.begin(), count.end());
        W.push_back(w);
        return;
      }
      const std::uint32_t n = size_[sub[j]], rest = room - n, later = static_cast<std::uint32_t>(sub.size() - j - 1);
      const std::uint32_t lo = std::max<std::uint32_t>(1, left > rest ? left - rest : 0);
      const std::uint32_t hi = std::min(n, left - later);
      for (std::uint32_t c = lo; c <= hi && !capped; ++c) {
        count[sub[j]] = c;
        self(self, j + 1, left - c, rest);
      }
      count[sub[j]] = 0;
    };
    std::vector<char> in(K_, 0);
    auto esu = [&](auto&& self, std::vector<std::uint32_t>& ext, std::uint32_t v, std::uint32_t room) -> void {
      if (!work.step()) return;
      if (room >= R_) compose(compose, 0, static_cast<std::uint32_t>(R_), room);
      if (capped || sub.size() == R_) return;
      std::vector<std::uint32_t> rest(ext);
      while (!rest.empty() && !capped) {
        const std::uint32_t w = rest.back();
        rest.pop_back();
        // the exclusive neighbours of w: above v, not in the set, not next to it
        std::vector<std::uint32_t> next(rest);
        for (const auto u : adj[w]) {
          if (u <= v || in[u] || std::find(next.begin(), next.end(), u) != next.end()) continue;
          bool near = false;
          for (const auto x : sub)
            for (const auto y : adj[x]) near = near || y == u;
          if (!near) next.push_back(u);
        }
        sub.push_back(w), in[w] = 1;
        self(self, next, v, room + size_[w]);
        sub.pop_back(), in[w] = 0;
      }
    };
    for (std::uint32_t v = 0; v < K_ && !capped; ++v) {
      sub.assign(1, v), in[v] = 1;
      std::vector<std::uint32_t> ext;
      for (const auto u : adj[v])
        if (u > v) ext.push_back(u);
      esu(esu, ext, v, size_[v]);
      in[v] = 0;
    }
    a.nodes = work.count;
    return !capped;
  }

  const stage_graph* g_;
  const link_costs* L_;
  std::vector<std::vector<std::size_t>> classes_;
  std::size_t S_, R_, K_;
  bool applies_ = false;
  std::vector<std::uint32_t> size_;  // devices per class
  std::vector<double> cost_;         // [x · K + y]: w(x, y); w(x, x) the cheapest link inside x
  std::vector<double> values_;       // the distinct finite costs, ascending
  mutable listing_cache<listing> cache_;  // the listing at the largest θ so far
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using quotient_ring_search = basic_quotient_ring_search<>;

}  // namespace devplace::detail
