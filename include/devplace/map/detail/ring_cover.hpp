#pragma once
/// \file map/detail/ring_cover.hpp
/// The ring-cover inner search of `mapping_search` (the `ring_cover` oracle, map/oracle.hpp), the
/// allreduce counterpart of the copy cover: stage s on a ring of devices takes c_u(s) + x_s · W
/// (x_s = 2(R−1)/R · P(s), W the ring's largest per-byte link cost), so the device sets a stage
/// accepts at t are nested. Per target, `enumerate` (by paths) or `enumerate_by_subsets` lists
/// every device set holding an R-cycle with W ≤ max_s θ_s, and the exact cover with row levels
/// (map/detail/exact_cover.hpp) chooses S of them under Hall's condition. The method, its bound,
/// limits and where it applies: docs/mapping-oracles.md, "Ring cover".
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <unordered_map>
#include <vector>

#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/copy_cover.hpp"
#include "devplace/map/detail/exact_cover.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

/// The most replicas for which the mapper runs the ring cover: its listing holds device sets of R
/// devices, and with rings of 16 devices no 64-device case of the benchmark is answered by it while
/// its turns cost the depth-first runs most of the second (docs/mapping-results.md, "Rings of more than 12
/// devices").
inline constexpr std::size_t ring_cover_max_replicas = 12;

/// Whether the ring cover is exact for `model` on `g` and `L`: a model of the rings form, equal replica
/// counts R ≥ 2, every stage with parameters, and no link latency. (The mapper runs it only up to
/// `ring_cover_max_replicas`.)
template <mapping_cost_model C>
[[nodiscard]] bool ring_cover_applies(const C&, const stage_graph& g, const link_costs& L) {
  return cost_model_form_v<C> == model_form::rings && nested_rings_apply(g, L);
}

/// The device sets of R devices that hold a ring with W ≤ the largest threshold at target t: R
/// devices each in ring order (the direction of W), and W; `next_change` the smallest stage time
/// above t at which a pruned path could complete.
struct ring_listing {
  double t = 0, next_change = std::numeric_limits<double>::infinity();
  std::vector<std::uint32_t> dev;
  std::vector<double> w;
  bool ordered = true;  ///< dev holds each ring in ring order (else sorted: the ring is rebuilt)
};

/// The listing at the largest target listed so far, shared by the targets searched at once.
using ring_listing_cache = listing_cache<ring_listing>;

/// The per-input part of the ring cover (each device's links by cost: the link table's order, or
/// on asymmetric links its own), reused for every target; `solve` is const and thread-safe.
/// Keeps pointers to `g` and `L`, which must outlive it.
template <mapping_cost_model C>
class ring_cover_search {
 public:
  using cache_type = ring_listing_cache;
  static constexpr bool rings = true;

  /// `by_subsets`: list by subsets where it applies (symmetric links, D ≤ 64, 3 ≤ R ≤ 16), else
  /// by paths (the two listings give the same sets and values; tested).
  ring_cover_search(const stage_graph& g, const link_costs& L, bool by_subsets = true)
      : g_(&g), L_(&L), S_(g.stages()), R_(g.replicas()), D_(L.devices()),
        dp_(by_subsets && L.symmetric() && D_ <= 64 && R_ >= 3 && R_ <= 16) {
    // every device's others by the cheaper direction of their link: the link table's own order
    // (by cost, then id) on symmetric links, sorted here otherwise
    if (L.symmetric()) return;
    by_cost_.resize(D_ * (D_ == 0 ? 0 : D_ - 1));
    for (std::size_t a = 0; a < D_; ++a) {
      auto* row = by_cost_.data() + a * (D_ - 1);
      std::size_t k = 0;
      for (std::size_t b = 0; b < D_; ++b)
        if (b != a) row[k++] = static_cast<std::uint32_t>(b);
      std::stable_sort(row, row + (D_ - 1), [&](std::uint32_t x, std::uint32_t y) { return both(a, x) < both(a, y); });
    }
  }

  /// Whether this search lists by subsets (else by paths).
  [[nodiscard]] bool lists_by_subsets() const noexcept { return dp_; }

