// The ring-cover search of the mapper (map/detail/ring_cover.hpp): the exact cover solver with
// nested row levels against an enumeration of row subsets and slot assignments, where the ring
// cover applies, every target of mapping_search answered by it against the brute-force optimum
// (S·R = D and S·R < D; symmetric, asymmetric and discrete links), and the mapper's result against
// brute force.
#include "devplace/map/detail/ring_cover.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "devplace/map/mapper.hpp"
#include "map/cover_support.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

TEST_CASE("ring cover: the packing solver with row levels finds R rows exactly when an enumeration of rows and slots does") {
  std::mt19937_64 rng(91);
  std::size_t found = 0, none = 0, blocked_by_levels = 0;
  for (int it = 0; it < 2000; ++it) {
    const std::size_t C = 2 + rng() % 9, width = 1 + rng() % 3;
    if (width > C) continue;
    const std::size_t R = 1 + rng() % std::min<std::size_t>(4, C / width);
    const std::size_t n = rng() % 14;
    std::vector<std::vector<std::uint32_t>> rows;
    std::vector<std::uint32_t> flat, level;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::uint32_t> cols(C);
      std::iota(cols.begin(), cols.end(), std::uint32_t{0});
      std::shuffle(cols.begin(), cols.end(), rng);
      cols.resize(width);
      rows.push_back(cols);
      flat.insert(flat.end(), cols.begin(), cols.end());
      level.push_back(static_cast<std::uint32_t>(1 + rng() % R));
    }
    const bool expected = test::disjoint_rows_exist(rows, R, C, level);
    const std::vector<std::uint32_t> top(n, static_cast<std::uint32_t>(R));
    const bool without_levels = test::disjoint_rows_exist(rows, R, C, top);
    CAPTURE(it);
    auto check = [&](auto& x) {  // both solvers: dancing links and bit masks
      const auto o = x.solve(R, 0, nullptr, std::chrono::steady_clock::time_point::max(), std::span<const std::uint32_t>(level));
      REQUIRE(o != detail::packing_outcome::stopped);
      CHECK((o == detail::packing_outcome::found) == expected);
      if (o == detail::packing_outcome::found) {
        // the rows returned are disjoint and can be given the slots: the i-th smallest level ≥ i
        std::vector<char> used(C, 0);
        std::vector<std::uint32_t> lv;
        for (auto r : x.solution()) {
          for (auto c : rows[r]) {
            CHECK(!used[c]);
            used[c] = 1;
          }
          lv.push_back(level[r]);
        }
        REQUIRE(lv.size() == R);
        std::sort(lv.begin(), lv.end());
        for (std::size_t i = 0; i < R; ++i) CHECK(lv[i] >= i + 1);
      }
    };
    test::with_both_packing_solvers(C, width, flat, check);
    found += expected;
    none += !expected;
    blocked_by_levels += without_levels && !expected;
  }
  CHECK(found > 300);
  CHECK(none > 300);
  CHECK(blocked_by_levels > 30);  // instances where only the levels make the answer "none"
  MESSAGE("with rows: " << found << ", without: " << none << ", of which only the levels forbid: " << blocked_by_levels);
}

TEST_CASE("ring cover: the packing solver refuses levels of the wrong count or outside [1, R]") {
  const std::vector<std::uint32_t> flat{0, 1, 2, 3};
  detail::exact_cover_packing x(4, 2, std::span<const std::uint32_t>(flat));
  const std::vector<std::uint32_t> one{1}, zero{0, 1}, high{1, 3};
  const auto never = std::chrono::steady_clock::time_point::max();
  CHECK_THROWS_AS(x.solve(2, 0, nullptr, never, one), std::invalid_argument);
  CHECK_THROWS_AS(x.solve(2, 0, nullptr, never, zero), std::invalid_argument);
  CHECK_THROWS_AS(x.solve(2, 0, nullptr, never, high), std::invalid_argument);
  const std::vector<std::uint32_t> ok{1, 2};
  CHECK(x.solve(2, 0, nullptr, never, ok) == detail::exact_cover_packing::outcome::found);
}

TEST_CASE("ring cover: it applies to allreduce without latency, equal replica counts and parameters in every stage only") {
  std::mt19937_64 rng(92);
  const auto g = test::ring_stage_graph(rng, 3, 2);
  const link_costs plain(test::random_topology(rng, 6, test::topo_kind::continuous));
  const link_costs with_latency(test::random_topology(rng, 6, test::topo_kind::latency));
  CHECK(detail::ring_cover_applies(allreduce_cost{}, g, plain));
  CHECK_FALSE(detail::ring_cover_applies(allreduce_cost{}, g, with_latency));
  CHECK_FALSE(detail::ring_cover_applies(p2p_cost{}, g, plain));
  CHECK_FALSE(detail::ring_cover_applies(combined_cost{}, g, plain));
  const auto one = test::ring_stage_graph(rng, 3, 1);
  CHECK_FALSE(detail::ring_cover_applies(allreduce_cost{}, one, plain));
  const stage_graph no_params(2, std::vector<double>{1, 1}, std::vector<double>{5e5, 0},
                              std::vector<std::vector<double>>{{0, 1e6}, {1e6, 0}});
  CHECK_FALSE(detail::ring_cover_applies(allreduce_cost{}, no_params, plain));
  const stage_graph unequal({2, 3}, std::vector<double>{1, 1}, std::vector<double>{5e5, 5e5},
                            std::vector<std::vector<double>>{{0, 1e6}, {1e6, 0}});
  CHECK_FALSE(detail::ring_cover_applies(allreduce_cost{}, unequal, plain));
}

