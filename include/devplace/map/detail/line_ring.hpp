#pragma once
/// \file map/detail/line_ring.hpp
/// The line ring cover of the allreduce model: a relaxation on link classes (the links inside a
/// class relaxed to its cheapest) decided exactly, for rings of any length, when the classes lie
/// on a line (a Robinsonian order of their costs: random_blk_2, chains of nodes or racks). The
/// ring cost has a closed form along the line, and the packing is a walk along it that hands each
/// class's devices to the stages. The method, its proof, bound and cost: docs/mapping-oracles.md,
/// "Line ring cover".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "devplace/map/detail/cover_common.hpp"
#include "devplace/map/detail/device_classes.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

/// The distinct finite values of `w`, ascending.
template <int = 0>
[[nodiscard]] std::vector<double> distinct_finite(std::vector<double> w) {
  w.erase(std::remove_if(w.begin(), w.end(), [](double x) { return !std::isfinite(x); }), w.end());
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

/// The ring realisation of a relaxed mapping: a mapping at t from
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
class basic_line_ring_search {
 public:
  using clock = std::chrono::steady_clock;

  /// The relaxation of `L` on `classes` (a partition of the devices into link classes, e.g.
  /// `find_link_classes`). `applies()` is false unless `g` has equal replica counts R ≥ 2 and
  /// every stage parameters, `L` has symmetric links without latency and no more stage replicas
  /// than devices, the classes cover the devices (for one class of them all, `find_link_classes`
  /// of classes smaller than that first), and the costs between the classes (or coarser
  /// ones, twins merged: file comment) are Robinsonian in an order that `find_robinson_order`
  /// finds, with K · S ≤ 8,192 (the walk's depth). Keeps pointers to `g` and `L`.
  basic_line_ring_search(const stage_graph& g, const link_costs& L, const std::vector<std::vector<std::size_t>>& classes)
      : g_(&g), L_(&L), classes_(classes), S_(g.stages()), R_(g.uniform_replicas() ? g.replicas() : 0) {
    if (!nested_rings_apply(g, L) || R_ > 0xFFFF || !L.symmetric() || classes.empty()) return;
    std::size_t devices = 0;
    for (const auto& c : classes) devices += c.size();
    if (devices != L.devices()) return;
    // one class of every device says little: the classes of fewer devices first, when they lie on
    // a line
    bool line = false;
    if (classes_.size() == 1 && devices > 1) {
      classes_ = find_link_classes(L, devices - 1);
      if (!(line = on_a_line(L))) classes_ = classes;
    }
    if (!line && !on_a_line(L)) return;
    if (K_ * S_ > 8192) return;
    for (std::size_t x = 0; x < K_; ++x)
      for (std::size_t y = 0; y < K_; ++y)
        if (y != x) cost_[x * K_ + x] = std::min(cost_[x * K_ + x], cost_[x * K_ + y]);
    values_ = distinct_finite(cost_);
    // ranks along the line: [i · K + j] = the rank of w'(order_i, order_j) among the values (+inf: none)
    rank_.assign(K_ * K_, static_cast<std::uint32_t>(values_.size()));
    for (std::size_t i = 0; i < K_; ++i)
      for (std::size_t j = 0; j < K_; ++j) {
        const double w = cost_[order_[i] * K_ + order_[j]];
        if (std::isfinite(w))
          rank_[i * K_ + j] = static_cast<std::uint32_t>(std::lower_bound(values_.begin(), values_.end(), w) - values_.begin());
      }
    size_.resize(K_);
    suffix_.assign(K_ + 1, 0);
    for (std::size_t i = K_; i-- > 0;) {
      size_[i] = static_cast<std::uint32_t>(classes_[order_[i]].size());
      suffix_[i] = suffix_[i + 1] + size_[i];
    }
    applies_ = true;
  }

  [[nodiscard]] bool applies() const noexcept { return applies_; }
  [[nodiscard]] std::size_t classes() const noexcept { return K_; }
  /// The link classes it uses: those given, where the costs between them lie along a line, else
  /// coarser ones (twins merged, see the constructor); the indices of `order`, `cost`, counts.
  [[nodiscard]] const std::vector<std::vector<std::size_t>>& link_classes() const noexcept { return classes_; }
  /// The classes (indices into `link_classes()`) in line order.
  [[nodiscard]] std::span<const std::size_t> order() const noexcept { return order_; }
  /// The relaxed cost w'(x, y) between classes x and y (indices into `link_classes()`).
  /// Throws std::out_of_range unless both are below `classes()`.
  [[nodiscard]] double cost(std::size_t x, std::size_t y) const {
    if (x >= K_ || y >= K_) throw std::out_of_range("line_ring_search::cost: class index out of range");
    return cost_[x * K_ + y];
  }

  /// W(c) of the count vector `count` (K entries by `link_classes()`, Σ = R ≥ 2) in the relaxed
  /// topology, in closed form (file comment); +inf for a vector of fewer than 2 devices. Throws
  /// std::invalid_argument unless `applies()` and `count` has `classes()` entries.
  [[nodiscard]] double ring_cost(std::span<const std::uint32_t> count) const {
    if (!applies_ || count.size() != K_) throw std::invalid_argument("line_ring_search::ring_cost: one count per class is needed");
    std::vector<std::size_t> seq;  // the class of every device, along the line
    for (std::size_t i = 0; i < K_; ++i) seq.insert(seq.end(), count[order_[i]], order_[i]);
    if (seq.size() < 2) return std::numeric_limits<double>::infinity();
    if (seq.size() == 2) return cost_[seq[0] * K_ + seq[1]];
    double W = 0;
    for (std::size_t i = 1; i + 1 < seq.size(); ++i) W = std::max(W, cost_[seq[i - 1] * K_ + seq[i + 1]]);
    return W;
  }

  /// Decides the relaxation at target t (file comment): none (no mapping below `next_change`),
  /// relaxed_found (with every stage's counts), or unknown after `node_limit` classes entered
  /// (0: no limit), at `*stop` or at `deadline`.
  [[nodiscard]] cover_answer solve(double t, std::uint64_t node_limit = 0, const std::atomic<bool>* stop = nullptr,
                                   clock::time_point deadline = clock::time_point::max()) const {
    cover_answer ans;
    if (!applies_) return ans;
    walk w(*this, t, node_limit, stop, deadline, ans);
    const bool found = w.place(0);
    ans.nodes = w.work.count;
    if (w.work.aborted) {
      ans.capped = !interrupted(stop, deadline);
      return ans;
    }
    if (!found) {
      ans.answer = cover_answer::kind::none;
      return ans;
    }
    ans.answer = cover_answer::kind::relaxed_found;
    ans.counts.assign(S_ * K_, 0);
    for (std::size_t j = 0; j < S_; ++j)
      for (std::size_t i = 0; i < K_; ++i) ans.counts[w.stage[j] * K_ + order_[i]] = w.take[j * K_ + i];
    return ans;
  }

  /// A mapping at t from the counts of a relaxed_found answer (`realise_rings`, the classes in
  /// line order): each stage's ring is the best cycle over its devices under the real links for
  /// R ≤ 12 (Held–Karp), else the line's cycle v_0 v_2 v_4 … v_3 v_1, or the devices in line order
  /// v_0 v_1 … v_{R−1} when that cycle's largest link is no larger (on a two-level topology, such
  /// as DGX-1 boxes, the natural ring); or empty.
  [[nodiscard]] std::vector<std::size_t> realise(const cover_answer& a, double t, std::size_t tries = 16) const {
    if (a.answer != cover_answer::kind::relaxed_found) return {};
    const auto& L = *L_;
    auto largest = [&](const std::vector<std::size_t>& r) {
      double m = 0;
      for (std::size_t q = 0; q < r.size(); ++q) m = std::max(m, L.ms_per_byte(r[q], r[(q + 1) % r.size()]));
      return m;
    };
    auto ring_of = [&](std::vector<std::size_t>& set) {
      if (R_ <= 12) return best_ring(L, set);
      std::vector<std::size_t> ring;
      for (std::size_t q = 0; q < R_; q += 2) ring.push_back(set[q]);
      for (std::size_t q = R_ - 1 - (R_ % 2 == 0 ? 0 : 1); q < R_; q -= 2) ring.push_back(set[q]);
      const double W = largest(ring), plain = largest(set);
      if (plain <= W) return plain;
      set = std::move(ring);
      return W;
    };
    return realise_rings(*g_, classes_, a.counts, order_, t, tries, ring_of);
  }

 private:
  /// Sets the classes' costs and line order, merging classes whose costs to every other class
  /// agree (their union is a link class too; the links between them become links inside,
  /// relaxed) until the costs lie along a line; false when no merge is left and they do not.
  bool on_a_line(const link_costs& L) {
    for (;;) {
      K_ = classes_.size();
      cost_ = quotient_link_costs(L, classes_);
      order_ = find_robinson_order(cost_, K_);
      if (!order_.empty()) return true;
      std::vector<std::size_t> rep(K_);
      std::iota(rep.begin(), rep.end(), std::size_t{0});
      bool merged = false;
      for (std::size_t x = 0; x < K_; ++x)
        for (std::size_t y = x + 1; y < K_ && rep[x] == x; ++y) {
          if (rep[y] != y) continue;
          bool twins = true;
          for (std::size_t z = 0; z < K_ && twins; ++z) twins = z == x || z == y || cost_[x * K_ + z] == cost_[y * K_ + z];
          if (twins) rep[y] = x, merged = true;
        }
      if (!merged) return false;
      std::vector<std::vector<std::size_t>> coarser;
      std::vector<std::size_t> at(K_);
      for (std::size_t x = 0; x < K_; ++x) {
        if (rep[x] == x) at[x] = coarser.size(), coarser.emplace_back();
        auto& c = coarser[at[rep[x]]];
        c.insert(c.end(), classes_[x].begin(), classes_[x].end());
      }
      for (auto& c : coarser) std::sort(c.begin(), c.end());
      classes_ = std::move(coarser);
    }
  }

  /// One stage's devices so far and the line positions of its last two.
  struct lane {
    std::uint16_t k = 0, a = 0, b = 0;
    friend bool operator==(const lane&, const lane&) = default;
  };

  /// The walk along the line at one target (file comment).
  struct walk {
    const basic_line_ring_search& q;
    double t;
    std::size_t S, R, K;
    std::vector<std::uint32_t> rank;    // per stage (walk order): the values within t are the first rank
    std::vector<std::size_t> stage;     // walk order → stage, most constrained first
    std::vector<char> same_group;       // [j]: stage j accepts the same links as stage j − 1
    std::vector<std::size_t> reach_of;  // [j · K + x]: the farthest position stage j reaches from x
    std::vector<std::uint32_t> due;     // deadlines_met: the devices needed by each position
    std::vector<std::size_t> chain;     // deadlines_met: one stage's bounds
    std::vector<lane> cur;              // per stage (walk order)
    std::vector<std::uint32_t> take;    // [j · K + i]: devices stage j takes from line position i
    std::vector<std::vector<lane>> before;  // per class: the lanes on entering it
    std::vector<std::vector<std::uint32_t>> room;  // per class: [j] the devices stages j.. lack
    std::vector<std::uint32_t> slack;       // per class: the devices from it on that may stay unused
    key_set failed;                     // the states that failed
    std::vector<std::uint32_t> key;     // make_key: a state
    work_counter work;  // the classes entered; aborted at the node limit, `*stop` or the deadline

    walk(const basic_line_ring_search& s, double target, std::uint64_t limit, const std::atomic<bool>* st, clock::time_point dl,
         cover_answer& ans)
        : q(s), t(target), S(s.S_), R(s.R_), K(s.K_),
          work{.most = work_counter::at_most(limit), .stop = st, .deadline = dl, .mask = 255} {
      const auto& g = *q.g_;
      const auto& v = q.values_;
      std::vector<std::uint32_t> r(S);
      for (std::size_t x = 0; x < S; ++x) {
        auto time = [&](double w) { return g.ring_stage_ms(x, w); };
        // the values within t come first: the time grows with the value
        const auto lo = static_cast<std::size_t>(std::partition_point(v.begin(), v.end(), [&](double w) { return time(w) <= t; }) - v.begin());
        r[x] = static_cast<std::uint32_t>(lo);
        if (lo < v.size()) ans.next_change = std::min(ans.next_change, time(v[lo]));
      }
      stage.resize(S);
      std::iota(stage.begin(), stage.end(), std::size_t{0});
      std::stable_sort(stage.begin(), stage.end(), [&](std::size_t x, std::size_t y) { return r[x] < r[y]; });
      rank.resize(S);
      same_group.assign(S, 0);
      for (std::size_t j = 0; j < S; ++j) {
        rank[j] = r[stage[j]];
        same_group[j] = j > 0 && rank[j] == rank[j - 1];
      }
      // reach_of[j · K + x]: the farthest position y ≥ x whose link from x stage j accepts (those
      // further on form an interval, and it grows with x: the costs are Robinsonian)
      reach_of.resize(S * K);
      for (std::size_t j = 0; j < S; ++j)
        for (std::size_t x = 0; x < K; ++x) {
          if (same_group[j]) {
            reach_of[j * K + x] = reach_of[(j - 1) * K + x];
            continue;
          }
          std::size_t y = x;
          while (y + 1 < K && allowed(j, x, y + 1)) ++y;
          reach_of[j * K + x] = y;
        }
      due.assign(K, 0);
      cur.assign(S, lane{});
      take.assign(S * K, 0);
      before.assign(K, std::vector<lane>(S));
      room.assign(K, std::vector<std::uint32_t>(S + 1, 0));
      slack.assign(K, 0);
    }

    [[nodiscard]] bool allowed(std::size_t j, std::size_t i, std::size_t k) const { return q.rank_[i * K + k] < rank[j]; }
    /// Whether stage j in state l may take one more device at position z.
    [[nodiscard]] bool can_add(std::size_t j, const lane& l, std::size_t z) const {
      if (l.k >= 2) return allowed(j, l.b, z);
      if (l.k == 1 && R == 2) return allowed(j, l.a, z);
      return true;
    }
    /// Stage state l after one more device at position z (a full stage keeps no positions).
    void add(lane& l, std::size_t z) const {
      l.b = l.k == 0 ? static_cast<std::uint16_t>(z) : l.a;
      l.a = static_cast<std::uint16_t>(z);
      if (++l.k == R) l.a = l.b = 0;
    }

    /// Hands out the classes from position z on; true once every stage holds R devices.
    bool place(std::size_t z) {
      std::size_t lacking = 0;
      for (const auto& l : cur) lacking += R - l.k;
      if (lacking == 0) return true;
      if (z == K || lacking > q.suffix_[z]) return false;
      for (std::size_t j = 0; j < S; ++j)
        if (cur[j].k > 0 && !can_reach(j, cur[j], z)) return false;
      if (!deadlines_met(z)) return false;
      if (!work.step()) return false;
      // the devices of position z that may stay unused, and what stages j.. could take here at most
      slack[z] = static_cast<std::uint32_t>(q.suffix_[z] - lacking);
      auto& rm = room[z];
      rm[S] = 0;
      for (std::size_t j = S; j-- > 0;) rm[j] = rm[j + 1] + static_cast<std::uint32_t>(R - cur[j].k);
      if (q.size_[z] > slack[z] + rm[0]) return false;
      make_key(z);
      if (failed.find(key) != key_set::npos) return false;
      before[z] = cur;
      const bool ok = hand_out(z, 0, q.size_[z]);
      if (!ok && !work.aborted) {
        make_key(z);  // hand_out leaves cur as it found it
        failed.insert(key);
      }
      return ok;
    }

    /// Hall's condition on the devices the started stages still need, entering position z. A
    /// stage with k devices, its last two at b ≤ a, takes its next devices v_k ≤ v_{k+1} ≤ … at
    /// positions ≥ z with v_k ≤ reach(b), v_{k+1} ≤ reach(a) (k = 1: both ≤ reach(a)), and
    /// v_{k+i} ≤ reach(bound of v_{k+i−2}) (reach grows with the position: Robinsonian costs);
    /// so every position r must hold, between z and r, as many devices as the stages need by r
    /// (what they need beyond their bounds, and the stages not started, by the last position).
    bool deadlines_met(std::size_t z) {
      std::fill(due.begin(), due.end(), 0u);
      for (std::size_t j = 0; j < S; ++j) {
        const auto& l = cur[j];
        if (l.k == 0 || l.k >= R) continue;
        const std::size_t need = R - l.k;
        chain.clear();
        const std::size_t* reach = &reach_of[j * K];
        chain.push_back(reach[l.k >= 2 ? l.b : l.a]);
        if (need >= 2) chain.push_back(reach[l.a]);
        while (chain.size() < need && chain.back() < K - 1) chain.push_back(reach[chain[chain.size() - 2]]);
        // sorted devices: each one's bound is also the least bound of the ones after it
        for (std::size_t i = chain.size() - 1; i-- > 0;) chain[i] = std::min(chain[i], chain[i + 1]);
        for (const auto r : chain) {
          if (r < z) return false;
          ++due[r];
        }
        due[K - 1] += static_cast<std::uint32_t>(need - chain.size());  // the rest by the end
      }
      for (const auto& l : cur)
        if (l.k == 0) due[K - 1] += static_cast<std::uint32_t>(R);
      std::size_t demand = 0, supply = 0;
      for (std::size_t r = z; r < K; ++r) {
        demand += due[r], supply += q.size_[r];
        if (demand > supply) return false;
      }
      return true;
    }

    /// Whether stage j (started, not full) can still take a device at position z or later.
    [[nodiscard]] bool can_reach(std::size_t j, const lane& l, std::size_t z) const {
      // k = 1: the device after next pairs with a (R = 2: the next one)
      return l.k >= R || allowed(j, l.k >= 2 ? l.b : l.a, z);
    }

    /// Stages j.. take devices of position z, `left` of them still free.
    bool hand_out(std::size_t z, std::size_t j, std::uint32_t left) {
      if (j == S) return place(z + 1);
      const lane save = cur[j];
      // the most stage j can take here (an equal stage before it in its group took no fewer), and
      // the least: the devices left must fit in the slack and what the stages after it can take
      std::uint32_t most = 0;
      const std::uint32_t cap = std::min<std::uint32_t>(left, static_cast<std::uint32_t>(R - save.k));
      for (lane l = save; most < cap && can_add(j, l, z);) add(l, z), ++most;
      if (same_group[j] && before[z][j] == before[z][j - 1]) most = std::min(most, take[(j - 1) * K + z]);
      const std::uint32_t absorb = slack[z] + room[z][j + 1];
      const std::uint32_t least = left > absorb ? left - absorb : 0;
      for (std::uint32_t m = most + 1; m-- > least;) {
        lane l = save;
        for (std::uint32_t n = 0; n < m; ++n) add(l, z);
        cur[j] = l;
        take[j * K + z] = m;
        if (hand_out(z, j + 1, left - m)) return true;
        if (work.aborted) break;
      }
      cur[j] = save;
      take[j * K + z] = 0;
      return false;
    }

    /// The canonical state on entering position z: full and unstarted lanes alike, stages of one
    /// group sorted.
    void make_key(std::size_t z) {
      std::vector<std::uint64_t> code(S);
      for (std::size_t j = 0; j < S; ++j) {
        const auto& l = cur[j];
        const bool open = l.k > 0 && l.k < R;
        code[j] = (std::uint64_t{l.k} << 32) | (open ? (std::uint64_t{l.a} << 16) | (l.k >= 2 ? l.b : l.a) : 0);
      }
      for (std::size_t j = 0; j < S;) {
        std::size_t e = j + 1;
        while (e < S && same_group[e]) ++e;
        std::sort(code.begin() + static_cast<std::ptrdiff_t>(j), code.begin() + static_cast<std::ptrdiff_t>(e));
        j = e;
      }
      key.assign(1, static_cast<std::uint32_t>(z));
      for (const auto c : code) key.push_back(static_cast<std::uint32_t>(c >> 32)), key.push_back(static_cast<std::uint32_t>(c));
    }
  };

  const stage_graph* g_;
  const link_costs* L_;
  std::vector<std::vector<std::size_t>> classes_;
  std::size_t S_, R_, K_ = 0;
  bool applies_ = false;
  std::vector<double> cost_;           // [x · K + y]: w'(x, y), classes as used
  std::vector<std::size_t> order_;     // line position → class
  std::vector<double> values_;         // the distinct finite relaxed costs, ascending
  std::vector<std::uint32_t> rank_;    // [i · K + j]: rank of w' between line positions i and j
  std::vector<std::uint32_t> size_;    // devices per line position
  std::vector<std::uint32_t> suffix_;  // devices at line positions ≥ i
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using line_ring_search = basic_line_ring_search<>;

}  // namespace devplace::detail