  /// The ring-cover answer at target t (see the file comment), from `cache` when it holds a
  /// listing at a target ≥ t, else from a new listing at t (offered to the cache). `max_rings`
  /// sets listed, and `budget.listing` nodes for the listing and `budget.cover` for the cover.
  /// `model` and `table` are unused (the times are c_u(s) + x_s · W, the model's own).
  [[nodiscard]] cover_answer solve(const C&, const device_bound_table&, double t, std::size_t max_rings, cover_budget budget,
                                   ring_listing_cache& cache, const std::atomic<bool>* stop = nullptr,
                                   cover_clock::time_point deadline = cover_clock::time_point::max()) const {
    cover_answer a;
    const std::size_t most = std::min(max_rings, (std::size_t{256} << 20) / (16 * R_ + 64));
    const auto listing = cache.covering(t, [&](ring_listing& fresh, const ring_listing*) {
      return dp_ ? enumerate_by_subsets(t, most, budget.listing, stop, deadline, fresh, a)
                 : enumerate(t, most, budget.listing, stop, deadline, fresh, a);
    });
    if (!listing) return a;
    // the thresholds at t, largest first; the sets within the largest, their levels, and the
    // next value above t at which a level changes
    std::vector<double> theta(S_);
    for (std::size_t s = 0; s < S_; ++s) theta[s] = g_->ring_cost_within(s, t);
    std::vector<std::size_t> by_theta(S_);
    std::iota(by_theta.begin(), by_theta.end(), std::size_t{0});
    std::stable_sort(by_theta.begin(), by_theta.end(), [&](std::size_t x, std::size_t y) { return theta[x] > theta[y]; });
    a.next_change = listing->next_change;
    std::vector<std::uint32_t> rows, levels;
    // the rows by W, the fastest rings first (the order the cover tries them in)
    std::vector<std::size_t> by_w(listing->w.size());
    std::iota(by_w.begin(), by_w.end(), std::size_t{0});
    std::stable_sort(by_w.begin(), by_w.end(), [&](std::size_t x, std::size_t y) { return listing->w[x] < listing->w[y]; });
    for (const std::size_t e : by_w) {
      const double W = listing->w[e];
      // level: the stages, in order of θ, that take the set before the first that does not
      // (the times checked exactly); a later stage that takes it all the same (θ and the times
      // disagree in the last bit) leaves the target to the depth-first search
      std::uint32_t level = 0, takers = 0;
      for (std::size_t i = 0; i < S_; ++i) {
        const std::size_t s = by_theta[i];
        const double time = g_->ring_stage_ms(s, W);
        if (time <= t) {
          ++takers;
          if (level == i) ++level;
        } else {
          a.next_change = std::min(a.next_change, time);
        }
      }
      if (takers != level) return {.nodes = a.nodes};
      if (level == 0) continue;
      rows.insert(rows.end(), listing->dev.begin() + static_cast<std::ptrdiff_t>(e * R_),
                  listing->dev.begin() + static_cast<std::ptrdiff_t>(e * R_ + R_));
      levels.push_back(level);
    }
    a.rows = levels.size();
    const auto x = solve_packing(D_, R_, std::span<const std::uint32_t>(rows), S_, budget.cover, stop, deadline,
                                 std::span<const std::uint32_t>(levels));
    if (!take_packing(x.outcome, x.nodes, g_->vertices(), a)) return a;
    // largest W (smallest level) to the stage with the largest θ (Hall: the i-th smallest level
    // is ≥ i; a set of level l is taken by the l stages of largest θ, exactly)
    std::vector<std::size_t> chosen(x.solution.begin(), x.solution.end());
    std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t p, std::size_t q) { return levels[p] < levels[q]; });
    for (std::size_t i = 0; i < S_; ++i) {
      const std::size_t s = by_theta[i], row = chosen[i];
      std::vector<std::uint32_t> ring(rows.data() + row * R_, rows.data() + row * R_ + R_);
      if (!listing->ordered) best_ring(*L_, ring);
      for (std::size_t q = 0; q < R_; ++q) a.dev[g_->vertex(s, q)] = ring[q];
    }
    return a;
  }

 private:
  /// Per-byte cost of link a -> b (the ring's time is x_s times it: no latency where the ring
  /// cover applies).
  [[nodiscard]] double cost(std::size_t a, std::size_t b) const noexcept { return L_->ms_per_byte(a, b); }
  /// Device a's others, the cheaper direction of their link first.
  [[nodiscard]] const std::uint32_t* by_cost(std::size_t a) const noexcept {
    return by_cost_.empty() ? L_->out_sorted_devices(a).data() : by_cost_.data() + a * (D_ - 1);
  }
  [[nodiscard]] double both(std::size_t a, std::size_t b) const noexcept { return std::min(cost(a, b), cost(b, a)); }

  /// The largest θ_s at t, raised by a relative 1e-9: a set whose time rounds to t is listed
  /// (`solve` checks the times exactly).
  [[nodiscard]] double listing_threshold(double t) const {
    double theta = 0;
    for (std::size_t s = 0; s < S_; ++s) theta = std::max(theta, g_->ring_cost_within(s, t));
    return theta * (1 + 1e-9);
  }

  /// The end of a listing: the counters into `a`; false (the answer unknown) when capped, else
  /// the listing's value from the smallest pruned W.
  bool finish_listing(const work_counter& work, bool capped, std::size_t max_rings, double pruned, ring_listing& out,
                      cover_answer& a) const {
    a.nodes = work.count;
    if (capped) {
      a.rows_capped = out.w.size() >= max_rings;
      a.capped = work.capped || a.rows_capped;
      a.rows = out.w.size();
      return false;
    }
    out.next_change = std::isfinite(pruned) ? g_->least_ring_stage_ms(pruned) : pruned;
    return true;
  }

  /// Every device set holding an R-cycle with W ≤ max θ at t, the best cycle of each; false (the
  /// answer unknown) when stopped or capped.
  bool enumerate(double t, std::size_t max_rings, std::uint64_t node_budget, const std::atomic<bool>* stop,
                 cover_clock::time_point deadline, ring_listing& out, cover_answer& a) const {
    out.t = t;
    const double theta = listing_threshold(t);
    double pruned = std::numeric_limits<double>::infinity();  // smallest W a pruned path could complete at
    key_set index_of;  // the sorted device sets, in the order of the listing
    std::vector<std::uint32_t> path(R_), key(R_);
    std::vector<double> fwd(R_ + 1, 0.0), bwd(R_ + 1, 0.0);  // largest cost of the path's first i links, each direction
    std::vector<char> used(D_, 0);
    work_counter work{.most = work_counter::fewer_than(node_budget), .stop = stop, .deadline = deadline};
    bool capped = false;
    auto record = [&](std::size_t len) {
      // the closing link: path[len−1] → path[0]; one direction of the cycle, or its reverse
      const std::uint32_t v0 = path[0], last = path[len - 1];
      const double f = std::max(fwd[len - 1], cost(last, v0)), b = std::max(bwd[len - 1], cost(v0, last));
      const double W = std::min(f, b);
      if (W > theta) {
        pruned = std::min(pruned, W);
        return true;
      }
      key.assign(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(len));
      std::sort(key.begin(), key.end());
      const auto [e, fresh] = index_of.insert(key);
      if (fresh) {
        if (out.w.size() >= max_rings) return false;
        out.w.push_back(W);
        out.dev.resize(out.dev.size() + R_);
      } else if (W >= out.w[e]) {
        return true;
      }
      out.w[e] = W;
      auto* d = out.dev.data() + e * R_;
      if (f <= b) {
        std::copy(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(len), d);
      } else {  // the reverse direction: v0, last, …, path[1]
        d[0] = v0;
        for (std::size_t q = 1; q < len; ++q) d[q] = path[len - q];
      }
      return true;
    };
    const std::size_t K = D_ - 1;
    std::size_t v0 = 0;
    // extends path[0..i−1]; false when capped or stopped
    std::function<bool(std::size_t)> extend = [&](std::size_t i) -> bool {
      if (i == R_) return record(R_);
      const std::uint32_t prev = path[i - 1];
      const auto* row = by_cost(prev);
      for (std::size_t k = 0; k < K; ++k) {
        const std::uint32_t d = row[k];
        if (both(prev, d) > theta) {  // and every later device of the row
          pruned = std::min(pruned, std::max(std::min(fwd[i - 1], bwd[i - 1]), both(prev, d)));
          break;
        }
        if (d <= v0 || used[d]) continue;
        if (R_ >= 3 && i == R_ - 1 && d < path[1]) continue;  // one direction per cycle
        const double f = std::max(fwd[i - 1], cost(prev, d)), b = std::max(bwd[i - 1], cost(d, prev));
        if (std::min(f, b) > theta) {
          pruned = std::min(pruned, std::min(f, b));
          continue;
        }
        if (!work.step()) return false;
        path[i] = d, used[d] = 1, fwd[i] = f, bwd[i] = b;
        const bool ok = extend(i + 1);
        used[d] = 0;
        if (!ok) return false;
      }
      return true;
    };
    for (v0 = 0; v0 < D_; ++v0) {
      path[0] = static_cast<std::uint32_t>(v0);
      used[v0] = 1;
      const bool ok = extend(1);
      used[v0] = 0;
      if (!ok) {
        capped = true;
        break;
      }
    }
    return finish_listing(work, capped, max_rings, pruned, out, a);
  }

  /// Symmetric links, D ≤ 64, 3 ≤ R ≤ 16: the listing by subsets, (set, end) states breadth-first
  /// by size from each smallest device v0 (docs/mapping-oracles.md, "Ring cover"). The pruned
  /// value recorded is the merged state's, a lower bound for every path it stands for. `nodes`
  /// counts the state extensions.
  bool enumerate_by_subsets(double t, std::size_t max_rings, std::uint64_t node_budget, const std::atomic<bool>* stop,
                            cover_clock::time_point deadline, ring_listing& out, cover_answer& a) const {
    out.t = t;
    out.ordered = false;
    const double theta = listing_threshold(t);
    double pruned = std::numeric_limits<double>::infinity();
    struct state_hash {
      std::size_t operator()(std::uint64_t k) const noexcept {
        k ^= k >> 33, k *= 0xff51afd7ed558ccdull, k ^= k >> 33;
        return static_cast<std::size_t>(k);
      }
    };
    // per size: set mask -> its ends, each with the smallest largest link of a path to it
    using level_map = std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint8_t, double>>, state_hash>;
    std::unordered_map<std::uint64_t, std::size_t, state_hash> index_of;  // set mask -> listing index
    const std::size_t K = D_ - 1;
    work_counter work{.most = work_counter::fewer_than(node_budget), .stop = stop, .deadline = deadline};
    bool capped = false;
    for (std::size_t v0 = 0; v0 < D_ && !capped; ++v0) {
      level_map cur;
      cur[std::uint64_t{1} << v0].push_back({static_cast<std::uint8_t>(v0), 0.0});
      for (std::size_t size = 1; size < R_ && !capped && !cur.empty(); ++size) {
        level_map nxt;
        for (const auto& [mask, ends] : cur) {
          for (const auto& [end, val] : ends) {
            const auto* row = by_cost(end);
            for (std::size_t k = 0; k < K; ++k) {
              const std::uint32_t d = row[k];
              const double c = cost(end, d);
              if (c > theta) {  // and every later device of the row
                pruned = std::min(pruned, std::max(val, c));
                break;
              }
              if (d <= v0 || ((mask >> d) & 1u)) continue;
              if (!work.step()) {
                capped = true;
                break;
              }
              const double nv = std::max(val, c);
              auto& e = nxt[mask | (std::uint64_t{1} << d)];
              auto it = std::find_if(e.begin(), e.end(), [&](const auto& x) { return x.first == d; });
              if (it == e.end()) e.push_back({static_cast<std::uint8_t>(d), nv});
              else it->second = std::min(it->second, nv);
            }
            if (capped) break;
          }
          if (capped) break;
        }
        cur = std::move(nxt);
      }
      if (capped) break;
      for (const auto& [mask, ends] : cur) {  // full sets: close back to v0
        double W = std::numeric_limits<double>::infinity();
        for (const auto& [end, val] : ends) W = std::min(W, std::max(val, cost(end, v0)));
        if (W > theta) {
          pruned = std::min(pruned, W);
          continue;
        }
        auto [it, fresh] = index_of.try_emplace(mask, out.w.size());
        if (fresh) {
          if (out.w.size() >= max_rings) {
            capped = true;
            break;
          }
          out.w.push_back(W);
          for (std::uint64_t m = mask; m; m &= m - 1) out.dev.push_back(static_cast<std::uint32_t>(std::countr_zero(m)));
        } else {
          out.w[it->second] = std::min(out.w[it->second], W);
        }
      }
    }
    return finish_listing(work, capped, max_rings, pruned, out, a);
  }

  const stage_graph* g_;
  const link_costs* L_;
  std::size_t S_, R_, D_;
  bool dp_;
  std::vector<std::uint32_t> by_cost_;  // asymmetric links: each device's others, cheaper direction first
};

}  // namespace devplace::detail
