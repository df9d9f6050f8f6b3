#include "devplace/algorithm/downsets.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "devplace/dag/csr_dag.hpp"
#include "devplace/views/reverse.hpp"
#include "support/random_dag.hpp"

using namespace devplace;
using adjacency = std::vector<std::vector<int>>;

namespace {
// Oracle: every subset closed under predecessors, by enumerating all 2^n subsets.
std::set<std::vector<std::size_t>> brute_downsets(const adjacency& g) {
  const std::size_t n = g.size();
  std::set<std::vector<std::size_t>> r;
  for (std::uint32_t m = 0; m < (1u << n); ++m) {
    bool closed = true;
    for (std::size_t u = 0; u < n && closed; ++u)
      for (int v : g[u])
        if ((m >> v & 1) && !(m >> u & 1)) closed = false;
    if (!closed) continue;
    std::vector<std::size_t> s;
    for (std::size_t v = 0; v < n; ++v) if (m >> v & 1) s.push_back(v);
    r.insert(s);
  }
  return r;
}
adjacency chain(std::size_t n) {
  adjacency g(n);
  for (std::size_t i = 0; i + 1 < n; ++i) g[i].push_back(int(i + 1));
  return g;
}
}  // namespace

TEST_CASE("down-sets equal the brute-force enumeration, each exactly once") {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 150; ++trial) {
    const adjacency a = test::random_adjacency(rng, 1 + rng() % 14, test::all_shapes[trial % 5]);
    const auto expect = brute_downsets(a);
    std::set<std::vector<std::size_t>> seen;
    std::size_t visits = 0;
    const auto st = for_each_downset(a, [&](const std::vector<std::size_t>& f) {
      ++visits;
      seen.insert(f);
    });
    CHECK(st == status::optimal);
    CHECK(visits == seen.size());  // no duplicates
    CHECK(seen == expect);
    CHECK(count_downsets(a).count == expect.size());
    // Thm 1: at least n non-empty down-sets.
    CHECK(expect.size() >= a.size() + 1);
  }
}

TEST_CASE("supersets of a down-set, with pruning by a monotone weight") {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 100; ++trial) {
    const adjacency a = test::random_adjacency(rng, 1 + rng() % 12, test::all_shapes[trial % 5]);
    const auto all = brute_downsets(a);
    const downset_enumerator e(a);
    // Pick a random down-set as the base.
    auto it = all.begin();
    std::advance(it, static_cast<long>(rng() % all.size()));
    detail::dynamic_bitset base(a.size());
    for (auto v : *it) base.set(e.position_of(v));
    REQUIRE(e.is_downset(base));
    const std::size_t limit = rng() % (a.size() + 1);  // at most `limit` vertices beyond the base
    struct counter {
      std::size_t added = 0;
      void add(std::size_t, const detail::dynamic_bitset&) { ++added; }
    };
    std::set<std::vector<std::size_t>> seen;
    std::size_t visits = 0;
    (void)e.for_each_superset(base, counter{}, [&](const detail::dynamic_bitset& f, const counter& c) {
      CHECK(e.is_downset(f));
      CHECK(c.added == f.count() - base.count());
      if (c.added > limit) return downset_action::prune;
      ++visits;
      auto vs = e.to_vertices(f);
      std::sort(vs.begin(), vs.end());
      seen.insert(vs);
      return downset_action::proceed;
    });
    std::set<std::vector<std::size_t>> expect;
    for (const auto& s : all)
      if (s.size() > it->size() && s.size() <= it->size() + limit &&
          std::includes(s.begin(), s.end(), it->begin(), it->end()))
        expect.insert(s);
    CHECK(visits == seen.size());
    CHECK(seen == expect);
  }
}

TEST_CASE("down-set counting facts") {
  for (std::size_t n : {1, 2, 5, 20}) CHECK(count_downsets(chain(n)).count == n + 1);  // chain: n + 1
  // The memory limit: exactly the closure's bytes count; one byte less refuses.
  const std::uint64_t need = downset_enumerator::memory_bytes(20);
  CHECK(need == 2 * 20 * 8);
  CHECK(count_downsets(chain(20), {.max_memory_bytes = need}).count == 21);
  const auto refused = count_downsets(chain(20), {.max_memory_bytes = need - 1});
  CHECK((refused.count == 0 && refused.status == status::work_limit));
  for (std::size_t n : {1, 4, 10}) CHECK(count_downsets(adjacency(n)).count == (1u << n));  // antichain: 2^n
  const adjacency diamond{{1, 2}, {3}, {3}, {}};
  CHECK(count_downsets(diamond).count == 6);
  adjacency skip = chain(5);
  skip[0].push_back(4);  // a skip edge over a chain adds no down-set
  CHECK(count_downsets(skip).count == 6);
  // Disjoint union: product. Ordinal sum (all of P below all of Q): |J(P)| + |J(Q)| - 1.
  adjacency uni{{1, 2}, {3}, {3}, {}, {5}, {}};  // diamond + chain of 2
  CHECK(count_downsets(uni).count == 6 * 3);
  adjacency ord{{1, 2}, {3}, {3}, {4, 5}, {}, {}};  // diamond below an antichain {4, 5}... via 3
  // diamond (6) ⊕ antichain of 2 (4): 6 + 4 - 1 = 9.
  CHECK(count_downsets(ord).count == 9);
  // Fork-join with branches of 3 and 1 operators: (3 + 1) · (1 + 1) = 8 down-sets of the branches,
  // plus the fork-only and full ones: 0 -> {1 -> 2 -> 3, 4} -> 5.
  adjacency fj{{1, 4}, {2}, {3}, {5}, {5}, {}};
  CHECK(count_downsets(fj).count == 1 + 8 + 1);
  // The cap stops the count with a status.
  const auto capped = count_downsets(adjacency(12), {.max_downsets = 100});
  CHECK(capped.status == status::work_limit);
  CHECK(capped.count == 100);
}

TEST_CASE("successor-closed sets are the down-sets of the reversed graph") {
  std::mt19937_64 rng(33);
  for (int trial = 0; trial < 40; ++trial) {
    const adjacency a = test::random_adjacency(rng, 1 + rng() % 12, test::all_shapes[trial % 5]);
    const csr_dag g = to_csr_dag(a);
    // Complements of down-sets are up-sets: same count.
    CHECK(count_downsets(views::reverse(g)).count == count_downsets(g).count);
  }
}
