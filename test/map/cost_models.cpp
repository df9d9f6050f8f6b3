#include "devplace/map/cost_models.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/baselines.hpp"
#include "devplace/topology/generators.hpp"
#include "devplace/topology/matrix_topology.hpp"
#include "map/map_support.hpp"

using namespace devplace;

TEST_CASE("cost models: p2p and allreduce times by hand, with latency and asymmetric links") {
  // 3 devices; bandwidth a -> b in GB/s, latency 1000 us = 1 ms on 0 -> 1 only
  Eigen::MatrixXd bw(3, 3), lat = Eigen::MatrixXd::Zero(3, 3);
  bw << 0, 2, 4,  //
      1, 0, 8,    //
      4, 8, 0;
  lat(0, 1) = 1000;
  const link_costs L{matrix_topology(bw, lat, {1e9, 1e9, 1e9})};
  CHECK_FALSE(L.symmetric());
  CHECK(L.has_latency());
  CHECK(L.transfer_ms(0, 1, 2e6) == doctest::Approx(1.0 + 1.0));
  CHECK(L.transfer_ms(1, 0, 2e6) == doctest::Approx(2.0));
  CHECK(L.transfer_ms(0, 1, 0) == 0);
  // R = 3 ring of one stage: devices 0 -> 1 -> 2 -> 0, P = 3e6 so 2(R-1)/R P = 4e6 bytes, and
  // each of the 2(R-1) = 4 steps pays the link's latency (cost/transfer.hpp)
  const stage_graph ring(3, {5}, {3e6}, {{0}});
  const std::vector<std::size_t> dev{0, 1, 2};
  const double t01 = 4e6 / 2e9 * 1e3 + 4 * 1.0, t12 = 4e6 / 8e9 * 1e3, t20 = 4e6 / 4e9 * 1e3;
  for (std::size_t v = 0; v < 3; ++v)
    CHECK(allreduce_cost{}.time(ring, L, dev, v) == doctest::Approx(5 + std::max({t01, t12, t20})));
  const std::vector<std::size_t> rev{0, 2, 1};  // reversed ring: 0 -> 2 -> 1 -> 0
  CHECK(allreduce_cost{}.time(ring, L, rev, 0) == doctest::Approx(5 + std::max({4e6 / 4e9 * 1e3, 4e6 / 8e9 * 1e3, 4e6 / 1e9 * 1e3})));
  // R = 2: one link, both directions
  const stage_graph pair(2, {0}, {1e6}, {{0}});
  CHECK(allreduce_cost{}.time(pair, L, std::vector<std::size_t>{0, 1}, 0) == doctest::Approx(0.5 + 2 * 1.0));  // 0 -> 1: 2 steps, each with its latency
  // R = 1: no allreduce
  const stage_graph single(1, {3}, {1e9}, {{0}});
  CHECK(allreduce_cost{}.time(single, L, std::vector<std::size_t>{2}, 0) == 3);
  // p2p: chain of 3 stages, R = 1, on devices 1, 0, 2: stage 1 sends 2e6 to 0->1 and 6e6 to 0->2
  const stage_graph chain(1, {1, 2, 3}, {0, 0, 0}, {{0, 2e6, 0}, {2e6, 0, 6e6}, {0, 6e6, 0}});
  const std::vector<std::size_t> cd{1, 0, 2};
  CHECK(p2p_cost{}.time(chain, L, cd, 0) == doctest::Approx(1 + 2e6 / 1e9 * 1e3));
  CHECK(p2p_cost{}.time(chain, L, cd, 1) == doctest::Approx(2 + (1.0 + 1.0) + 6e6 / 4e9 * 1e3));
  CHECK(p2p_cost{}.time(chain, L, cd, 2) == doctest::Approx(3 + 6e6 / 4e9 * 1e3));
  CHECK(p2p_cost{}.bound(chain, L, cd, 1) == doctest::Approx(p2p_cost{}.time(chain, L, cd, 1)));
}

