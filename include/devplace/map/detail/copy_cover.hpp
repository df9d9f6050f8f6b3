#pragma once
/// \file map/detail/copy_cover.hpp
/// The copy-cover inner search of `mapping_search` (the `copy_cover` oracle, map/oracle.hpp): for
/// a model whose replica copies are interchangeable and whose every dependency stays inside its
/// own copy, a mapping at target t is exactly R device-disjoint copy embeddings. Per target,
/// `enumerate` lists the feasible embeddings (the fastest per device set) with the smallest value
/// above t that pruned the listing, and the exact cover (map/detail/exact_cover.hpp; on twin
/// classes map/detail/class_cover.hpp) chooses R of them. The method, its bound, limits and
/// twin-class quotient: docs/mapping-oracles.md, "Copy cover".
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/class_cover.hpp"
#include "devplace/map/detail/cover_common.hpp"
#include "devplace/map/detail/exact_cover.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

/// Whether the copy-cover search is exact for `model` on `g`: equal replica counts, the model
/// declares the copies symmetry, and every dependency of a vertex is a vertex of its own copy.
template <mapping_cost_model C>
[[nodiscard]] bool copy_cover_applies(const C& model, const stage_graph& g, const link_costs& L,
                                      const std::vector<std::vector<std::size_t>>& deps) {
  if (!g.uniform_replicas() || model_symmetry(model, g, L) != replica_symmetry::copies) return false;
  for (std::size_t v = 0; v < g.vertices(); ++v)
    for (auto u : deps[v])
      if (g.replica_of_vertex(u) != g.replica_of_vertex(v)) return false;
  return true;
}

/// The feasible copy embeddings at a target t, one per device set (the fastest): S devices each in
/// stage order, and its time; `next_change` the smallest value above t that pruned the listing.
struct copy_listing {
  double t = 0, next_change = std::numeric_limits<double>::infinity();
  std::vector<std::uint32_t> dev;
  std::vector<double> time;
};

using copy_listing_cache = listing_cache<copy_listing>;

/// The per-input part of the copy-cover search (the copy's vertex order and what each placement
/// checks), reused for every target; `solve` is const and thread-safe.
template <mapping_cost_model C>
class copy_cover_search {
 public:
  using cache_type = copy_listing_cache;

  /// `deps`: the model's dependencies of every vertex; `table`: the per-device bounds;
  /// `twin_prev`: map/symmetry.hpp `device_twins` of L, or empty. With a twin class of two or more
  /// devices, the search runs on the twin-class quotient (see the file comment).
  copy_cover_search(const stage_graph& g, const link_costs& L, const device_bound_table& table,
                    const std::vector<std::vector<std::size_t>>& deps, const std::vector<std::size_t>& twin_prev = {})
      : g_(&g), L_(&L), S_(g.stages()), D_(L.devices()) {
    init_twin_classes(twin_prev);
    // copy 0's vertices in BFS order from the stage with the largest smallest per-device bound
    std::vector<double> p(S_, std::numeric_limits<double>::infinity());
    for (std::size_t s = 0; s < S_; ++s)
      for (std::size_t d = 0; d < D_; ++d) p[s] = std::min(p[s], table(g.vertex(s, 0), d));
    std::vector<std::size_t> parent_stage;  // the stage the BFS reached it from
    stages_ = g.breadth_first_stages(p, &parent_stage);
    std::vector<std::size_t> level(g.vertices(), S_);  // level of copy 0's vertices
    for (std::size_t i = 0; i < S_; ++i) level[g.vertex(stages_[i], 0)] = i;
    // at level i: the vertex itself and every placed vertex whose time reads it; exact once all
    // the dependencies of the checked vertex are placed, the model's bound before
    checks_.assign(S_, {});
    for (std::size_t i = 0; i < S_; ++i) {
      const std::size_t v = g.vertex(stages_[i], 0);
      for (std::size_t k = 0; k <= i; ++k) {
        const std::size_t u = g.vertex(stages_[k], 0);
        if (u != v && std::find(deps[u].begin(), deps[u].end(), v) == deps[u].end()) continue;
        std::size_t done = level[u];
        for (auto w : deps[u]) done = std::max(done, level[w]);
        checks_[i].push_back({u, done <= i});
      }
    }
    // p2p without latency: a vertex reached from a placed parent takes its devices in the order
    // of the parent's outgoing links; the parent's checked value (its time or bound) is then
    // nondecreasing along them (its other terms do not depend on the device), so the first
    // device it rejects ends the level, its value a lower bound for every later one
    parent_check_.assign(S_, unplaced);
    if constexpr (cost_model_form_v<C> == model_form::copies)
      if (!L.has_latency() && D_ >= 2)
        for (std::size_t i = 1; i < S_; ++i) {
          if (parent_stage[stages_[i]] == S_) continue;
          const std::size_t pv = g.vertex(parent_stage[stages_[i]], 0);
          for (std::size_t k = 0; k < checks_[i].size(); ++k)
            if (checks_[i][k].vertex == pv) parent_check_[i] = k;
        }
    // the devices of each level by increasing per-device bound
    by_bound_.resize(S_ * D_);
    for (std::size_t i = 0; i < S_; ++i) {
      const std::size_t v = g.vertex(stages_[i], 0);
      auto* row = &by_bound_[i * D_];
      for (std::size_t d = 0; d < D_; ++d) row[d] = static_cast<std::uint32_t>(d);
      std::stable_sort(row, row + D_, [&](std::uint32_t a, std::uint32_t b) { return table(v, a) < table(v, b); });
    }
  }

