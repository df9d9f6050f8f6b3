#pragma once
/// \file phaze/placement.hpp
/// PHAZE's device-placement DP (seed-phaze.md §3.2–3.5; docs/phaze.md): choose the tensor-parallel
/// width t, the micro-batch size b, the data-parallel width d ≤ min(K, B), the number of stages s
/// and the stages themselves, minimising the time per batch F of eq. 17/18.
///
/// The stages are built from the pipeline's end over *successor-closed* down-sets D (no edge
/// leaves D): the predecessor-closed sets of `views::reverse(g)`, enumerated by the library's
/// `downset_enumerator`. For every t (and b, and activation policy):
///   dp[∅][k][0] = 0,  dp[D][k][s] = min_{D′ ⊊ D} max(dp[D′][k − a][s − 1], load(D ∖ D′, a, s))
/// with k "at most k" accelerators, a = a(D ∖ D′) (t for a stage holding a tensor-parallel slice,
/// else 1) and s ≤ the stage's memory-feasible max_s (phaze/stage_load.hpp). Then
///   F = min_{d ≤ min(K,B)} min_{D′ ⊊ V} min_s (⌈B/d⌉ + s − 1) · max(dp[D′][⌊K/d⌋ − a][s − 1],
///       load(V ∖ D′, a, s)) + resync(V ∖ D′, d).
/// The plan is backtracked by re-evaluating the recurrence (the same arithmetic, so the same bits)
/// and then re-evaluated from scratch by `evaluate_placement`.
/// Complexity per variant, for N down-sets, n layers, S = min(K, n): O(N² (n/64 + n + |E|)) for
/// the stage costs plus O(N² · S · K) for the table and O(Σ_d N · K/d) = O(N K log K) for F;
/// memory N (S + 1)(K + 1) doubles. On a chain N = n + 1.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/executor.hpp"
#include "devplace/phaze/stage_load.hpp"
#include "devplace/views/reverse.hpp"

namespace devplace::phaze {

namespace detail {

/// The successor-closed down-sets of a layer graph, ∅ first and V last (sorted by size), as vertex
/// membership bitsets (ids, not positions).
struct downset_family {
  devplace::status status = status::optimal;
  std::vector<devplace::detail::dynamic_bitset> sets;
};

template <class G>
downset_family successor_closed_downsets(const G& g, std::size_t cap) {
  const auto rev = views::reverse(g);
  const downset_enumerator e(rev);
  const std::size_t n = e.num_vertices();
  downset_family f;
  f.status = e.for_each([&](const devplace::detail::dynamic_bitset& pos) {
    if (f.sets.size() == cap) return downset_action::stop;
    devplace::detail::dynamic_bitset ids(n);
    pos.for_each([&](std::size_t p) { ids.set(e.vertex_at(p)); });
    f.sets.push_back(std::move(ids));
    return downset_action::proceed;
  });
  std::stable_sort(f.sets.begin(), f.sets.end(), [](const auto& a, const auto& b) { return a.count() < b.count(); });
  return f;
}

/// The DP table of one variant and policy, and what its backtracking needs.
class placement_dp {
 public:
  placement_dp(const layer_table& t, const downset_family& f, bool recompute, const placement_options& o)
      : t_(t), sets_(f.sets), recompute_(recompute), o_(o), K_(o.devices), S_(std::min(o.devices, t.n)) {
    const std::size_t N = sets_.size();
    table_.assign(N * (S_ + 1) * (K_ + 1), inf);
    for (std::size_t k = 0; k <= K_; ++k) at(0, 0, k) = 0;
    for (std::size_t D = 1; D + 1 < N; ++D)
      for (std::size_t Dp = 0; Dp < D; ++Dp)
        if (proper_subset(Dp, D)) relax(D, Dp, stage(Dp, D));
    first_.reserve(N - 1);
    for (std::size_t Dp = 0; Dp + 1 < N; ++Dp) first_.push_back(stage(Dp, N - 1));
  }

