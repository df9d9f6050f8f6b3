#pragma once
/// \file partition/successor_dp.hpp
/// The DP over successor-closed sets that PHAZE's placement (phaze/placement.hpp) and Piper's
/// planner (peers/piper.hpp) share (docs/successor_dp.md). A pipeline is built from its end: a
/// *successor-closed* set D (no edge leaves D: a down-set of `views::reverse(g)`) is what the
/// later stages hold, and a stage is X = D ∖ D′ for D′ ⊊ D, both successor-closed (X is then
/// convex). The DP keeps
///
///   dp[∅][k][0] = 0   (stage_count::exact)   or   dp[∅][k][s] = 0 for every s   (stage_count::at_most)
///   dp[D][k][s] = min over D′ ⊊ D, over the options (a devices, u stage units) the caller offers
///                 for X = D ∖ D′, of combine(dp[D′][k − a][s − u], cost_X(s))
///
/// for k = 0…K devices ("at most k": every row is non-increasing in k) and s = 0…S stage units;
/// with `at_most` the finished dp[D] is also prefix-minimised over s (and k), i.e. "at most s".
/// As chains ∅ = D_0 ⊊ D_1 ⊊ … ⊊ D_m = D (stage i = D_i ∖ D_{i−1}, the pipeline's m-th stage
/// from the end) with options (a_i, u_i): dp[D][k][s] is the least combine-fold of cost_i(p_i)
/// over chains with Σ a_i ≤ k, where in `exact` mode p_i = u_1 + … + u_i and p_m = s, and in
/// `at_most` mode p_i ≥ p_{i−1} + u_i (slack allowed) and p_m ≤ s. With costs non-decreasing in
/// s (Piper's KS) slack never helps. `combine` must be non-decreasing in both arguments (max:
/// the bottleneck stage; +: a sum).
/// The stage cost is a callback of the caller, evaluated where it is now (PHAZE's stage load,
/// Piper's knapsack over options); this header owns the loop: the sets, the pairs, the table and
/// the backtracking.
///
/// Parts:
///  * `successor_sets`: enumerates the successor-closed sets (`downset_enumerator` on
///    `views::reverse(g)`), ∅ first and V last (stable by size), indexes them by a Zobrist key,
///    and visits the pairs D′ ⊊ D of one D, each once, as the supersets of V ∖ D in the forward
///    enumerator (the stage is what the enumeration added), with the stage's vertices, a
///    membership array and the sum of per-vertex weights (for a caller's pruning).
///  * `successor_dp_table`: dp[D][k][s], dense in `exact` mode; in `at_most` mode every row is
///    stored as its steps down, and a relaxation only evaluates the candidates where the rest's
///    row or the cost steps down (elsewhere they cannot lower a prefix minimum), skipping rows
///    equal to the previous k; both give the values of the plain recurrence exactly.
///  * `successor_dp_fill` (the set × pair loop) and `successor_dp_backtrack` (the stages of a
///    cell, first stage to last).
///
/// Complexity: O(N · n²/64) to enumerate N sets of n vertices; a fill visits every pair once
/// (P pairs, P ≤ N², O(|X|) each for the key and the stage) and a relaxation costs
/// O(S · K) in `exact` mode and O(K · steps + S) in `at_most` mode; memory N (S+1)(K+1) doubles
/// (`exact`) or the steps (`at_most`).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/config.hpp"
#include "devplace/dag/concepts.hpp"
#include "devplace/status.hpp"
#include "devplace/views/reverse.hpp"

namespace devplace {

/// The stage X = D ∖ D′ of one pair while it is visited: its vertex ids (ascending) and a
/// membership array over all vertex ids (1 for the stage's vertices, 0 elsewhere; reset after the
/// visit). A caller may derive from it to carry its own per-stage scratch.
struct successor_stage {
  std::vector<std::size_t> nodes;
  std::vector<char> member;
};

/// The successor-closed sets of a DAG, indexed (see the file comment).
class successor_sets {
 public:
  static constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

  successor_sets() = default;

