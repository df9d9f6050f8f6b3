#pragma once
/// \file map/detail/quotient_copy_listing.hpp
/// The quotient copy cover of the p2p model: the copy cover (map/detail/copy_cover.hpp) on *link
/// classes* (map/detail/device_classes.hpp) with the links inside each class relaxed to its
/// cheapest, and an exact realisation on the real links. Per target: 1. the listing of the count
/// vectors c with τ'(c) ≤ t (a dynamic programme over the stages), 2. the packing of R of them
/// within the class sizes, 3. the realisation of a packing on the real links. The method, its
/// bound and cost: docs/mapping-oracles.md, "Quotient copy cover".
///
/// This header: the answer, the set-up on the link classes and the listing (steps 1 and 2);
/// the realisation (step 3) and `solve` are in map/detail/quotient_copy.hpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/class_cover.hpp"
#include "devplace/map/detail/cover_common.hpp"
#include "devplace/map/detail/device_classes.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

template <int = 0>
class basic_quotient_copy_search {
 public:
  using clock = std::chrono::steady_clock;

  /// The limits of one `solve` (0: none).
  struct limits {
    std::uint64_t listing_steps = 1u << 22;  ///< children of the programme
    std::size_t states = 1u << 20;           ///< states of one layer of the programme
    std::uint64_t packing_nodes = 1u << 16;  ///< nodes of the packing
    std::uint64_t realise_steps = 1u << 18;  ///< assignments and placements tried by the realisation
    std::size_t assignments = 4096;          ///< class assignments listed per count vector
  };

  /// `classes`: a partition of the devices into link classes (e.g. `find_link_classes`).
  /// `applies()` is false unless `g` has equal replica counts and no more stage replicas than
  /// devices, `L` symmetric links without latency and at most 256 devices, and some class holds
  /// two or more devices (at most 32). Keeps pointers to `g` and `L`.
  basic_quotient_copy_search(const stage_graph& g, const link_costs& L, const std::vector<std::vector<std::size_t>>& classes)
      : g_(&g), L_(&L), classes_(classes), S_(g.stages()), R_(g.replicas()), K_(classes.size()) {
    if (!g.uniform_replicas() || S_ == 0 || g.vertices() > L.devices() || L.has_latency() || !L.symmetric() ||
        L.devices() > 256 || K_ == 0)
      return;
    std::size_t devices = 0, largest = 0;
    for (const auto& c : classes) devices += c.size(), largest = std::max(largest, c.size());
    if (devices != L.devices() || largest < 2 || largest > 32) return;
    size_.resize(K_);
    for (std::size_t x = 0; x < K_; ++x) size_[x] = static_cast<std::uint32_t>(classes[x].size());
    capacity_.assign(size_.begin(), size_.end());
    w_ = quotient_link_costs(L, classes);
    // per class, every class by ascending cost from it (itself only when it has two devices)
    nearest_.resize(K_);
    for (std::size_t x = 0; x < K_; ++x) {
      for (std::size_t y = 0; y < K_; ++y)
        if (y != x || size_[x] >= 2) nearest_[x].push_back(static_cast<std::uint32_t>(y));
      std::stable_sort(nearest_[x].begin(), nearest_[x].end(), [&](auto a, auto b) { return w_[x * K_ + a] < w_[x * K_ + b]; });
    }
    make_order();
    applies_ = true;
  }

  [[nodiscard]] bool applies() const noexcept { return applies_; }
  /// The relaxed cost w(x, y) between classes (w(x, x): the cheapest link inside x).
  [[nodiscard]] double class_cost(std::size_t x, std::size_t y) const noexcept { return w_[x * K_ + y]; }

  /// The count vectors with τ' ≤ T (K entries each) and their τ'; `t` is T.
  struct listing {
    double t = 0;
    std::vector<std::uint8_t> flat;
    std::vector<double> tau;  ///< ascending
  };
  /// The listing of the programme at T (file comment); null when it reached a limit.
  [[nodiscard]] std::shared_ptr<const listing> list(double T, const limits& lim) const {
    auto out = std::make_shared<listing>();
    std::uint64_t steps = 0;
    return run_programme(T, lim, nullptr, clock::time_point::max(), *out, steps) ? out : nullptr;
  }

