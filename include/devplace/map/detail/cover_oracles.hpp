#pragma once
/// \file map/detail/cover_oracles.hpp
/// The six built-in covers as target oracles (map/oracle.hpp, docs/mapping-oracles.md): each
/// turns its cover's answer into an `oracle_answer` and scales the spec's node limit into its
/// cover's limits (listing, packing, realisation). What a cover remembers across targets (its
/// cached listing, the targets where its listing reached a limit) stays inside it; when to ask
/// it, and the back-off, are the portfolio's (mapping_search).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/copy_cover.hpp"
#include "devplace/map/detail/group_cover.hpp"
#include "devplace/map/detail/line_ring.hpp"
#include "devplace/map/detail/quotient_copy.hpp"
#include "devplace/map/detail/quotient_ring.hpp"
#include "devplace/map/detail/ring_cover.hpp"
#include "devplace/map/oracle.hpp"

namespace devplace::detail {

/// `at` = min(at, v), atomically (a limit or threshold that several workers lower).
inline void atomic_lower(std::atomic<double>& at, double v, std::memory_order order = std::memory_order_seq_cst) noexcept {
  double cur = at.load(order);
  while (v < cur && !at.compare_exchange_weak(cur, v, order)) {
  }
}

/// A cover's decision as an oracle answer: `found` the mapping, else refuted below `next`.
template <class Kind>
[[nodiscard]] oracle_answer decided(Kind k, Kind found, Kind none, std::vector<std::size_t>&& dev, double next, std::uint64_t nodes) {
  oracle_answer a;
  a.nodes = nodes;
  if (k == found) a.answer = oracle_answer::kind::found, a.dev = std::move(dev);
  else if (k == none) a.answer = oracle_answer::kind::refuted, a.next_bound_ms = next;
  return a;
}

/// The copy cover (`Search` = copy_cover_search<C>) or the ring cover (ring_cover_search<C>),
/// interleaved with the depth-first runs: its listing gets the query's budget (the copy cover's
/// 32 times as many at the probe target: the listings are smallest just above the lower end; not
/// the ring cover's, whose rings of 8–16 devices stay too many there), as many for the cover.
/// Keeps the cached listing and, per listing budget, the smallest target where the listing
/// reached it (it only grows with the target: a larger target with that budget would reach it too).
template <mapping_cost_model C, class Search>
class listing_cover_oracle {
 public:
  listing_cover_oracle(const stage_graph& g, const link_costs& L, const C& model, const device_bound_table& table,
                       const std::vector<std::vector<std::size_t>>& deps, const std::vector<std::size_t>& twins,
                       std::size_t max_rows, std::uint64_t limit)
      : model_(&model), table_(&table), search_(std::make_shared<Search>(g, L, table, deps, twins)), max_rows_(max_rows),
        limit_(limit) {}

  [[nodiscard]] std::string_view name() const { return Search::rings ? "ring_cover" : "copy_cover"; }

  void forget() {
    for (auto& x : s_->capped_at) x.store(std::numeric_limits<double>::infinity());
    s_->cache.clear();
  }

  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    const std::uint64_t budget = q.budget;
    const bool wide = q.probe && !Search::rings;
    const cover_budget nodes{wide ? (budget > (std::uint64_t{1} << 58) ? 0 : budget << 5) : budget, budget};
    auto& capped_at = s_->capped_at;
    oracle_answer out;
    // a listing stopped by its budget at a target ≤ this one with at least this budget would
    // stop here too: no work this turn, a larger budget next (0: no budget)
    const std::size_t level = nodes.listing == 0 ? capped_at.size() - 2 : static_cast<std::size_t>(std::bit_width(nodes.listing));
    for (std::size_t k = level; k < capped_at.size(); ++k)
      if (q.target >= capped_at[k].load(std::memory_order_relaxed)) {
        out.capped = k + 1 == capped_at.size() || budget >= limit_;
        return out;
      }
    auto c = search_->solve(*model_, *table_, q.target, max_rows_, nodes, s_->cache, q.stop, q.deadline);
    using kind = copy_cover_answer::kind;
    if (c.answer != kind::unknown) return decided(c.answer, kind::found, kind::infeasible, std::move(c.dev), c.next_change, c.nodes);
    out.nodes = c.nodes;
    // stopped by its budget with half the rows it takes already listed: twice the budget would
    // most likely reach that limit too
    if (c.enumeration_capped && 2 * c.embeddings >= max_rows_) c.embeddings_capped = true;
    if (c.enumeration_capped) atomic_lower(capped_at[c.embeddings_capped ? capped_at.size() - 1 : level], q.target);
    out.exhausted = c.enumeration_capped && c.embeddings_capped;
    out.capped = out.exhausted || budget >= limit_;
    return out;
  }