TEST_CASE("cost models: partial bounds never exceed the time of any completion") {
  std::mt19937_64 rng(71);
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 3 + rng() % 6;
    std::size_t S, R;
    do S = 1 + rng() % D, R = 1 + rng() % D; while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const auto full = flatten(g, random_map(g, D, rng()));
    std::vector<std::size_t> part = full;
    for (auto& d : part)
      if (rng() % 2) d = unplaced;
    for (std::size_t v = 0; v < g.vertices(); ++v) {
      if (part[v] == unplaced) continue;
      CHECK(p2p_cost{}.bound(g, L, part, v) <= p2p_cost{}.time(g, L, full, v) * (1 + 1e-12));
      CHECK(allreduce_cost{}.bound(g, L, part, v) <= allreduce_cost{}.time(g, L, full, v) * (1 + 1e-12));
      CHECK(p2p_cost{}.bound(g, L, full, v) == doctest::Approx(p2p_cost{}.time(g, L, full, v)));
      CHECK(allreduce_cost{}.bound(g, L, full, v) == doctest::Approx(allreduce_cost{}.time(g, L, full, v)));
      const auto combined = combined_cost{.micro_batches = 1 + rng() % 8}.prepare(g, L);  // with ring-closure tables
      CHECK(combined.bound(g, L, part, v) <= combined.time(g, L, full, v) * (1 + 1e-12));
      CHECK(combined.bound(g, L, full, v) == doctest::Approx(combined.time(g, L, full, v)));
    }
  }
}

TEST_CASE("cost models: combined = c_u + the p2p sends + the allreduce ring / MB, by hand") {
  // Two stages x two replicas on a 4-device topology with a slow link 0 <-> 2 (1 GB/s), others
  // 10 GB/s, no latency: M = 4e6 bytes, P(0) = 8e6 bytes, c_u = 3 and 5 ms, MB = 4.
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(4, 4, 10.0);
  bw(0, 2) = bw(2, 0) = 1.0;
  const link_costs L(matrix_topology(bw, Eigen::MatrixXd::Zero(4, 4), std::vector<double>(4, 1e12)));
  const stage_graph g(2, {3.0, 5.0}, {8e6, 0.0}, {{0.0, 4e6}, {4e6, 0.0}});
  const std::vector<std::size_t> dev{0, 1, 2, 3};  // stage 0 on {0, 1}, stage 1 on {2, 3}
  const combined_cost c{.micro_batches = 4};
  // vertex 0 (stage 0, replica 0) sends 4e6 bytes to device 2 over the slow link: 4 ms; the ring
  // of stage 0 is 0 <-> 1 at 10 GB/s: 2(R-1)/R * P = 8e6 bytes -> 0.8 ms, / MB = 0.2 ms.
  CHECK(c.time(g, L, dev, 0) == doctest::Approx(3 + 4 + 0.2));
  CHECK(c.time(g, L, dev, 1) == doctest::Approx(3 + 0.4 + 0.2));
  CHECK(c.time(g, L, dev, 2) == doctest::Approx(5 + 4));  // stage 1 has no parameters
  CHECK(evaluate_flat(g, L, c, std::span<const std::size_t>(dev)).objective_ms == doctest::Approx(9));
}

TEST_CASE("cost models: the automatic choice follows the allreduce-to-p2p ratio") {
  // rho = 2 (R-1)/R P / M; R = 2: rho = (P0 + P1) / M01
  const stage_graph heavy_params(2, {1, 1}, {3e6, 3e6}, {{0, 1e6}, {1e6, 0}});
  const stage_graph heavy_msgs(2, {1, 1}, {1e5, 1e5}, {{0, 1e6}, {1e6, 0}});
  const stage_graph balanced(2, {1, 1}, {5e5, 5e5}, {{0, 1e6}, {1e6, 0}});  // rho = 1: p2p
  const stage_graph one_replica(1, {1, 1}, {3e9, 3e9}, {{0, 1e6}, {1e6, 0}});
  CHECK(select_cost_model(heavy_params) == cost_choice::allreduce);
  CHECK(select_cost_model(heavy_msgs) == cost_choice::p2p);
  CHECK(select_cost_model(balanced) == cost_choice::p2p);
  CHECK(select_cost_model(one_replica) == cost_choice::p2p);
  CHECK(select_cost_model(heavy_params, cost_choice::p2p) == cost_choice::p2p);
  CHECK(to_string(cost_choice::automatic) == "auto");
}
