#pragma once
/// \file map/detail/class_cover.hpp
/// The packing of count vectors into class sizes: the cover step of the copy cover on twin
/// classes and of the node-group and quotient copy covers. The search, its
/// branching, its failure memo and what each node costs: docs/mapping-oracles.md, "Copy cover"
/// ("The packing of count vectors").
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "devplace/detail/bitset.hpp"
#include "devplace/map/detail/cover_common.hpp"

namespace devplace::detail {

template <int = 0>
class basic_class_cover_packing {
 public:
  using outcome = packing_outcome;
  /// One class of a count vector: `count` ≥ 1 devices of class `cls`.
  struct entry {
    std::uint32_t cls, count;
  };

  /// `sizes`: the devices of every class (K); `entries`: the nonzero counts of every count vector,
  /// vector after vector, vector e in [starts[e], starts[e + 1]) (N + 1 offsets); each vector sums to
  /// the same S ≥ 1 and names a class at most once. `bit_sets`: the sets of fitting vectors as bit
  /// sets near the root where they take at most 64 MB (else lists only; the same search).
  basic_class_cover_packing(std::span<const std::uint32_t> sizes, std::span<const entry> entries, std::span<const std::size_t> starts,
                      bool bit_sets = true)
      : sizes_(sizes.begin(), sizes.end()), entries_(entries.begin(), entries.end()), starts_(starts.begin(), starts.end()) {
    N_ = starts_.empty() ? 0 : starts_.size() - 1;
    if (N_ > 0)
      for (std::size_t j = starts_[0]; j < starts_[1]; ++j) S_ += entries_[j].count;
    // a random weight per class: the hash of a count vector is Σ count · weight (mod 2^64), so
    // that the hash of a difference is the difference of the hashes
    weight_.resize(sizes_.size());
    for (std::size_t k = 0; k < weight_.size(); ++k) weight_[k] = mix64(0x2545F4914F6CDD1Dull + k * 0x9E3779B97F4A7C15ull);
    // the vectors by hash: open addressing, at most half full
    hash_.resize(N_);
    std::size_t slots = 2;
    while (slots < 2 * N_) slots *= 2;
    table_.assign(slots, 0);
    for (std::size_t e = 0; e < N_; ++e) {
      hash_[e] = hash_of(e);
      std::size_t i = static_cast<std::size_t>(hash_[e]) & (slots - 1);
      while (table_[i] != 0) i = (i + 1) & (slots - 1);
      table_[i] = static_cast<std::uint32_t>(e + 1);
    }
    // up to 32 classes below 2^15 devices each: every vector as 16-bit lanes, four to a word, so
    // that a fit is a few word operations (a lane's top bit survives (r | 2^15) − c iff c ≤ r)
    const std::size_t K = sizes_.size();
    words_ = (K + 3) / 4;
    packed_ = words_ <= 8 && std::all_of(sizes_.begin(), sizes_.end(), [](std::uint32_t n) { return n < 0x8000u; });
    // bit sets of the vectors, le_[k][v] = {e : c_k(e) ≤ v} for v = 0..n_k, within 64 MB
    NW_ = (N_ + 63) / 64;
    std::size_t masks = 0;
    for (const auto n : sizes_) masks += static_cast<std::size_t>(n) + 1;
    bits_ = bit_sets && N_ > 0 && masks * NW_ <= (std::size_t{64} << 20) / 8;
    if (bits_) {
      le_start_.resize(K);
      std::size_t at = 0;
      for (std::size_t k = 0; k < K; ++k) le_start_[k] = at, at += (static_cast<std::size_t>(sizes_[k]) + 1) * NW_;
      le_.assign(at, 0);
      std::vector<std::uint32_t> c(K);
      for (std::size_t e = 0; e < N_; ++e) {
        std::fill(c.begin(), c.end(), 0u);
        for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) c[entries_[j].cls] = entries_[j].count;
        for (std::size_t k = 0; k < K; ++k)
          for (std::size_t v = c[k]; v <= sizes_[k]; ++v) le_[le_start_[k] + v * NW_ + e / 64] |= std::uint64_t{1} << (e % 64);
      }
    }
    if (packed_) {
      lanes_.assign(N_ * words_, 0);
      for (std::size_t e = 0; e < N_; ++e)
        for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) lanes_[e * words_ + entries_[j].cls / 4] += lane(entries_[j].cls, entries_[j].count);
    }
  }

  /// Searches R count vectors (repetition allowed) with Σ ≤ sizes, at most Σ sizes − S·R devices
  /// left empty; the answer (R indices into the vectors) in `solution()`. Stops after
  /// `node_budget` nodes (0: none), or when `*stop` becomes true or `deadline` passes (checked
  /// every 1,024 nodes). The failure memo holds at most `memo_bytes` of keys.
  outcome solve(std::size_t R, std::uint64_t node_budget, const std::atomic<bool>* stop = nullptr,
                std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max(),
                std::size_t memo_bytes = std::size_t{64} << 20) {
    work_ = {.most = work_counter::fewer_than(node_budget), .stop = stop, .deadline = deadline};
    rejections_ = 0;
    memo_bytes_ = memo_bytes;
    solution_.clear();
    memo_.clear();
    std::size_t total = 0;
    for (auto n : sizes_) total += n;
    if (R == 0) return outcome::found;
    if (N_ == 0 || S_ == 0 || S_ * R > total) return outcome::none;
    std::vector<std::uint32_t> rem(sizes_);
    users_.assign(sizes_.size(), 0);
    std::uint64_t h = 0;
    for (std::size_t k = 0; k < sizes_.size(); ++k) h += weight_[k] * sizes_[k];
    if (packed_) {
      rem_lanes_.assign(words_, 0);
      for (std::size_t k = 0; k < sizes_.size(); ++k) rem_lanes_[k / 4] += lane(k, sizes_[k]);
    }
    // depth 0: every vector (the root filters them by all classes)
    level_.assign(1, {});
    std::vector<std::uint32_t> all(sizes_.size());
    std::iota(all.begin(), all.end(), std::uint32_t{0});
    if (bits_) {
      level_[0].is_list = false;
      level_[0].bits.assign(NW_, ~std::uint64_t{0});
      if (N_ % 64) level_[0].bits.back() = (std::uint64_t{1} << (N_ % 64)) - 1;
    } else {
      level_[0].list.resize(N_);
      std::iota(level_[0].list.begin(), level_[0].list.end(), std::uint32_t{0});
    }
    if (search(rem, h, R, total - S_ * R, 1, all)) return outcome::found;
    return work_.aborted ? outcome::stopped : outcome::none;
  }
  /// A test every solution must pass (R indices into the vectors); a rejected one is searched
  /// past, and after `max_rejections` rejections `solve` stops (stopped). The failure memo keeps
  /// only failures with no rejection below them (a rejection depends on more than the capacities).
  void set_accept(std::function<bool(std::span<const std::size_t>)> accept, std::size_t max_rejections) {
    accept_ = std::move(accept), max_rejections_ = max_rejections;
  }
  [[nodiscard]] std::size_t rejections() const noexcept { return rejections_; }
  [[nodiscard]] const std::vector<std::size_t>& solution() const noexcept { return solution_; }
  [[nodiscard]] std::uint64_t nodes() const noexcept { return work_.count; }

 private:
  static constexpr std::uint64_t top_bits = 0x8000800080008000ull;
  [[nodiscard]] static std::uint64_t lane(std::size_t k, std::uint64_t count) { return count << (16 * (k % 4)); }
  [[nodiscard]] bool fits(std::size_t e, const std::vector<std::uint32_t>& rem) const {
    if (packed_) {
      const std::uint64_t* v = lanes_.data() + e * words_;
      for (std::size_t w = 0; w < words_; ++w)
        if ((((rem_lanes_[w] | top_bits) - v[w]) & top_bits) != top_bits) return false;
      return true;
    }
    for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j)
      if (entries_[j].count > rem[entries_[j].cls]) return false;
    return true;
  }
  /// Takes vector e from the capacities `rem` (or gives it back).
  void take(std::size_t e, std::vector<std::uint32_t>& rem, bool out) {
    for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) rem[entries_[j].cls] = out ? rem[entries_[j].cls] - entries_[j].count : rem[entries_[j].cls] + entries_[j].count;
    if (packed_)
      for (std::size_t w = 0; w < words_; ++w) rem_lanes_[w] = out ? rem_lanes_[w] - lanes_[e * words_ + w] : rem_lanes_[w] + lanes_[e * words_ + w];
  }
  [[nodiscard]] std::uint32_t count_of(std::size_t e, std::size_t k) const {
    if (packed_) return static_cast<std::uint32_t>((lanes_[e * words_ + k / 4] >> (16 * (k % 4))) & 0xffffu);
    for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j)
      if (entries_[j].cls == k) return entries_[j].count;
    return 0;
  }
  [[nodiscard]] std::uint64_t hash_of(std::size_t e) const {
    std::uint64_t h = 0;
    for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) h += weight_[entries_[j].cls] * entries_[j].count;
    return h;
  }
  /// A vector equal to `rem` minus vector `minus` (none: N_) with hash `h`, or N_: looked up by
  /// hash and checked exactly (every class of the difference, as the vector's entries).
  [[nodiscard]] std::size_t vector_equal_to(const std::vector<std::uint32_t>& rem, std::size_t minus, std::uint64_t h) const {
    const std::size_t mask = table_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(h) & mask; table_[i] != 0; i = (i + 1) & mask) {
      const std::size_t e = table_[i] - 1;
      if (hash_[e] != h) continue;
      // e fits the difference with equal sums (S each side): then it is the difference
      bool ok = true;
      for (std::size_t j = starts_[e]; j < starts_[e + 1] && ok; ++j) {
        const auto k = entries_[j].cls;
        ok = entries_[j].count + (minus < N_ ? count_of(minus, k) : 0) <= rem[k];
      }
      if (ok) return e;
    }
    return N_;
  }
  /// Whether the solution so far passes the test (`set_accept`); a rejection is counted.
  bool accepted() {
    if (!accept_ || accept_(std::span<const std::size_t>(solution_))) return true;
    if (++rejections_ >= max_rejections_) work_.aborted = true;
    return false;
  }
  /// The failure memo's key of a node: its remaining capacities and copies left (in `key_`).
  std::span<const std::uint32_t> memo_key(const std::vector<std::uint32_t>& rem, std::size_t left) {
    key_.assign(rem.begin(), rem.end());
    key_.push_back(static_cast<std::uint32_t>(left));
    return key_;
  }
  /// Its fingerprint: the capacities' linear hash `h`, which the search keeps, with the copies left.
  [[nodiscard]] static std::uint64_t memo_fingerprint(std::uint64_t h, std::size_t left) noexcept {
    return mix64(h ^ (0x9E3779B97F4A7C15ull * (left + 1)));
  }
  /// Remembers the failure at (`rem`, `left`) unless a solution was rejected since `rejections`
  /// were counted, or the memo is full (it only saves time).
  void remember_failure(const std::vector<std::uint32_t>& rem, std::uint64_t h, std::size_t left, std::size_t rejections) {
    if (rejections != rejections_ || memo_.bytes() + key_set::bytes_per_key(rem.size() + 1) > memo_bytes_) return;
    memo_.insert(memo_key(rem, left), memo_fingerprint(h, left));
  }

  /// The vectors that fit `rem` at a node of depth `depth`, from its parent's (depth − 1; the
  /// capacities only fall along a path, in the classes `touched` since the parent): a bit set
  /// (`le_` masks ANDed in) while dense, else a list (each vector checked).
  void filter(const std::vector<std::uint32_t>& rem, std::size_t depth, std::span<const std::uint32_t> touched) {
    if (level_.size() <= depth) level_.resize(depth + 1);
    auto& cur = level_[depth];
    const auto& par = level_[depth - 1];
    cur.list.clear();
    if (!par.is_list) {  // one pass over the words: the parent's set ANDed with every touched mask
      masks_.clear();
      for (const auto k : touched) masks_.push_back(le_.data() + le_start_[k] + static_cast<std::size_t>(rem[k]) * NW_);
      cur.bits.resize(NW_);
      std::size_t count = 0;
      for (std::size_t w = 0; w < NW_; ++w) {
        std::uint64_t x = par.bits[w];
        for (const auto* m : masks_) x &= m[w];
        cur.bits[w] = x;
        count += popcount64(x);
      }
      cur.is_list = count < 2 * NW_;  // sparse: a list is cheaper below here
      if (cur.is_list)
        for (std::size_t w = 0; w < NW_; ++w)
          for (std::uint64_t x = cur.bits[w]; x; x &= x - 1) cur.list.push_back(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(x))));
      return;
    }
    cur.is_list = true;
    for (const auto e : par.list)
      if (fits(e, rem)) cur.list.push_back(e);
  }
  /// Calls f(e) for every vector of the set at `depth` that uses class k (every one: k = K).
  template <class F>
  void for_each_fit(std::size_t depth, std::size_t k, F&& f) const {
    const auto& cur = level_[depth];
    if (cur.is_list) {
      for (const auto e : cur.list)
        if (k == sizes_.size() || count_of(e, k) > 0) f(e);
      return;
    }
    const std::uint64_t* u = k == sizes_.size() ? nullptr : le_.data() + le_start_[k];  // le_[k][0]: vectors without k
    for (std::size_t w = 0; w < NW_; ++w)
      for (std::uint64_t x = u ? cur.bits[w] & ~u[w] : cur.bits[w]; x; x &= x - 1) f(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(x))));
  }

  /// `rem`: capacity left per class (hash `h`); `left` copies to place; `spare` devices that may
  /// stay empty (Σ rem = S · left + spare); `depth`: the recursion depth (the set of vectors that
  /// fitted the parent at depth − 1, `touched`: the classes whose capacity fell since).
  /// Without spare devices the last copy is `rem` itself and the last two are a vector and its
  /// complement: both are looked up by hash instead of searched.
  bool search(std::vector<std::uint32_t>& rem, std::uint64_t h, std::size_t left, std::size_t spare, std::size_t depth,
              std::span<const std::uint32_t> touched) {
    if (left == 0) return accepted();
    if (!work_.step()) return false;
    if (spare == 0 && left == 1) {
      const std::size_t e = vector_equal_to(rem, N_, h);
      if (e == N_) return false;
      solution_.push_back(e);
      if (accepted()) return true;
      solution_.pop_back();
      return false;
    }
    const std::size_t rejections = rejections_;
    if (memo_.find(memo_key(rem, left), memo_fingerprint(h, left)) != key_set::npos) return false;
    filter(rem, depth, touched);
    const std::size_t K = rem.size();
    if (spare == 0 && left == 2) {
      // a fitting vector that uses a class k with capacity left, and its complement (one of the
      // two uses k)
      std::size_t k = 0;
      while (rem[k] == 0) ++k;
      bool done = false;
      for_each_fit(depth, k, [&](std::size_t e) {
        if (done || work_.aborted) return;
        const std::size_t f = vector_equal_to(rem, e, h - hash_[e]);
        if (f == N_) return;
        solution_.push_back(e);
        solution_.push_back(f);
        if (accepted()) done = true;
        else solution_.resize(solution_.size() - 2);
      });
      if (done) return true;
      if (work_.aborted) return false;
      remember_failure(rem, h, left, rejections);
      return false;
    }
    // per class the fitting vectors that use it; a class with capacity and none must stay empty
    const auto& cur = level_[depth];
    bool any = false;
    if (cur.is_list) {
      any = !cur.list.empty();
      for (const auto e : cur.list)
        for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) ++users_[entries_[j].cls];
    } else {
      for (std::size_t k = 0; k < K; ++k) {
        if (rem[k] == 0) continue;
        const std::uint64_t* without = le_.data() + le_start_[k];
        std::size_t n = 0;
        for (std::size_t w = 0; w < NW_; ++w) n += static_cast<std::size_t>(popcount64(cur.bits[w] & ~without[w]));
        users_[k] = n;
        any = any || n > 0;
      }
    }
    std::size_t forced = 0, best = K;
    for (std::size_t k = 0; k < K; ++k) {
      if (rem[k] > 0) {
        if (users_[k] == 0) forced += rem[k];
        else if (best == K || users_[k] < users_[best]) best = k;  // the fewest fitting vectors use it (ties: the first)
      }
    }
    std::fill(users_.begin(), users_.end(), std::size_t{0});
    if (!any || forced > spare || best == K) {
      remember_failure(rem, h, left, rejections);
      return false;
    }
    // the vectors that use class `best`, those taking more of it first
    std::vector<std::pair<std::uint32_t, std::size_t>> branch;
    for_each_fit(depth, best, [&](std::size_t e) { branch.emplace_back(count_of(e, best), e); });
    std::stable_sort(branch.begin(), branch.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::uint32_t> classes;
    for (const auto& be : branch) {
      const std::size_t e = be.second;
      take(e, rem, true);
      solution_.push_back(e);
      classes.clear();
      for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) classes.push_back(entries_[j].cls);
      const bool ok = search(rem, h - hash_[e], left - 1, spare, depth + 1, classes);
      take(e, rem, false);
      if (ok) return true;
      solution_.pop_back();
      if (work_.aborted) return false;
    }
    if (spare > 0) {  // one device of class `best` stays empty
      --rem[best];
      if (packed_) rem_lanes_[best / 4] -= lane(best, 1);
      const std::uint32_t b = static_cast<std::uint32_t>(best);
      const bool ok = search(rem, h - weight_[best], left, spare - 1, depth + 1, std::span<const std::uint32_t>(&b, 1));
      ++rem[best];
      if (packed_) rem_lanes_[best / 4] += lane(best, 1);
      if (ok) return true;
      if (work_.aborted) return false;
    }
    remember_failure(rem, h, left, rejections);
    return false;
  }

  std::size_t N_ = 0, S_ = 0;
  std::vector<std::uint32_t> sizes_;
  std::vector<entry> entries_;
  std::vector<std::size_t> starts_;
  std::vector<std::size_t> users_;  // per class, scratch of one node
  std::vector<const std::uint64_t*> masks_;  // scratch of `filter`
  std::vector<std::uint64_t> weight_;  // per class, its weight in the hash of a count vector
  std::vector<std::uint64_t> hash_;    // per vector, its hash
  std::vector<std::uint32_t> table_;   // vector + 1 by hash (open addressing), 0: empty
  std::size_t words_ = 0;              // 64-bit words of a vector in 16-bit lanes
  bool packed_ = false;                // vectors and capacities also held in lanes
  std::vector<std::uint64_t> lanes_;   // per vector, `words_` words
  std::vector<std::uint64_t> rem_lanes_;  // the capacities left, in lanes
  struct fit_set {
    bool is_list = true;
    std::vector<std::uint64_t> bits;   // a bit per vector
    std::vector<std::uint32_t> list;   // the vectors
  };
  std::vector<fit_set> level_;         // per recursion depth, the vectors that fit its capacities
  bool bits_ = false;                  // bit sets at the top of the search
  std::size_t NW_ = 0;                 // words of a bit set
  std::vector<std::uint64_t> le_;      // le_[k][v], from le_start_[k] + v · NW_
  std::vector<std::size_t> le_start_;
  std::vector<std::size_t> solution_;
  key_set memo_;                       // the failure memo: keys of nodes without a solution below
  std::vector<std::uint32_t> key_;     // scratch: a node's key
  std::size_t memo_bytes_ = 0;
  work_counter work_;  // the nodes, and whether a limit (or `max_rejections_`) stopped the search
  std::function<bool(std::span<const std::size_t>)> accept_;
  std::size_t max_rejections_ = 0, rejections_ = 0;
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using class_cover_packing = basic_class_cover_packing<>;

}  // namespace devplace::detail