  /// The best plan for this variant and policy (status infeasible when none fits).
  placement best() const {
    placement p;
    p.recompute = recompute_;
    p.micro_batches = o_.global_batch / t_.micro_batch;
    const std::size_t dmax = std::min(K_, p.micro_batches);
    std::size_t best_d = 0, best_Dp = 0, best_s = 0;
    for (std::size_t d = 1; d <= dmax; ++d) {
      const std::size_t Kd = K_ / d;
      for (std::size_t Dp = 0; Dp < first_.size(); ++Dp) {
        const auto& c = first_[Dp];
        if (c.devices > Kd) continue;
        const std::size_t smax = c.max_position(std::min(S_, Kd), o_.device_memory_bytes);
        for (std::size_t s = 1; s <= smax; ++s) {
          const double rest = at(Dp, s - 1, Kd - c.devices);
          if (rest == inf) continue;
          const double load = std::max(rest, c.latency_ms(s, recompute_));
          const double F = time_per_batch_ms(load, p.micro_batches, d, s, c.param_bytes, o_);
          if (F < p.time_per_batch_ms) {
            p.time_per_batch_ms = F;
            best_d = d, best_Dp = Dp, best_s = s;
          }
        }
      }
    }
    if (best_d == 0) return p;
    p.data_parallel = best_d;
    p.stages.push_back(make_stage(best_Dp, sets_.size() - 1));
    backtrack(best_Dp, best_s - 1, K_ / best_d - first_[best_Dp].devices, p.stages);
    p.status = status::optimal;
    return p;
  }

 private:
  static constexpr double inf = std::numeric_limits<double>::infinity();

  double& at(std::size_t D, std::size_t s, std::size_t k) { return table_[(D * (S_ + 1) + s) * (K_ + 1) + k]; }
  double at(std::size_t D, std::size_t s, std::size_t k) const { return table_[(D * (S_ + 1) + s) * (K_ + 1) + k]; }

  bool proper_subset(std::size_t Dp, std::size_t D) const {
    return sets_[Dp].count() < sets_[D].count() && sets_[Dp].is_subset_of(sets_[D]);
  }

  std::vector<char> members(std::size_t Dp, std::size_t D) const {
    std::vector<char> in(t_.n, 0);
    sets_[D].for_each([&](std::size_t v) { in[v] = !sets_[Dp].test(v); });
    return in;
  }
  stage_cost stage(std::size_t Dp, std::size_t D) const { return evaluate_stage(t_, members(Dp, D), recompute_, o_); }

  void relax(std::size_t D, std::size_t Dp, const stage_cost& c) {
    const std::size_t smax = c.max_position(S_, o_.device_memory_bytes);
    for (std::size_t s = 1; s <= smax; ++s) {
      const double lat = c.latency_ms(s, recompute_);
      for (std::size_t k = c.devices; k <= K_; ++k) {
        const double rest = at(Dp, s - 1, k - c.devices);
        if (rest == inf) continue;
        double& cell = at(D, s, k);
        cell = std::min(cell, std::max(rest, lat));
      }
    }
  }

  placed_stage make_stage(std::size_t Dp, std::size_t D) const {
    placed_stage st;
    const auto in = members(Dp, D);
    for (std::size_t v = 0; v < t_.n; ++v)
      if (in[v]) st.layers.push_back(v);
    return st;
  }

