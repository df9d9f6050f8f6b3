#pragma once
/// \file phaze/placement.hpp
/// PHAZE's device-placement DP (seed-phaze.md §3.2–3.5; docs/phaze.md): choose the tensor-parallel
/// width t, the micro-batch size b, the data-parallel width d ≤ min(K, B), the number of stages s
/// and the stages themselves, minimising the time per batch F of eq. 17/18.
///
/// The stages are built from the pipeline's end over *successor-closed* down-sets D (no edge
/// leaves D): the predecessor-closed sets of `views::reverse(g)`. The sets, the pairs D′ ⊊ D,
/// the table and the backtracking are the skeleton shared with Piper's planner
/// (partition/successor_dp.hpp, `stage_count::exact`, combine = max); this file supplies the
/// stage cost (phaze/stage_load.hpp) and the outer minimum of eq. 17/18. For every t (and b, and
/// activation policy):
///   dp[∅][k][0] = 0,  dp[D][k][s] = min_{D′ ⊊ D} max(dp[D′][k − a][s − 1], load(D ∖ D′, a, s))
/// with k "at most k" accelerators, a = a(D ∖ D′) (t for a stage holding a tensor-parallel slice,
/// else 1) and s ≤ the stage's memory-feasible max_s (phaze/stage_load.hpp). Then
///   F = min_{d ≤ min(K,B)} min_{D′ ⊊ V} min_s (⌈B/d⌉ + s − 1) · max(dp[D′][⌊K/d⌋ − a][s − 1],
///       load(V ∖ D′, a, s)) + resync(V ∖ D′, d).
/// The plan is backtracked by re-evaluating the recurrence (the same arithmetic, so the same bits)
/// and then re-evaluated from scratch by `evaluate_placement`.
/// Complexity per variant, for N down-sets, P ≤ N² pairs D′ ⊊ D, n layers, S = min(K, n):
/// O(P (n + |E|)) for the stage costs plus O(P · S · K) for the table and O(Σ_d N · K/d) = O(N K log K) for F;
/// memory N (S + 1)(K + 1) doubles. On a chain N = n + 1.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "devplace/executor.hpp"
#include "devplace/partition/successor_dp.hpp"
#include "devplace/phaze/stage_load.hpp"

namespace devplace::phaze {

namespace detail {

/// The DP of one variant and policy on the shared skeleton (partition/successor_dp.hpp), exact
/// stage counts, combine = max, and what its backtracking needs. A template, compiled where
/// `place` is called.
template <int = 0>
class basic_placement_dp {
 public:
  basic_placement_dp(const layer_table& t, const successor_sets& sets, bool recompute, const placement_options& o)
      : t_(t), sets_(sets), recompute_(recompute), o_(o), K_(o.devices), S_(std::min(o.devices, t.n)),
        table_(sets.size(), K_, S_, stage_count::exact), x_(sets.make_stage()) {
    const std::size_t N = sets_.size();
    (void)successor_dp_fill(sets_, table_, x_, N - 1, [](std::size_t, double) { return true; },
                            [&](std::size_t, std::size_t sub, const successor_stage& x, auto& table) {
                              const stage_cost c = stage(x);
                              const std::size_t smax = c.max_position(S_, o_.device_memory_bytes);
                              table.relax(sub, c.devices, 1, [&](std::size_t s) {
                                return s <= smax ? c.latency_ms(s, recompute_) : successor_dp_table<>::inf;
                              });
                            });
    first_.resize(N - 1);
    first_layers_.resize(N - 1);
    (void)sets_.for_each_subset(sets_.full(), x_, [&](std::size_t sub, const successor_stage& x) {
      first_[sub] = stage(x);
      first_layers_[sub] = x.nodes;
      return true;
    });
  }

  /// The best plan for this variant and policy (status infeasible when none fits).
  placement best() {
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
          const double rest = table_.at(Dp, Kd - c.devices, s - 1);
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
    // The first stage V ∖ D′, then the rest dp[D′][K/d − a][s − 1], ties to the smaller D′.
    const std::size_t k_rest = K_ / best_d - first_[best_Dp].devices;
    p.stages.emplace_back().layers = first_layers_[best_Dp];
    successor_dp_backtrack(
        sets_, x_, best_Dp, k_rest, best_s - 1, backtrack_pick::smallest_subset,
        [&](std::size_t set, std::size_t sub, const successor_stage& x, std::size_t k, std::size_t s) -> std::optional<successor_step> {
          const auto c = stage(x);
          if (c.devices > k || c.max_position(S_, o_.device_memory_bytes) < s) return std::nullopt;
          const double rest = table_.at(sub, k - c.devices, s - 1);
          if (rest == inf || std::max(rest, c.latency_ms(s, recompute_)) != table_.at(set, k, s))
            return std::nullopt;
          return successor_step{c.devices, 1};
        },
        [&](std::size_t, const successor_stage& x, successor_step) { p.stages.push_back(make_stage(x)); });
    p.status = status::optimal;
    return p;
  }

 private:
  static constexpr double inf = std::numeric_limits<double>::infinity();

  stage_cost stage(const successor_stage& x) const { return evaluate_stage(t_, x.member, recompute_, o_); }

  static placed_stage make_stage(const successor_stage& x) {
    placed_stage st;
    st.layers = x.nodes;
    return st;
  }

  const layer_table& t_;
  const successor_sets& sets_;
  bool recompute_;
  const placement_options& o_;
  std::size_t K_, S_;
  successor_dp_table<> table_;
  successor_stage x_;
  std::vector<stage_cost> first_;                       ///< per D′: the stage V ∖ D′
  std::vector<std::vector<std::size_t>> first_layers_;  ///< its layers, ascending
};
using placement_dp = basic_placement_dp<>;

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
  std::vector<successor_sets> family(variants.size());  // the sets depend on the graph only
  parallel_for(variants.size(), o.threads, [&](std::size_t v) { family[v] = successor_sets(variants[v].graph, o.max_downsets); });
  parallel_for(tasks, o.threads, [&](std::size_t i) {
    const auto& w = variants[i / policies.size()];
    const auto t = detail::make_layer_table(w);
    DEVPLACE_EXPECTS(o.global_batch % t.micro_batch == 0, "phaze: global_batch must be a multiple of micro_batch");
    const successor_sets& sets = family[i / policies.size()];
    const double entries = double(sets.size()) * double(std::min(o.devices, t.n) + 1) * double(o.devices + 1);
    if (sets.outcome() != status::optimal || entries > double(o.max_table_entries)) {
      slot[i].status = status::work_limit;
      slot[i].downsets = sets.size();
      return;
    }
    detail::placement_dp dp(t, sets, policies[i % policies.size()], o);
    auto p = dp.best();
    p.downsets = sets.size();
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