TEST_CASE("mapping_search: the ring cover answers every target exactly against brute force") {
  // restarts off: the ring cover answers each target before any depth-first search. Targets at
  // the optimum, just below it, at the initial bound and at random in (0.5, 1.3) · opt, in random
  // order (some filtered from the listing of a larger target, others listed anew).
  std::mt19937_64 rng(93);
  const test::topo_kind kinds[] = {test::topo_kind::discrete, test::topo_kind::continuous, test::topo_kind::asymmetric};
  test::target_counts n;
  for (int it = 0; it < 240; ++it) {
    const std::size_t D = 4 + rng() % 5;  // 4..8
    const auto sr = test::cover_shape(rng, D, it % 2 == 0);
    const std::size_t S = sr.first, R = sr.second;  // plain variables: CAPTURE is a lambda
    const auto g = test::ring_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, kinds[it % 3]));
    const double opt = test::brute_force(g, L, allreduce_cost{});
    const mapping_search<allreduce_cost> s(g, L, allreduce_cost{}, {.restarts = false});
    test::check_cover_targets(s, g, L, opt, it, rng, n, true);
  }
  CHECK(n.by_cover > 1000);
  CHECK(n.infeasible > 300);
  CHECK(n.packings > 100);
  CHECK(n.certified_optimum > 100);  // failures that certify the optimum itself
  MESSAGE("targets answered by the ring cover: " << n.by_cover << ", infeasible " << n.infeasible << " (certifying the optimum "
                                                 << n.certified_optimum << "), packings found " << n.packings);
}

TEST_CASE("ring cover: the listings by subsets and by paths give the same answers") {
  // symmetric links, 8–12 devices (beyond brute force): both listings at the same targets, in the
  // same random order, must agree on the answer and on the certified next value; a found cover
  // must be a mapping within the target
  std::mt19937_64 rng(95);
  std::size_t compared = 0, infeasible = 0, found = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 8 + rng() % 5;
    const std::size_t R = 3 + rng() % 3, S = std::max<std::size_t>(1, D / R - rng() % 2);
    const auto g = test::ring_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, it % 2 ? test::topo_kind::discrete : test::topo_kind::continuous));
    const detail::ring_cover_search<allreduce_cost> subsets(g, L), paths(g, L, false);
    REQUIRE(subsets.lists_by_subsets());
    REQUIRE_FALSE(paths.lists_by_subsets());
    detail::ring_listing_cache c1, c2;
    const double base = evaluate_flat(g, L, allreduce_cost{}, std::span<const std::size_t>(flatten(g, cs_map(g)))).objective_ms;
    std::uniform_real_distribution<double> frac(0.3, 1.1);
    for (int k = 0; k < 6; ++k) {
      const double t = base * frac(rng);
      const auto a = subsets.solve(allreduce_cost{}, {}, t, 1'000'000, {}, c1);
      const auto b = paths.solve(allreduce_cost{}, {}, t, 1'000'000, {}, c2);
      CAPTURE(it);
      CAPTURE(t);
      REQUIRE(a.answer != detail::cover_answer::kind::unknown);
      CHECK(a.answer == b.answer);
      CHECK(a.rows == b.rows);
      if (a.answer == detail::cover_answer::kind::none) {
        CHECK(a.next_change == b.next_change);
        ++infeasible;
      } else {
        CHECK(evaluate_flat(g, L, allreduce_cost{}, std::span<const std::size_t>(a.dev)).objective_ms <= t);
        ++found;
      }
      ++compared;
    }
  }
  CHECK(infeasible > 100);
  CHECK(found > 100);
  MESSAGE("targets compared: " << compared << ", infeasible " << infeasible << ", found " << found);
}

TEST_CASE("mapper: with the ring cover answering, objective and status equal brute force") {
  std::mt19937_64 rng(94);
  const test::topo_kind kinds[] = {test::topo_kind::discrete, test::topo_kind::continuous, test::topo_kind::asymmetric};
  std::size_t by_cover = 0, by_dfs = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 4 + rng() % 5;
    const auto sr = test::cover_shape(rng, D, it % 2 == 0);
    const auto g = test::ring_stage_graph(rng, sr.first, sr.second);
    const link_costs L(test::random_topology(rng, D, kinds[it % 3]));
    mapper_options o{.threads = 1 + unsigned(it % 2), .restarts = false};
    o.ring_component_bound = false;  // its higher start leaves fewer targets for the cover to answer
    test::check_mapper_with_cover(g, L, allreduce_cost{}, o, rng, it, true, by_cover, by_dfs);
  }
  CHECK(by_cover > 30);
  CHECK(by_dfs > 20);
  MESSAGE("mapper targets answered by the ring cover: " << by_cover << ", by the depth-first search under tight limits: " << by_dfs);
}
