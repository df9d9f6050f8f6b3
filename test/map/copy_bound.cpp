#include "devplace/map/copy_bound.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "devplace/map/bounds.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"

using namespace devplace;

namespace {

// A chain of S stages exchanging `bytes` between neighbours, no compute.
stage_graph chain(std::size_t S, std::size_t R, double bytes) {
  std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
  for (std::size_t s = 0; s + 1 < S; ++s) m[s][s + 1] = m[s + 1][s] = bytes;
  return stage_graph(R, std::vector<double>(S, 0.0), std::vector<double>(S, 0.0), m);
}

// D devices of one of seven kinds: the four random matrices of map_support, and the bench
// generators random_blk_1, random_blk_2, uniform_dist (seeded), or a 2d mesh.
matrix_topology any_topology(std::mt19937_64& rng, std::size_t D, int kind) {
  switch (kind) {
    case 4: return random_blk_1(D, rng());
    case 5: return random_blk_2(D, rng());
    case 6: return uniform_dist(D, rng());
    case 7: return D % 2 == 0 ? mesh2d(2, D / 2) : mesh2d(1, D);
    default: return test::random_topology(rng, D, test::all_topo_kinds[kind]);
  }
}

}  // namespace

TEST_CASE("copy bound: never above the brute-force p2p optimum, never below the bound it starts from") {
  std::mt19937_64 rng(1616);
  int raised = 0;
  for (int it = 0; it < 320; ++it) {
    const std::size_t D = 3 + rng() % 5;  // 3..7 devices
    std::size_t S, R;
    do S = 2 + rng() % 3, R = 1 + rng() % D; while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(any_topology(rng, D, it % 8));
    const double opt = test::brute_force(g, L, p2p_cost{});
    const double assign = assignment_lower_bound(g, L, p2p_cost{});
    const double copy = copy_component_lower_bound(g, L, assign);
    CAPTURE(it);
    CHECK(copy >= assign);
    CHECK(copy <= opt * (1 + 1e-12));
    CHECK(copy_component_lower_bound(g, L) <= opt * (1 + 1e-12));  // from 0: the search alone
    raised += copy > assign * (1 + 1e-9);
  }
  CHECK(raised > 10);  // the bound adds something on random instances, not only on blocks
}

TEST_CASE("copy bound: two copies of 4 on nodes of 4, 3, 3 - the second copy must cross") {
  // Every device has two fast links, so the per-device bounds see no slow link; but only one
  // copy fits a node, the other joins the two nodes of 3 over a slow link. Its best crossing is
  // an end edge of the chain: the inner vertex then pays one fast and one slow send.
  const link_costs L(test::node_blocks({4, 3, 3}, 10.0, 1.0));
  const double M = 1e6;
  const auto g = chain(4, 2, M);
  const double w_fast = L.ms_per_byte(0, 1), w_slow = L.ms_per_byte(0, 4);
  const double expected = M * (w_fast + w_slow);
  CHECK(assignment_lower_bound(g, L, p2p_cost{}) == doctest::Approx(2 * M * w_fast));
  CHECK(copy_component_lower_bound(g, L) == doctest::Approx(expected));
  // The oracle: the mapper's proof without this bound (10 devices: brute force would be 10!).
  mapper_options o;
  o.threads = 1;
  o.copy_component_bound = false;
  const auto m = map_devices(g, L, p2p_cost{}, o);
  REQUIRE(m.status == status::optimal);
  CHECK(m.objective_ms == doctest::Approx(expected));
  // With nodes of 4 and 4 both copies fit: no slow link needed.
  const link_costs L2(test::node_blocks({4, 4, 2}, 10.0, 1.0));
  CHECK(copy_component_lower_bound(g, L2) == doctest::Approx(2 * M * w_fast));
}

TEST_CASE("copy bound: the count of pieces per node (three copies of 3 on nodes of 4, 4, 1)") {
  // Each node of 4 holds one copy of 3 (⌊4/3⌋ = 1), the third copy must cross; 9 devices.
  const link_costs L(test::node_blocks({4, 4, 1}, 10.0, 1.0));
  const double M = 2e6;
  const auto g = chain(3, 3, M);
  const double w_fast = L.ms_per_byte(0, 1), w_slow = L.ms_per_byte(0, 4);
  const double expected = M * (w_fast + w_slow);
  CHECK(copy_component_lower_bound(g, L) == doctest::Approx(expected));
  CHECK(test::brute_force(g, L, p2p_cost{}) == doctest::Approx(expected));
  // One copy fewer: both fit, the bound stays at the fast links.
  const auto g2 = chain(3, 2, M);
  CHECK(copy_component_lower_bound(g2, L) == doctest::Approx(2 * M * w_fast));
}

