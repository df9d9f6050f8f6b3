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
#include "devplace/dag/edges.hpp"
#include "devplace/dag/operator_properties.hpp"
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
template <int = 0>
successor_sets piper_build_sets(const io::piper_instance& in, std::uint64_t max_sets) {
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
template <int = 0>
class basic_piper_stage_tables {
 public:
  basic_piper_stage_tables(const io::piper_instance& in, const piper_params& p) : in_(&in), p_(&p) {
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
    // τ's parts that do not depend on the stage, per (node, degree, option, d), as piper_tau computes them.
    d_index_.assign(p.devices + 1, -1);
    for (std::size_t d = 1; d <= p.devices; ++d)
      if (p.microbatches % d == 0) { d_index_[d] = static_cast<int>(divisors_); ++divisors_; }
    const std::size_t nd = all_degrees_.size();
    resync_.assign(in.nodes.size() * nd * 2 * divisors_, 0.0);
    compute_.assign(resync_.size(), 0.0);
    same_bytes_.assign(in.nodes.size() * nd, 0);
    for (std::size_t v = 0; v < in.nodes.size(); ++v)
      for (std::size_t j = 0; j < nd; ++j) {
        const auto* opts = by_degree_[v * nd + j];
        if (!opts) continue;
        same_bytes_[v * nd + j] = opts->size() == 2 && (*opts)[0].sync_fw == (*opts)[1].sync_fw && (*opts)[0].sync_bw == (*opts)[1].sync_bw;
        for (std::size_t l = 0; l < opts->size(); ++l)
          for (std::size_t d = 1; d <= p.devices; ++d) {
            if (d_index_[d] < 0) continue;
            const std::size_t at = part(v, j, l, d);
            resync_[at] = piper_resync_bytes((*opts)[l].parameter_size, d, p.microbatches);
            compute_[at] = (*opts)[l].time_per_sample / static_cast<double>(d);
          }
      }
  }
  [[nodiscard]] std::size_t bound_s() const noexcept { return bound_s_; }
  [[nodiscard]] std::size_t devices() const noexcept { return p_->devices; }

  /// The cut-edge bytes of every option of every node of stage `x` at the j-th degree.
  void edge_bytes(const piper_stage_view& x, std::size_t j) {
    opts_.resize(x.nodes.size());
    bytes_.resize(x.nodes.size());
    degree_ = j;
    nodes_ = &x.nodes;
    for (std::size_t i = 0; i < x.nodes.size(); ++i) {
      const std::size_t v = x.nodes[i];
      opts_[i] = by_degree_[v * all_degrees_.size() + j];
      const bool same = same_bytes_[v * all_degrees_.size() + j] != 0;  // both options sync the same bytes
      for (std::size_t l = 0; l < opts_[i]->size(); ++l)
        bytes_[i][l] = same && l == 1 ? bytes_[i][0]
                                      : piper_edge_bytes(*in_, v, (*opts_[i])[l], [&](std::size_t u) { return x.member[u] != 0; });
    }
  }
  /// The items at data parallelism d, after `edge_bytes`.
  void items(std::size_t d, std::vector<piper_item>& out) const {
    out.resize(opts_.size());
    const double dd = static_cast<double>(d);
    for (std::size_t i = 0; i < opts_.size(); ++i) {
      const auto& opts = *opts_[i];
      piper_item& it = out[i];
      it.count = static_cast<std::uint8_t>(opts.size());
      const std::size_t v = (*nodes_)[i];
      for (std::size_t l = 0; l < opts.size(); ++l) {
        const std::size_t at = part(v, degree_, l, d);  // = piper_tau(bytes_[i][l], opts[l], d, *p_), bit for bit
        it.tau[l] = (bytes_[i][l] / dd + resync_[at]) / p_->bandwidth + compute_[at];
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
  std::size_t degree_ = 0;                          ///< the degree index of the last `edge_bytes`
  const std::vector<std::size_t>* nodes_ = nullptr;  ///< the stage of the last `edge_bytes`
  std::vector<int> d_index_;                        ///< per d ≤ K: its index among the divisors of N, or −1
  std::size_t divisors_ = 0;
  std::vector<double> resync_, compute_;            ///< per (node, degree, option, d): resync bytes, p / d
  std::vector<char> same_bytes_;                    ///< per (node, degree): two options with equal sync bytes
  [[nodiscard]] std::size_t part(std::size_t v, std::size_t j, std::size_t l, std::size_t d) const {
    return ((v * all_degrees_.size() + j) * 2 + l) * divisors_ + static_cast<std::size_t>(d_index_[d]);
  }
  std::vector<piper_item> items_;
  std::vector<double> ks_;
  piper_knapsack knapsack_;
};
using piper_stage_tables = basic_piper_stage_tables<>;

/// dp[D][k][s]: "at most k devices, Σd at most s", steps of each row (successor_dp.hpp).
using piper_table = successor_dp_table<>;

/// The rows of a set D that candidates within `bound` go to: the nodes before D (All ∖ D, of
/// device-time bound `before`) need ⌈before / bound⌉ devices of any chain within the bound, so D's
/// rows above k_max = K − that gain nothing such a chain uses (−1: none). K without a bound.
template <int = 0>
long piper_row_limit(double before, double bound, std::size_t K) {
  if (!(bound < piper_infinity)) return static_cast<long>(K);
  const double need = std::ceil(before / bound * (1 - 1e-9));
  return need > static_cast<double>(K) ? -1 : static_cast<long>(K) - static_cast<long>(need);
}

/// ks_at[s] = KS[⌈s/d⌉] for s = 0…S (the stage's cost at s stage units in all).
template <int = 0>
void piper_expand_ks(std::span<const double> ks, std::size_t d, std::size_t S, std::vector<double>& ks_at) {
  ks_at.resize(S + 1);
  ks_at[0] = ks[0];
  for (std::size_t y = 1, s = 1; s <= S; ++y)
    for (const std::size_t last = std::min(S, y * d); s <= last; ++s) ks_at[s] = ks[y];
}

/// Fills `tb` with dp[D][k][·] for every set, keeping only candidates ≤ `bound`; under a bound,
/// candidates go only to D's rows k ≤ `piper_row_limit` (the rows above are then the prefix
/// minimum of those: values of real chains, and the reconstruction never reaches them). Returns
/// the number of pairs.
template <int = 0>
std::uint64_t piper_run_dp(const successor_sets& sets, piper_stage_tables& tables, piper_stage_view& x, double bound,
                                  piper_table& tb) {
  tb = piper_table(sets.size(), tables.devices(), tables.bound_s(), stage_count::at_most, {}, piper_infinity);
  const std::size_t K = tb.devices(), S = tb.stage_units();
  const auto& work = sets.weights();
  std::vector<char> in_set(work.size(), 0);
  std::vector<double> ks_at;
  std::uint64_t pairs = 0;
  for (std::size_t set = 1; set < sets.size(); ++set) {
    tb.open();
    long k_max = static_cast<long>(K);
    if (bound < piper_infinity) {
      for (auto v : sets.vertices(set)) in_set[v] = 1;
      double before = 0;
      for (std::size_t v = 0; v < work.size(); ++v)
        if (!in_set[v]) before += work[v];
      for (auto v : sets.vertices(set)) in_set[v] = 0;
      k_max = piper_row_limit(before, bound, K);
    }
    // The stage runs on t·d ≥ work / bound devices, the rest needs first_finite[sub] of k_max.
    auto keep = [&](std::size_t sub, double w) {
      return static_cast<long>(tb.first_finite(sub)) <= k_max &&
             w <= bound * static_cast<double>(static_cast<std::size_t>(k_max) - tb.first_finite(sub)) * (1 + 1e-12);
    };
    pairs += sets.for_each_subset(set, x, keep, [&](std::size_t sub, piper_stage_view& stage) {
      const auto limit = static_cast<std::size_t>(k_max);
      tables.degrees(stage);
      tables.fill(stage, bound, limit - tb.first_finite(sub), [&](std::size_t t, std::size_t d, std::span<const double> ks) {
        piper_expand_ks(ks, d, S, ks_at);  // KS(⌈s/d⌉) per s, once per (D', t, d)
        tb.relax(sub, t * d, d, [&](std::size_t s) { return ks_at[s]; }, bound, limit);
      });
      return true;
    });
    tb.close();
  }
  return pairs;
}

/// Upstream's choice of the answer: the first (k, s ≥ 1) improving by more than 1e-9.
template <int = 0>
double piper_best(const piper_table& tb, std::size_t all, std::size_t& k_used, std::size_t& s_used) {
  double best = piper_infinity;
  for (std::size_t k = 0; k <= tb.devices(); ++k)
    for (std::size_t s = 1; s <= tb.stage_units(); ++s)
      if (tb.at(all, k, s) + 1e-9 < best) { best = tb.at(all, k, s); k_used = k; s_used = s; }
  return best;
}

/// The DP restricted to the suffixes of one topological order (a chain of n + 1 sets, n(n+1)/2
/// pairs; the table's set c is the suffix of c nodes), with candidates above `bound` left out and
/// the same pruning as `piper_run_dp`: the value of a split the full DP also sees, with the same
/// stage values, or infinity when no chain of that order is within the bound.
template <int = 0>
double piper_chain_value(const successor_sets& sets, piper_stage_tables& tables, piper_stage_view& x,
                                const std::vector<std::size_t>& order, double bound) {
  const std::size_t n = order.size();
  const auto& work = sets.weights();
  piper_table tb(n + 1, tables.devices(), tables.bound_s(), stage_count::at_most, {}, piper_infinity);
  const std::size_t K = tb.devices();
  std::vector<double> suffix_work(n + 1, 0.0), prefix_work(n + 1, 0.0);  // work of order[n − c, n), of order[0, a)
  for (std::size_t c = 1; c <= n; ++c) suffix_work[c] = suffix_work[c - 1] + work[order[n - c]];
  for (std::size_t a = 1; a <= n; ++a) prefix_work[a] = prefix_work[a - 1] + work[order[a - 1]];
  for (std::size_t c = 1; c <= n; ++c) {  // the suffix of c nodes; its first stage is order[n − c, n − c2)
    tb.open();
    const long k_max = piper_row_limit(prefix_work[n - c], bound, K);
    for (std::size_t c2 = 0; c2 < c; ++c2) {
      const double w = suffix_work[c] - suffix_work[c2];
      if (static_cast<long>(tb.first_finite(c2)) > k_max ||
          w > bound * static_cast<double>(static_cast<std::size_t>(k_max) - tb.first_finite(c2)) * (1 + 1e-9))
        continue;
      const auto limit = static_cast<std::size_t>(k_max);
      x.nodes.assign(order.begin() + static_cast<std::ptrdiff_t>(n - c), order.begin() + static_cast<std::ptrdiff_t>(n - c2));
      std::sort(x.nodes.begin(), x.nodes.end());
      for (auto v : x.nodes) x.member[v] = 1;
      tables.degrees(x);
      tables.fill(x, bound, limit - tb.first_finite(c2), [&](std::size_t t, std::size_t d, std::span<const double> ks) {
        tb.relax(c2, t * d, d, [&](std::size_t s) { return ks[(s + d - 1) / d]; }, bound, limit);
      });
      for (auto v : x.nodes) x.member[v] = 0;
    }
    tb.close();
  }
  std::size_t k = 0, s = 0;
  return piper_best(tb, n, k, s);
}

/// An upper bound on the DP's value: the best chain over the suffixes of the enumerator's
/// topological order or of upstream's LIFO order, found with bounds 1.25^r · `start`, r < 12
/// (cheap while tight), until one is within its bound, else without a bound; infinity when
/// neither order has a chain that fits.
template <int = 0>
double piper_chain_bound(const io::piper_instance& in, const successor_sets& sets, piper_stage_tables& tables,
                                piper_stage_view& x, double start) {
  const std::vector<std::size_t> orders[2] = {sets.forward().order(), piper_lifo_topological_order(in)};
  double bound = start;
  for (int round = 0; start > 0 && round < 12; ++round, bound *= 1.25) {
    double best = piper_infinity;
    for (const auto& order : orders) best = std::min(best, piper_chain_value(sets, tables, x, order, bound));
    if (best <= bound) return best;
  }
  double best = piper_infinity;
  for (const auto& order : orders) best = std::min(best, piper_chain_value(sets, tables, x, order, piper_infinity));
  return best;
}

}  // namespace detail

/// Runs Piper's DP on `in` with K, M, BW from `opt` (else the file's header). The split is
/// reconstructed as upstream does (smallest (k, s) within 1e-9 of the minimum, then the first
/// matching D', t, d) and evaluated with `piper_split_tps`. Throws `std::invalid_argument` when
/// the instance has a cycle or the parameters are out of range.
template <int = 0>
[[nodiscard]] piper_result piper_plan(const io::piper_instance& in, const piper_options& opt = {}) {
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
  // A split's value bounds the optimum from above: the last round needs no more than that bound
  // (a relative 1e-9 above it, for the rounding of the sums). It is often the optimum itself
  // (GNMT), so guesses below it are tried only when it is more than 1.25× the first guess.
  const double upper = opt.bounded_rounds > 0 ? detail::piper_chain_bound(in, sets, tables, x, lower * 1.005) : piper_infinity;
  const double cap = upper < piper_infinity ? upper * (1 + 1e-9) : piper_infinity;
  int round = 0;
  for (double guess = lower * 1.005;; guess *= 1.25, ++round) {
    const bool last = !(lower > 0) || round == opt.bounded_rounds || !(guess * 1.25 < cap);
    const double bound = last ? cap : guess;
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

/// The devices with which `piper_plan` reads a profiled graph (Piper's K, M, BW and N).
struct piper_system {
  std::size_t devices = 1;              ///< K
  double memory_bytes = 0;              ///< M per device
  double bandwidth = 0;                 ///< BW, bytes per second as Piper's files use it
  std::size_t micro_batches = 1;        ///< N = `mbsInBatch`
  double weight_memory_factor = 1;      ///< b_o = factor · param_bytes (weights, gradients, optimizer state)
};

/// Piper's instance of any `profiled_dag`: one option per operator, "vanilla" at t = 1, with
/// p = compute_ms(g, v) / s (s = `profiled_micro_batch`, 1 when unknown: a time per sample),
/// w = param_bytes, a = memory_bytes (per micro-batch in flight), b = weight_memory_factor · w and
/// no synchronisation bytes; c(u, v) = edge_bytes. Throws std::invalid_argument on a graph without
/// operators or edges (Piper's files have both) or a weight factor < 0.
template <profiled_dag G>
[[nodiscard]] io::piper_instance make_piper_instance(const G& g, const piper_system& s) {
  const std::size_t n = devplace::num_vertices(g);
  if (n == 0) throw std::invalid_argument("make_piper_instance: the graph has no operators");
  if (!(s.weight_memory_factor >= 0) || !std::isfinite(s.weight_memory_factor))
    throw std::invalid_argument("make_piper_instance: weight_memory_factor must be finite and >= 0");
  io::piper_instance in;
  in.max_devices = s.devices;
  in.max_memory_per_device = s.memory_bytes;
  in.bandwidth = s.bandwidth;
  in.mbs_in_batch = s.micro_batches;
  const double per_sample = devplace::profiled_micro_batch(g) > 0 ? devplace::profiled_micro_batch(g) : 1.0;
  in.in_edges.assign(n, {});
  in.out_edges.assign(n, {});
  for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) {
    in.out_edges[u].push_back(in.edges.size());
    in.in_edges[v].push_back(in.edges.size());
    in.edges.emplace_back(u, v);
    in.edge_bytes.push_back(bytes);
  });
  if (in.edges.empty()) throw std::invalid_argument("make_piper_instance: the graph has no edges");
  for (std::size_t v = 0; v < n; ++v) {
    io::piper_option o{.id = "vanilla", .time_per_sample = devplace::compute_ms(g, v) / per_sample,
                       .parameter_size = devplace::param_bytes(g, v), .memory_a = devplace::memory_bytes(g, v)};
    o.memory_b = s.weight_memory_factor * o.parameter_size;
    o.sync_fw.assign(in.in_edges[v].size(), 0.0);
    o.sync_bw.assign(in.out_edges[v].size(), 0.0);
    io::piper_node node{.id = static_cast<std::int64_t>(v)};
    node.tmpcs[1].push_back(std::move(o));
    in.nodes.push_back(std::move(node));
  }
  return in;
}

/// Piper's planner on any `profiled_dag` (a user type, `op_graph`, a view), read as
/// `make_piper_instance` says; stage vertices are vertex ids. The options' devices, memory and
/// bandwidth overrides apply on top of `s`.
template <profiled_dag G>
[[nodiscard]] piper_result piper_plan(const G& g, const piper_system& s, const piper_options& opt = {}) {
  return piper_plan(make_piper_instance(g, s), opt);
}

}  // namespace devplace::peers
