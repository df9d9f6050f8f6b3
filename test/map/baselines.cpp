#include "devplace/map/baselines.hpp"

#include <doctest/doctest.h>

#include <random>
#include <set>

#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"

using namespace devplace;

TEST_CASE("baselines: CS map is s*R + r, p2p map is r*S + s") {
  const stage_graph g(3, {1, 1}, {0, 0}, {{0, 1}, {1, 0}});  // S = 2, R = 3
  CHECK(cs_map(g) == device_mapping{{0, 1, 2}, {3, 4, 5}});
  CHECK(p2p_map(g) == device_mapping{{0, 2, 4}, {1, 3, 5}});
}

TEST_CASE("baselines: CS map = p2p map when R = 1") {
  std::mt19937_64 rng(51);
  for (std::size_t S = 1; S <= 6; ++S) {
    const auto g = test::random_stage_graph(rng, S, 1);
    CHECK(cs_map(g) == p2p_map(g));
  }
  const auto g = test::random_stage_graph(rng, 3, 2);
  CHECK(cs_map(g) != p2p_map(g));
}

TEST_CASE("baselines: the random map is a seeded injection") {
  std::mt19937_64 rng(52);
  const auto g = test::random_stage_graph(rng, 3, 4);
  const auto a = random_map(g, 16, 7), b = random_map(g, 16, 7), c = random_map(g, 16, 8);
  CHECK(a == b);
  CHECK(a != c);
  std::set<std::size_t> used;
  for (const auto& row : a)
    for (auto d : row) {
      CHECK(d < 16);
      used.insert(d);
    }
  CHECK(used.size() == 12);
  CHECK_THROWS_AS((void)random_map(g, 11, 1), std::invalid_argument);
}

TEST_CASE("baselines: evaluate under both models, by hand") {
  // 2 stages x 2 replicas on two_level(2, 2): 11 GB/s inside a node, 1.1 across.
  const auto topo = two_level(2, 2);
  const stage_graph g(2, {1, 2}, {2.2e7, 0}, {{0, 1.1e7}, {1.1e7, 0}});
  // CS: stage 0 on {0, 1} (node 0), stage 1 on {2, 3} (node 1)
  const auto cs_p2p = evaluate(g, topo, cs_map(g), cost_choice::p2p);
  CHECK(cs_p2p.objective_ms == doctest::Approx(12.0));
  CHECK(cs_p2p.vertex_time_ms[0] == doctest::Approx(1 + 10.0));  // 1.1e7 B over 1.1 GB/s = 10 ms
  CHECK(cs_p2p.vertex_time_ms[2] == doctest::Approx(2 + 10.0));
  const auto cs_ar = evaluate(g, topo, cs_map(g), cost_choice::allreduce);
  // stage 0: 2(R-1)/R P = 2.2e7 B inside node 0 at 11 GB/s = 2 ms; stage 1 has no parameters
  CHECK(cs_ar.vertex_time_ms[0] == doctest::Approx(1 + 2.0));
  CHECK(cs_ar.vertex_time_ms[1] == doctest::Approx(1 + 2.0));
  CHECK(cs_ar.vertex_time_ms[2] == doctest::Approx(2.0));
  CHECK(cs_ar.objective_ms == doctest::Approx(3.0));
  // p2p map: replica pipelines inside a node; the allreduce crosses nodes
  const auto p_p2p = evaluate(g, topo, p2p_map(g), cost_choice::p2p);
  CHECK(p_p2p.objective_ms == doctest::Approx(2 + 1.0));
  const auto p_ar = evaluate(g, topo, p2p_map(g), cost_choice::allreduce);
  CHECK(p_ar.objective_ms == doctest::Approx(1 + 20.0));
  CHECK_THROWS_AS((void)evaluate(g, topo, device_mapping{{0, 1}, {1, 2}}, cost_choice::p2p), std::invalid_argument);
  CHECK_THROWS_AS((void)evaluate(g, topo, device_mapping{{0, 1}, {2, 9}}, cost_choice::p2p), std::invalid_argument);
  CHECK_THROWS_AS((void)evaluate(g, topo, device_mapping{{0, 1}}, cost_choice::p2p), std::invalid_argument);
}
