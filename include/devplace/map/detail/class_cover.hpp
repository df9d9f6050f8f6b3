#pragma once
/// \file map/detail/class_cover.hpp
/// The cover step of the copy-cover search on the twin-class quotient (map/detail/copy_cover.hpp):
/// the devices fall into K twin classes of sizes n_1..n_K (map/symmetry.hpp `device_twins`), and a
/// copy embedding up to twin permutations is its *count vector* c (c_k devices of class k,
/// Σ c_k = S). R copies fit on the devices exactly when R count vectors, repetition allowed, sum
/// to at most n_k in every class (to exactly n_k when S·R = D): within a class any devices will do.
/// `class_cover_packing` searches such a multiset depth-first: the class with remaining capacity
/// and the fewest count vectors that still fit and use it is covered by each of them in turn (or,
/// while spare devices remain, one of its devices is left empty), and a hash set remembers the
/// remaining capacities (with the copies left) from which the search failed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace devplace::detail {

class class_cover_packing {
 public:
  enum class outcome { found, none, stopped };
  /// One class of a count vector: `count` ≥ 1 devices of class `cls`.
  struct entry {
    std::uint32_t cls, count;
  };

  /// `sizes`: the devices of every class (K); `entries`: the nonzero counts of every count vector,
  /// vector after vector, vector e in [starts[e], starts[e + 1]) (N + 1 offsets); each vector sums to
  /// the same S ≥ 1 and names a class at most once.
  class_cover_packing(std::span<const std::uint32_t> sizes, std::span<const entry> entries, std::span<const std::size_t> starts)
      : sizes_(sizes.begin(), sizes.end()), entries_(entries.begin(), entries.end()), starts_(starts.begin(), starts.end()) {
    N_ = starts_.empty() ? 0 : starts_.size() - 1;
    if (N_ > 0)
      for (std::size_t j = starts_[0]; j < starts_[1]; ++j) S_ += entries_[j].count;
  }

  /// Searches R count vectors (repetition allowed) with Σ ≤ sizes, at most Σ sizes − S·R devices
  /// left empty; the answer (R indices into the vectors) in `solution()`. Stops after
  /// `node_budget` nodes (0: none), or when `*stop` becomes true or `deadline` passes (checked
  /// every 1,024 nodes). The failure memo holds at most `memo_bytes` of keys.
  outcome solve(std::size_t R, std::uint64_t node_budget, const std::atomic<bool>* stop = nullptr,
                std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max(),
                std::size_t memo_bytes = std::size_t{64} << 20) {
    budget_ = node_budget, stop_ = stop, deadline_ = deadline, aborted_ = false, nodes_ = 0;
    memo_left_ = memo_bytes;
    solution_.clear();
    failed_.clear();
    std::size_t total = 0;
    for (auto n : sizes_) total += n;
    if (R == 0) return outcome::found;
    if (N_ == 0 || S_ == 0 || S_ * R > total) return outcome::none;
    std::vector<std::uint32_t> rem(sizes_);
    users_.assign(sizes_.size(), 0);
    if (search(rem, R, total - S_ * R)) return outcome::found;
    return aborted_ ? outcome::stopped : outcome::none;
  }
  [[nodiscard]] const std::vector<std::size_t>& solution() const noexcept { return solution_; }
  [[nodiscard]] std::uint64_t nodes() const noexcept { return nodes_; }

 private:
  [[nodiscard]] bool fits(std::size_t e, const std::vector<std::uint32_t>& rem) const {
    for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j)
      if (entries_[j].count > rem[entries_[j].cls]) return false;
    return true;
  }
  [[nodiscard]] std::uint32_t count_of(std::size_t e, std::size_t k) const {
    for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j)
      if (entries_[j].cls == k) return entries_[j].count;
    return 0;
  }
  /// The remaining capacities and the copies left, as a key of the failure memo.
  [[nodiscard]] std::string key(const std::vector<std::uint32_t>& rem, std::size_t left) const {
    const std::size_t K = rem.size();
    std::string s(sizeof(std::uint32_t) * (K + 1), '\0');
    const auto l = static_cast<std::uint32_t>(left);
    std::memcpy(s.data(), rem.data(), sizeof(std::uint32_t) * K);
    std::memcpy(s.data() + sizeof(std::uint32_t) * K, &l, sizeof(l));
    return s;
  }
  void remember_failure(std::string&& k) {
    if (k.size() + 64 > memo_left_) return;  // full: the memo only saves time
    memo_left_ -= k.size() + 64;
    failed_.insert(std::move(k));
  }

  /// `rem`: capacity left per class; `left` copies to place; `spare` devices that may stay empty.
  bool search(std::vector<std::uint32_t>& rem, std::size_t left, std::size_t spare) {
    if (left == 0) return true;
    if (++nodes_ == budget_ ||
        ((nodes_ & 1023u) == 0 && ((stop_ && stop_->load(std::memory_order_relaxed)) || std::chrono::steady_clock::now() >= deadline_))) {
      aborted_ = true;
      return false;
    }
    auto k_ = key(rem, left);
    if (failed_.count(k_)) return false;
    // per class: the fitting vectors that use it; a class with capacity and none must stay empty
    std::vector<std::size_t> fit;
    for (std::size_t e = 0; e < N_; ++e) {
      if (!fits(e, rem)) continue;
      fit.push_back(e);
      for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) ++users_[entries_[j].cls];
    }
    std::size_t forced = 0, best = rem.size();
    for (std::size_t k = 0; k < rem.size(); ++k) {
      if (rem[k] > 0) {
        if (users_[k] == 0) forced += rem[k];
        else if (best == rem.size() || users_[k] < users_[best]) best = k;
      }
    }
    std::fill(users_.begin(), users_.end(), std::size_t{0});
    if (fit.empty() || forced > spare || best == rem.size()) {
      remember_failure(std::move(k_));
      return false;
    }
    // the vectors that use class `best`, those taking more of it first
    std::vector<std::pair<std::uint32_t, std::size_t>> branch;
    for (auto e : fit)
      if (const auto c = count_of(e, best); c > 0) branch.emplace_back(c, e);
    std::stable_sort(branch.begin(), branch.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& be : branch) {
      const std::size_t e = be.second;
      for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) rem[entries_[j].cls] -= entries_[j].count;
      solution_.push_back(e);
      const bool ok = search(rem, left - 1, spare);
      for (std::size_t j = starts_[e]; j < starts_[e + 1]; ++j) rem[entries_[j].cls] += entries_[j].count;
      if (ok) return true;
      solution_.pop_back();
      if (aborted_) return false;
    }
    if (spare > 0) {  // one device of class `best` stays empty
      --rem[best];
      const bool ok = search(rem, left, spare - 1);
      ++rem[best];
      if (ok) return true;
      if (aborted_) return false;
    }
    remember_failure(std::move(k_));
    return false;
  }

  std::size_t N_ = 0, S_ = 0;
  std::vector<std::uint32_t> sizes_;
  std::vector<entry> entries_;
  std::vector<std::size_t> starts_;
  std::vector<std::size_t> users_;  // per class, scratch of one node
  std::vector<std::size_t> solution_;
  std::unordered_set<std::string> failed_;
  std::size_t memo_left_ = 0;
  std::uint64_t budget_ = 0, nodes_ = 0;
  const std::atomic<bool>* stop_ = nullptr;
  std::chrono::steady_clock::time_point deadline_;
  bool aborted_ = false;
};

}  // namespace devplace::detail
