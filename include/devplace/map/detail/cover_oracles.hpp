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
#include "devplace/map/oracle.hpp"

namespace devplace::detail {

/// `at` = min(at, v), atomically (a limit or threshold that several workers lower).
inline void atomic_lower(std::atomic<double>& at, double v, std::memory_order order = std::memory_order_seq_cst) noexcept {
  double cur = at.load(order);
  while (v < cur && !at.compare_exchange_weak(cur, v, order)) {
  }
}

/// A cover's decision as an oracle answer: found, the mapping; none, refuted below its next change.
template <int = 0>
[[nodiscard]] oracle_answer decided(cover_answer&& c) {
  oracle_answer a;
  a.nodes = c.nodes;
  if (c.answer == cover_answer::kind::found) a.answer = oracle_answer::kind::found, a.dev = std::move(c.dev);
  else if (c.answer == cover_answer::kind::none) a.answer = oracle_answer::kind::refuted, a.next_bound_ms = c.next_change;
  return a;
}

/// The copy cover, interleaved with the depth-first runs, with its budgets, cached listing and the targets where
/// its listing reached a budget (docs/mapping-oracles.md, "Copy cover").
template <mapping_cost_model C>
class copy_cover_oracle {
 public:
  using Search = copy_cover_search<C>;
  copy_cover_oracle(const C& model, const device_bound_table& table, std::shared_ptr<const Search> search, std::size_t max_rows,
                    std::uint64_t limit)
      : model_(&model), table_(&table), search_(std::move(search)), max_rows_(max_rows), limit_(limit) {}

  [[nodiscard]] std::string_view name() const { return "copy_cover"; }

  void forget() {
    for (auto& x : s_->capped_at) x.store(std::numeric_limits<double>::infinity());
    s_->cache.clear();
  }

  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    const std::uint64_t budget = q.budget;
    const cover_budget nodes{q.probe ? (budget > (std::uint64_t{1} << 58) ? 0 : budget << 5) : budget, budget};
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
    if (c.answer != cover_answer::kind::unknown) return decided(std::move(c));
    out.nodes = c.nodes;
    // stopped by its budget with half the rows it takes already listed: twice the budget would
    // most likely reach that limit too
    if (c.capped && 2 * c.rows >= max_rows_) c.rows_capped = true;
    if (c.capped) atomic_lower(capped_at[c.rows_capped ? capped_at.size() - 1 : level], q.target);
    out.exhausted = c.capped && c.rows_capped;
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

/// One of the node-group, quotient copy and line ring covers (`Search`):
/// found when it finds a mapping (the line ring cover: when its relaxed rings realise within the
/// target), refuted below its next change when it proves none; capped when its
/// listing reached a limit (the quotient copy cover's, at a larger target, stops as soon as a
/// concurrent one was capped below it), or when a relaxation held without a mapping (it holds at
/// every larger target too). Its limits scale the budget (`solve`).
template <class Search>
class cover_oracle {
 public:
  cover_oracle(std::shared_ptr<Search> s, std::size_t max_rows) : s_(std::move(s)), max_rows_(max_rows) {}
  [[nodiscard]] std::string_view name() const {
    if constexpr (std::is_same_v<Search, group_cover_search>) return "group_cover";
    else if constexpr (std::is_same_v<Search, quotient_copy_search>) return "quotient_copy";
    else return "line_ring";
  }
  void forget() {
    capped_at_->store(std::numeric_limits<double>::infinity());
    if constexpr (requires { s_->forget(); }) s_->forget();
  }
  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    auto a = solve(q);
    using kind = cover_answer::kind;
    if constexpr (requires { s_->realise(a, q.target); })
      if (a.answer == kind::relaxed_found)
        if (auto dev = s_->realise(a, q.target); !dev.empty()) a.answer = kind::found, a.dev = std::move(dev);
    const bool capped = a.answer == kind::relaxed_found || a.capped;
    auto out = decided(std::move(a));
    out.capped = capped;
    return out;
  }

 private:
  /// The cover's answer, its limits scaled from the budget as docs/mapping-oracles.md lists them.
  [[nodiscard]] cover_answer solve(const oracle_query& q) const {
    const std::uint64_t b = q.budget;
    if constexpr (std::is_same_v<Search, group_cover_search>) {
      return s_->solve(q.target, {.vectors = max_rows_, .listing_steps = 4 * b, .packing_nodes = 2 * b}, q.stop, q.deadline);
    } else if constexpr (std::is_same_v<Search, quotient_copy_search>) {
      const quotient_copy_search::limits lim{.listing_steps = 8 * b, .packing_nodes = std::min<std::uint64_t>(b, 1u << 16),
                                             .realise_steps = 8 * b};
      auto a = s_->solve(q.target, lim, q.stop, q.deadline, capped_at_.get());
      if (a.capped) atomic_lower(*capped_at_, q.target, std::memory_order_relaxed);
      return a;
    } else {
      return s_->solve(q.target, std::min<std::uint64_t>(b, 1u << 18), q.stop, q.deadline);
    }
  }

  std::shared_ptr<Search> s_;
  std::size_t max_rows_;
  std::shared_ptr<std::atomic<double>> capped_at_ = std::make_shared<std::atomic<double>>(std::numeric_limits<double>::infinity());
};

}  // namespace devplace::detail
