#pragma once
/// \file peers/piper.hpp
/// Piper's planner (Tarnawski, Narayanan, Phanishayee, NeurIPS 2021; msr-fiddle/piper
/// `algo.cpp`, `Graph::runDP`; shared/spec/peers-models.md §2.3), reproduced on its own inputs:
/// the same time per sample (TPS), set count and set-pair count for the same JSON and (K, M).
/// docs/peers/piper.md describes the model.
///
///   auto in = io::read_piper("inputs/resnet.json");
///   auto r = peers::piper_plan(in, {.devices = 8, .memory_bytes = 8.0 * (1 << 30), .bandwidth = 25.0 * (1 << 30)});
///   // r.tps ≈ 63.434, r.sets == 242, r.set_pairs == 28729
///
/// Piper's "ideals" are successor-closed sets D (the down-sets of `views::reverse(g)`); a stage
/// is X = D ∖ D' for D' ⊊ D, the first stage of D. With S̄ = min(N, K):
///   dp[∅][k][s] = 0;  dp[D][k][s] = min over D', t, d (t·d ≤ k, d ≤ s, d | N) of
///                   max(dp[D'][k − t·d][s − d], KS(D ∖ D', t, d, y = ⌈s/d⌉)),
///   then the prefix minimum over k and s ("at most k devices, Σd at most s");
///   answer = min_{k, s ≥ 1} dp[All][k][s]
/// where KS is the greedy option choice of peers/piper_cost.hpp.
///
/// Implementation: the sets, the pairs, the table and the backtracking are the skeleton shared
/// with PHAZE's placement DP (partition/successor_dp.hpp, `stage_count::at_most`, combine =
/// max; a stage option is (t·d devices, d stage units) with cost KS(⌈s/d⌉)); this file supplies
/// the stage cost (the knapsack tables below), the pruning bound and upstream's choice of the
/// answer. The sets are processed by size; for each D the pairs D' ⊊ D are visited once (the
/// supersets of All ∖ D in the forward enumerator, D' found by a 64-bit key). A finished
/// dp[D][k][·] is stored as its steps (s, value): a candidate max(dp[D'][k'][s − d], KS(⌈s/d⌉))
/// is only needed where dp[D'][k'][·] or KS steps down, and a row k' equal to row k' − 1 adds
/// nothing. This gives the values of the straightforward recurrence exactly.
/// Time O(pairs · Σ_{t,d} (|X| log S̄ + K · steps)); memory O(sets · K · steps).
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/partition/successor_dp.hpp"
#include "devplace/peers/piper_cost.hpp"
#include "devplace/status.hpp"

