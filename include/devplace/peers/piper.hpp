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
/// Implementation: the sets are enumerated by `downset_enumerator` on the reversed graph and
/// processed by size. For each D, its subsets D' are the complements of the down-sets of the
/// graph that contain All ∖ D (`for_each_superset`), so every pair is visited once and the
/// stage X = F ∖ (All ∖ D) is what the enumeration added; D' is found by a 64-bit key. A finished
/// dp[D][k][·] is non-increasing in s and is stored as its steps (s, value): a candidate
/// max(dp[D'][k'][s − d], KS(⌈s/d⌉)) is only needed where dp[D'][k'][·] steps down (KS does not
/// decrease between its own steps, which are handled too), and a row k' equal to row k' − 1
/// adds nothing. This gives the values of the straightforward recurrence exactly.
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

#include "devplace/algorithm/downsets.hpp"
#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/peers/piper_cost.hpp"
#include "devplace/status.hpp"
#include "devplace/views/reverse.hpp"

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

/// The sets of the instance, the two enumerators, and the keys that identify a set.
struct piper_space {
  csr_dag g;
  downset_enumerator forward;          ///< down-sets of g (complements of Piper's sets)
  std::vector<std::vector<std::size_t>> sets;  ///< Piper's sets as vertex lists, by size
  std::vector<std::uint64_t> zobrist;  ///< per vertex
  std::vector<std::uint64_t> keys;     ///< per set
  struct slot {
    std::uint64_t key = 0;
    std::uint32_t set = UINT32_MAX;  ///< UINT32_MAX = empty
  };
  std::vector<slot> slots;  ///< open addressing, key and set side by side (one cache line per probe)
  /// The set with this key (keys are distinct and every key looked up belongs to a set).
  [[nodiscard]] std::size_t find(std::uint64_t key) const {
    const std::size_t mask = slots.size() - 1;
    for (std::size_t h = key & mask;; h = (h + 1) & mask)
      if (slots[h].key == key && slots[h].set != UINT32_MAX) return slots[h].set;
  }
  std::vector<double> work;            ///< per vertex: min over (t, option) of t·p
};

/// Accumulates, over the stage's nodes, the key and the device-time bound Σ min_{t,o} t·p.
struct piper_key_acc {
  const piper_space* sp = nullptr;
  std::uint64_t key = 0;
  double work = 0;
  void add(std::size_t q, const devplace::detail::dynamic_bitset&) {
    const std::size_t v = sp->forward.vertex_at(q);
    key ^= sp->zobrist[v];
    work += sp->work[v];
  }
};

