#include "devplace/map/bisection_map.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"

using namespace devplace;

namespace {
/// The mapping is injective into [0, D) and has R_s devices in row s.
void check_injective(const stage_graph& g, const device_mapping& m, std::size_t D) {
  REQUIRE(m.size() == g.stages());
  std::set<std::size_t> used;
  for (std::size_t s = 0; s < g.stages(); ++s) {
    REQUIRE(m[s].size() == g.replicas(s));
    for (auto d : m[s]) {
      CHECK(d < D);
      used.insert(d);
    }
  }
  CHECK(used.size() == g.vertices());
}
}  // namespace

TEST_CASE("bisection map: optimal by brute force where the structure is clear") {
  // Two nodes of 4 devices, 11 GB/s inside, 1.1 across, the devices renamed so that neither the
  // CS nor the p2p map follows the nodes. Only an allreduce: each stage's ring inside a node is
  // optimal; only point-to-point: each replica pipeline inside a node.
  const std::vector<std::size_t> perm{0, 2, 4, 6, 1, 3, 5, 7};  // new devices 0, 1, 2, 3: old 0, 4, 1, 5
  const link_costs L(test::relabel(two_level(2, 4), perm));
  const stage_graph rings(4, {1, 2}, {4e7, 3e7}, {{0, 1e3}, {1e3, 0}});
  const auto a = bisection_map(rings, L);
  check_injective(rings, a, 8);
  CHECK(evaluate(rings, L, a, allreduce_cost{}).objective_ms == doctest::Approx(test::brute_force(rings, L, allreduce_cost{})));
  const stage_graph pipes(4, {1, 2}, {0, 0}, {{0, 2e7}, {2e7, 0}});
  const auto p = bisection_map(pipes, L);
  check_injective(pipes, p, 8);
  CHECK(evaluate(pipes, L, p, p2p_cost{}).objective_ms == doctest::Approx(test::brute_force(pipes, L, p2p_cost{})));
  // A 4 x 2 mesh: two rings of 4 replicas, each on a 2 x 2 block (every ring link one hop).
  const link_costs M(test::relabel(mesh2d(4, 2), {3, 6, 0, 5, 2, 7, 4, 1}));
  const auto b = bisection_map(rings, M);
  check_injective(rings, b, 8);
  CHECK(evaluate(rings, M, b, allreduce_cost{}).objective_ms == doctest::Approx(test::brute_force(rings, M, allreduce_cost{})));
  // the renaming matters: the baselines are not optimal here
  for (const auto& t : {&L, &M})
    CHECK(evaluate(rings, *t, cs_map(rings), allreduce_cost{}).objective_ms >
          evaluate(rings, *t, bisection_map(rings, *t), allreduce_cost{}).objective_ms * 1.2);
  CHECK(evaluate(pipes, L, p2p_map(pipes), p2p_cost{}).objective_ms > evaluate(pipes, L, p, p2p_cost{}).objective_ms * 1.2);
}

TEST_CASE("bisection map: 8 rings of 8 on an 8 x 8 mesh use one-hop links only") {
  // A ring of 8 can only use one-hop links on a 2 x 4 block: the best ring there is, by hand,
  // allreduce_bytes(s) x (ms per byte of a one-hop link) for every stage.
  const auto topo = mesh2d(8, 8);
  const link_costs L(topo);
  std::vector<double> c(8, 1.0), p(8, 8e7);
  std::vector<std::vector<double>> m(8, std::vector<double>(8, 0.0));
  for (std::size_t s = 0; s + 1 < 8; ++s) m[s][s + 1] = m[s + 1][s] = 1e5;
  const stage_graph g(8, c, p, m);
  const auto map = bisection_map(g, L, 4);
  check_injective(g, map, 64);
  const double hop = L.ms_per_byte(0, 1);
  for (std::size_t s = 0; s < 8; ++s)
    for (std::size_t q = 0; q < 8; ++q) CHECK(L.ms_per_byte(map[s][q], map[s][(q + 1) % 8]) == doctest::Approx(hop));
  const auto ev = evaluate(g, L, map, allreduce_cost{});
  CHECK(ev.objective_ms == doctest::Approx(1.0 + g.allreduce_bytes(0) * hop));
  // The CS map (a row per stage) closes each ring across the row: slower.
  CHECK(evaluate(g, L, cs_map(g), allreduce_cost{}).objective_ms > ev.objective_ms * 1.5);
}

