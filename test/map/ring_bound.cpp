#include "devplace/map/ring_bound.hpp"

#include <doctest/doctest.h>

#include <random>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/bounds.hpp"
#include "devplace/map/mapper.hpp"
#include "map/map_support.hpp"

using namespace devplace;

TEST_CASE("ring bound: never above the brute-force allreduce optimum, never below the bound it starts from") {
  std::mt19937_64 rng(2026);
  int raised = 0;
  for (int it = 0; it < 160; ++it) {
    const std::size_t D = 3 + rng() % 5;  // 3..7 devices
    std::size_t S, R;
    do S = 1 + rng() % 3, R = 2 + rng() % (D - 1); while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const double opt = test::brute_force(g, L, allreduce_cost{});
    const double assign = assignment_lower_bound(g, L, allreduce_cost{});
    const double ring = ring_component_lower_bound(g, L, assign);
    CAPTURE(it);
    CHECK(ring >= assign);
    CHECK(ring <= opt * (1 + 1e-12));
    CHECK(ring_component_lower_bound(g, L) <= opt * (1 + 1e-12));  // from 0: the search alone
    raised += ring > assign * (1 + 1e-12);
  }
  CHECK(raised > 0);  // the bound adds something on random instances, not only on blocks
}

TEST_CASE("ring bound: a ring larger than a node pays the link between nodes") {
  // Two nodes of 4 devices, 10 GB/s inside, 1 GB/s between; one stage, R = 8, 4e7 ring bytes.
  const link_costs L(test::node_blocks({4, 4}, 10.0, 1.0));
  const stage_graph g(8, {2.0}, {1e8}, {{0.0}});
  const double x = g.allreduce_bytes(0);
  const double slow = 2.0 + x * L.ms_per_byte(0, 4), fast = 2.0 + x * L.ms_per_byte(0, 1);
  CHECK(assignment_lower_bound(g, L, allreduce_cost{}) == doctest::Approx(fast));  // every device has fast links
  CHECK(ring_component_lower_bound(g, L) == doctest::Approx(slow));
  CHECK(test::brute_force(g, L, allreduce_cost{}) == doctest::Approx(slow));
}

TEST_CASE("ring bound: rings compete for the nodes") {
  // Nodes of 4, 3 and 3 devices; two stages of R = 4. Every device has two fast links, so the
  // per-device bounds see no slow link; but only one ring fits a node, the other must join the
  // two nodes of 3 over a slow link: the stage with the larger allreduce takes the node of 4.
  const link_costs L(test::node_blocks({4, 3, 3}, 10.0, 1.0));
  const stage_graph g(4, {1.0, 1.0}, {4e6, 2e6}, {{0, 0}, {0, 0}});
  const double x0 = g.allreduce_bytes(0), x1 = g.allreduce_bytes(1);
  const double w_fast = L.ms_per_byte(0, 1), w_slow = L.ms_per_byte(0, 4);
  const double expected = 1.0 + std::max(x0 * w_fast, x1 * w_slow);
  REQUIRE(x0 * w_fast < x1 * w_slow);
  CHECK(ring_component_lower_bound(g, L) == doctest::Approx(expected));
  CHECK(assignment_lower_bound(g, L, allreduce_cost{}) < expected * (1 - 1e-9));
  // The oracle: the mapper's proof without this bound (10 devices: brute force would be 10!).
  mapper_options o;
  o.threads = 1;
  o.ring_component_bound = false;
  const auto m = map_devices(g, L, allreduce_cost{}, o);
  REQUIRE(m.status == status::optimal);
  CHECK(m.objective_ms == doctest::Approx(expected));
}

TEST_CASE("ring bound: a ring of three needs a cycle, not only a path (the 2-core)") {
  // Fast links 0-1, 1-2, 2-3, 3-4, 4-5 (a path) and 0-2: the only fast cycle is the triangle
  // 0-1-2. Two stages of R = 3 on 6 devices: the second ring needs a slow link.
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(6, 6, 1.0);
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {0, 2}}) bw(a, b) = bw(b, a) = 10.0;
  const link_costs L{matrix_topology(bw)};
  const stage_graph g(3, {0.0, 0.0}, {3e6, 3e6}, {{0, 0}, {0, 0}});
  const double slow = g.allreduce_bytes(0) * L.ms_per_byte(0, 5);
  CHECK(test::brute_force(g, L, allreduce_cost{}) == doctest::Approx(slow));
  CHECK(ring_component_lower_bound(g, L) == doctest::Approx(slow));  // components alone: the path holds 6
}

TEST_CASE("ring bound: a ring never passes a cut vertex (the blocks)") {
  // Fast links: the triangle 0-1-2 and the block 2-3-4-5 (2-3, 2-4, 3-4, 3-5, 4-5), sharing
  // device 2. The fast graph is connected and its own 2-core, but a ring of 5 or 6 devices would
  // pass device 2 twice: it needs a slow link. Two rings of 3 fit, one on each side.
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(6, 6, 1.0);
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {0, 2}, {2, 3}, {2, 4}, {3, 4}, {3, 5}, {4, 5}})
    bw(a, b) = bw(b, a) = 10.0;
  const link_costs L{matrix_topology(bw)};
  for (std::size_t R : {5, 6}) {
    const stage_graph g(R, {0.0}, {3e6}, {{0.0}});
    const double slow = g.allreduce_bytes(0) * L.ms_per_byte(0, 5);
    CAPTURE(R);
    CHECK(test::brute_force(g, L, allreduce_cost{}) == doctest::Approx(slow));
    CHECK(ring_component_lower_bound(g, L) == doctest::Approx(slow));  // the 2-core alone holds 6
  }
  const stage_graph two(3, {0.0, 0.0}, {3e6, 3e6}, {{0, 0}, {0, 0}});
  const double fast = two.allreduce_bytes(0) * L.ms_per_byte(0, 1);
  CHECK(test::brute_force(two, L, allreduce_cost{}) == doctest::Approx(fast));
  CHECK(ring_component_lower_bound(two, L) == doctest::Approx(fast));
}