namespace devplace::peers {

struct piper_options : piper_overrides {
  std::uint64_t max_sets = 1'000'000;  ///< stop (status work_limit) beyond this many sets
  /// DP rounds with a guessed bound (1.005·1.25^r times a lower bound) before the unbounded one;
  /// each is exact when it finds a chain within its bound. 0 = always unbounded.
  int bounded_rounds = 4;
};

struct piper_result {
  devplace::status status = status::infeasible;  ///< optimal, infeasible (nothing fits), work_limit
  double tps = piper_infinity;        ///< upstream `getTPSForResult(runDP())` of the split
  double dp_value = piper_infinity;   ///< the DP's own minimum (equal to `tps` up to rounding)
  std::uint64_t sets = 0;             ///< successor-closed sets, ∅ and All included (upstream "N ideals")
  std::uint64_t set_pairs = 0;        ///< pairs D' ⊊ D (upstream "M ideal pairs")
  std::size_t devices_used = 0, sum_d = 0;  ///< the (k, s) the split was reconstructed from
  std::vector<piper_stage> stages;    ///< pipeline order: the first stage holds the sources
  piper_params params;
  double time_s = 0;
};

namespace detail {

/// The sets of the instance (partition/successor_dp.hpp), each vertex weighted by the least
/// device time it can take, min over (t, option) of t·p (the pairs' pruning bound). Status
/// work_limit beyond `max_sets`. Throws `std::invalid_argument` on a cycle.
inline successor_sets piper_build_sets(const io::piper_instance& in, std::uint64_t max_sets) {
  std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> edges;
  for (const auto& [u, v] : in.edges)
    edges.emplace_back(static_cast<csr_dag::vertex_type>(u), static_cast<csr_dag::vertex_type>(v));
  const csr_dag g(in.nodes.size(), edges);
  if (topological_sort(g).status != status::optimal) throw std::invalid_argument("piper: the instance has a cycle");
  std::vector<double> work(in.nodes.size(), piper_infinity);
  for (std::size_t v = 0; v < in.nodes.size(); ++v)
    for (const auto& [t, opts] : in.nodes[v].tmpcs)
      for (const auto& o : opts) work[v] = std::min(work[v], static_cast<double>(t) * o.time_per_sample);
  return successor_sets(g, max_sets, std::move(work));
}

/// The stage X of one pair: its nodes (ascending), membership, and the tensor-parallel degrees
/// all of them support.
struct piper_stage_view : successor_stage {
  std::vector<int> degrees;  ///< indices into the instance's degrees (ascending t)
};

/// KS[t][d][y] of one stage for every admissible (t, d): `fill` calls `use(t, d, values)`.
class piper_stage_tables {
 public:
  piper_stage_tables(const io::piper_instance& in, const piper_params& p) : in_(&in), p_(&p) {
    for (const auto& n : in.nodes)
      for (const auto& [t, opts] : n.tmpcs)
        if (!opts.empty() && static_cast<std::size_t>(t) <= p.devices) all_degrees_.push_back(t);
    std::sort(all_degrees_.begin(), all_degrees_.end());
    all_degrees_.erase(std::unique(all_degrees_.begin(), all_degrees_.end()), all_degrees_.end());
    bound_s_ = std::min(p.microbatches, p.devices);
    by_degree_.assign(in.nodes.size() * all_degrees_.size(), nullptr);
    for (std::size_t v = 0; v < in.nodes.size(); ++v)
      for (std::size_t j = 0; j < all_degrees_.size(); ++j) {
        const auto it = in.nodes[v].tmpcs.find(all_degrees_[j]);
        if (it != in.nodes[v].tmpcs.end() && !it->second.empty()) by_degree_[v * all_degrees_.size() + j] = &it->second;
      }
  }
  [[nodiscard]] std::size_t bound_s() const noexcept { return bound_s_; }
  [[nodiscard]] std::size_t devices() const noexcept { return p_->devices; }

  /// The cut-edge bytes of every option of every node of stage `x` at the j-th degree.
  void edge_bytes(const piper_stage_view& x, std::size_t j) {
    opts_.resize(x.nodes.size());
    bytes_.resize(x.nodes.size());
    for (std::size_t i = 0; i < x.nodes.size(); ++i) {
      const std::size_t v = x.nodes[i];
      opts_[i] = by_degree_[v * all_degrees_.size() + j];
      for (std::size_t l = 0; l < opts_[i]->size(); ++l)
        bytes_[i][l] = piper_edge_bytes(*in_, v, (*opts_[i])[l], [&](std::size_t u) { return x.member[u] != 0; });
    }
  }
  /// The items at data parallelism d, after `edge_bytes`.
  void items(std::size_t d, std::vector<piper_item>& out) const {
    out.resize(opts_.size());
    for (std::size_t i = 0; i < opts_.size(); ++i) {
      const auto& opts = *opts_[i];
      piper_item& it = out[i];
      it.count = static_cast<std::uint8_t>(opts.size());
      for (std::size_t l = 0; l < opts.size(); ++l) {
        it.tau[l] = piper_tau(bytes_[i][l], opts[l], d, *p_);
        it.a[l] = opts[l].memory_a;
        it.b[l] = opts[l].memory_b;
      }
    }
  }
  [[nodiscard]] piper_knapsack& knapsack() noexcept { return knapsack_; }