[[nodiscard]] inline std::uint64_t piper_mix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Enumerates the sets (status work_limit beyond `max_sets`) and keys them so that keys are distinct.
inline status piper_build_space(const io::piper_instance& in, std::uint64_t max_sets, piper_space& sp) {
  std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> edges;
  for (const auto& [u, v] : in.edges)
    edges.emplace_back(static_cast<csr_dag::vertex_type>(u), static_cast<csr_dag::vertex_type>(v));
  sp.g = csr_dag(in.nodes.size(), edges);
  if (topological_sort(sp.g).status != status::optimal) throw std::invalid_argument("piper: the instance has a cycle");
  sp.forward = downset_enumerator(sp.g);
  const downset_enumerator backward(views::reverse(sp.g));
  const status st = backward.for_each([&](const devplace::detail::dynamic_bitset& f) {
    if (sp.sets.size() == max_sets) return downset_action::stop;
    sp.sets.push_back(backward.to_vertices(f));
    return downset_action::proceed;
  });
  if (st != status::optimal) return status::work_limit;
  std::stable_sort(sp.sets.begin(), sp.sets.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  sp.work.assign(in.nodes.size(), piper_infinity);
  for (std::size_t v = 0; v < in.nodes.size(); ++v)
    for (const auto& [t, opts] : in.nodes[v].tmpcs)
      for (const auto& o : opts) sp.work[v] = std::min(sp.work[v], static_cast<double>(t) * o.time_per_sample);
  for (std::uint64_t seed = 0x5eedf00dull;; ++seed) {
    std::uint64_t s = seed;
    sp.zobrist.assign(in.nodes.size(), 0);
    for (auto& z : sp.zobrist) z = piper_mix(s);
    sp.keys.assign(sp.sets.size(), 0);
    std::size_t cap = 16;
    while (cap < 2 * sp.sets.size()) cap *= 2;
    sp.slots.assign(cap, {});
    bool distinct = true;
    for (std::size_t i = 0; i < sp.sets.size() && distinct; ++i) {
      for (auto v : sp.sets[i]) sp.keys[i] ^= sp.zobrist[v];
      std::size_t h = sp.keys[i] & (cap - 1);
      while (sp.slots[h].set != UINT32_MAX && sp.slots[h].key != sp.keys[i]) h = (h + 1) & (cap - 1);
      distinct = sp.slots[h].set == UINT32_MAX;
      sp.slots[h] = {sp.keys[i], static_cast<std::uint32_t>(i)};
    }
    if (distinct) return status::optimal;
  }
}

/// The stage X of one pair: its nodes (ascending), membership, and the tensor-parallel degrees
/// all of them support.
struct piper_stage_view {
  std::vector<std::size_t> nodes;
  std::vector<char> member;
  std::vector<std::uint64_t> order_bits;  ///< scratch: the stage's vertices as a vertex-indexed bitset
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

/// The finished dp[D][k][·] of every set, as steps: row (D, k) holds (s, value) for s = 0 and
/// every s where the value drops; `same[D·(K+1) + k]` tells that row k equals row k − 1.
struct piper_table {
  std::size_t K = 0, S = 0;
  std::vector<std::uint64_t> begin;  ///< per (D, k), plus one
  std::vector<std::uint32_t> step_s;
  std::vector<double> step_v;
  std::vector<char> same;
  std::vector<std::size_t> first_finite;  ///< per set: the smallest k whose row has a finite value (K + 1 if none)
  [[nodiscard]] std::size_t row(std::size_t set, std::size_t k) const { return set * (K + 1) + k; }
  [[nodiscard]] double at(std::size_t set, std::size_t k, std::size_t s) const {
    const std::size_t r = row(set, k);
    std::uint64_t i = begin[r];
    while (i + 1 < begin[r + 1] && step_s[i + 1] <= s) ++i;
    return step_v[i];
  }
  /// Appends the rows of one set from its full (K+1)×(S+1) array, after the prefix minimum.
  void append(std::vector<double>& full) {
    const std::size_t w = S + 1;
    for (std::size_t k = 0; k <= K; ++k)
      for (std::size_t s = 0; s <= S; ++s) {
        double& x = full[k * w + s];
        if (k > 0) x = std::min(x, full[(k - 1) * w + s]);
        if (s > 0) x = std::min(x, full[k * w + s - 1]);
      }
    first_finite.push_back(K + 1);
    for (std::size_t k = K + 1; k-- > 0;)
      if (full[k * w + S] < piper_infinity) first_finite.back() = k;
    for (std::size_t k = 0; k <= K; ++k) {
      if (begin.empty()) begin.push_back(0);
      for (std::size_t s = 0; s <= S; ++s)
        if (s == 0 || full[k * w + s] < full[k * w + s - 1]) {
          step_s.push_back(static_cast<std::uint32_t>(s));
          step_v.push_back(full[k * w + s]);
        }
      begin.push_back(step_s.size());
      bool eq = k > 0;
      for (std::size_t s = 0; eq && s <= S; ++s) eq = full[k * w + s] == full[(k - 1) * w + s];
      same.push_back(eq ? 1 : 0);
    }
  }
};

/// The candidates of one (D', t, d) into the raw array of D: at the steps of dp[D'][k − t·d]
/// shifted by d, and at the steps down of KS.
inline void piper_push(const piper_table& tb, std::size_t sub, std::size_t t, std::size_t d,
                       std::span<const double> ks, double bound, std::vector<double>& raw, std::size_t k_limit) {
  const std::size_t K = std::min(tb.K, k_limit), S = tb.S, w = S + 1;
  if (d > S || ks[1] >= piper_infinity) return;  // nothing fits even at y = 1 (and KS[y] is infinite beyond)
  thread_local std::vector<std::size_t> ks_steps;
  thread_local std::vector<double> ks_at;  // KS at y = ⌈s/d⌉, per s
  ks_steps.clear();
  for (std::size_t y = 2, s = d + 1; s <= S; ++y, s += d)  // s = (y − 1)·d + 1, where ⌈s/d⌉ becomes y
    if (ks[y] < ks[y - 1]) ks_steps.push_back(s);
  ks_at.resize(S + 1);
  ks_at[0] = ks[0];
  for (std::size_t y = 1, s = 1; s <= S; ++y)
    for (const std::size_t last = std::min(S, y * d); s <= last; ++s) ks_at[s] = ks[y];
  for (std::size_t k = t * d + tb.first_finite[sub]; k <= K; ++k) {
    const std::size_t kr = k - t * d;
    if (kr > 0 && tb.same[tb.row(sub, kr)]) continue;  // the same candidates as at k − 1
    const std::size_t r = tb.row(sub, kr);
    double* out = raw.data() + k * w;
    for (std::uint64_t i = tb.begin[r]; i < tb.begin[r + 1]; ++i) {
      const std::size_t s = tb.step_s[i] + d;
      if (s > S) break;
      const double y = ks_at[s];
      if (y >= piper_infinity) break;  // infinite for every larger y
      const double v = std::max(tb.step_v[i], y);
      if (v <= bound) out[s] = std::min(out[s], v);
    }
    for (auto s : ks_steps) {
      const double v = std::max(tb.at(sub, kr, s - d), ks_at[s]);
      if (v <= bound) out[s] = std::min(out[s], v);
    }
  }
}

/// Calls `visit(sub, x)` for every D' ⊊ D (set index `set`) that `keep(sub, work)` accepts
/// (work = Σ over the stage of `piper_space::work`), with `x` holding the stage D ∖ D' (nodes
/// and membership); `visit` returns false to stop. Returns the number of pairs, all counted.
template <class Keep, class Visit>
std::uint64_t piper_for_each_subset(const piper_space& sp, std::size_t set, piper_stage_view& x, Keep&& keep, Visit&& visit) {
  const auto& e = sp.forward;
  devplace::detail::dynamic_bitset base = e.full_set();
  for (auto v : sp.sets[set]) base.reset(e.position_of(v));
  std::uint64_t pairs = 0;
  (void)e.for_each_superset(base, piper_key_acc{&sp, 0, 0.0}, [&](const devplace::detail::dynamic_bitset& f, const piper_key_acc& acc) {
    ++pairs;
    const std::size_t sub = sp.find(sp.keys[set] ^ acc.key);
    if (!keep(sub, acc.work)) return downset_action::proceed;
    // The stage's vertices, ascending: marked in a vertex-indexed bitset, then read in order.
    x.nodes.clear();
    x.order_bits.assign((x.member.size() + 63) / 64, 0);
    for (std::size_t k = 0; k < f.num_words(); ++k)
      for (std::uint64_t bits = f.words()[k] & ~base.words()[k]; bits; bits &= bits - 1) {
        const std::size_t v = e.vertex_at(k * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        x.order_bits[v / 64] |= std::uint64_t{1} << (v % 64);
      }
    for (std::size_t k = 0; k < x.order_bits.size(); ++k)
      for (std::uint64_t bits = x.order_bits[k]; bits; bits &= bits - 1)
        x.nodes.push_back(k * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
    for (auto v : x.nodes) x.member[v] = 1;
    const bool go_on = visit(sub, x);
    for (auto v : x.nodes) x.member[v] = 0;
    return go_on ? downset_action::proceed : downset_action::stop;
  });
  return pairs;
}


/// Fills `tb` with dp[D][k][·] for every set, keeping only candidates ≤ `bound`. Returns the
/// number of pairs.
inline std::uint64_t piper_run_dp(const piper_space& sp, piper_stage_tables& tables, piper_stage_view& x, double bound,
                                  piper_table& tb) {
  tb = piper_table{};
  tb.K = tables.devices();
  tb.S = tables.bound_s();
  std::vector<double> raw((tb.K + 1) * (tb.S + 1), 0.0);
  tb.append(raw);  // ∅: 0 everywhere
  std::uint64_t pairs = 0;
  std::vector<char> in_set(sp.work.size(), 0);
  for (std::size_t set = 1; set < sp.sets.size(); ++set) {
    std::fill(raw.begin(), raw.end(), piper_infinity);
    // The nodes before D (All ∖ D) need ⌈their work / bound⌉ devices of a chain within the bound,
    // so D's rows above k_max gain nothing such a chain uses: candidates are written to rows ≤
    // k_max only (the rows above are then the prefix minimum of those, values of real chains).
    long k_max = static_cast<long>(tb.K);
    if (bound < piper_infinity) {
      for (auto v : sp.sets[set]) in_set[v] = 1;
      double before = 0;
      for (std::size_t v = 0; v < sp.work.size(); ++v)
        if (!in_set[v]) before += sp.work[v];
      for (auto v : sp.sets[set]) in_set[v] = 0;
      const double need = std::ceil(before / bound * (1 - 1e-9));
      k_max = need > static_cast<double>(tb.K) ? -1 : static_cast<long>(tb.K) - static_cast<long>(need);
    }
    // The stage runs on t·d ≥ work / bound devices, the rest needs first_finite[sub] of K.
    auto keep = [&](std::size_t sub, double work) {
      return static_cast<long>(tb.first_finite[sub]) <= k_max &&
             work <= bound * static_cast<double>(static_cast<std::size_t>(k_max) - tb.first_finite[sub]) * (1 + 1e-12);
    };
    pairs += piper_for_each_subset(sp, set, x, keep, [&](std::size_t sub, piper_stage_view& stage) {
      const std::size_t limit = static_cast<std::size_t>(k_max);
      tables.degrees(stage);
      tables.fill(stage, bound, limit - tb.first_finite[sub], [&](std::size_t t, std::size_t d, std::span<const double> ks) {
        piper_push(tb, sub, t, d, ks, bound, raw, limit);
      });
      return true;
    });
    tb.append(raw);
  }
  return pairs;
}

/// Upstream's choice of the answer: the first (k, s ≥ 1) improving by more than 1e-9.
inline double piper_best(const piper_table& tb, std::size_t all, std::size_t& k_used, std::size_t& s_used) {
  double best = piper_infinity;
  for (std::size_t k = 0; k <= tb.K; ++k)
    for (std::size_t s = 1; s <= tb.S; ++s)
      if (tb.at(all, k, s) + 1e-9 < best) { best = tb.at(all, k, s); k_used = k; s_used = s; }
  return best;
}

/// The DP restricted to the suffixes of one topological order (a chain of n + 1 sets, n(n+1)/2
/// pairs), with candidates above `bound` left out (and the same pruning as `piper_run_dp`):
/// the value of a split the full DP also sees, with the same stage values, or infinity when no
/// chain of that order is within the bound.
inline double piper_chain_value(const piper_space& sp, piper_stage_tables& tables, piper_stage_view& x,
                                const std::vector<std::size_t>& order, double bound) {
  const std::size_t n = order.size();
  piper_table tb;
  tb.K = tables.devices();
  tb.S = tables.bound_s();
  std::vector<double> raw((tb.K + 1) * (tb.S + 1), 0.0);
  tb.append(raw);  // ∅
  std::vector<double> suffix_work(n + 1, 0.0), prefix_work(n + 1, 0.0);  // work of order[n − c, n), of order[0, a)
  for (std::size_t c = 1; c <= n; ++c) suffix_work[c] = suffix_work[c - 1] + sp.work[order[n - c]];
  for (std::size_t a = 1; a <= n; ++a) prefix_work[a] = prefix_work[a - 1] + sp.work[order[a - 1]];
  for (std::size_t c = 1; c <= n; ++c) {  // the suffix of c nodes; its first stages are order[n − c, n − c2)
    std::fill(raw.begin(), raw.end(), piper_infinity);
    long k_max = static_cast<long>(tb.K);
    if (bound < piper_infinity) {
      const double need = std::ceil(prefix_work[n - c] / bound * (1 - 1e-9));
      k_max = need > static_cast<double>(tb.K) ? -1 : static_cast<long>(tb.K) - static_cast<long>(need);
    }
    for (std::size_t c2 = 0; c2 < c; ++c2) {
      const double work = suffix_work[c] - suffix_work[c2];
      if (static_cast<long>(tb.first_finite[c2]) > k_max ||
          work > bound * static_cast<double>(static_cast<std::size_t>(k_max) - tb.first_finite[c2]) * (1 + 1e-9))
        continue;
      const auto limit = static_cast<std::size_t>(k_max);
      x.nodes.assign(order.begin() + static_cast<std::ptrdiff_t>(n - c), order.begin() + static_cast<std::ptrdiff_t>(n - c2));
      std::sort(x.nodes.begin(), x.nodes.end());
      for (auto v : x.nodes) x.member[v] = 1;
      tables.degrees(x);
      tables.fill(x, bound, limit - tb.first_finite[c2], [&](std::size_t t, std::size_t d, std::span<const double> ks) {
        piper_push(tb, c2, t, d, ks, bound, raw, limit);
      });
      for (auto v : x.nodes) x.member[v] = 0;
    }
    tb.append(raw);
  }
  std::size_t k = 0, s = 0;
  return piper_best(tb, n, k, s);
}

/// An upper bound on the DP's value: the best chain over the suffixes of the enumerator's
/// topological order or of upstream's LIFO order, found with bounds 1.25^r · `start`, r < 12
/// (cheap while tight), until one is within its bound, else without a bound; infinity when
/// neither order has a chain that fits.
inline double piper_chain_bound(const io::piper_instance& in, const piper_space& sp, piper_stage_tables& tables,
                                piper_stage_view& x, double start) {
  const std::vector<std::size_t> orders[2] = {sp.forward.order(), piper_lifo_topological_order(in)};
  double bound = start;
  for (int round = 0; start > 0 && round < 12; ++round, bound *= 1.25) {
    double best = piper_infinity;
    for (const auto& order : orders) best = std::min(best, piper_chain_value(sp, tables, x, order, bound));
    if (best <= bound) return best;
  }
  double best = piper_infinity;
  for (const auto& order : orders) best = std::min(best, piper_chain_value(sp, tables, x, order, piper_infinity));
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
  detail::piper_space sp;
  const status st = detail::piper_build_space(in, opt.max_sets, sp);
  res.sets = sp.sets.size();
  if (st != status::optimal) {
    res.status = status::work_limit;
    res.time_s = elapsed();
    return res;
  }
  detail::piper_stage_tables tables(in, p);
  detail::piper_stage_view x;
  x.member.assign(in.nodes.size(), 0);
  // Candidates above a bound cannot be on a chain of that value: a bound at least the optimum
  // gives the exact answer. Start just above a lower bound and raise it until the DP finds a
  // chain within it; the last resort is no bound.
  detail::piper_table tb;
  double best = piper_infinity;
  std::size_t k_used = 0, s_used = 0;
  // Every stage runs Σp/d on t·d devices: the K devices share at least Σ_v min t·p of device time.
  double lower = 0;
  for (double w : sp.work) lower += w;
  lower /= static_cast<double>(p.devices);
  // A split's value bounds the optimum from above: the last round needs no more than that bound
  // (a relative 1e-9 above it, for the rounding of the sums). It is often the optimum itself
  // (GNMT), so guesses below it are tried only when it is more than 1.25× the first guess.
  const double upper = opt.bounded_rounds > 0 ? detail::piper_chain_bound(in, sp, tables, x, lower * 1.005) : piper_infinity;
  const double cap = upper < piper_infinity ? upper * (1 + 1e-9) : piper_infinity;
  int round = 0;
  for (double guess = lower * 1.005;; guess *= 1.25, ++round) {
    const bool last = !(lower > 0) || round == opt.bounded_rounds || !(guess * 1.25 < cap);
    const double bound = last ? cap : guess;
    res.set_pairs = detail::piper_run_dp(sp, tables, x, bound, tb);
    best = detail::piper_best(tb, sp.sets.size() - 1, k_used, s_used);
    if (last || best <= bound) break;
  }
  const std::size_t all = sp.sets.size() - 1;
  res.dp_value = best;
  if (best > piper_infinity / 2) {
    res.time_s = elapsed();
    return res;
  }
  res.devices_used = k_used;
  res.sum_d = s_used;
  // Reconstruction: the first (D', t, d) whose candidate matches dp[D][k][s].
  std::size_t cur = all, k = k_used, s = s_used;
  std::vector<piper_item> items;
  while (cur != 0) {
    const double target = tb.at(cur, k, s);
    bool found = false;
    (void)detail::piper_for_each_subset(sp, cur, x, [](std::size_t, double) { return true; },
                                        [&](std::size_t sub, detail::piper_stage_view& stage) {
      tables.degrees(stage);
      tables.fill(stage, piper_infinity, k, [&](std::size_t t, std::size_t d, std::span<const double> ks) {
        if (found || t * d > k || d > s) return;
        const double v = std::max(tb.at(sub, k - t * d, s - d), ks[(s + d - 1) / d]);
        if (!(std::abs(target - v) < 1e-9)) return;
        found = true;
        tables.items(d, items);
        const auto choice = tables.knapsack().choice(items, p.memory_bytes, (s + d - 1) / d);
        res.stages.push_back({stage.nodes, t, d, std::vector<std::size_t>(choice.begin(), choice.end())});
        k -= t * d;
        s -= d;
        cur = sub;
      });
      return !found;
    });
    if (!found) throw std::logic_error("piper: no reconstruction step matches the DP table");
  }
  res.tps = piper_split_tps(in, p, res.stages);
  res.status = status::optimal;
  res.time_s = elapsed();
  return res;
}

}  // namespace devplace::peers
