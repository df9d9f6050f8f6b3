// MCM partitioning with more than 64 chips (seed-mcm §6 A22): wide chip masks against
// std::bitset, the 16-word engine against the one-word engine (bit for bit at C <= 64), against
// brute force on small DAGs at C = 65, 100, 128, and against the validator on random DAGs and
// chips above 63 on chains.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <random>
#include <set>
#include <type_traits>
#include <vector>

#include "devplace/mcm/chip_mask.hpp"
#include "devplace/mcm/engine.hpp"
#include "devplace/mcm/repair.hpp"
#include "devplace/mcm/search.hpp"
#include "devplace/mcm/validate.hpp"
#include "support/random_dag.hpp"

namespace mcm = devplace::mcm;

namespace {

using mcmw_adj = std::vector<std::vector<int>>;
using mcmw_mask = mcm::wide_chip_mask<4>;
using mcmw_traits = mcm::mask_traits<mcmw_mask>;

std::bitset<256> mcmw_bits(const mcmw_mask& m) {
  std::bitset<256> b;
  for (std::size_t c = 0; c < 256; ++c) b[c] = (m.w[c / 64] >> (c % 64)) & 1u;
  return b;
}

/// Every valid partition of g onto C chips (brute force over C^n).
std::vector<std::vector<int>> mcmw_all_valid(const mcmw_adj& g, std::size_t C) {
  const std::size_t n = g.size();
  std::vector<std::vector<int>> out;
  std::vector<int> f(n, 0);
  for (;;) {
    if (mcm::validate(g, std::span<const int>(f), C)) out.push_back(f);
    std::size_t i = 0;
    while (i < n && static_cast<std::size_t>(++f[i]) == C) f[i++] = 0;
    if (i == n) break;
  }
  return out;
}

}  // namespace

TEST_CASE("mcm wide: chip masks of 4 words agree with std::bitset") {
  std::mt19937_64 gen(64);
  for (std::size_t c = 0; c < 256; ++c) {
    CHECK(mcmw_bits(mcmw_traits::bit(c)) == std::bitset<256>().set(c));
    std::bitset<256> from, upto;
    for (std::size_t d = 0; d < 256; ++d) from[d] = d >= c, upto[d] = d <= c;
    CHECK(mcmw_bits(mcmw_traits::from(c)) == from);
    CHECK(mcmw_bits(mcmw_traits::upto(c)) == upto);
  }
  for (int t = 0; t < 300; ++t) {
    mcmw_mask a, b;
    for (auto& x : a.w) x = gen() & gen();  // sparse words, sometimes zero
    for (auto& x : b.w) x = t % 3 ? gen() : 0;
    if (t % 5 == 0) a.w[t % 4] = 0, a.w[(t + 1) % 4] = 0;
    const auto A = mcmw_bits(a), B = mcmw_bits(b);
    CHECK(mcmw_bits(a & b) == (A & B));
    CHECK(mcmw_bits(a | b) == (A | B));
    CHECK(mcmw_bits(~a) == ~A);
    CHECK(mcm::any_chip(a) == A.any());
    CHECK(mcm::chip_count(a) == A.count());
    CHECK(mcm::single_chip(a) == (A.count() == 1));
    std::vector<std::size_t> chips, want;
    mcm::for_each_chip(a, [&](std::size_t c) { chips.push_back(c); });
    for (std::size_t c = 0; c < 256; ++c)
      if (A[c]) want.push_back(c);
    CHECK(chips == want);
    for (std::size_t c = 0; c < 256; ++c) CHECK(mcm::has_chip(a, c) == A[c]);
    if (A.none()) continue;
    CHECK(mcm::lowest_chip(a) == want.front());
    CHECK(mcm::highest_chip(a) == want.back());
    mcm::random_engine r1(static_cast<std::uint64_t>(t)), r2(static_cast<std::uint64_t>(t));
    const int c = mcm::uniform_bit(r1, a);  // the k-th set chip, k = uniform_below(popcount)
    const auto k = mcm::uniform_below(r2, A.count());
    CHECK(c == static_cast<int>(want[k]));
    const mcm::chip_mask low_word = a.w[0];
    if (low_word) {  // on one word the wide draw is the narrow one
      mcm::wide_chip_mask<1> one{{low_word}};
      mcm::random_engine r3(7), r4(7);
      CHECK(mcm::uniform_bit(r3, one) == mcm::uniform_bit(r4, low_word));
    }
  }
}