  /// Sets `x.degrees` to the indices of the degrees every node of x supports.
  void degrees(piper_stage_view& x) const {
    x.degrees.clear();
    const std::size_t nd = all_degrees_.size();
    for (std::size_t j = 0; j < nd; ++j) {
      bool ok = true;
      for (std::size_t i = 0; ok && i < x.nodes.size(); ++i) ok = by_degree_[x.nodes[i] * nd + j] != nullptr;
      if (ok) x.degrees.push_back(static_cast<int>(j));
    }
  }

  /// Calls `use(t, d, KS)` for every admissible (t, d), t·d ≤ `max_devices`, whose stage TPS can be ≤ `bound`
  /// (KS[y] ≥ Σ min τ ≥ Σ min p / d, so the others are skipped).
  template <class Use>
  void fill(const piper_stage_view& x, double bound, std::size_t max_devices, Use&& use) {
    for (int j : x.degrees) {
      const int t = all_degrees_[static_cast<std::size_t>(j)];
      edge_bytes(x, static_cast<std::size_t>(j));
      double compute = 0;
      for (const auto* o : opts_) {
        double m = (*o)[0].time_per_sample;
        for (const auto& op : *o) m = std::min(m, op.time_per_sample);
        compute += m;
      }
      for (std::size_t d = 1; d * static_cast<std::size_t>(t) <= max_devices; ++d) {
        if (p_->microbatches % d != 0 || compute / static_cast<double>(d) > bound * (1 + 1e-12)) continue;
        items(d, items_);
        double fastest = 0;
        for (const auto& it : items_) fastest += it.count > 1 ? std::min(it.tau[0], it.tau[1]) : it.tau[0];
        if (fastest > bound * (1 + 1e-12)) continue;
        knapsack_.solve(items_, p_->memory_bytes, (bound_s_ + d - 1) / d, ks_);  // the y the DP reads
        use(static_cast<std::size_t>(t), d, std::span<const double>(ks_));
      }
    }
  }