TEST_CASE("copy bound: the heavy edge of a copy keeps to the fast links, the light one may cross") {
  // Stages 0-1 exchange 8 MB, 1-2 exchange 1 MB; two copies on nodes of 3, 2, 1 (6 devices): one
  // copy fills the node of 3, the other puts its heavy pair in the node of 2 and crosses on the
  // light edge. Its vertex 1 pays both; the per-device bounds let every vertex 1 sit in the node of 3.
  const link_costs L(test::node_blocks({3, 2, 1}, 10.0, 1.0));
  std::vector<std::vector<double>> m{{0, 8e6, 0}, {8e6, 0, 1e6}, {0, 1e6, 0}};
  const stage_graph g(2, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, m);
  const double w_fast = L.ms_per_byte(0, 1), w_slow = L.ms_per_byte(0, 5);
  const double expected = 8e6 * w_fast + 1e6 * w_slow;
  CHECK(test::brute_force(g, L, p2p_cost{}) == doctest::Approx(expected));
  CHECK(copy_component_lower_bound(g, L) == doctest::Approx(expected));
  CHECK(assignment_lower_bound(g, L, p2p_cost{}) < expected * (1 - 1e-9));
}

TEST_CASE("copy bound: unequal replica counts return the bound given") {
  const link_costs L(test::node_blocks({4, 3, 3}, 10.0, 1.0));
  const stage_graph g(std::vector<std::size_t>{2, 1, 2}, {1.0, 1.0, 1.0}, {0.0, 0.0, 0.0},
                      {{0, 1e6, 0}, {1e6, 0, 1e6}, {0, 1e6, 0}});
  CHECK(copy_component_lower_bound(g, L, 3.5) == 3.5);
  std::vector<double> offset(2);
  CHECK_THROWS_AS((void)copy_component_lower_bound(g, L, offset), std::invalid_argument);
}

TEST_CASE("copy bound: the mapper starts from it and stays equal to brute force (p2p and combined)") {
  std::mt19937_64 rng(4242);
  int raised = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 3 + rng() % 4;  // 3..6 devices
    std::size_t S, R;
    do S = 2 + rng() % 3, R = 1 + rng() % D; while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(any_topology(rng, D, it % 8));
    mapper_options o;
    o.threads = 1;
    CAPTURE(it);
    auto check = [&](const auto& model) {
      const double opt = test::brute_force(g, L, model);
      o.copy_component_bound = true;
      const auto with = map_devices(g, L, model, o);
      o.copy_component_bound = false;
      const auto without = map_devices(g, L, model, o);
      CHECK(with.initial_lower_bound_ms <= opt * (1 + 1e-12));
      CHECK(with.initial_lower_bound_ms >= without.initial_lower_bound_ms);
      REQUIRE(with.status == status::optimal);
      CHECK(with.objective_ms == doctest::Approx(opt));
      raised += with.initial_lower_bound_ms > without.initial_lower_bound_ms * (1 + 1e-9);
    };
    check(p2p_cost{});
    check(combined_cost{.micro_batches = 1 + rng() % 4});
  }
  CHECK(raised > 0);
}

TEST_CASE("copy bound: the condition holds at the optimum, also with the link lists cut short") {
  // Every mapping passes at its own objective; keeping only a few links per edge (every link
  // allowed past the last one kept) only relaxes the condition.
  std::mt19937_64 rng(9);
  int fails_below = 0;
  for (int it = 0; it < 160; ++it) {
    const std::size_t D = 3 + rng() % 5;
    std::size_t S, R;
    do S = 2 + rng() % 3, R = 1 + rng() % D; while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(any_topology(rng, D, it % 8));
    std::vector<double> offset(S);
    for (std::size_t s = 0; s < S; ++s) offset[s] = g.compute_ms(s);
    const detail::copy_component_test full(g, L, offset);
    const detail::copy_component_test cut(g, L, offset, std::chrono::steady_clock::time_point::max(), 1 + rng() % 4);
    const double opt = test::brute_force(g, L, p2p_cost{});
    CAPTURE(it);
    // (the thresholds sum their terms in another order than the model: a relative 1e-12 above)
    CHECK(full.holds(opt * (1 + 1e-12)));
    CHECK(cut.holds(opt * (1 + 1e-12)));
    for (const double f : {0.3, 0.6, 0.8, 0.95, 0.999}) {
      const bool a = full.holds(opt * f), b = cut.holds(opt * f);
      CHECK((b || !a));  // cut short: weaker
      fails_below += !a;
    }
  }
  CHECK(fails_below > 50);
}