  /// Drops the cached listing (no solve may run meanwhile): the next solve lists afresh, as the
  /// first one did.
  void forget() {
    cache_.clear();
    std::lock_guard lk(kmu_);
    known_.clear(), knowledge_.clear();
  }

  /// Decides target t (file comment): found (a mapping with every stage time ≤ t), none (no
  /// mapping below `next_change`), or unknown at a limit, `*stop` or `deadline`.
  /// `capped_at` (optional): the least target whose listing reached `lim`'s limits, lowered by
  /// concurrent solves with the same limits; a listing at t stops, capped, once it is ≤ t (the
  /// programme at a larger target only has more states, so it would reach the limit too).
  [[nodiscard]] cover_answer solve(double t, const limits& lim, const std::atomic<bool>* stop = nullptr,
                                   clock::time_point deadline = clock::time_point::max(),
                                   const std::atomic<double>* capped_at = nullptr) const;

 private:
  /// The stage order of the programme and, per depth i, the frontier after placing order[0..i].
  void make_order() {
    const auto& g = *g_;
    std::vector<std::size_t> placed_nb(S_, 0);
    std::vector<char> in(S_, 0);
    pos_.assign(S_, 0);
    for (std::size_t i = 0; i < S_; ++i) {
      // first the stage of highest degree; then the most placed neighbours, the fewest unplaced
      // ones (the frontier stays small), the lowest index
      std::size_t best = S_;
      for (std::size_t s = 0; s < S_; ++s) {
        if (in[s]) continue;
        const std::size_t deg = g.neighbours(s).size(), bdeg = best == S_ ? 0 : g.neighbours(best).size();
        if (best == S_ || (i == 0 ? deg > bdeg
                                  : placed_nb[s] > placed_nb[best] ||
                                        (placed_nb[s] == placed_nb[best] && deg - placed_nb[s] < bdeg - placed_nb[best])))
          best = s;
      }
      in[best] = 1;
      pos_[best] = order_.size();
      order_.push_back(best);
      for (auto u : g.neighbours(best)) ++placed_nb[u];
    }
    frontier_.assign(S_, {});
    for (std::size_t i = 0; i < S_; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        const std::size_t s = order_[j];
        for (auto u : g.neighbours(s))
          if (pos_[u] > i) {
            frontier_[i].push_back(s);
            break;
          }
      }
    depth_.assign(S_, {});
    for (std::size_t i = 0; i < S_; ++i) {
      auto& d = depth_[i];
      for (auto u : g.neighbours(order_[i]))
        if (pos_[u] < i) d.nb.push_back(u), d.nb_after.push_back(bytes_after(u, i));
      d.s_after = bytes_after(order_[i], i);
      d.stays.assign(S_, 0);
      for (auto f : frontier_[i]) d.stays[f] = 1;
    }
  }

  /// Depth i of the programme: the placed neighbours of its stage and the bytes each still sends
  /// to stages placed later, the stage's own such bytes, and the stages on the frontier after it.
  struct depth_data {
    std::vector<std::size_t> nb;
    std::vector<double> nb_after;
    double s_after = 0;
    std::vector<char> stays;
  };

  /// The frontier before depth i.
  [[nodiscard]] const std::vector<std::size_t>& frontier_before(std::size_t i) const {
    static const std::vector<std::size_t> none;
    return i == 0 ? none : frontier_[i - 1];
  }

  /// The bytes of s's neighbours placed after depth i.
  [[nodiscard]] double bytes_after(std::size_t s, std::size_t i) const {
    double b = 0;
    for (auto u : g_->neighbours(s))
      if (pos_[u] > i) b += g_->message_bytes(s, u);
    return b;
  }
  /// The cheapest cost from class x to a class with room left (`used` of `cap` devices).
  [[nodiscard]] double cheapest_out(std::size_t x, const std::uint8_t* used, const std::uint8_t* cap) const {
    for (const auto y : nearest_[x])
      if (used[y] < cap[y]) return w_[x * K_ + y];
    return std::numeric_limits<double>::infinity();
  }