 private:
  const io::piper_instance* in_;
  const piper_params* p_;
  std::vector<int> all_degrees_;
  std::vector<const std::vector<io::piper_option>*> by_degree_;  ///< per (node, degree index), null if none
  std::size_t bound_s_ = 0;
  std::vector<const std::vector<io::piper_option>*> opts_;
  std::vector<std::array<double, 2>> bytes_;
  std::vector<piper_item> items_;
  std::vector<double> ks_;
  piper_knapsack knapsack_;
};

/// dp[D][k][s]: "at most k devices, Σd at most s", steps of each row (successor_dp.hpp).
using piper_table = successor_dp_table<>;

/// Fills `tb` with dp[D][k][·] for every set, keeping only candidates ≤ `bound`. Returns the
/// number of pairs.
inline std::uint64_t piper_run_dp(const successor_sets& sets, piper_stage_tables& tables, piper_stage_view& x, double bound,
                                  piper_table& tb) {
  tb = piper_table(sets.size(), tables.devices(), tables.bound_s(), stage_count::at_most, {}, piper_infinity);
  const std::size_t K = tb.devices();
  // The stage runs on t·d ≥ work / bound devices, the rest needs first_finite[sub] of K.
  auto keep = [&](std::size_t sub, double work) {
    return tb.first_finite(sub) <= K && work <= bound * static_cast<double>(K - tb.first_finite(sub)) * (1 + 1e-12);
  };
  return successor_dp_fill(sets, tb, x, sets.size(), keep,
                           [&](std::size_t, std::size_t sub, piper_stage_view& stage, piper_table& table) {
    tables.degrees(stage);
    tables.fill(stage, bound, K - table.first_finite(sub), [&](std::size_t t, std::size_t d, std::span<const double> ks) {
      table.relax(sub, t * d, d, [&](std::size_t s) { return ks[(s + d - 1) / d]; }, bound);
    });
  });
}

/// Upstream's choice of the answer: the first (k, s ≥ 1) improving by more than 1e-9.
inline double piper_best(const piper_table& tb, std::size_t all, std::size_t& k_used, std::size_t& s_used) {
  double best = piper_infinity;
  for (std::size_t k = 0; k <= tb.devices(); ++k)
    for (std::size_t s = 1; s <= tb.stage_units(); ++s)
      if (tb.at(all, k, s) + 1e-9 < best) { best = tb.at(all, k, s); k_used = k; s_used = s; }
  return best;
}

}  // namespace detail

/// Runs Piper's DP on `in` with K, M, BW from `opt` (else the file's header). The split is
/// reconstructed as upstream does (smallest (k, s) within 1e-9 of the minimum, then the first
/// matching D', t, d) and evaluated with `piper_split_tps`. Throws `std::invalid_argument` when
/// the instance has a cycle or the parameters are out of range.
[[nodiscard]] inline piper_result piper_plan(const io::piper_instance& in, const piper_options& opt = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  piper_result res;
  res.params = piper_resolve(in, opt);
  const piper_params& p = res.params;
  const successor_sets sets = detail::piper_build_sets(in, opt.max_sets);
  res.sets = sets.size();
  if (sets.outcome() != status::optimal) {
    res.status = status::work_limit;
    res.time_s = elapsed();
    return res;
  }
  detail::piper_stage_tables tables(in, p);
  auto x = sets.make_stage<detail::piper_stage_view>();
  // Candidates above a bound cannot be on a chain of that value: a bound at least the optimum
  // gives the exact answer. Start just above a lower bound and raise it until the DP finds a
  // chain within it; the last resort is no bound.
  detail::piper_table tb;
  double best = piper_infinity;
  std::size_t k_used = 0, s_used = 0;
  // Every stage runs Σp/d on t·d devices: the K devices share at least Σ_v min t·p of device time.
  double lower = 0;
  for (double w : sets.weights()) lower += w;
  lower /= static_cast<double>(p.devices);
  int round = 0;
  for (double guess = lower * 1.005;; guess *= 1.25, ++round) {
    const bool last = !(lower > 0) || round == opt.bounded_rounds;
    const double bound = last ? piper_infinity : guess;
    res.set_pairs = detail::piper_run_dp(sets, tables, x, bound, tb);
    best = detail::piper_best(tb, sets.full(), k_used, s_used);
    if (last || best <= bound) break;
  }
  res.dp_value = best;
  if (best > piper_infinity / 2) {
    res.time_s = elapsed();
    return res;
  }
  res.devices_used = k_used;
  res.sum_d = s_used;
  // Reconstruction: the first (D', t, d) whose candidate matches dp[D][k][s].
  std::vector<piper_item> items;
  piper_stage pending;
  successor_dp_backtrack(
      sets, x, sets.full(), k_used, s_used, backtrack_pick::first_visited,
      [&](std::size_t cur, std::size_t sub, detail::piper_stage_view& stage, std::size_t k,
          std::size_t s) -> std::optional<successor_step> {
        const double target = tb.at(cur, k, s);
        std::optional<successor_step> step;
        tables.degrees(stage);
        tables.fill(stage, piper_infinity, k, [&](std::size_t t, std::size_t d, std::span<const double> ks) {
          if (step || t * d > k || d > s) return;
          const double v = std::max(tb.at(sub, k - t * d, s - d), ks[(s + d - 1) / d]);
          if (!(std::abs(target - v) < 1e-9)) return;
          tables.items(d, items);
          const auto choice = tables.knapsack().choice(items, p.memory_bytes, (s + d - 1) / d);
          pending = {stage.nodes, t, d, std::vector<std::size_t>(choice.begin(), choice.end())};
          step = successor_step{t * d, d};
        });
        return step;
      },
      [&](std::size_t, const detail::piper_stage_view&, successor_step) { res.stages.push_back(std::move(pending)); });
  res.tps = piper_split_tps(in, p, res.stages);
  res.status = status::optimal;
  res.time_s = elapsed();
  return res;
}

}  // namespace devplace::peers