  /// Appends the stages of dp[D][s][k], first to last, matching the recurrence exactly.
  void backtrack(std::size_t D, std::size_t s, std::size_t k, std::vector<placed_stage>& out) const {
    while (s > 0) {
      const double target = at(D, s, k);
      bool found = false;
      for (std::size_t Dp = 0; Dp < D && !found; ++Dp) {
        if (!proper_subset(Dp, D)) continue;
        const auto c = stage(Dp, D);
        if (c.devices > k || c.max_position(S_, o_.device_memory_bytes) < s) continue;
        const double rest = at(Dp, s - 1, k - c.devices);
        if (rest == inf || std::max(rest, c.latency_ms(s, recompute_)) != target) continue;
        out.push_back(make_stage(Dp, D));
        D = Dp, k -= c.devices, --s;
        found = true;
      }
      DEVPLACE_EXPECTS(found, "phaze: internal error: the DP table cannot be backtracked");
    }
  }

  const layer_table& t_;
  const std::vector<devplace::detail::dynamic_bitset>& sets_;
  bool recompute_;
  const placement_options& o_;
  std::size_t K_, S_;
  std::vector<double> table_;
  std::vector<stage_cost> first_;
};

}  // namespace detail

/// The best PHAZE plan over the variants (each a t and b) and the activation policies. Status:
/// `optimal` (proved under the model), `infeasible` (nothing fits), `work_limit` (a variant has more
/// than `max_downsets` down-sets; it is skipped, the best of the others is returned). Ties go to the
/// earlier variant, stashing before recomputation, smaller d, then the smaller rest D′ (down-sets
/// by size), then fewer stages. A variant whose table would exceed `max_table_entries` is skipped
/// with `work_limit` too.
template <class G>
  requires profiled_dag<std::remove_cvref_t<G>> && bidirectional_dag<std::remove_cvref_t<G>>
placement place(std::span<const workload_variant<G>> variants, const placement_options& o) {
  check_placement_options(o);
  DEVPLACE_EXPECTS(!variants.empty(), "phaze: place needs at least one workload variant");
  std::vector<bool> policies;
  if (o.recompute != recompute_policy::recompute_only) policies.push_back(false);
  if (o.recompute != recompute_policy::stash_only) policies.push_back(true);
  const std::size_t tasks = variants.size() * policies.size();
  std::vector<placement> slot(tasks);
  parallel_for(tasks, o.threads, [&](std::size_t i) {
    const auto& w = variants[i / policies.size()];
    const auto t = detail::make_layer_table(w);
    DEVPLACE_EXPECTS(o.global_batch % t.micro_batch == 0, "phaze: global_batch must be a multiple of micro_batch");
    const auto family = detail::successor_closed_downsets(w.graph, o.max_downsets);
    const double entries = double(family.sets.size()) * double(std::min(o.devices, t.n) + 1) * double(o.devices + 1);
    if (family.status != status::optimal || entries > double(o.max_table_entries)) {
      slot[i].status = status::work_limit;
      slot[i].downsets = family.sets.size();
      return;
    }
    const detail::placement_dp dp(t, family, policies[i % policies.size()], o);
    auto p = dp.best();
    p.downsets = family.sets.size();
    if (!p.has_solution()) return;
    const auto status = p.status;
    const double dp_F = p.time_per_batch_ms;
    p = evaluate_placement(w, std::move(p), o);
    DEVPLACE_EXPECTS(p.status == status::feasible && std::abs(p.time_per_batch_ms - dp_F) <= 1e-9 * std::max(1.0, dp_F),
                     "phaze: internal error: the DP's plan does not re-evaluate to its F");
    p.status = status;
    slot[i] = std::move(p);
  });
  placement best;
  bool limited = false;
  for (auto& p : slot) {
    limited = limited || p.status == status::work_limit;
    if (p.has_solution() && p.time_per_batch_ms < best.time_per_batch_ms) best = std::move(p);
  }
  if (limited) best.status = status::work_limit;
  return best;
}

/// One layer graph, t = 1, b = 1.
template <profiled_dag G>
  requires bidirectional_dag<G>
placement place(const G& g, const placement_options& o) {
  const workload_variant<const G&> w{.graph = g};
  return place(std::span<const workload_variant<const G&>>(&w, 1), o);
}

}  // namespace devplace::phaze