TEST_CASE("mcm wide: the 16-word engine repairs bit for bit like the one-word engine at C <= 64") {
  std::mt19937_64 gen(65);
  for (int t = 0; t < 12; ++t) {
    const std::size_t n = 5 + gen() % 20, C = 2 + gen() % 63;
    const auto g = devplace::test::random_adjacency(gen, n, devplace::test::all_shapes[gen() % 5]);
    mcm::constraint_engine narrow(g, C);
    mcm::wide_constraint_engine wide(g, C);
    const std::uint64_t seed = gen();
    mcm::random_engine ra(seed), rb(seed);
    for (int k = 0; k < 2; ++k) {
      const auto a = mcm::repair_sample(narrow, Eigen::MatrixXd(), ra);
      const auto b = mcm::repair_sample(wide, Eigen::MatrixXd(), rb);
      CHECK(a.chip_of == b.chip_of);
      CHECK(a.backtracks == b.backtracks);
      std::vector<int> y(n);
      for (auto& x : y) x = static_cast<int>(gen() % C);
      const auto fa = mcm::repair_fix(narrow, y, ra);
      const auto fb = mcm::repair_fix(wide, y, rb);
      CHECK(fa.chip_of == fb.chip_of);
    }
  }
}

TEST_CASE("mcm wide: brute-force counts and SAMPLE / FIX at C = 65, 100, 128 on small DAGs") {
  // With C >= N a valid partition uses at most N chips, so its valid set is the one at C = N.
  // The brute-force counter sees this at C = 65 on three operators (65^3 assignments).
  const mcmw_adj tri{{1, 2}, {2}, {}}, two{{1}, {}, {}};
  CHECK(mcm::count_valid(tri, 65).valid == 3);  // {(0,0,0), (0,0,1), (0,1,1)}: seed-mcm §1.3.2
  CHECK(mcm::count_valid(tri, 65).total == 65ull * 65 * 65);
  CHECK(mcm::count_valid(two, 65).valid == mcm::count_valid(two, 3).valid);
  std::mt19937_64 gen(128);
  for (int t = 0; t < 12; ++t) {
    const std::size_t n = 2 + gen() % 3, C = std::array<std::size_t, 3>{65, 100, 128}[t % 3];
    const auto g = devplace::test::random_adjacency(gen, n, devplace::test::all_shapes[gen() % 5]);
    CAPTURE(t);
    const auto valid = mcmw_all_valid(g, n);
    const std::set<std::vector<int>> valid_set(valid.begin(), valid.end());
    std::set<std::vector<int>> seen;
    mcm::with_engine(g, C, [&](auto& e) {
      for (std::uint64_t seed = 0; seed < std::max<std::uint64_t>(200, 25 * valid.size()); ++seed) {
        mcm::random_engine rng(seed);
        const auto r = mcm::repair_sample(e, Eigen::MatrixXd(), rng);
        CHECK(!r.fallback);
        CHECK(valid_set.count(r.chip_of) == 1);
        seen.insert(r.chip_of);
        std::vector<int> y(n);
        for (auto& x : y) x = static_cast<int>(rng() % C);
        const auto rf = mcm::repair_fix(e, y, rng);
        CHECK(!rf.fallback);
        CHECK(valid_set.count(rf.chip_of) == 1);
      }
    });
    CHECK(seen == valid_set);
  }
}

