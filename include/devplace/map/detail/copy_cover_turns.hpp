#pragma once
/// \file map/detail/copy_cover_turns.hpp
/// The copy-cover turns of `mapping_search` (`mapper_options::copy_cover`): the copy-cover search
/// (map/detail/copy_cover.hpp) takes turns with the depth-first runs of a target, and this class
/// keeps what the turns share across targets and copies of the search: the cached listing, the
/// smallest targets at which the listing reached its limits (per node budget), and the targets in
/// a row at which it did. These only decide when the copy cover is worth a turn; whatever it does
/// not answer, the depth-first search does.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/copy_cover.hpp"
#include "devplace/map/mapper_options.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

/// `at` = min(at, v), atomically (a limit or threshold that several workers lower).
inline void atomic_lower(std::atomic<double>& at, double v, std::memory_order order = std::memory_order_seq_cst) noexcept {
  double cur = at.load(order);
  while (v < cur && !at.compare_exchange_weak(cur, v, order)) {
  }
}

/// The outcome of one cover turn: answered (the answer in the total), again (a larger budget may
/// answer), or given up (its limits reached).
enum class cover_turn { answered, again, given_up };

/// `Search`: copy_cover_search<C> or the ring cover's ring_cover_search<C> (map/detail/ring_cover.hpp).
template <mapping_cost_model C, class Search = copy_cover_search<C>>
class copy_cover_turns {
 public:
  using clock = std::chrono::steady_clock;
  using turn = cover_turn;

  /// See `copy_cover_search` for the arguments.
  copy_cover_turns(const stage_graph& g, const link_costs& L, const device_bound_table& table,
                   const std::vector<std::vector<std::size_t>>& deps, const std::vector<std::size_t>& twin_prev)
      : g_(&g), L_(&L), search_(g, L, table, deps, twin_prev) {}

  [[nodiscard]] const Search& search() const noexcept { return search_; }

  /// Forgets what earlier targets taught (the capped levels, the misses in a row, the cached
  /// listing), so the next target is answered as the first one was. No turn may run meanwhile.
  void forget() {
    for (auto& x : *capped_at_) x.store(std::numeric_limits<double>::infinity());
    stats_->misses.store(0);
    stats_->targets.store(0);
    cache_->clear();
  }

  /// Whether the copy cover takes part in a new target: after k ≥ 2 targets in a row where it
  /// reached its limits, in one target out of 2^(k−1) only (it answers near the optimum or not
  /// at all; the depth-first search needs the time elsewhere). With `restarts` off, always.
  [[nodiscard]] bool open_for_target(bool restarts) const {
    if (!restarts) return true;
    const unsigned misses = stats_->misses.load(std::memory_order_relaxed);
    const std::uint64_t n = stats_->targets.fetch_add(1, std::memory_order_relaxed);
    return misses < 2 || n % (std::uint64_t{1} << std::min(misses - 1, 40u)) == 0;
  }

  /// The copy-cover search at `target` with `budget` nodes for the cover and as many for the
  /// listing (the copy cover's: 32 times as many at the probe target, `mapper_options::probe_gap`:
  /// the listings are smallest just above the lower end, and the probe is there for the cover to
  /// answer; not the ring cover's, whose rings of 8–16 devices stay too many there): answered
  /// (the answer in `total`), again (a larger budget may answer), or given up (its limits
  /// reached). Its nodes are added to `total` either way; the counters of targets in a row are
  /// updated here.
  turn take(const C& model, const device_bound_table& table, const mapper_options& o, double target, std::uint64_t budget,
            const std::atomic<bool>* stop, clock::time_point deadline, target_search_result& total, bool probe = false) const {
    const bool wide = probe && !Search::rings;
    const cover_budget nodes{wide ? (budget > (std::uint64_t{1} << 58) ? 0 : budget << 5) : budget, budget};
    const auto r = attempt(model, table, o, target, nodes, stop, deadline, total);
    if (r == turn::answered) stats_->misses.store(0, std::memory_order_relaxed);
    if (r == turn::given_up) stats_->misses.fetch_add(1, std::memory_order_relaxed);
    return r;
  }

 private:
  turn attempt(const C& model, const device_bound_table& table, const mapper_options& o, double target, cover_budget nodes,
               const std::atomic<bool>* stop, clock::time_point deadline, target_search_result& total) const {
    const std::uint64_t budget = nodes.cover;
    // a listing stopped by its node budget at a target ≤ this one with at least this budget
    // would stop here too: no work this turn, a larger budget next (0: no budget)
    const std::size_t level = nodes.listing == 0 ? capped_at_->size() - 2 : static_cast<std::size_t>(std::bit_width(nodes.listing));
    for (std::size_t k = level; k < capped_at_->size(); ++k)
      if (target >= (*capped_at_)[k].load(std::memory_order_relaxed))
        return k + 1 == capped_at_->size() || budget >= o.copy_cover_nodes ? turn::given_up : turn::again;
    auto c = search_.solve(model, table, target, o.max_copy_embeddings, nodes, *cache_, stop, deadline);
    total.nodes += c.nodes;
    if (c.answer != copy_cover_answer::kind::unknown) {
      total.completed = true;
      (Search::rings ? total.by_ring_cover : total.by_copy_cover) = true;
      if (c.answer == copy_cover_answer::kind::found) {
        total.found = true;
        total.objective_ms = evaluate_flat(*g_, *L_, model, std::span<const std::size_t>(c.dev)).objective_ms;
        total.dev = std::move(c.dev);
      } else {
        total.next_lower_bound_ms = c.next_change;
      }
      return turn::answered;
    }
    // stopped by its budget with half the embeddings it takes already listed: twice the budget
    // would most likely reach that limit too
    if (c.enumeration_capped && 2 * c.embeddings >= o.max_copy_embeddings) c.embeddings_capped = true;
    if (c.enumeration_capped) {
      // the listing only grows with the target: with this budget it stops at this target and above
      auto& at = (*capped_at_)[c.embeddings_capped ? capped_at_->size() - 1 : level];
      atomic_lower(at, target);
      if (c.embeddings_capped) {  // more embeddings than it takes: back off twice as fast
        stats_->misses.fetch_add(1, std::memory_order_relaxed);
        return turn::given_up;
      }
    }
    return budget >= o.copy_cover_nodes ? turn::given_up : turn::again;
  }

  const stage_graph* g_;
  const link_costs* L_;
  Search search_;
  /// The smallest target at which the listing reached its limits (shared by copies): [k] with a
  /// listing budget of bit width k (65: none), the last `max_copy_embeddings`
  std::shared_ptr<std::array<std::atomic<double>, 66>> capped_at_ = [] {
    auto a = std::make_shared<std::array<std::atomic<double>, 66>>();
    for (auto& x : *a) x.store(std::numeric_limits<double>::infinity());
    return a;
  }();
  /// Targets in a row at which the copy cover reached its limits, and targets it was considered for
  struct counters {
    std::atomic<unsigned> misses{0};
    std::atomic<std::uint64_t> targets{0};
  };
  std::shared_ptr<counters> stats_ = std::make_shared<counters>();
  /// The listing at the largest target listed so far (shared by copies)
  std::shared_ptr<typename Search::cache_type> cache_ = std::make_shared<typename Search::cache_type>();
};

}  // namespace devplace::detail
