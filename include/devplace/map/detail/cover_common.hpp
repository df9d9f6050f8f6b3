#pragma once
/// \file map/detail/cover_common.hpp
/// What the cover searches of the mapper share (the copy, node-group, quotient copy and line
/// ring covers; map/detail/cover_oracles.hpp wraps them as target
/// oracles): their answer at a target, the work counter of their listings, packings and
/// realisations, the listing cache shared by the targets searched at once, the set of keys of
/// their memos, and the best ring through a device set.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/detail/bottleneck_cycle.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

using cover_clock = std::chrono::steady_clock;

/// The answer of a cover search at a target t.
struct cover_answer {
  /// found: a mapping with every stage time ≤ t; none: no mapping below `next_change`;
  /// relaxed_found: the relaxation of the line ring cover holds (no answer about the
  /// real topology, see `counts`); unknown: a limit, the stop flag or the deadline was reached.
  enum class kind { found, none, relaxed_found, unknown };
  kind answer = kind::unknown;
  std::vector<std::size_t> dev;       ///< found: the device of every vertex s·R + r
  std::vector<std::uint32_t> counts;  ///< relaxed_found: the count vector of every stage (S · K)
  /// none: every mapping has objective ≥ this (> t)
  double next_change = std::numeric_limits<double>::infinity();
  std::uint64_t nodes = 0;  ///< the work done (listing steps, packing nodes, realisation steps)
  std::size_t rows = 0;     ///< the rows listed within t (embeddings, rings, count vectors)
  /// unknown because the listing reached a limit (it would at every larger target too, with the
  /// same limits)
  bool capped = false;
  bool rows_capped = false;  ///< the listing reached its row limit (copy cover)
  std::size_t rejected = 0;  ///< packings that did not realise (searched past)
  bool unrealised = false;   ///< node-group cover: unknown because merged nodes did not pack the groups
};

/// The outcome of a packing search (map/detail/exact_cover.hpp, map/detail/class_cover.hpp): the
/// rows found, none exist, or stopped by a limit.
enum class packing_outcome { found, none, stopped };

/// Takes a packing's outcome into `a`, its nodes added: none, or found with every one of the
/// `vertices` unplaced for the caller to fill. True when found.
template <int = 0>
bool take_packing(packing_outcome o, std::uint64_t nodes, std::size_t vertices, cover_answer& a) {
  a.nodes += nodes;
  if (o == packing_outcome::none) a.answer = cover_answer::kind::none;
  if (o != packing_outcome::found) return false;
  a.answer = cover_answer::kind::found;
  a.dev.assign(vertices, unplaced);
  return true;
}

/// The limits of one `solve` of the node-group cover: count vectors listed,
/// steps of the listing, nodes of the packing (0: none for the last two); the node-group cover's
/// bin packing of its groups into the nodes: nodes per packing, packings that do not realise.
struct count_vector_limits {
  std::size_t vectors = 200'000;
  std::uint64_t listing_steps = 4'000'000;
  std::uint64_t packing_nodes = 1'000'000;
  std::uint64_t placing_nodes = 20'000;
  std::size_t placing_tries = 64;
};

/// Whether `*stop` is set or `deadline` has passed.
[[nodiscard]] inline bool interrupted(const std::atomic<bool>* stop, cover_clock::time_point deadline) noexcept {
  return (stop && stop->load(std::memory_order_relaxed)) || cover_clock::now() >= deadline;
}

/// Work counted step by step against a limit, with a stop flag and a deadline checked every
/// `mask + 1` steps. `most`: the steps that may complete (`at_most`, `fewer_than`).
struct work_counter {
  static constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t most = unlimited;
  const std::atomic<bool>* stop = nullptr;
  cover_clock::time_point deadline = cover_clock::time_point::max();
  std::uint64_t mask = 1023;
  std::uint64_t count = 0;
  bool aborted = false;  ///< a limit was reached
  bool capped = false;   ///< the limit on the steps was reached

  /// Counts a step; false (and aborted) once it exceeds `most`, or `*stop` or the deadline is
  /// seen.
  bool step() {
    if (++count > most) aborted = capped = true;
    else if ((count & mask) == 0 && interrupted(stop, deadline)) aborted = true;
    return !aborted;
  }
  /// `most` for a limit of `limit` steps (0: none).
  [[nodiscard]] static constexpr std::uint64_t at_most(std::uint64_t limit) noexcept { return limit ? limit : unlimited; }
  /// `most` for a budget that the `budget`-th step reaches, unfinished (0: none).
  [[nodiscard]] static constexpr std::uint64_t fewer_than(std::uint64_t budget) noexcept { return budget ? budget - 1 : unlimited; }
};

