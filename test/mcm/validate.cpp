// The static rules eq. 2-4 and the exact valid counts of seed-mcm §1.3.2 (brute force).
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "devplace/mcm/validate.hpp"

using devplace::mcm::count_valid;
using devplace::mcm::rule;
using devplace::mcm::validate;
using adj_t = std::vector<std::vector<int>>;

namespace {
struct row {
  const char* name;
  adj_t g;
  std::size_t C;
  std::uint64_t total, valid, eq2, eq3, eq4;
};
}  // namespace

TEST_CASE("mcm: exact valid counts of the small graphs (seed-mcm §1.3.2)") {
  const adj_t chain4{{1}, {2}, {3}, {}};
  const adj_t residual4{{1, 3}, {2}, {3}, {}};
  const adj_t diamond4{{1, 2}, {3}, {3}, {}};
  const adj_t triangle3{{1, 2}, {2}, {}};
  const adj_t two_chains{{1}, {}, {3}, {}};
  const adj_t fig2e{{1, 2}, {3}, {}, {}};
  const row rows[] = {
      {"chain4", chain4, 2, 16, 4, 11, 1, 0},       {"chain4", chain4, 3, 81, 7, 66, 8, 0},
      {"chain4", chain4, 4, 256, 8, 221, 27, 0},    {"residual4", residual4, 3, 81, 4, 66, 8, 3},
      {"residual4", residual4, 4, 256, 4, 221, 27, 4}, {"diamond4", diamond4, 2, 16, 5, 10, 1, 0},
      {"diamond4", diamond4, 3, 81, 6, 61, 10, 4},  {"diamond4", diamond4, 4, 256, 8, 206, 38, 4},
      {"triangle3", triangle3, 3, 27, 3, 17, 6, 1}, {"triangle3", triangle3, 4, 64, 3, 44, 16, 1},
      {"two-chains", two_chains, 3, 81, 20, 45, 16, 0}, {"two-chains", two_chains, 4, 256, 26, 156, 74, 0},
      {"fig2e-like", fig2e, 3, 81, 12, 56, 12, 1},  {"fig2e-like", fig2e, 4, 256, 15, 191, 49, 1},
  };
  for (const auto& r : rows) {
    CAPTURE(r.name);
    CAPTURE(r.C);
    const auto c = count_valid(r.g, r.C);
    CHECK(c.total == r.total);
    CHECK(c.valid == r.valid);
    CHECK(c.fails_eq2 == r.eq2);
    CHECK(c.fails_eq3 == r.eq3);
    CHECK(c.fails_eq4 == r.eq4);
  }
}

TEST_CASE("mcm: a chain of n operators has sum_K binom(n-1, K-1) valid partitions") {
  for (std::size_t n = 1; n <= 7; ++n) {
    adj_t chain(n);
    for (std::size_t u = 0; u + 1 < n; ++u) chain[u] = {static_cast<int>(u + 1)};
    for (std::size_t C = 1; C <= 4; ++C) {
      std::uint64_t expect = 0;
      for (std::size_t K = 1; K <= std::min(n, C); ++K) {
        std::uint64_t b = 1;  // binom(n-1, K-1)
        for (std::size_t i = 0; i < K - 1; ++i) b = b * (n - 1 - i) / (i + 1);
        expect += b;
      }
      CHECK(count_valid(chain, C).valid == expect);
    }
  }
}

TEST_CASE("mcm: validate names the first rule and what is involved") {
  const adj_t triangle3{{1, 2}, {2}, {}};
  const std::vector<int> f012{0, 1, 2};
  auto v = validate(triangle3, std::span<const int>(f012), 3);
  CHECK(v.rule == rule::eq4);
  CHECK(v.chip_a == 0);
  CHECK(v.chip_b == 2);
  CHECK(v.chip_c == 1);
  CHECK(v.u == 0);
  CHECK(v.v == 2);
  CHECK(v.message.find("eq4") == 0);
  for (const std::vector<int>& ok : {std::vector<int>{0, 0, 0}, {0, 0, 1}, {0, 1, 1}})
    CHECK(validate(triangle3, std::span<const int>(ok), 3).valid());

  const adj_t residual4{{1, 3}, {2}, {3}, {}};
  const std::vector<int> f0123{0, 1, 2, 3};  // what pipeline_dp returns with S = 4
  v = validate(residual4, std::span<const int>(f0123), 4);
  CHECK(v.rule == rule::eq4);
  CHECK(v.u == 0);
  CHECK(v.v == 3);

  const std::vector<int> down{1, 0, 0, 0};
  v = validate(residual4, std::span<const int>(down), 4);
  CHECK(v.rule == rule::eq2);
  CHECK(v.u == 0);
  CHECK(v.v == 1);
  const std::vector<int> skip{0, 0, 0, 2};
  v = validate(residual4, std::span<const int>(skip), 4);
  CHECK(v.rule == rule::eq3);
  CHECK(v.chip_a == 1);
  const std::vector<int> out{0, 0, 0, 4};
  CHECK(validate(residual4, std::span<const int>(out), 4).rule == rule::chip_range);
  CHECK_THROWS_AS((void)validate(residual4, std::span<const int>(out), 0), std::invalid_argument);
  CHECK_THROWS_AS((void)validate(residual4, std::span<const int>(f012), 4), std::invalid_argument);
}

TEST_CASE("mcm: valid chip graphs: fork/join, star, eq. 4 read literally as delta = 1 on chip edges") {
  const adj_t diamond4{{1, 2}, {3}, {3}, {}};
  const std::vector<int> fj{0, 1, 2, 3};
  CHECK(validate(diamond4, std::span<const int>(fj), 4).valid());
  const adj_t star{{3}, {3}, {3}, {}};
  const std::vector<int> st{0, 1, 2, 3};
  CHECK(validate(star, std::span<const int>(st), 4).valid());
  // literal delta on random DAGs: valid (eq. 2, 3 hold) <=> delta(a, b) == 1 on every chip edge
  std::mt19937_64 rng(7);
  for (int t = 0; t < 300; ++t) {
    const std::size_t n = 2 + rng() % 5, C = 1 + rng() % 4;
    adj_t g(n);
    for (std::size_t u = 0; u < n; ++u)
      for (std::size_t w = u + 1; w < n; ++w)
        if (rng() % 3 == 0) g[u].push_back(static_cast<int>(w));
    std::vector<int> f(n);
    for (auto& x : f) x = static_cast<int>(rng() % C);
    const auto v = validate(g, std::span<const int>(f), C);
    if (v.rule == rule::eq2 || v.rule == rule::eq3) continue;
    const auto cg = devplace::mcm::make_chip_graph(g, std::span<const int>(f), C);
    const auto d = devplace::mcm::longest_chip_paths(cg);
    bool literal = true;
    for (std::size_t a = 0; a < C; ++a)
      for (std::size_t b = 0; b < C; ++b)
        if (cg.adj[a][b] && d[a][b] != 1) literal = false;
    CHECK(literal == v.valid());
  }
}