  /// The scratch of the programme's transitions: the counts, the class and partial time of every
  /// stage, and a child's key and values.
  struct programme_scratch {
    std::vector<std::uint8_t> used, key;
    std::vector<std::uint32_t> cls;
    std::vector<double> acc, val;
    explicit programme_scratch(std::size_t K, std::size_t S) : used(K), cls(S, 0), acc(S, 0) {}
  };

  /// One transition of the programme: the state (`pk`, `pv`) of depth i takes class x for the
  /// stage of depth i, the classes holding `cap` devices. False when a stage's time so far plus
  /// its later bytes at the cheapest cost to a class with room exceeds T; else the child's key
  /// and values in `sc.key`, `sc.val`.
  bool transition(std::size_t i, const std::uint8_t* pk, const double* pv, std::size_t x, const std::uint8_t* cap, double T,
                  programme_scratch& sc) const {
    const auto& g = *g_;
    const std::size_t s = order_[i];
    const auto& before = frontier_before(i);
    const auto& after = frontier_[i];
    const auto& d = depth_[i];
    std::copy(pk, pk + K_, sc.used.begin());
    for (std::size_t j = 0; j < before.size(); ++j) sc.cls[before[j]] = pk[K_ + j], sc.acc[before[j]] = pv[j];
    ++sc.used[x];
    double as = g.replica_compute_ms(s);
    for (auto u : d.nb) as += g.message_bytes(s, u) * w_[x * K_ + sc.cls[u]];
    bool ok = as + (d.s_after > 0 ? d.s_after * cheapest_out(x, sc.used.data(), cap) : 0) <= T;
    for (std::size_t j = 0; j < d.nb.size() && ok; ++j) {
      const std::size_t u = d.nb[j];
      const double au = sc.acc[u] + g.message_bytes(u, s) * w_[sc.cls[u] * K_ + x];
      ok = au + (d.nb_after[j] > 0 ? d.nb_after[j] * cheapest_out(sc.cls[u], sc.used.data(), cap) : 0) <= T;
    }
    if (!ok) return false;
    sc.cls[s] = static_cast<std::uint32_t>(x), sc.acc[s] = as;
    for (auto u : d.nb) sc.acc[u] += g.message_bytes(u, s) * w_[sc.cls[u] * K_ + x];
    double done = pv[before.size()];
    for (auto f : before)
      if (!d.stays[f]) done = std::max(done, sc.acc[f]);
    if (!d.stays[s]) done = std::max(done, as);
    sc.key.assign(sc.used.begin(), sc.used.end());
    sc.val.clear();
    for (const auto f : after) sc.key.push_back(static_cast<std::uint8_t>(sc.cls[f])), sc.val.push_back(sc.acc[f]);
    sc.val.push_back(done);
    return true;
  }

  /// One layer of the programme: keys (counts, frontier classes) in a key set, and per key its
  /// values (frontier times, largest finished time), merged by the minimum of each.
  struct layer {
    std::size_t klen = 0, vlen = 0;
    basic_key_set<std::uint8_t> keys;
    std::vector<double> vals;

    void reset(std::size_t kl, std::size_t vl) {
      klen = kl, vlen = vl;
      keys.clear(), vals.clear();
    }
    /// The programme's first layer: the one state of no class used (K counts 0, value 0).
    void start(std::size_t K) {
      reset(K, 1);
      const std::vector<std::uint8_t> k0(K, 0);
      const double v0 = 0;
      insert(k0.data(), &v0);
    }
    [[nodiscard]] std::size_t count() const noexcept { return keys.size(); }
    [[nodiscard]] const std::uint8_t* key(std::size_t e) const noexcept { return keys.key(e).data(); }
    /// The index of key k, or `count()` when it is absent.
    [[nodiscard]] std::size_t find(const std::uint8_t* k) const {
      const std::size_t e = keys.find({k, klen});
      return e == keys.npos ? count() : e;
    }
    /// Merges (key, val) by the minimum of each value; the key's index.
    std::size_t insert(const std::uint8_t* k, const double* v) {
      const auto [e, added] = keys.insert({k, klen});
      if (added) vals.insert(vals.end(), v, v + vlen);
      else
        for (std::size_t j = 0; j < vlen; ++j) vals[e * vlen + j] = std::min(vals[e * vlen + j], v[j]);
      return e;
    }
  };