  /// The copy-cover answer at target t (see the file comment): from `cache` when it holds a
  /// listing at a target ≥ t (the embeddings feasible at t are those whose time is ≤ t), else from
  /// a new listing at t, which then replaces the cached one if its target is larger.
  /// `max_embeddings` embeddings listed, and `budget.listing` nodes for the listing and
  /// `budget.cover` for the cover.
  [[nodiscard]] cover_answer solve(const C& model, const device_bound_table& table, double t, std::size_t max_embeddings,
                                   cover_budget budget, copy_listing_cache& cache, const std::atomic<bool>* stop = nullptr,
                                   cover_clock::time_point deadline = cover_clock::time_point::max()) const {
    cover_answer a;
    // memory: 12 bytes per device of an embedding here and 12 in the cover's nodes, at most 256 MB
    const std::size_t most = std::min(max_embeddings, (std::size_t{256} << 20) / (24 * S_ + 64));
    // above a cached listing at t1, first list at t + (t − t1), which the next larger targets can
    // filter as well; when that reaches the limits, at t
    const auto listing = cache.covering(t, [&](copy_listing& fresh, const copy_listing* held) {
      if (held && std::isfinite(held->t)) {
        if (enumerate(model, table, t + (t - held->t), most, budget.listing, stop, deadline, fresh, a)) return true;
        if (interrupted(stop, deadline)) return false;
      }
      const std::uint64_t spent = a.nodes;
      fresh = copy_listing{};
      a = cover_answer{};
      const bool listed = enumerate(model, table, t, most, budget.listing, stop, deadline, fresh, a);
      a.nodes += spent;
      return listed;
    });
    if (!listing) return a;
    // the embeddings feasible at t, and the next value at which that set changes
    std::vector<std::uint32_t> emb;
    a.next_change = listing->next_change;
    const std::size_t n = listing->time.size();
    for (std::size_t e = 0; e < n; ++e) {
      if (listing->time[e] > t) {
        a.next_change = std::min(a.next_change, listing->time[e]);
        continue;
      }
      emb.insert(emb.end(), listing->dev.begin() + static_cast<std::ptrdiff_t>(e * S_),
                 listing->dev.begin() + static_cast<std::ptrdiff_t>(e * S_ + S_));
    }
    const std::size_t R = g_->replicas();
    a.rows = emb.size() / S_;
    if (quotient_) {
      solve_on_classes(emb, R, budget.cover, stop, deadline, a);
      return a;
    }
    const auto x = solve_packing(D_, S_, std::span<const std::uint32_t>(emb), R, budget.cover, stop, deadline);
    if (!take_packing(x.outcome, x.nodes, g_->vertices(), a)) return a;
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t e = x.solution[r];
      for (std::size_t s = 0; s < S_; ++s) a.dev[g_->vertex(s, r)] = emb[e * S_ + s];
    }
    return a;
  }

  /// Every feasible embedding of copy 0 at t, one per device set, the fastest of the set (S device
  /// ids each, stage order, and its time), and the smallest pruning value above t; false
  /// (`a.answer` unknown) when stopped or capped.
  bool enumerate(const C& model, const device_bound_table& table, double t, std::size_t max_embeddings, std::uint64_t node_budget,
                 const std::atomic<bool>* stop, cover_clock::time_point deadline, copy_listing& out, cover_answer& a) const {
    out.t = t;
    const auto& g = *g_;
    const auto& L = *L_;
    const std::size_t V = g.vertices(), W = (D_ + 63) / 64;
    std::vector<std::size_t> dev(V, unplaced);
    const std::span<const std::size_t> dv(dev);
    std::vector<std::uint64_t> used(W, 0);
    std::vector<std::size_t> next(S_, 0);  // index into by_bound_ of each level
    std::vector<double> worst(S_ + 1, 0.0);  // the largest exact time after each level
    double next_change = std::numeric_limits<double>::infinity();
    key_set index_of_set;  // quotient: the device sets, in the order of their embeddings
    auto pruned_by = [&](double x) { next_change = std::min(next_change, x); };
    auto vertex = [&](std::size_t i) { return g.vertex(stages_[i], 0); };
    auto value = [&](const check& c) {  // the checked vertex's time, or its bound before its dependencies are placed
      return c.exact ? static_cast<double>(model.time(g, L, dv, c.vertex)) : static_cast<double>(model.bound(g, L, dv, c.vertex));
    };
    work_counter work{.most = work_counter::fewer_than(node_budget), .stop = stop, .deadline = deadline};
    auto stopped = [&](bool rows_capped) {  // unfinished, at a limit (rows or steps) or stopped
      a.nodes = work.count;
      a.capped = work.capped || rows_capped;
      a.rows_capped = rows_capped;
      a.rows = out.time.size();
      return false;
    };
    std::size_t i = 0;
    for (;;) {
      const std::size_t v = vertex(i);
      if (dev[v] != unplaced) {  // take the current device off before trying the next
        used[dev[v] / 64] &= ~(std::uint64_t{1} << (dev[v] % 64));
        dev[v] = unplaced;
      }
      bool placed = false;
      const std::size_t pc = parent_check_[i];
      const std::size_t parent = pc == unplaced ? unplaced : checks_[i][pc].vertex;
      const std::size_t limit = pc == unplaced ? D_ : D_ - 1;
      while (next[i] < limit) {
        const std::size_t d = pc == unplaced ? by_bound_[i * D_ + next[i]++] : L.out_sorted_devices(dev[parent])[next[i]++];
        const double b = table(v, d);
        if (b > t) {
          pruned_by(b);
          if (pc != unplaced) continue;
          next[i] = limit;  // and every later device of the row
          break;
        }
        if ((used[d / 64] >> (d % 64)) & 1u) continue;
        // quotient: the k-th device this copy takes from a twin class is the class's k-th
        if (quotient_ && twin_prev_[d] != unplaced && !((used[twin_prev_[d] / 64] >> (twin_prev_[d] % 64)) & 1u)) continue;
        if (!work.step()) return stopped(false);
        dev[v] = d;
        double tp = worst[i];  // the largest exact time so far: every vertex is checked exactly once
        if (pc != unplaced) {  // the parent's check first: its failure ends the level
          const double y = value(checks_[i][pc]);
          if (y > t) {
            pruned_by(y);
            dev[v] = unplaced;
            next[i] = limit;
            break;
          }
          if (checks_[i][pc].exact) tp = std::max(tp, y);
        }
        bool ok = true;
        for (std::size_t k = 0; k < checks_[i].size() && ok; ++k) {
          if (k == pc) continue;
          const auto& c = checks_[i][k];
          const double y = value(c);
          if (y > t) pruned_by(y), ok = false;
          else if (c.exact) tp = std::max(tp, y);
        }
        worst[i + 1] = tp;
        if (!ok) {
          dev[v] = unplaced;
          continue;
        }
        used[d / 64] |= std::uint64_t{1} << (d % 64);
        placed = true;
        break;
      }
      if (!placed) {
        next[i] = 0;
        if (i == 0) break;
        --i;
        continue;
      }
      if (i + 1 < S_) {
        ++i;
        continue;
      }
      // a complete embedding and its time
      if (!record(dev, used, worst[S_], max_embeddings, index_of_set, out)) return stopped(true);
    }
    if (!quotient_) keep_fastest_per_device_set(out);
    a.nodes = work.count;
    out.next_change = next_change;
    return true;
  }

  /// Records the complete embedding `dev` of copy 0 (its time `time`, its devices `used`); on the
  /// quotient, its device set (a prefix of every twin class) stands for its count vector, and only
  /// the fastest of each set is kept, as they come. False when the listing already holds
  /// `max_embeddings`.
  bool record(const std::vector<std::size_t>& dev, const std::vector<std::uint64_t>& used, double time,
              std::size_t max_embeddings, key_set& index_of_set,
              copy_listing& out) const {
    std::size_t e = out.time.size();
    if (quotient_) {
      std::vector<std::uint32_t> key;
      for (const auto w : used) key.push_back(static_cast<std::uint32_t>(w)), key.push_back(static_cast<std::uint32_t>(w >> 32));
      const auto [index, added] = index_of_set.insert(key);
      if (!added && !(time < out.time[e = index])) return true;
    }
    if (e == out.time.size()) {
      if (e >= max_embeddings) return false;
      out.time.push_back(time);
      out.dev.resize(out.dev.size() + S_);
    }
    out.time[e] = time;
    for (std::size_t s = 0; s < S_; ++s) out.dev[e * S_ + s] = static_cast<std::uint32_t>(dev[g_->vertex(s, 0)]);
    return true;
  }

  /// Keeps one embedding per device set, the fastest (the earliest listed among equals), and
  /// orders them fastest first (the cover tries them in this order, so it meets the mappings whose
  /// copies are fast first): the sorted device lists ordered with the times, O(N log N · S).
  void keep_fastest_per_device_set(copy_listing& l) const {
    const std::size_t n = l.time.size();
    std::vector<std::uint32_t> key(l.dev);
    for (std::size_t e = 0; e < n; ++e)
      std::sort(key.begin() + static_cast<std::ptrdiff_t>(e * S_), key.begin() + static_cast<std::ptrdiff_t>(e * S_ + S_));
    auto key_less = [&](std::size_t x, std::size_t y) {
      return std::lexicographical_compare(key.begin() + static_cast<std::ptrdiff_t>(x * S_), key.begin() + static_cast<std::ptrdiff_t>(x * S_ + S_),
                                          key.begin() + static_cast<std::ptrdiff_t>(y * S_), key.begin() + static_cast<std::ptrdiff_t>(y * S_ + S_));
    };
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
      if (key_less(x, y)) return true;
      if (key_less(y, x)) return false;
      return l.time[x] != l.time[y] ? l.time[x] < l.time[y] : x < y;
    });
    // the first of each device set, then by time
    idx.erase(std::unique(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return !key_less(x, y); }), idx.end());
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return l.time[x] < l.time[y]; });
    copy_listing kept{.t = l.t, .next_change = l.next_change};
    for (const std::size_t e : idx) {
      kept.dev.insert(kept.dev.end(), l.dev.begin() + static_cast<std::ptrdiff_t>(e * S_), l.dev.begin() + static_cast<std::ptrdiff_t>(e * S_ + S_));
      kept.time.push_back(l.time[e]);
    }
    l = std::move(kept);
  }

  /// Whether the search runs on the twin-class quotient.
  [[nodiscard]] bool on_twin_classes() const noexcept { return quotient_; }

 private:
  struct check {
    std::size_t vertex;
    bool exact;
  };
  const stage_graph* g_;
  const link_costs* L_;
  std::size_t S_, D_;
  std::vector<std::size_t> stages_;
  std::vector<std::vector<check>> checks_;
  std::vector<std::size_t> parent_check_;  // per level: the parent's entry of checks_, or unplaced
  std::vector<std::uint32_t> by_bound_;
  // the twin-class quotient: on when a class has two or more devices
  bool quotient_ = false;
  std::vector<std::size_t> twin_prev_;
  std::vector<std::uint32_t> class_of_, rank_in_class_, class_size_;
  std::vector<std::vector<std::uint32_t>> class_devices_;  // in index order

  void init_twin_classes(const std::vector<std::size_t>& twin_prev) {
    if (twin_prev.size() != D_) return;
    class_of_.assign(D_, 0), rank_in_class_.assign(D_, 0);
    for (std::size_t d = 0; d < D_; ++d) {
      if (twin_prev[d] == unplaced) {
        class_of_[d] = static_cast<std::uint32_t>(class_devices_.size());
        class_devices_.emplace_back();
      } else {
        class_of_[d] = class_of_[twin_prev[d]];  // twin_prev[d] < d
      }
      auto& members = class_devices_[class_of_[d]];
      rank_in_class_[d] = static_cast<std::uint32_t>(members.size());
      members.push_back(static_cast<std::uint32_t>(d));
      quotient_ = quotient_ || members.size() >= 2;
    }
    for (const auto& m : class_devices_) class_size_.push_back(static_cast<std::uint32_t>(m.size()));
    if (quotient_) twin_prev_ = twin_prev;
  }

  /// The cover on the quotient: the count vectors of the embeddings feasible at t (`emb`, S
  /// canonical devices each), R of them within the class sizes (class_cover.hpp), mapped back
  /// to devices by handing out each class's devices in order.
  void solve_on_classes(const std::vector<std::uint32_t>& emb, std::size_t R, std::uint64_t node_budget,
                        const std::atomic<bool>* stop, cover_clock::time_point deadline, cover_answer& a) const {
    const std::size_t K = class_size_.size(), n = emb.size() / S_;
    using entry = class_cover_packing::entry;
    std::vector<entry> entries;  // the nonzero counts of each embedding
    std::vector<std::size_t> starts{0};
    std::vector<std::uint32_t> cls(S_);
    for (std::size_t e = 0; e < n; ++e) {
      for (std::size_t s = 0; s < S_; ++s) cls[s] = class_of_[emb[e * S_ + s]];
      std::sort(cls.begin(), cls.end());
      for (std::size_t s = 0; s < S_; ++s)
        if (s > 0 && cls[s] == cls[s - 1]) ++entries.back().count;
        else entries.push_back({cls[s], 1});
      starts.push_back(entries.size());
    }
    class_cover_packing x{std::span<const std::uint32_t>(class_size_), std::span<const entry>(entries), std::span<const std::size_t>(starts)};
    const auto o = x.solve(R, node_budget, stop, deadline);
    if (!take_packing(o, x.nodes(), g_->vertices(), a)) return;
    std::vector<std::uint32_t> offset(K, 0);
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t e = x.solution()[r];
      for (std::size_t s = 0; s < S_; ++s) {
        const std::uint32_t d = emb[e * S_ + s], k = class_of_[d];
        a.dev[g_->vertex(s, r)] = class_devices_[k][offset[k] + rank_in_class_[d]];
      }
      for (std::size_t j = starts[e]; j < starts[e + 1]; ++j) offset[entries[j].cls] += entries[j].count;
    }
  }
};

}  // namespace devplace::detail