TEST_CASE("ring bound: never above brute force on lines of nodes (nodes of one device cut the line)") {
  // random_blk_2 in small: nodes of 1-3 devices in a line, random links inside a node, nodes i
  // and j at (mean inside) / 10 / |i - j|; a node of one device is a cut vertex of the fast links
  std::mt19937_64 rng(2027);
  std::uniform_real_distribution<double> u(1.0, 100.0);
  int raised = 0;
  for (int it = 0; it < 120; ++it) {
    std::vector<std::size_t> node;
    while (node.size() < 5 + rng() % 4) {
      const std::size_t k = 1 + rng() % 3, id = node.empty() ? 0 : node.back() + 1;
      for (std::size_t i = 0; i < k; ++i) node.push_back(id);
    }
    const std::size_t D = node.size();
    Eigen::MatrixXd bw(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
    double sum = 0;
    int count = 0;
    for (std::size_t a = 0; a < D; ++a)
      for (std::size_t b = a + 1; b < D; ++b)
        if (node[a] == node[b]) {
          bw(a, b) = bw(b, a) = u(rng);
          sum += bw(a, b), ++count;
        }
    const double inter = (count ? sum / count : 100.0) / 10.0;
    for (std::size_t a = 0; a < D; ++a)
      for (std::size_t b = 0; b < D; ++b)
        if (a != b && node[a] != node[b]) bw(a, b) = inter / double(node[a] > node[b] ? node[a] - node[b] : node[b] - node[a]);
    const link_costs L{matrix_topology(bw)};
    std::size_t S, R;
    do S = 1 + rng() % 3, R = 3 + rng() % (D - 2); while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const double opt = test::brute_force(g, L, allreduce_cost{});
    const double assign = assignment_lower_bound(g, L, allreduce_cost{});
    const double ring = ring_component_lower_bound(g, L, assign);
    CAPTURE(it);
    CHECK(ring <= opt * (1 + 1e-12));
    CHECK(ring_component_lower_bound(g, L) <= opt * (1 + 1e-12));
    raised += ring > assign * (1 + 1e-12);
  }
  CHECK(raised > 10);
  MESSAGE("raised above the per-device bound in " << raised << " of 120");
}

TEST_CASE("ring bound: the mapper starts from it and proves the optimum at once") {
  const link_costs L(test::node_blocks({4, 4}, 10.0, 1.0));
  const stage_graph g(8, {2.0}, {1e8}, {{0.0}});
  mapper_options o;
  o.threads = 1;
  const auto with = map_devices(g, L, allreduce_cost{}, o);
  o.ring_component_bound = false;
  const auto without = map_devices(g, L, allreduce_cost{}, o);
  CHECK(with.status == status::optimal);
  CHECK(without.status == status::optimal);
  CHECK(with.objective_ms == doctest::Approx(without.objective_ms));
  CHECK(with.initial_lower_bound_ms == doctest::Approx(with.objective_ms));
  CHECK(without.initial_lower_bound_ms < with.initial_lower_bound_ms);
}

TEST_CASE("ring bound: under the combined model the mapper's initial bound stays below brute force") {
  std::mt19937_64 rng(77);
  int raised = 0;
  for (int it = 0; it < 80; ++it) {
    const std::size_t D = 3 + rng() % 4;  // 3..6 devices
    std::size_t S, R;
    do S = 1 + rng() % 3, R = 2 + rng() % (D - 1); while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const combined_cost model{.micro_batches = 1 + rng() % 4};
    const double opt = test::brute_force(g, L, model);
    mapper_options o;
    o.threads = 1;
    const auto with = map_devices(g, L, model, o);
    o.ring_component_bound = false;
    const auto without = map_devices(g, L, model, o);
    CAPTURE(it);
    CHECK(with.initial_lower_bound_ms <= opt * (1 + 1e-12));
    CHECK(with.initial_lower_bound_ms >= without.initial_lower_bound_ms);
    REQUIRE(with.status == status::optimal);
    CHECK(with.objective_ms == doctest::Approx(opt));
    raised += with.initial_lower_bound_ms > without.initial_lower_bound_ms * (1 + 1e-12);
  }
  CHECK(raised > 0);
}

TEST_CASE("ring bound: the combined model's ring across nodes, amortised over MB") {
  // One stage, R = 8 on two nodes of 4: the ring pays the slow link, divided by MB = 4.
  const link_costs L(test::node_blocks({4, 4}, 10.0, 1.0));
  const stage_graph g(8, {2.0}, {1e8}, {{0.0}});
  const combined_cost model{.micro_batches = 4};
  const double slow = 2.0 + g.allreduce_bytes(0) * L.ms_per_byte(0, 4) / 4.0;
  mapper_options o;
  o.threads = 1;
  const auto m = map_devices(g, L, model, o);
  CHECK(m.initial_lower_bound_ms == doctest::Approx(slow));
  REQUIRE(m.status == status::optimal);
  CHECK(m.objective_ms == doctest::Approx(slow));
}
