#pragma once
/// \file map/detail/quotient_copy.hpp
/// The quotient copy cover of the p2p model (the method: map/detail/quotient_copy_listing.hpp):
/// its realisation of a packing on the real links (step 3) and `quotient_copy_search::solve`.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "devplace/map/detail/class_cover.hpp"
#include "devplace/map/detail/quotient_copy_listing.hpp"

namespace devplace::detail {

/// The exact test of a packing (file comment, 3.), with its steps and the mapping found.
template <int I>
struct basic_quotient_copy_search<I>::realisation {
  const basic_quotient_copy_search& q;
  double t;
  const listing& lst;
  const limits& lim;
  work_counter work;  // the steps tried; aborted at a limit, `*stop`, the deadline, or an unsure answer
  std::vector<std::size_t> dev;
  // assignments per count vector (by listing index), listed at t on first use: asg_done 1 when
  // listed up to the first one (a packing's vectors are first checked for one each), 2 when whole
  std::vector<std::vector<std::uint32_t>> asg;   // flat S per assignment
  std::vector<char> asg_done, asg_capped;

  realisation(const basic_quotient_copy_search& q_, double t_, const listing& l, const limits& lm, const std::atomic<bool>* st,
              clock::time_point dl)
      : q(q_), t(t_), lst(l), lim(lm), work{.most = work_counter::at_most(lm.realise_steps), .stop = st, .deadline = dl, .mask = 255} {
    asg.resize(l.tau.size()), asg_done.assign(l.tau.size(), 0), asg_capped.assign(l.tau.size(), 0);
  }

  /// The *guide* of one count vector c: the programme (file comment, 1.) restricted to the
  /// assignments with counts c (a class takes at most c_x stages, and the cheapest cost from a
  /// stage's class is over the classes with some of c left, as in `assignments`), every layer
  /// kept, and each state marked live when some transition leads from it to a live state of the
  /// next layer (the last layer's states are live). The programme merges assignments into a
  /// state by the minimum of its values, and its tests only get easier with lower values, so
  /// the partial assignment of every exact assignment with counts c (and relaxed times ≤ t) is
  /// a live state at every depth: the assignment search drops a partial assignment whose state
  /// is not live, and stays exact. False when it stopped (a limit, `*stop`, the deadline).
  std::vector<layer> gl;
  std::vector<std::vector<char>> glive;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> gedges;  // per depth: (state, child)
  bool build_guide(const std::uint8_t* c) {
    const std::size_t S = q.S_, K = q.K_;
    const double T = t * (1 + 1e-9) + 1e-12;
    gl.resize(S + 1);
    glive.resize(S + 1);
    gl[0].start(K);
    programme_scratch sc(K, S);
    std::vector<std::size_t> in_c;  // the classes c uses
    for (std::size_t x = 0; x < K; ++x)
      if (c[x] > 0) in_c.push_back(x);
    gedges.resize(S);
    for (std::size_t i = 0; i < S; ++i) {
      gl[i + 1].reset(K + q.frontier_[i].size(), q.frontier_[i].size() + 1);
      gedges[i].clear();
      for (std::size_t pe = 0; pe < gl[i].count(); ++pe)
        for (const auto x : in_c) {
          const std::uint8_t* pk = gl[i].key(pe);
          if (pk[x] >= c[x]) continue;
          if (!work.step()) return false;
          if (q.transition(i, pk, gl[i].vals.data() + pe * gl[i].vlen, x, c, T, sc))
            gedges[i].push_back({static_cast<std::uint32_t>(pe), static_cast<std::uint32_t>(gl[i + 1].insert(sc.key.data(), sc.val.data()))});
        }
      if (gl[i + 1].count() == 0) {  // no partial assignment reaches depth i + 1: none is live
        glive[0].assign(gl[0].count(), 0);
        return true;
      }
    }
    glive[S].assign(gl[S].count(), 1);
    for (std::size_t i = S; i-- > 0;) {
      glive[i].assign(gl[i].count(), 0);
      for (const auto& [pe, ce] : gedges[i])
        if (glive[i + 1][ce]) glive[i][pe] = 1;
    }
    return true;
  }