TEST_CASE("mcm wide: repairs at C = 65, 100, 128 pass the validator, chips above 63 are used and kept") {
  std::mt19937_64 gen(100);
  std::size_t repairs = 0, fallbacks = 0;
  for (std::size_t C : {65u, 100u, 128u}) {
    CAPTURE(C);
    for (int t = 0; t < 2; ++t) {  // residual-style graphs: valid partitions use a few chips
      const auto g = devplace::test::random_adjacency(gen, 40 + gen() % 40, devplace::test::shape::chain_with_skips);
      mcm::with_engine(g, C, [&](auto& e) {
        mcm::random_engine rng(gen());
        const auto r = mcm::repair_sample(e, Eigen::MatrixXd(), rng);
        CHECK(mcm::validate(g, std::span<const int>(r.chip_of), C).valid());
        std::vector<int> y(g.size());
        for (auto& x : y) x = static_cast<int>(rng() % C);
        const auto rf = mcm::repair_fix(e, y, rng);
        CHECK(mcm::validate(g, std::span<const int>(rf.chip_of), C).valid());
        fallbacks += r.fallback + rf.fallback;
        repairs += 2;
      });
    }
    // a chain of C operators on chips 0 .. C-1 is valid and uses every chip: FIX keeps it, and
    // after putting the last operator on chip C-1 the engine still completes it (eq. 2, 3)
    mcmw_adj chain(C);
    for (std::size_t u = 0; u + 1 < C; ++u) chain[u].push_back(static_cast<int>(u + 1));
    std::vector<int> id(C);
    for (std::size_t u = 0; u < C; ++u) id[u] = static_cast<int>(u);
    mcm::with_engine(chain, C, [&](auto& e) {
      mcm::random_engine rng(C);
      const auto r = mcm::repair_fix(e, id, rng);
      CHECK(r.chip_of == id);
      CHECK(r.restarts == 0);
      CHECK(mcm::validate(chain, std::span<const int>(r.chip_of), C).chips_used == C);
      using M = std::remove_cvref_t<decltype(e.get_domain(0))>;
      e.reset();
      CHECK(e.set_domain(C - 1, mcm::mask_traits<M>::bit(C - 1)) == 1);
      for (std::size_t u = C - 1; u-- > 0;) {  // top-down: each operator's domain still holds chip u
        CHECK(mcm::has_chip(e.get_domain(u), u));
        CHECK(mcm::highest_chip(e.get_domain(u)) <= u + 1);  // eq. 2: at most its successor's chip
        CHECK(e.set_domain(u, mcm::mask_traits<M>::bit(u)) == C - u);
      }
      CHECK(e.all_fixed());
      CHECK(e.assignment() == id);
    });
    // a wrong chip above 63 is refuted: chip C-1 on operator 0 of the chain leaves no room
    mcm::with_engine(chain, C, [&](auto& e) {
      using M = std::remove_cvref_t<decltype(e.get_domain(0))>;
      e.reset();
      e.set_domain(0, mcm::mask_traits<M>::bit(C - 1));
      CHECK(e.depth() == 0);
      CHECK(!mcm::has_chip(e.get_domain(0), C - 1));
      CHECK(mcm::has_chip(e.get_domain(0), 0));
    });
  }
  MESSAGE(repairs << " repairs, " << fallbacks << " fallbacks");
  // the engine may thrash when C far exceeds the chips a graph can use (docs/mcm.md, Limits);
  // the fallback is still a valid partition (checked above)
  CHECK(2 * fallbacks < repairs);
}

TEST_CASE("mcm wide: search at C = 100 returns a valid partition, the engine limits are named") {
  std::mt19937_64 gen(101);
  const auto g = devplace::test::random_op_graph(gen, devplace::test::random_adjacency(gen, 40, devplace::test::shape::chain_with_skips));
  const auto ring = mcm::one_way_ring(100);
  const mcm::compute_evaluator eval(g, ring);
  mcm::uniform_policy pol;
  const auto r = mcm::search(g, ring, pol, eval, {.samples = 20, .seed = 1});
  CHECK(r.samples == 20);
  CHECK(mcm::validate(g, std::span<const int>(r.chip_of), 100).valid());
  CHECK(r.improvement() > 0);
  const mcmw_adj tiny{{1}, {}};
  CHECK_THROWS_AS(mcm::constraint_engine(tiny, 65), std::invalid_argument);
  CHECK_NOTHROW(mcm::wide_constraint_engine(tiny, 1024));
  CHECK_THROWS_AS(mcm::wide_constraint_engine(tiny, 1025), std::invalid_argument);
  CHECK(mcm::with_engine(tiny, 65, [](auto& e) { return e.chips(); }) == 65);
  CHECK(mcm::with_engine(tiny, 64, [](auto& e) {
    return std::is_same_v<std::remove_cvref_t<decltype(e.get_domain(0))>, mcm::chip_mask>;
  }));
  CHECK(mcm::with_engine(tiny, 128, [](auto& e) {
    return std::is_same_v<std::remove_cvref_t<decltype(e.get_domain(0))>, mcm::wide_chip_mask<2>>;
  }));
  CHECK(mcm::with_engine(tiny, 129, [](auto& e) {
    return std::is_same_v<std::remove_cvref_t<decltype(e.get_domain(0))>, mcm::wide_chip_mask<16>>;
  }));
}