/// The listing at the largest target listed so far, shared by the targets searched at once: any
/// smaller target filters it instead of listing again. `Listing` has a target `t` (the copy
/// cover's embeddings, the quotient copy cover's count vectors).
template <class Listing>
class listing_cache {
 public:
  /// The cached listing if its target is ≥ t, else a new one filled by `list(fresh, held)` (`held`:
  /// the cached listing, or null) and offered to the cache, replacing the cached one if its
  /// target is larger; null when `list` returns false.
  template <class List>
  [[nodiscard]] std::shared_ptr<const Listing> covering(double t, List&& list) {
    std::shared_ptr<const Listing> held;
    {
      std::lock_guard lk(mu_);
      held = listing_;
    }
    if (held && held->t >= t) return held;
    auto fresh = std::make_shared<Listing>();
    if (!list(*fresh, held.get())) return nullptr;
    std::lock_guard lk(mu_);
    if (!listing_ || listing_->t < fresh->t) listing_ = fresh;
    return fresh;
  }
  void clear() {
    std::lock_guard lk(mu_);
    listing_.reset();
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Listing> listing_;
};

/// A set of keys, each a sequence of `Word`s, stored end to end in one array behind an
/// open-addressing table of their 64-bit fingerprints (at most half full); every hit is checked
/// against the whole key, so a collision costs a comparison, never a wrong answer. The memos and
/// "seen" sets of the cover searches, which test and insert millions of keys per target, without
/// an allocation per key.
template <class Word = std::uint32_t>
class basic_key_set {
 public:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  void clear() { keys_.clear(), starts_.assign(1, 0), slots_.assign(16, slot{}); }
  [[nodiscard]] std::size_t size() const noexcept { return starts_.size() - 1; }
  /// What the set holds, in bytes (keys, offsets, slots).
  [[nodiscard]] std::size_t bytes() const noexcept {
    return sizeof(Word) * keys_.size() + sizeof(std::size_t) * starts_.size() + sizeof(slot) * slots_.size();
  }
  /// What inserting a key of `words` words may add to `bytes()` (the table doubles at half full).
  [[nodiscard]] static constexpr std::size_t bytes_per_key(std::size_t words) noexcept {
    return sizeof(Word) * words + sizeof(std::size_t) + 2 * sizeof(slot);
  }
  /// The key of index i.
  [[nodiscard]] std::span<const Word> key(std::size_t i) const noexcept {
    return {keys_.data() + starts_[i], starts_[i + 1] - starts_[i]};
  }
  /// The index of `key` (the order of its insertion), or npos. `fp`: the key's fingerprint, when
  /// the caller has one at hand (any function of the key alone; the same for every call).
  [[nodiscard]] std::size_t find(std::span<const Word> key) const { return find(key, fingerprint(key)); }
  [[nodiscard]] std::size_t find(std::span<const Word> key, std::uint64_t fp) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = fp & mask; slots_[i].id != 0; i = (i + 1) & mask) {
      if (slots_[i].fp != fp) continue;
      const std::size_t e = slots_[i].id - 1;
      if (starts_[e + 1] - starts_[e] == key.size() &&
          std::equal(key.begin(), key.end(), keys_.begin() + static_cast<std::ptrdiff_t>(starts_[e])))
        return e;
    }
    return npos;
  }
  /// Inserts `key` if absent: its index, and whether it was inserted.
  std::pair<std::size_t, bool> insert(std::span<const Word> key) { return insert(key, fingerprint(key)); }
  std::pair<std::size_t, bool> insert(std::span<const Word> key, std::uint64_t fp) {
    if (const std::size_t i = find(key, fp); i != npos) return {i, false};
    if (2 * (size() + 1) > slots_.size()) grow();
    keys_.insert(keys_.end(), key.begin(), key.end());
    starts_.push_back(keys_.size());
    place({fp, size()});
    return {size() - 1, true};
  }

 private:
  struct slot {
    std::uint64_t fp = 0;
    std::size_t id = 0;  ///< the key's index + 1; 0: empty
  };
  [[nodiscard]] static std::uint64_t fingerprint(std::span<const Word> key) noexcept {
    std::uint64_t h = 0x243F6A8885A308D3ull ^ key.size();
    for (const auto w : key) h = (h ^ w) * 0x9E3779B97F4A7C15ull, h ^= h >> 29;
    return mix64(h);
  }
  void place(slot x) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = x.fp & mask;
    while (slots_[i].id != 0) i = (i + 1) & mask;
    slots_[i] = x;
  }
  void grow() {
    std::vector<slot> old(2 * slots_.size());
    old.swap(slots_);
    for (const auto& x : old)
      if (x.id != 0) place(x);
  }
  std::vector<Word> keys_;
  std::vector<std::size_t> starts_{0};
  std::vector<slot> slots_ = std::vector<slot>(16);
};
using key_set = basic_key_set<>;

/// Whether the nested form of the ring cover holds (map/detail/line_ring.hpp): equal replica
/// counts R ≥ 2, every stage with parameters, no link latency, no more stage replicas than devices.
template <int = 0>
[[nodiscard]] bool nested_rings_apply(const stage_graph& g, const link_costs& L) {
  if (!g.uniform_replicas() || g.replicas() < 2 || L.has_latency() || g.vertices() > L.devices()) return false;
  for (std::size_t s = 0; s < g.stages(); ++s)
    if (!(g.allreduce_bytes(s) > 0)) return false;
  return true;
}

/// The best ring through the devices of `set` under the real links (Held–Karp with bottleneck
/// costs: |set| ≤ 16), `set` reordered into it; its largest per-byte cost (+inf: none, `set` kept).
template <class Devices>
double best_ring(const link_costs& L, Devices& set) {
  auto [W, order] = min_bottleneck_cycle(set.size(), [&](std::size_t i, std::size_t j) { return L.ms_per_byte(set[i], set[j]); });
  if (order.empty()) return W;
  Devices ring(set.size());
  for (std::size_t q = 0; q < order.size(); ++q) ring[q] = set[order[q]];
  set = std::move(ring);
  return W;
}

}  // namespace devplace::detail