  /// The class assignments of count vector e with every relaxed time ≤ t whose classes each take
  /// their stages alone (at most lim.assignments); with `first_only`, the first of them (the
  /// list is whole when it is empty). Depth-first, along the live states of e's guide.
  const std::vector<std::uint32_t>& assignments(std::size_t e, bool first_only = false) {
    if (asg_done[e] == 2 || (first_only && asg_done[e] == 1)) return asg[e];
    asg[e].clear();
    const auto& g = *q.g_;
    const std::size_t S = q.S_, K = q.K_;
    const std::uint8_t* c = lst.flat.data() + e * K;
    if (!build_guide(c)) return asg[e];  // aborted
    if (gl[0].count() == 0 || !glive[0][0]) {  // no assignment: the guide proves it
      asg_done[e] = 2;
      return asg[e];
    }
    std::vector<std::uint8_t> used(K, 0), gkey;
    std::vector<std::uint32_t> a(S, 0);
    std::vector<double> acc(S, 0);
    const double T = t * (1 + 1e-9) + 1e-12;
    // whether the partial assignment after depth i is a live state of the guide
    auto live = [&](std::size_t i) {
      const auto& after = q.frontier_[i];
      gkey.assign(used.begin(), used.end());
      for (auto f : after) gkey.push_back(static_cast<std::uint8_t>(a[f]));
      const std::size_t ce = gl[i + 1].find(gkey.data());
      return ce < gl[i + 1].count() && glive[i + 1][ce];
    };
    std::vector<std::vector<std::pair<double, std::uint32_t>>> cand(S);  // per depth
    std::vector<const std::uint32_t*> alone(1);
    auto rec = [&](auto&& self, std::size_t i) -> void {
      if (work.aborted || asg_capped[e] || (first_only && !asg[e].empty())) return;
      if (i == S) {
        if (lim.assignments && asg[e].size() / S >= lim.assignments) {
          asg_capped[e] = 1;
          return;
        }
        // kept only when each class can take its stages alone (a copy's part of a realisation)
        alone[0] = a.data();
        if (!classes_fit(a.data(), alone)) return;
        asg[e].insert(asg[e].end(), a.begin(), a.end());
        return;
      }
      const std::size_t s = q.order_[i];
      // the classes with room, the cheapest for s's placed neighbours first (a realisable
      // assignment, when there is one, comes early; the whole list is the same set either way)
      auto& xs = cand[i];
      xs.clear();
      for (std::size_t x = 0; x < K; ++x)
        if (used[x] < c[x]) {
          double k = 0;
          for (auto u : g.neighbours(s))
            if (q.pos_[u] < i) k += g.message_bytes(s, u) * q.w_[x * K + a[u]];
          xs.push_back({k, static_cast<std::uint32_t>(x)});
        }
      std::sort(xs.begin(), xs.end());
      for (const auto& [cost_x, x] : xs) {
        if (work.aborted || asg_capped[e] || (first_only && !asg[e].empty())) return;
        if (!work.step()) return;
        ++used[x];
        a[s] = static_cast<std::uint32_t>(x);
        double as = g.replica_compute_ms(s);
        for (auto u : g.neighbours(s))
          if (q.pos_[u] < i) as += g.message_bytes(s, u) * q.w_[x * K + a[u]], acc[u] += g.message_bytes(u, s) * q.w_[a[u] * K + x];
        acc[s] = as;
        auto check = [&](std::size_t v) {
          const double b = q.bytes_after(v, i);
          return acc[v] + (b > 0 ? b * q.cheapest_out(a[v], used.data(), c) : 0) <= T;
        };
        bool ok = check(s);
        for (auto u : g.neighbours(s))
          if (ok && q.pos_[u] < i) ok = check(u);
        if (ok && live(i)) self(self, i + 1);
        for (auto u : g.neighbours(s))
          if (q.pos_[u] < i) acc[u] -= g.message_bytes(u, s) * q.w_[a[u] * K + x];
        --used[x];
      }
    };
    rec(rec, 0);
    if (!work.aborted) asg_done[e] = first_only && !asg[e].empty() ? 1 : 2;
    return asg[e];
  }

  /// One constrained stage of a class: copy r's stage s, with its slack.
  struct item {
    std::uint32_t copy, stage;
    double slack;
  };

  /// Scratch of one class's test: its constrained stages, their devices, the classes tested.
  std::vector<item> items;
  std::vector<std::size_t> place;
  std::vector<char> seen;