TEST_CASE("bisection map: an injective, deterministic mapping on random instances") {
  std::mt19937_64 rng(71);
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 2 + rng() % 10;
    const auto [S, R] = test::small_shape(rng, D);
    const auto topo = test::random_topology(rng, D, test::all_topo_kinds[it % 4]);
    const link_costs L(topo);
    const auto g = it % 2 ? test::random_stage_graph(rng, S, R) : test::ring_stage_graph(rng, S, R);
    const auto m = bisection_map(g, L, 1 + it % 4);
    check_injective(g, m, D);
    CHECK(m == bisection_map(g, L, 1 + it % 4));
  }
  // Unequal replica counts, more devices than stage replicas.
  const stage_graph u(std::vector<std::size_t>{2, 4, 1}, {1, 1, 1}, {1e6, 2e6, 0}, {{0, 1e6, 0}, {1e6, 0, 1e6}, {0, 1e6, 0}});
  const link_costs L(mesh2d(3, 3));
  check_injective(u, bisection_map(u, L), 9);
}

TEST_CASE("bisection map: bad calls throw") {
  const stage_graph g(4, {1, 2}, {1e6, 1e6}, {{0, 1e3}, {1e3, 0}});
  CHECK_THROWS_AS((void)bisection_map(g, link_costs(mesh2d(2, 2))), std::invalid_argument);  // 8 replicas, 4 devices
  CHECK_THROWS_AS((void)bisection_map(g, link_costs(mesh2d(4, 2)), 0), std::invalid_argument);
}

TEST_CASE("bisection map: the ring search finds a cycle within a threshold exactly when one exists") {
  // With an unbounded budget the depth-first search is exhaustive: it must agree with brute force
  // (every cyclic order) on small random device sets and thresholds.
  std::mt19937_64 rng(73);
  for (int it = 0; it < 40; ++it) {
    const std::size_t D = 5 + rng() % 4;
    const link_costs L(test::random_topology(rng, D, test::topo_kind::discrete));
    const detail::device_distances dist(L);
    std::vector<std::size_t> x(D);
    std::iota(x.begin(), x.end(), std::size_t{0});
    double best = std::numeric_limits<double>::infinity();  // least largest link over all cycles
    std::vector<std::size_t> perm(x.begin() + 1, x.end());
    do {
      double top = dist(x[0], perm.front());
      for (std::size_t i = 0; i + 1 < perm.size(); ++i) top = std::max(top, dist(perm[i], perm[i + 1]));
      best = std::min(best, std::max(top, dist(perm.back(), x[0])));
    } while (std::next_permutation(perm.begin(), perm.end()));
    for (double tau : {best, best * (1 - 1e-9), best * 1.5}) {
      detail::ring_work work{.left = std::size_t{1} << 40};
      const auto c = detail::cycle_within(x, dist, tau, std::size_t{1} << 30, work);
      CHECK(c.empty() == (tau < best));
      if (!c.empty()) {
        CHECK(std::set<std::size_t>(c.begin(), c.end()).size() == D);
        for (std::size_t i = 0; i < D; ++i) CHECK(dist(c[i], c[(i + 1) % D]) <= tau);
      }
    }
  }
}

TEST_CASE("bisection map: rings of 64 and 128 on 16 x 16 and 8 x 8 x 8 meshes and tori use one-hop links only") {
  for (const auto& [topo, S, R] : {std::tuple{mesh2d(16, 16), 4, 64}, std::tuple{torus2d(16, 16), 4, 64},
                                   std::tuple{mesh3d(8, 8, 8), 4, 128}, std::tuple{torus3d(8, 8, 8), 8, 64}}) {
    const link_costs L(topo);
    std::vector<double> c(S, 1.0), p(S, 8e7);
    std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
    for (int s = 0; s + 1 < S; ++s) m[s][s + 1] = m[s + 1][s] = 1e6;
    const stage_graph g(static_cast<std::size_t>(R), c, p, m);
    const auto map = bisection_map(g, L);
    check_injective(g, map, L.devices());
    const double hop = L.ms_per_byte(0, 1);
    // the allreduce objective then meets its trivial bound: c + allreduce_bytes x one hop
    CHECK(evaluate(g, L, map, allreduce_cost{}).objective_ms == doctest::Approx(1.0 + g.allreduce_bytes(0) * hop));
  }
}