  /// Enumerates the successor-closed sets of `g` (at most `max_sets`: beyond, `outcome()` is
  /// `work_limit` and the sets are not indexed). `weights` (empty, or one per vertex) are summed
  /// over each visited stage. Precondition (checked): `g` is acyclic.
  template <dag G>
  explicit successor_sets(const G& g, std::uint64_t max_sets = unlimited, std::vector<double> weights = {})
      : forward_(g), weights_(std::move(weights)) {
    const std::size_t n = forward_.num_vertices();
    DEVPLACE_EXPECTS(weights_.empty() || weights_.size() == n, "successor_sets: weights must be empty or one per vertex");
    if (weights_.empty()) weights_.assign(n, 0.0);
    const downset_enumerator backward(views::reverse(g));
    const status st = backward.for_each([&](const detail::dynamic_bitset& f) {
      if (sets_.size() == max_sets) return downset_action::stop;
      sets_.push_back(backward.to_vertices(f));
      return downset_action::proceed;
    });
    if (st != status::optimal) {
      outcome_ = status::work_limit;
      return;
    }
    std::stable_sort(sets_.begin(), sets_.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
    index();
  }

  /// `optimal` when every set was enumerated, `work_limit` when `max_sets` stopped it.
  [[nodiscard]] devplace::status outcome() const noexcept { return outcome_; }
  [[nodiscard]] std::size_t size() const noexcept { return sets_.size(); }
  [[nodiscard]] std::size_t num_vertices() const noexcept { return forward_.num_vertices(); }
  /// The index of V (∅ is 0). Precondition: `outcome()` is `optimal`.
  [[nodiscard]] std::size_t full() const noexcept { return sets_.size() - 1; }
  /// The vertices of set i, in the order of the reversed graph's topological positions.
  [[nodiscard]] const std::vector<std::size_t>& vertices(std::size_t i) const noexcept { return sets_[i]; }
  /// The per-vertex weights (0 when none were given).
  [[nodiscard]] const std::vector<double>& weights() const noexcept { return weights_; }
  /// The forward enumerator (down-sets of g, the complements of the sets).
  [[nodiscard]] const downset_enumerator& forward() const noexcept { return forward_; }

  /// A stage scratch sized for this graph (membership all 0).
  template <class X = successor_stage>
  [[nodiscard]] X make_stage() const {
    X x;
    x.member.assign(num_vertices(), 0);
    return x;
  }

  /// Calls `visit(sub, x)` for every D′ ⊊ D (`set` = D's index, `sub` = D′'s) that `keep(sub,
  /// weight)` accepts, weight = Σ of the weights over the stage D ∖ D′, with `x` holding the
  /// stage; `visit` returns false to stop. Returns the number of pairs, all counted (also the
  /// ones not kept). Pairs come in the forward enumerator's order, each once.
  template <class X, class Keep, class Visit>
  std::uint64_t for_each_subset(std::size_t set, X& x, Keep&& keep, Visit&& visit) const {
    const auto& e = forward_;
    detail::dynamic_bitset base = e.full_set();
    for (auto v : sets_[set]) base.reset(e.position_of(v));
    std::uint64_t pairs = 0;
    const std::size_t order_words = (num_vertices() + 63) / 64;
    thread_local std::vector<std::uint64_t> order_bits;
    (void)e.for_each_superset(base, key_acc{this, 0, 0.0}, [&](const detail::dynamic_bitset& f, const key_acc& acc) {
      ++pairs;
      const std::size_t sub = find(keys_[set] ^ acc.key);
      if (!keep(sub, acc.weight)) return downset_action::proceed;
      // The stage's vertices, ascending: marked in a vertex-indexed bitset, then read in order.
      x.nodes.clear();
      order_bits.assign(order_words, 0);
      for (std::size_t k = 0; k < f.num_words(); ++k)
        for (std::uint64_t bits = f.words()[k] & ~base.words()[k]; bits; bits &= bits - 1) {
          const std::size_t v = e.vertex_at(k * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
          order_bits[v / 64] |= std::uint64_t{1} << (v % 64);
        }
      for (std::size_t k = 0; k < order_words; ++k)
        for (std::uint64_t bits = order_bits[k]; bits; bits &= bits - 1)
          x.nodes.push_back(k * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      for (auto v : x.nodes) x.member[v] = 1;
      const bool go_on = visit(sub, x);
      for (auto v : x.nodes) x.member[v] = 0;
      return go_on ? downset_action::proceed : downset_action::stop;
    });
    return pairs;
  }
  /// Every pair of `set`.
  template <class X, class Visit>
  std::uint64_t for_each_subset(std::size_t set, X& x, Visit&& visit) const {
    return for_each_subset(set, x, [](std::size_t, double) { return true; }, std::forward<Visit>(visit));
  }

 private:
  struct key_acc {
    const successor_sets* sp = nullptr;
    std::uint64_t key = 0;
    double weight = 0;
    void add(std::size_t q, const detail::dynamic_bitset&) {
      const std::size_t v = sp->forward_.vertex_at(q);
      key ^= sp->zobrist_[v];
      weight += sp->weights_[v];
    }
  };

  [[nodiscard]] static std::uint64_t mix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Zobrist keys per vertex, re-drawn until the sets' keys are distinct; open addressing.
  void index() {
    const std::size_t n = num_vertices();
    for (std::uint64_t seed = 0x5eedf00dull;; ++seed) {
      std::uint64_t s = seed;
      zobrist_.assign(n, 0);
      for (auto& z : zobrist_) z = mix(s);
      keys_.assign(sets_.size(), 0);
      std::size_t cap = 16;
      while (cap < 2 * sets_.size()) cap *= 2;
      slots_.assign(cap, {});
      bool distinct = true;
      for (std::size_t i = 0; i < sets_.size() && distinct; ++i) {
        for (auto v : sets_[i]) keys_[i] ^= zobrist_[v];
        std::size_t h = keys_[i] & (cap - 1);
        while (slots_[h].set != UINT32_MAX && slots_[h].key != keys_[i]) h = (h + 1) & (cap - 1);
        distinct = slots_[h].set == UINT32_MAX;
        slots_[h] = {keys_[i], static_cast<std::uint32_t>(i)};
      }
      if (distinct) return;
    }
  }

  /// The set with this key (every key looked up belongs to a set).
  [[nodiscard]] std::size_t find(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t h = key & mask;; h = (h + 1) & mask)
      if (slots_[h].key == key && slots_[h].set != UINT32_MAX) return slots_[h].set;
  }

  downset_enumerator forward_;
  std::vector<double> weights_;
  std::vector<std::vector<std::size_t>> sets_;
  devplace::status outcome_ = status::optimal;
  struct slot {
    std::uint64_t key = 0;
    std::uint32_t set = UINT32_MAX;  ///< UINT32_MAX = empty
  };
  std::vector<std::uint64_t> zobrist_, keys_;
  std::vector<slot> slots_;  ///< open addressing, key and set side by side (one cache line per probe)
};

/// Whether dp[D][k][s] counts exactly s stage units or at most s.
enum class stage_count { exact, at_most };

/// The bottleneck combine rule: the pipeline's time per micro-batch is its slowest stage's.
struct combine_max {
  [[nodiscard]] double operator()(double rest, double stage) const noexcept { return std::max(rest, stage); }
};

/// dp[D][k][s] for D = 0…N−1 (set indices), k = 0…K, s = 0…S (see the file comment). Sets are
/// built in index order: ∅ is done by the constructor; `open()` starts the next set, `relax`
/// offers candidates for it, `close()` finishes it (prefix minimum and step compression in
/// `at_most` mode). A value ≥ `infinity` (default +∞; Piper uses its 10³⁰) means "no way": such a
/// cost is not offered, such a rest is not extended, and unreached cells hold `infinity`.
template <class Combine = combine_max>
class successor_dp_table {
 public:
  static constexpr double inf = std::numeric_limits<double>::infinity();

  successor_dp_table() = default;
  successor_dp_table(std::size_t sets, std::size_t K, std::size_t S, stage_count mode, Combine combine = {},
                     double infinity = inf)
      : K_(K), S_(S), mode_(mode), combine_(combine), inf_(infinity) {
    DEVPLACE_EXPECTS(sets >= 1, "successor_dp_table: at least the empty set");
    DEVPLACE_EXPECTS(infinity > 0, "successor_dp_table: infinity must be > 0");
    if (mode_ == stage_count::exact) {
      dense_.assign(sets * (S_ + 1) * (K_ + 1), inf_);
      for (std::size_t k = 0; k <= K_; ++k) dense_[k] = 0;  // dp[∅][k][0]
    } else {
      raw_.assign((K_ + 1) * (S_ + 1), 0.0);
      append_raw();  // dp[∅][k][s] = 0
    }
    done_ = 1;
  }

  [[nodiscard]] std::size_t devices() const noexcept { return K_; }
  [[nodiscard]] std::size_t stage_units() const noexcept { return S_; }
  [[nodiscard]] stage_count mode() const noexcept { return mode_; }
  [[nodiscard]] double infinity() const noexcept { return inf_; }
  /// The sets finished so far (∅ included).
  [[nodiscard]] std::size_t finished() const noexcept { return done_; }
  /// Bytes the table holds.
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return dense_.size() * sizeof(double) + step_v_.size() * (sizeof(double) + sizeof(std::uint32_t)) +
           begin_.size() * sizeof(std::uint64_t) + same_.size() + first_finite_.size() * sizeof(std::size_t);
  }

  /// Starts the next set (index `finished()`): every cell infinite.
  void open() {
    if (mode_ == stage_count::at_most) std::fill(raw_.begin(), raw_.end(), inf_);
  }

  /// Offers, for the open set D and its subset `sub` (finished), the stage on `a` devices and
  /// `u` stage units with cost `cost(s)` at total stage units s (called for s = u…S; once it is
  /// infinite it must stay infinite for larger s). Candidates above `bound` are dropped, and
  /// candidates go only to the rows k ≤ `k_limit` (a caller that knows no chain it needs uses
  /// more devices for D): in `at_most` mode the rows above are then the prefix minimum of those.
  template <class Cost>
  void relax(std::size_t sub, std::size_t a, std::size_t u, Cost&& cost, double bound = inf,
             std::size_t k_limit = std::numeric_limits<std::size_t>::max()) {
    if (a > K_ || u > S_) return;
    const std::size_t K = std::min(K_, k_limit);
    if (mode_ == stage_count::exact) {
      double* out = dense_.data() + done_ * (S_ + 1) * (K_ + 1);
      for (std::size_t s = u; s <= S_; ++s) {
        const double c = cost(s);
        if (c >= inf_) break;
        const double* rest = dense_.data() + (sub * (S_ + 1) + (s - u)) * (K_ + 1);
        double* cell = out + s * (K_ + 1);
        for (std::size_t k = a; k <= K; ++k) {
          if (rest[k - a] >= inf_) continue;
          const double v = combine_(rest[k - a], c);
          if (v <= bound) cell[k] = std::min(cell[k], v);
        }
      }
      return;
    }
    // at_most: candidates only where the rest's row or the cost steps down.
    if (cost(u) >= inf_) return;
    cost_steps_.clear();
    double prev = cost(u);
    for (std::size_t s = u + 1; s <= S_; ++s) {
      const double c = cost(s);
      if (c < prev) cost_steps_.push_back(s);
      prev = c;
    }
    const std::size_t w = S_ + 1;
    for (std::size_t k = a + first_finite_[sub]; k <= K; ++k) {
      const std::size_t kr = k - a;
      if (kr > 0 && same_[row(sub, kr)]) continue;  // the same candidates as at k − 1
      const std::size_t r = row(sub, kr);
      double* out = raw_.data() + k * w;
      for (std::uint64_t i = begin_[r]; i < begin_[r + 1]; ++i) {
        const std::size_t s = step_s_[i] + u;
        if (s > S_) break;
        const double c = cost(s);
        if (c >= inf_) break;  // infinite for every larger s
        const double v = combine_(step_v_[i], c);
        if (v <= bound) out[s] = std::min(out[s], v);
      }
      for (auto s : cost_steps_) {
        const double v = combine_(at(sub, kr, s - u), cost(s));
        if (v <= bound) out[s] = std::min(out[s], v);
      }
    }
  }

  /// Finishes the open set.
  void close() {
    if (mode_ == stage_count::at_most) append_raw();
    ++done_;
  }

  /// dp[set][k][s] of a finished set.
  [[nodiscard]] double at(std::size_t set, std::size_t k, std::size_t s) const {
    if (mode_ == stage_count::exact) return dense_[(set * (S_ + 1) + s) * (K_ + 1) + k];
    const std::size_t r = row(set, k);
    std::uint64_t i = begin_[r];
    while (i + 1 < begin_[r + 1] && step_s_[i + 1] <= s) ++i;
    return step_v_[i];
  }

  /// `at_most` mode: the smallest k whose row has a finite value (K + 1 if none).
  [[nodiscard]] std::size_t first_finite(std::size_t set) const { return first_finite_[set]; }

 private:
  [[nodiscard]] std::size_t row(std::size_t set, std::size_t k) const { return set * (K_ + 1) + k; }

  /// Prefix minimum of raw over k and s, then its rows as steps down.
  void append_raw() {
    const std::size_t w = S_ + 1;
    for (std::size_t k = 0; k <= K_; ++k)
      for (std::size_t s = 0; s <= S_; ++s) {
        double& x = raw_[k * w + s];
        if (k > 0) x = std::min(x, raw_[(k - 1) * w + s]);
        if (s > 0) x = std::min(x, raw_[k * w + s - 1]);
      }
    first_finite_.push_back(K_ + 1);
    for (std::size_t k = K_ + 1; k-- > 0;)
      if (raw_[k * w + S_] < inf_) first_finite_.back() = k;
    for (std::size_t k = 0; k <= K_; ++k) {
      if (begin_.empty()) begin_.push_back(0);
      for (std::size_t s = 0; s <= S_; ++s)
        if (s == 0 || raw_[k * w + s] < raw_[k * w + s - 1]) {
          step_s_.push_back(static_cast<std::uint32_t>(s));
          step_v_.push_back(raw_[k * w + s]);
        }
      begin_.push_back(step_s_.size());
      bool eq = k > 0;
      for (std::size_t s = 0; eq && s <= S_; ++s) eq = raw_[k * w + s] == raw_[(k - 1) * w + s];
      same_.push_back(eq ? 1 : 0);
    }
  }

  std::size_t K_ = 0, S_ = 0, done_ = 0;
  stage_count mode_ = stage_count::exact;
  Combine combine_{};
  double inf_ = inf;
  std::vector<double> dense_;  ///< exact: [set][s][k]
  std::vector<double> raw_;    ///< at_most: the open set, [k][s]
  std::vector<std::uint64_t> begin_;  ///< at_most: per (set, k), plus one
  std::vector<std::uint32_t> step_s_;
  std::vector<double> step_v_;
  std::vector<char> same_;     ///< at_most: row k equals row k − 1
  std::vector<std::size_t> first_finite_;
  std::vector<std::size_t> cost_steps_;
};

/// Fills the sets 1…end−1 of `table` (∅ is done; `end` ≤ sets.size()): for each set in index
/// order, `open()`, then `stage(set, sub, x, table)` for every pair D′ ⊊ D that `keep(sub,
/// weight)` accepts (it calls `table.relax`), then `close()`. Returns the number of pairs.
template <class X, class Table, class Keep, class Stage>
std::uint64_t successor_dp_fill(const successor_sets& sets, Table& table, X& x, std::size_t end, Keep&& keep, Stage&& stage) {
  DEVPLACE_EXPECTS(sets.outcome() == status::optimal && end <= sets.size() && table.finished() == 1,
                   "successor_dp_fill: needs every set enumerated and a fresh table");
  std::uint64_t pairs = 0;
  for (std::size_t set = 1; set < end; ++set) {
    table.open();
    pairs += sets.for_each_subset(set, x, keep, [&](std::size_t sub, X& stage_x) {
      stage(set, sub, stage_x, table);
      return true;
    });
    table.close();
  }
  return pairs;
}

/// One backtracking step: the stage used a devices and u stage units.
struct successor_step {
  std::size_t devices = 0, units = 0;
};

/// Which of several matching pairs a backtracking step takes.
enum class backtrack_pick {
  first_visited,   ///< the first in `for_each_subset`'s order
  smallest_subset  ///< the smallest D′ index (the sets are by size)
};

/// The stages of dp[set][k][s], first stage (the one holding V ∖ D′ of the whole pipeline, i.e.
/// the sources when `set` is V) to last: at each step the pair (D′, X) for which
/// `match(set, sub, x, k, s)` returns a step; `emit(sub, x, step)` is then called with that stage, and
/// the walk goes on from (D′, k − a, s − u) until ∅. Throws `std::logic_error` when no pair
/// matches (the table and `match` disagree).
template <class X, class Match, class Emit>
void successor_dp_backtrack(const successor_sets& sets, X& x, std::size_t set, std::size_t k, std::size_t s,
                            backtrack_pick pick, Match&& match, Emit&& emit) {
  while (set != 0) {
    std::optional<successor_step> found;
    std::size_t found_sub = 0;
    if (pick == backtrack_pick::first_visited) {
      (void)sets.for_each_subset(set, x, [&](std::size_t sub, X& stage_x) {
        if (auto m = match(set, sub, stage_x, k, s)) {
          found = m, found_sub = sub;
          emit(sub, stage_x, *m);
          return false;
        }
        return true;
      });
    } else {
      // The pairs by D′ index, then the first that matches (as many `match` calls as needed).
      std::vector<std::pair<std::size_t, X>> pairs;
      (void)sets.for_each_subset(set, x, [&](std::size_t sub, X& stage_x) {
        pairs.emplace_back(sub, stage_x);
        return true;
      });
      std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [sub, stage_x] : pairs)
        if (auto m = match(set, sub, stage_x, k, s)) {
          found = m, found_sub = sub;
          emit(sub, stage_x, *m);
          break;
        }
    }
    if (!found || found->devices > k || found->units > s)
      throw std::logic_error("successor_dp_backtrack: internal error: no pair matches the DP table");
    k -= found->devices;
    s -= found->units;
    set = found_sub;
  }
}

}  // namespace devplace