  /// Whether the constrained stages of copies 0..R' (assignments `chosen`) in class x get
  /// distinct devices of x within their slacks (`class_items`, `place_items`), remembered by
  /// its items: the copies' choices that differ outside class x (most of them, while the copies'
  /// assignments are tried depth-first) pose the same placement problem in x again, and its
  /// answer is looked up instead of searched anew.
  bool class_fits_memo(std::size_t x, const std::vector<const std::uint32_t*>& chosen) {
    if (!class_items(x, chosen)) return false;
    if (items.empty()) return true;
    key.assign(1, static_cast<std::uint32_t>(x));
    for (const auto& it : items) {
      const auto slack = std::bit_cast<std::uint64_t>(it.slack);
      key.insert(key.end(), {static_cast<std::uint32_t>(it.copy), static_cast<std::uint32_t>(it.stage),
                             static_cast<std::uint32_t>(slack), static_cast<std::uint32_t>(slack >> 32)});
    }
    if (const auto f = memo.find(key); f != key_set::npos) return fits[f];
    const bool ok = place_items(x);
    if (work.aborted) return false;  // stopped inside: no answer to remember
    if (memo.size() >= (std::size_t{1} << 20)) memo.clear(), fits.clear();  // bounded memory
    memo.insert(key);
    fits.push_back(ok);
    return ok;
  }

  /// `class_fits_memo` of every class that the assignment `a` (the last of `chosen`) uses.
  bool classes_fit(const std::uint32_t* a, const std::vector<const std::uint32_t*>& chosen) {
    seen.assign(q.K_, 0);
    for (std::size_t s = 0; s < q.S_; ++s) {
      if (seen[a[s]]) continue;
      seen[a[s]] = 1;
      if (!class_fits_memo(a[s], chosen)) return false;
    }
    return true;
  }

  key_set memo;                  // (class, its items): whether they fit, in `fits`
  std::vector<char> fits;
  std::vector<std::uint32_t> key;

  /// The constrained stages (with a neighbour of their copy in class x) of the copies `chosen`
  /// in x, with their slacks (`items`); false when an unconstrained one is over t already.
  bool class_items(std::size_t x, const std::vector<const std::uint32_t*>& chosen) {
    const auto& g = *q.g_;
    const std::size_t K = q.K_;
    const double T = t * (1 + 1e-12);  // the model's own times are checked at the end
    items.clear();
    for (std::size_t r = 0; r < chosen.size(); ++r) {
      const std::uint32_t* a = chosen[r];
      for (const auto s : q.order_) {
        if (a[s] != x) continue;
        double v = g.replica_compute_ms(s);
        bool constrained = false;
        for (auto u : g.neighbours(s)) {
          if (a[u] == x) constrained = true;
          else v += g.message_bytes(s, u) * q.w_[x * K + a[u]];
        }
        if (!constrained && v > T) return false;  // within the tolerance of the listing only
        if (constrained) items.push_back({static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(s), T - v});
      }
    }
    return true;
  }

  /// Distinct devices of class x for `items` within their slacks, depth-first (`place`).
  bool place_items(std::size_t x) {
    const auto& g = *q.g_;
    const std::size_t K = q.K_;
    place.assign(items.size(), 0);
    if (items.empty()) return true;
    const auto& devs = q.classes_[x];
    const double wmin = q.w_[x * K + x];
    std::vector<double> sum(items.size(), 0);  // intra sends to placed stages
    std::vector<double> open(items.size(), 0); // bytes to same-class stages not yet placed
    // item index of (copy, stage) for the neighbours: items of one copy are contiguous
    auto index_of = [&](std::size_t from, std::uint32_t r, std::uint32_t s) -> std::size_t {
      for (std::size_t j = from; j < items.size() && items[j].copy == r; ++j)
        if (items[j].stage == s) return j;
      for (std::size_t j = from; j-- > 0 && items[j].copy == r;)
        if (items[j].stage == s) return j;
      return items.size();
    };
    std::vector<std::vector<std::pair<std::size_t, double>>> nbr(items.size());
    for (std::size_t j = 0; j < items.size(); ++j) {
      for (auto u : g.neighbours(items[j].stage)) {
        const std::size_t k = index_of(j, items[j].copy, static_cast<std::uint32_t>(u));
        if (k < items.size()) nbr[j].push_back({k, g.message_bytes(items[j].stage, u)}), open[j] += g.message_bytes(items[j].stage, u);
      }
      if (open[j] * wmin > items[j].slack) return false;
    }
    std::uint32_t free = devs.size() >= 32 ? ~0u : (1u << devs.size()) - 1;
    auto rec = [&](auto&& self, std::size_t j) -> bool {
      if (j == items.size()) return true;
      for (std::uint32_t m = free; m; m &= m - 1) {
        if (!work.step()) return false;
        const std::size_t d = static_cast<std::size_t>(std::countr_zero(m));
        place[j] = devs[d];
        bool ok = true;
        // j's sends to placed neighbours, and theirs to j, within the slacks
        double sj = 0;
        for (const auto& [k, bytes] : nbr[j])
          if (k < j) sj += bytes * q.L_->ms_per_byte(devs[d], place[k]);
        double oj = 0;
        for (const auto& [k, bytes] : nbr[j])
          if (k > j) oj += bytes;
        ok = sj + oj * wmin <= items[j].slack;
        for (const auto& [k, bytes] : nbr[j]) {
          if (!ok) break;
          if (k >= j) continue;
          const double add = bytes * q.L_->ms_per_byte(place[k], devs[d]);
          ok = sum[k] + add + (open[k] - bytes) * wmin <= items[k].slack;
        }
        if (ok) {
          for (const auto& [k, bytes] : nbr[j])
            if (k < j) sum[k] += bytes * q.L_->ms_per_byte(place[k], devs[d]), open[k] -= bytes;
          sum[j] = sj, open[j] = oj;
          free &= ~(1u << d);
          const bool r = self(self, j + 1);
          free |= 1u << d;
          for (const auto& [k, bytes] : nbr[j])
            if (k < j) sum[k] -= bytes * q.L_->ms_per_byte(place[k], devs[d]), open[k] += bytes;
          if (r) return true;
        }
        if (work.aborted) return false;
      }
      return false;
    };
    return rec(rec, 0);
  }