  /// The programme at T (file comment) into `out`, its children added to `steps`; false at a
  /// limit, `*stop`, `deadline`, or (`capped_at`, as in `solve`) a capped target ≤ t.
  bool run_programme(double T, const limits& lim, const std::atomic<bool>* stop, clock::time_point deadline, listing& out,
                     std::uint64_t& steps, const std::atomic<double>* capped_at = nullptr, double t = 0) const {
    out.t = T;
    const double inf = std::numeric_limits<double>::infinity();
    layer cur, nxt;
    cur.start(K_);
    programme_scratch sc(K_, S_);
    for (std::size_t i = 0; i < S_; ++i) {
      nxt.reset(K_ + frontier_[i].size(), frontier_[i].size() + 1);
      for (std::size_t e = 0; e < cur.count(); ++e) {
        const std::uint8_t* pk = cur.key(e);
        for (std::size_t x = 0; x < K_; ++x) {
          if (pk[x] == capacity_[x]) continue;
          if ((++steps & 1023u) == 0 && (interrupted(stop, deadline) || (capped_at && capped_at->load(std::memory_order_relaxed) <= t)))
            return false;
          if (lim.listing_steps && steps > lim.listing_steps) return false;
          if (!transition(i, pk, cur.vals.data() + e * cur.vlen, x, capacity_.data(), T, sc)) continue;
          nxt.insert(sc.key.data(), sc.val.data());
          if ((lim.states && nxt.count() > lim.states) || nxt.count() * nxt.klen > (std::size_t{64} << 20)) return false;
        }
      }
      std::swap(cur, nxt);
    }
    // the last layer: keys are the count vectors, values τ'
    std::vector<std::size_t> idx(cur.count());
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return cur.vals[a] < cur.vals[b]; });
    out.flat.reserve(cur.count() * K_);
    for (const auto e : idx) {
      if (!(cur.vals[e] < inf)) continue;
      out.flat.insert(out.flat.end(), cur.key(e), cur.key(e) + K_);
      out.tau.push_back(cur.vals[e]);
    }
    return true;
  }

  /// The exact test of a packing (file comment, 3.): map/detail/quotient_copy.hpp.
  struct realisation;

  const stage_graph* g_;
  const link_costs* L_;
  std::vector<std::vector<std::size_t>> classes_;
  std::size_t S_, R_, K_;
  bool applies_ = false;
  std::vector<std::uint32_t> size_;                 // devices per class
  std::vector<std::uint8_t> capacity_;              // devices per class, as the programme counts them
  std::vector<double> w_;                           // [x · K + y]: w(x, y); w(x, x) the cheapest inside x
  std::vector<std::vector<std::uint32_t>> nearest_; // classes by ascending cost from x
  std::vector<std::size_t> order_, pos_;            // the programme's stage order
  std::vector<std::vector<std::size_t>> frontier_;  // per depth
  std::vector<depth_data> depth_;
  mutable listing_cache<listing> cache_;            // the listing at the largest T so far
  /// What earlier realisations learnt of a count vector's assignments, monotone in the target (an
  /// assignment within t is one within every larger target): none at or below `none_up_to`, some
  /// at or above `some_from`. Keyed by the vector's K counts; shared by concurrent solves.
  struct vector_knowledge {
    double none_up_to = -std::numeric_limits<double>::infinity();
    double some_from = std::numeric_limits<double>::infinity();
  };
  mutable std::mutex kmu_;
  mutable key_set known_;                          // the vectors learnt of, by their counts
  mutable std::vector<vector_knowledge> knowledge_;  // what was learnt, per vector of known_
};
/// `basic_quotient_copy_search<>` (solve() and its realisation: map/detail/quotient_copy.hpp).
/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using quotient_copy_search = basic_quotient_copy_search<>;

}  // namespace devplace::detail
