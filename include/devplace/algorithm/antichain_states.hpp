#pragma once
/// \file algorithm/antichain_states.hpp
/// PipeDream's search space: the *antichain states* its optimizer derives from a DAG
/// (msr-fiddle/pipedream graph/graph.py, `antichain_dag`). They are down-sets, but with several
/// sources in general only some of them: the states are the antichains reached from
/// `{start}` by PipeDream's move rule.
///
/// For an antichain A, with pred(x) the strict ancestors and succ(x) the strict descendants:
/// - `aug(A) = A ∪ { p ∈ pred(a), a ∈ A : p has an out-neighbour o ∉ pred(a), o ≠ a }`
///   (the test is per a: p counts even when o lies in the down-set through another member);
/// - a move takes x ∈ aug(A) and an out-neighbour y ∉ A of x with succ(y) ∩ aug(A) = ∅, and
///   gives the maximal elements of (aug(A) ∖ {x}) ∪ {y}.
/// The state of A is its down-set I(A) = ⋃ down(a) together with aug(A) (whose activations are
/// what PipeDream charges for a cut after this state). With one source every non-empty down-set
/// is a state.
///
/// Bitsets are over the topological positions of `enumerator` (algorithm/downsets.hpp).
/// States are listed by increasing |I(A)|, ties in discovery (breadth-first) order: a linear
/// extension of ⊊. Complexity: O(states · (n · deg + n²/64)) for the search.
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/dag/concepts.hpp"
#include "devplace/detail/bitset.hpp"

namespace devplace {

struct antichain_state_set {
  using bitset = detail::dynamic_bitset;
  downset_enumerator enumerator;  ///< the positions the bitsets are over
  std::vector<bitset> antichain;  ///< A
  std::vector<bitset> augmented;  ///< aug(A)
  std::vector<bitset> ideal;      ///< I(A), predecessor-closed
  [[nodiscard]] std::size_t size() const noexcept { return ideal.size(); }
};

namespace detail {

/// aug(A) as a position bitset; `outs[p]` = the out-neighbour positions of p as a bitset.
inline dynamic_bitset augment_antichain(const downset_enumerator& e, const std::vector<dynamic_bitset>& outs,
                                        const dynamic_bitset& a) {
  dynamic_bitset aug = a;
  a.for_each([&](std::size_t x) {
    const dynamic_bitset& down = e.down(x);  // x and its ancestors
    down.for_each([&](std::size_t p) {
      if (p == x || aug.test(p)) return;
      // an out-neighbour o of p with o ∉ pred(x) and o ≠ x, i.e. o ∉ down(x)
      if (!outs[p].is_subset_of(down)) aug.set(p);
    });
  });
  return aug;
}

/// The maximal elements of a position set.
inline dynamic_bitset maximal_elements(const downset_enumerator& e, const dynamic_bitset& s) {
  dynamic_bitset m(s.size());
  s.for_each([&](std::size_t x) {
    dynamic_bitset strict_up = e.up(x);
    strict_up.reset(x);
    if (!strict_up.intersects(s)) m.set(x);
  });
  return m;
}

}  // namespace detail

/// The antichain states of `g` reached from the antichain `{start}` (a vertex id; PipeDream uses
/// the first source in file order). Throws `std::invalid_argument` when `start` is not a vertex
/// or `g` has a cycle.
template <dag G>
[[nodiscard]] antichain_state_set antichain_states(const G& g, std::size_t start) {
  using bitset = detail::dynamic_bitset;
  const std::size_t n = devplace::num_vertices(g);
  if (start >= n) throw std::invalid_argument("antichain_states: start is not a vertex");
  if (topological_sort(g).status != status::optimal) throw std::invalid_argument("antichain_states: the graph has a cycle");
  antichain_state_set r{downset_enumerator(g), {}, {}, {}};
  const downset_enumerator& e = r.enumerator;
  std::vector<bitset> outs(n, bitset(n));
  for (std::size_t p = 0; p < n; ++p)
    for (auto q : e.successors(p)) outs[p].set(q);
  std::unordered_map<bitset, std::size_t, detail::dynamic_bitset_hash> index;
  auto add = [&](bitset a) {
    if (index.contains(a)) return;
    index.emplace(a, r.antichain.size());
    bitset ideal(n);
    a.for_each([&](std::size_t x) { ideal |= e.down(x); });
    r.augmented.push_back(detail::augment_antichain(e, outs, a));
    r.ideal.push_back(std::move(ideal));
    r.antichain.push_back(std::move(a));
  };
  bitset first(n);
  first.set(e.position_of(start));
  add(first);
  for (std::size_t s = 0; s < r.antichain.size(); ++s) {  // breadth-first: the list is the queue
    const bitset a = r.antichain[s], aug = r.augmented[s];
    aug.for_each([&](std::size_t x) {
      for (auto y : e.successors(x)) {
        if (a.test(y)) continue;
        bitset strict_up = e.up(y);
        strict_up.reset(y);
        if (strict_up.intersects(aug)) continue;
        bitset next = aug;
        next.reset(x);
        next.set(y);
        add(detail::maximal_elements(e, next));
      }
    });
  }
  // Order by |I|, ties in discovery order.
  std::vector<std::size_t> perm(r.size()), count(r.size());
  for (std::size_t s = 0; s < r.size(); ++s) count[s] = r.ideal[s].count();
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t x, std::size_t y) { return count[x] < count[y]; });
  antichain_state_set sorted{r.enumerator, {}, {}, {}};
  for (auto s : perm) {
    sorted.antichain.push_back(std::move(r.antichain[s]));
    sorted.augmented.push_back(std::move(r.augmented[s]));
    sorted.ideal.push_back(std::move(r.ideal[s]));
  }
  return sorted;
}

}  // namespace devplace