  /// Vector e's K counts as the key of `known_` (in a scratch buffer: no allocation per lookup).
  [[nodiscard]] std::span<const std::uint32_t> counts_key(std::size_t e) const {
    ckey.assign(lst.flat.begin() + static_cast<std::ptrdiff_t>(e * q.K_), lst.flat.begin() + static_cast<std::ptrdiff_t>((e + 1) * q.K_));
    return ckey;
  }
  mutable std::vector<std::uint32_t> ckey;

  /// What earlier solves learnt of vector e at t: -1 no assignment, 1 some, 0 unknown.
  [[nodiscard]] int known(std::size_t e) const {
    const auto k = counts_key(e);
    std::lock_guard lk(q.kmu_);
    const auto f = q.known_.find(k);
    if (f == key_set::npos) return 0;
    return t <= q.knowledge_[f].none_up_to ? -1 : t >= q.knowledge_[f].some_from ? 1 : 0;
  }
  void learn(std::size_t e, bool some) const {
    const auto k = counts_key(e);
    std::lock_guard lk(q.kmu_);
    if (q.known_.size() >= (std::size_t{1} << 20)) q.known_.clear(), q.knowledge_.clear();  // bounded memory
    const auto [f, added] = q.known_.insert(k);
    if (added) q.knowledge_.emplace_back();
    auto& v = q.knowledge_[f];
    if (some) v.some_from = std::min(v.some_from, t);
    else v.none_up_to = std::max(v.none_up_to, t);
  }

