// The constraint engine (seed-mcm §2.6) and SAMPLE / FIX repair (Algorithms 1, 2) against
// brute-force enumeration on small random DAGs.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <set>
#include <vector>

#include "devplace/mcm/chain_dp.hpp"
#include "devplace/mcm/engine.hpp"
#include "devplace/mcm/repair.hpp"
#include "devplace/mcm/validate.hpp"
#include "support/random_dag.hpp"

namespace mcm = devplace::mcm;
using adj_t = std::vector<std::vector<int>>;

namespace {

/// Every valid partition of g onto C chips (brute force).
std::vector<std::vector<int>> all_valid(const adj_t& g, std::size_t C) {
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

adj_t random_small_dag(std::mt19937_64& rng, std::size_t n) {
  const auto s = devplace::test::all_shapes[rng() % 5];
  return devplace::test::random_adjacency(rng, n, s);
}

}  // namespace

TEST_CASE("mcm: propagation never removes a value that has a valid completion") {
  std::mt19937_64 gen(11);
  for (int t = 0; t < 150; ++t) {
    const std::size_t n = 2 + gen() % 6, C = 1 + gen() % 4;
    const adj_t g = random_small_dag(gen, n);
    const auto valid = all_valid(g, C);
    mcm::constraint_engine e(g, C);
    mcm::random_engine rng(gen());
    const auto order = mcm::random_permutation(rng, n);
    std::vector<int> decided(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t u = order[i];
      const int c = mcm::uniform_bit(rng, e.get_domain(u));
      const auto bt = e.backtracks() + e.refutations();
      const auto depth = e.set_domain(u, mcm::chip_bit(static_cast<std::size_t>(c)));
      if (e.backtracks() + e.refutations() != bt) break;  // the check below holds along a first descent
      REQUIRE(depth == i + 1);
      decided[u] = c;
      for (const auto& f : valid) {
        bool consistent = true;
        for (std::size_t w = 0; w < n; ++w) consistent &= decided[w] < 0 || decided[w] == f[w];
        if (!consistent) continue;
        for (std::size_t w = 0; w < n; ++w) CHECK((e.get_domain(w) & mcm::chip_bit(static_cast<std::size_t>(f[w]))) != 0);
      }
    }
  }
}

TEST_CASE("mcm: SAMPLE and FIX are sound and, over seeds, complete on small DAGs") {
  std::mt19937_64 gen(5);
  for (int t = 0; t < 60; ++t) {
    const std::size_t n = 2 + gen() % 5, C = 1 + gen() % 3;
    const adj_t g = random_small_dag(gen, n);
    CAPTURE(t);
    const auto valid = all_valid(g, C);
    const std::set<std::vector<int>> valid_set(valid.begin(), valid.end());
    mcm::constraint_engine e(g, C);
    std::set<std::vector<int>> seen;
    const std::uint64_t seeds = std::max<std::uint64_t>(400, 25 * valid.size());
    for (std::uint64_t seed = 0; seed < seeds; ++seed) {
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
      if (valid_set.count(y)) CHECK(rf.chip_of == y);  // a valid y is kept as it is
    }
    CAPTURE(seen.size());
    CAPTURE(valid_set.size());
    CHECK(seen == valid_set);
  }
}

TEST_CASE("mcm: engine and repair never return an invalid partition (random DAGs up to 40 operators)") {
  std::mt19937_64 gen(99);
  std::size_t fallbacks = 0, runs = 0;
  for (int t = 0; t < 60; ++t) {
    const std::size_t n = 5 + gen() % 36, C = 2 + gen() % 12;
    const adj_t g = random_small_dag(gen, n);
    mcm::constraint_engine e(g, C);
    mcm::random_engine rng(gen());
    for (int k = 0; k < 5; ++k) {
      const auto r = mcm::repair_sample(e, Eigen::MatrixXd(), rng);
      CHECK(mcm::validate(g, std::span<const int>(r.chip_of), C).valid());
      std::vector<int> y(n);
      for (auto& x : y) x = static_cast<int>(rng() % C);
      const auto rf = mcm::repair_fix(e, y, rng);
      CHECK(mcm::validate(g, std::span<const int>(rf.chip_of), C).valid());
      fallbacks += r.fallback + rf.fallback;
      runs += 2;
    }
  }
  CHECK(fallbacks == 0);
  MESSAGE(runs << " repairs, " << fallbacks << " fallbacks");
}

TEST_CASE("mcm: repair is deterministic for a seed, bad arguments throw") {
  const adj_t g{{1, 3}, {2}, {3}, {}};
  mcm::constraint_engine e(g, 4);
  mcm::random_engine a(3), b(3);
  CHECK(mcm::repair_sample(e, Eigen::MatrixXd(), a).chip_of == mcm::repair_sample(e, Eigen::MatrixXd(), b).chip_of);
  CHECK_THROWS_AS(mcm::constraint_engine(g, 0), std::invalid_argument);
  CHECK_THROWS_AS(mcm::constraint_engine(g, 65), std::invalid_argument);
  const std::vector<int> y{0, 1};
  CHECK_THROWS_AS((void)mcm::repair_fix(e, y, a), std::invalid_argument);
  CHECK_THROWS_AS((void)mcm::repair_sample(e, Eigen::MatrixXd::Ones(2, 4), a), std::invalid_argument);
  // FIX keeps y when it is valid, repairs (0,1,2,3) on residual4 (eq. 4)
  const std::vector<int> bad{0, 1, 2, 3};
  const auto r = mcm::repair_fix(e, bad, a);
  CHECK(mcm::validate(g, std::span<const int>(r.chip_of), 4).valid());
  CHECK(r.changed > 0);
}

TEST_CASE("mcm: chain DP is valid and optimal among one-boundary chunkings, greedy is valid") {
  std::mt19937_64 gen(17);
  for (int t = 0; t < 100; ++t) {
    const std::size_t n = 1 + gen() % 7, C = 1 + gen() % 4;
    const adj_t g = random_small_dag(gen, n);
    std::vector<double> w(n);
    for (auto& x : w) x = static_cast<double>(1 + gen() % 9);
    const auto r = mcm::chain_dp(g, w, {.chips = C});
    REQUIRE(r.status == devplace::status::optimal);
    CHECK(mcm::validate(g, std::span<const int>(r.chip_of), C).valid());
    const auto gr = mcm::greedy_chain(g, w, {.chips = C});
    CHECK(mcm::validate(g, std::span<const int>(gr.chip_of), C).valid());
    CHECK(r.bottleneck <= gr.bottleneck);
  }
  // a chain: the classic linear partition optimum
  const adj_t chain{{1}, {2}, {3}, {4}, {}};
  const std::vector<double> w{4, 1, 1, 1, 4};
  const auto r = mcm::chain_dp(chain, w, {.chips = 3});
  CHECK(r.bottleneck == 4);
  CHECK(r.chips_used == 3);
}

TEST_CASE("mcm: span-cluster counting is sound on residual chains with isolated chains beside (eq. 3 binding)") {
  // A chain with random skip edges (spans: clusters of two chips) and a second, isolated chain,
  // with C close to N so that eq. 3 counting binds: along first descents no value with a valid
  // completion is removed (enumeration); SAMPLE / FIX outputs are valid without the fallback and
  // SAMPLE produces every valid partition over seeds.
  std::mt19937_64 gen(23);
  for (int t = 0; t < 40; ++t) {
    const std::size_t n = 5 + gen() % 3, side = 1 + gen() % 2, C = 3 + gen() % 3;
    adj_t g(n);
    for (std::size_t i = 0; i + 1 < n - side; ++i) g[i].push_back(static_cast<int>(i + 1));
    for (std::size_t i = 0; i + 2 < n - side; ++i)
      for (std::size_t j = i + 2; j < n - side; ++j)
        if (gen() % 4 == 0) g[i].push_back(static_cast<int>(j));
    for (std::size_t i = n - side; i + 1 < n; ++i) g[i].push_back(static_cast<int>(i + 1));
    CAPTURE(t);
    const auto valid = all_valid(g, C);
    mcm::constraint_engine e(g, C);
    mcm::random_engine rng(gen());
    const auto order = mcm::random_permutation(rng, n);
    std::vector<int> decided(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t u = order[i];
      const int c = mcm::uniform_bit(rng, e.get_domain(u));
      const auto bt = e.backtracks() + e.refutations();
      e.set_domain(u, mcm::chip_bit(static_cast<std::size_t>(c)));
      if (e.backtracks() + e.refutations() != bt) break;
      decided[u] = c;
      for (const auto& f : valid) {
        bool consistent = true;
        for (std::size_t w = 0; w < n; ++w) consistent &= decided[w] < 0 || decided[w] == f[w];
        if (!consistent) continue;
        for (std::size_t w = 0; w < n; ++w) CHECK((e.get_domain(w) & mcm::chip_bit(static_cast<std::size_t>(f[w]))) != 0);
      }
    }
    // complete over seeds: every valid partition is produced (an unsound count would lose some)
    const std::set<std::vector<int>> want(valid.begin(), valid.end());
    std::set<std::vector<int>> seen;
    for (std::size_t k = 0; k < std::max<std::size_t>(400, 25 * want.size()) && seen != want; ++k) {
      const auto r = mcm::repair_sample(e, Eigen::MatrixXd(), rng);
      CHECK(!r.fallback);
      CHECK(want.count(r.chip_of) == 1);
      seen.insert(r.chip_of);
      std::vector<int> y(n);
      for (auto& x : y) x = static_cast<int>(rng() % C);
      const auto rf = mcm::repair_fix(e, y, rng);
      CHECK(!rf.fallback);
      CHECK(want.count(rf.chip_of) == 1);
    }
    CHECK(seen == want);
  }
}