 private:
  struct state {
    /// [k]: with a listing budget of bit width k (65: none); the last: `max_rows` reached
    std::array<std::atomic<double>, 66> capped_at;
    typename Search::cache_type cache;  ///< the listing at the largest target listed so far
    state() {
      for (auto& x : capped_at) x.store(std::numeric_limits<double>::infinity());
    }
  };
  const C* model_;
  const device_bound_table* table_;
  std::shared_ptr<const Search> search_;
  std::shared_ptr<state> s_ = std::make_shared<state>();
  std::size_t max_rows_;
  std::uint64_t limit_;
};

/// The node-group cover (map/detail/group_cover.hpp): listing 4 × the budget, packing the budget.
class group_cover_oracle {
 public:
  group_cover_oracle(std::shared_ptr<group_cover_search> s, std::size_t max_rows) : s_(std::move(s)), max_rows_(max_rows) {}
  [[nodiscard]] std::string_view name() const { return "group_cover"; }
  void forget() {}
  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    auto a = s_->solve(q.target, {.vectors = max_rows_, .listing_steps = 4 * q.budget, .packing_nodes = q.budget}, q.stop, q.deadline);
    using kind = group_cover_answer::kind;
    return decided(a.answer, kind::found, kind::none, std::move(a.dev), a.next_change, a.nodes);
  }

 private:
  std::shared_ptr<group_cover_search> s_;
  std::size_t max_rows_;
};

/// The quotient copy cover (map/detail/quotient_copy.hpp): listing and realisation 8 × the
/// budget, packing min(budget, 2^16). Capped when its listing reached a limit; a listing at a
/// larger target stops as soon as a concurrent one was capped below it.
class quotient_copy_oracle {
 public:
  explicit quotient_copy_oracle(std::shared_ptr<quotient_copy_search> s) : s_(std::move(s)) {}
  [[nodiscard]] std::string_view name() const { return "quotient_copy"; }
  void forget() {
    capped_at_->store(std::numeric_limits<double>::infinity());
    s_->forget();
  }
  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    const quotient_copy_search::limits lim{.listing_steps = 8 * q.budget,
                                           .packing_nodes = std::min<std::uint64_t>(q.budget, 1u << 16),
                                           .realise_steps = 8 * q.budget};
    auto a = s_->solve(q.target, lim, q.stop, q.deadline, capped_at_.get());
    if (a.listing_capped) atomic_lower(*capped_at_, q.target, std::memory_order_relaxed);
    using kind = quotient_copy_answer::kind;
    auto out = decided(a.answer, kind::found, kind::none, std::move(a.dev), a.next_change, a.nodes);
    out.capped = a.listing_capped;
    return out;
  }

 private:
  std::shared_ptr<quotient_copy_search> s_;
  std::shared_ptr<std::atomic<double>> capped_at_ = std::make_shared<std::atomic<double>>(std::numeric_limits<double>::infinity());
};

/// A relaxation of the ring cover on link classes that refutes or realises (the line and the
/// quotient ring covers): refuted below the relaxation's next change; found when the relaxed rings
/// realise within the target; capped when the relaxation held without a mapping (it holds at
/// every larger target too) or its search reached a limit.
template <class Search>
class relaxed_ring_oracle {
 public:
  relaxed_ring_oracle(std::shared_ptr<Search> s, std::size_t max_rows) : s_(std::move(s)), max_rows_(max_rows) {}
  [[nodiscard]] std::string_view name() const {
    return std::is_same_v<Search, line_ring_search> ? "line_ring" : "quotient_ring";
  }
  void forget() {
    if constexpr (!std::is_same_v<Search, line_ring_search>) s_->forget();
  }
  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    const auto a = solve(q);
    oracle_answer out;
    out.nodes = a.nodes;
    using kind = typename std::remove_cvref_t<decltype(a)>::kind;
    if (a.answer == kind::relaxed_found) {
      if (auto dev = s_->realise(a, q.target); !dev.empty()) {
        out.answer = oracle_answer::kind::found, out.dev = std::move(dev);
        return out;
      }
    }
    out.capped = a.answer == kind::relaxed_found || capped(a);
    if (a.answer == kind::none) out.answer = oracle_answer::kind::refuted, out.next_bound_ms = a.next_change;
    return out;
  }

 private:
  /// Line ring: min(budget, 2^18) classes entered. Quotient ring: listing min(budget, 2^18),
  /// packing min(budget, 2^16): it answers quickly or not at all.
  [[nodiscard]] auto solve(const oracle_query& q) const {
    if constexpr (std::is_same_v<Search, line_ring_search>) {
      return s_->solve(q.target, std::min<std::uint64_t>(q.budget, 1u << 18), q.stop, q.deadline);
    } else {
      const quotient_ring_search::limits lim{.vectors = max_rows_,
                                             .listing_steps = std::min<std::uint64_t>(q.budget, 1u << 18),
                                             .packing_nodes = std::min<std::uint64_t>(q.budget, 1u << 16)};
      return s_->solve(q.target, lim, q.stop, q.deadline);
    }
  }
  static bool capped(const line_ring_answer& a) { return a.capped; }
  static bool capped(const quotient_ring_answer& a) { return a.listing_capped; }

  std::shared_ptr<Search> s_;
  std::size_t max_rows_;
};

}  // namespace devplace::detail