  /// Whether the packing `sol` (R count vectors) realises; the mapping in `dev` when it does.
  bool run(std::span<const std::size_t> sol_in) {
    if (work.aborted) return false;
    std::vector<std::size_t> sol(sol_in.begin(), sol_in.end());
    std::sort(sol.begin(), sol.end());
    const std::size_t R = sol.size(), K = q.K_, S = q.S_;
    // most rejected packings hold a vector with no assignment at all: that is found without
    // listing the others' assignments whole, and remembered across targets
    for (const auto e : sol) {
      const int k = known(e);
      if (k < 0) return false;
      if (k > 0) continue;
      const bool empty = assignments(e, true).empty();
      if (work.aborted) return false;
      learn(e, !empty);
      if (empty) return false;
    }
    for (const auto e : sol)
      if (assignments(e).empty()) return false;
    std::vector<const std::uint32_t*> chosen;
    std::vector<std::size_t> pick(R, 0);
    auto rec = [&](auto&& self, std::size_t r) -> bool {
      if (r == R) return true;
      const auto& A = asg[sol[r]];
      const std::size_t na = A.size() / S;
      const std::size_t from = r > 0 && sol[r] == sol[r - 1] ? pick[r - 1] : 0;
      for (std::size_t j = from; j < na; ++j) {
        if (!work.step()) return false;
        pick[r] = j;
        chosen.push_back(A.data() + j * S);
        if (classes_fit(chosen.back(), chosen) && self(self, r + 1)) return true;
        chosen.pop_back();
        if (work.aborted) return false;
      }
      return false;
    };
    if (!rec(rec, 0)) {
      for (const auto e : sol)
        if (asg_capped[e]) work.aborted = true;  // not every assignment was tried
      return false;
    }
    // the devices: constrained stages as placed, the others on the devices of their class left
    const auto& g = *q.g_;
    dev.assign(g.vertices(), unplaced);
    for (std::size_t x = 0; x < K; ++x) {
      if (!class_items(x, chosen) || !place_items(x)) return false;  // cannot happen: checked above
      const auto& devs = q.classes_[x];
      std::vector<char> taken(devs.size(), 0);
      for (std::size_t j = 0; j < items.size(); ++j) {
        dev[g.vertex(items[j].stage, items[j].copy)] = place[j];
        taken[static_cast<std::size_t>(std::find(devs.begin(), devs.end(), place[j]) - devs.begin())] = 1;
      }
      std::size_t next = 0;
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t s = 0; s < S; ++s) {
          if (chosen[r][s] != x || dev[g.vertex(s, r)] != unplaced) continue;
          while (taken[next]) ++next;
          taken[next] = 1;
          dev[g.vertex(s, r)] = devs[next];
        }
    }
    // the model's own times (sums in another order): a mapping over t by rounding answers
    // unknown, never a rejection
    for (std::size_t v = 0; v < g.vertices(); ++v)
      if (g.replica_compute_ms(g.stage_of_vertex(v)) + p2p_cost::sends_ms(g, *q.L_, dev, v) > t) {
        work.aborted = true;
        return false;
      }
    return true;
  }
};

// quotient_copy_search::solve (declared, and documented, in quotient_copy_listing.hpp)
template <int I>
cover_answer basic_quotient_copy_search<I>::solve(double t, const limits& lim, const std::atomic<bool>* stop,
                                                clock::time_point deadline, const std::atomic<double>* capped_at) const {
  cover_answer a;
  if (!applies_) return a;
  const double T = t * (1 + 1e-9) + 1e-12;  // a copy whose time rounds to t is listed
  const auto lst = cache_.covering(T, [&](listing& fresh, const listing*) {
    return run_programme(T, lim, stop, deadline, fresh, a.nodes, capped_at, t);
  });
  if (!lst) {
    a.capped = !interrupted(stop, deadline);
    return a;
  }
  const auto& tau = lst->tau;
  const std::size_t n = static_cast<std::size_t>(std::upper_bound(tau.begin(), tau.end(), T) - tau.begin());
  a.rows = n;
  a.next_change = n < tau.size() ? std::min(tau[n], lst->t) : lst->t;
  if (!(a.next_change > t)) a.next_change = std::nextafter(t, std::numeric_limits<double>::infinity());
  if (n == 0) {
    a.answer = cover_answer::kind::none;
    return a;
  }
  std::vector<class_cover_packing::entry> entries;
  std::vector<std::size_t> starts{0};
  for (std::size_t e = 0; e < n; ++e) {
    for (std::size_t x = 0; x < K_; ++x)
      if (lst->flat[e * K_ + x] > 0) entries.push_back({static_cast<std::uint32_t>(x), lst->flat[e * K_ + x]});
    starts.push_back(entries.size());
  }
  class_cover_packing pack{std::span<const std::uint32_t>(size_), std::span<const class_cover_packing::entry>(entries),
                           std::span<const std::size_t>(starts)};
  realisation re(*this, t, *lst, lim, stop, deadline);
  std::atomic<bool> halt{false};
  pack.set_accept(
      [&](std::span<const std::size_t> sol) {
        if (re.run(sol)) return true;
        if (re.work.aborted) halt.store(true, std::memory_order_relaxed);
        return false;
      },
      std::numeric_limits<std::size_t>::max());
  const auto o = pack.solve(R_, lim.packing_nodes, &halt, deadline);
  a.nodes += pack.nodes() + re.work.count;
  a.rejected = pack.rejections();
  if (o == class_cover_packing::outcome::found) {
    a.answer = cover_answer::kind::found;
    a.dev = std::move(re.dev);
    return a;
  }
  if (o == class_cover_packing::outcome::none && !re.work.aborted && !(stop && stop->load())) {
    a.answer = cover_answer::kind::none;
    if (a.rejected > 0) a.next_change = std::nextafter(t, std::numeric_limits<double>::infinity());
  }
  return a;
}

}  // namespace devplace::detail
