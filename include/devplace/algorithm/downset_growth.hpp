#pragma once
/// \file algorithm/downset_growth.hpp
/// `downset_growth`: enumerates the down-sets F ⊋ B of a down-set B one vertex at a time (reverse
/// search), so that an accumulator pays for exactly one vertex per down-set visited and a
/// visitor can prune as soon as a monotone criterion (a sum of non-negative weights of F ∖ B)
/// passes a bound. `downset_enumerator::for_each_superset` adds a whole down(p) per step, which
/// is faster for counting but makes every visit pay for all the vertices it adds.
///
/// Canonical parent of F ⊋ B: F minus the largest position among the maximal elements of F ∖ B.
/// A child of F is F ∪ {v} for an addable v (all predecessors in F) that is larger than every
/// maximal element of F ∖ B it does not cover. Each down-set ⊋ B is visited exactly once; the
/// search is iterative. Cost per visited down-set: O(n/64 + out-degree) word operations plus
/// one `acc.add`. Bitsets are over the positions of the `downset_enumerator` it is built from.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/detail/bitset.hpp"
#include "devplace/status.hpp"

namespace devplace {

class downset_growth {
 public:
  using bitset = detail::dynamic_bitset;

  explicit downset_growth(const downset_enumerator& e) : e_(&e) {
    const std::size_t n = e.num_vertices();
    preds_.assign(n, bitset(n));
    above_.assign(n, bitset(n));
    for (std::size_t p = 0; p < n; ++p) {
      for (auto q : e.predecessors(p)) preds_[p].set(q);
      for (std::size_t q = p + 1; q < n; ++q) above_[p].set(q);
    }
  }

  /// Visits every down-set F ⊋ `base`: `visit(const bitset& F, const Acc& acc)` returns a
  /// `downset_action` (prune: skip every down-set grown from F, all supersets of F). `acc` is
  /// `acc0` after `add(position, F_before)` for every position of F ∖ base, in the order added.
  /// Returns `status::work_limit` when stopped, else `status::optimal`.
  template <class Acc, class Visit>
  status for_each_superset(const bitset& base, const Acc& acc0, Visit&& visit) const {
    const downset_enumerator& e = *e_;
    const std::size_t n = e.num_vertices();
    struct frame {
      bitset f, maximal, addable;
      Acc acc;
      std::size_t cursor = 0;
    };
    std::vector<frame> st;
    st.push_back({base, bitset(n), bitset(n), acc0, 0});
    for (std::size_t p = 0; p < n; ++p)
      if (!base.test(p) && preds_[p].is_subset_of(base)) st.back().addable.set(p);
    std::size_t depth = 0;
    for (;;) {
      frame& fr = st[depth];
      // next candidate v >= cursor in addable
      std::size_t v = n;
      for (std::size_t k = fr.cursor / 64; k < fr.addable.num_words(); ++k) {
        std::uint64_t w = fr.addable.words()[k];
        if (k == fr.cursor / 64) w &= ~std::uint64_t{0} << (fr.cursor % 64);
        if (w) { v = k * 64 + static_cast<std::size_t>(std::countr_zero(w)); break; }
      }
      if (v >= n) {
        if (depth == 0) return status::optimal;
        --depth;
        continue;
      }
      fr.cursor = v + 1;
      if (!covers_larger_maximals(fr.maximal, v)) continue;
      if (st.size() < depth + 2) st.push_back({bitset(n), bitset(n), bitset(n), acc0, 0});
      frame& parent = st[depth];
      frame& child = st[depth + 1];
      child.acc = parent.acc;
      child.acc.add(v, parent.f);
      child.f = parent.f;
      child.f.set(v);
      child.maximal = parent.maximal;
      child.maximal.subtract(preds_[v]);
      child.maximal.set(v);
      child.addable = parent.addable;
      child.addable.reset(v);
      for (auto w : e.successors(v))
        if (preds_[w].is_subset_of(child.f)) child.addable.set(w);
      child.cursor = 0;
      const auto a = visit(static_cast<const bitset&>(child.f), static_cast<const Acc&>(child.acc));
      if (a == downset_action::stop) return status::work_limit;
      if (a == downset_action::proceed) ++depth;
    }
  }

 private:
  // Every maximal element larger than v is a predecessor of v.
  [[nodiscard]] bool covers_larger_maximals(const bitset& maximal, std::size_t v) const {
    const auto* m = maximal.words();
    const auto* a = above_[v].words();
    const auto* p = preds_[v].words();
    for (std::size_t k = 0; k < maximal.num_words(); ++k)
      if (m[k] & a[k] & ~p[k]) return false;
    return true;
  }

  const downset_enumerator* e_;
  std::vector<bitset> preds_, above_;
};

}  // namespace devplace
