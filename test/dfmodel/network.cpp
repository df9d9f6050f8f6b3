// Topologies as dimensions: collective factors, cost units, named compositions, bandwidth matrices.
#include <doctest/doctest.h>

#include "devplace/dfmodel/network_topology.hpp"
#include "devplace/dfmodel/system.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/topology/concepts.hpp"

namespace df = devplace::dfmodel;

TEST_CASE("rho: the authors' per-byte factors per dimension kind") {
  using K = df::dim_kind;
  using C = df::collective;
  // Table VI version: TP all-reduce 2·(p−1)/(p·B): 24,576 B · 2·3/(4·50) · 2048 tiles = 1,509,949.44 ns
  CHECK(24576.0 * df::rho(K::ring, C::all_reduce, 4, 50) * 2048 == doctest::Approx(1509949.44));
  // current code: (p−1)/(p·B): 51,200 B · 7/(8·450) · 2048 = 203,889.78 ns
  CHECK(51200.0 * df::rho(K::ring, C::all_reduce, 8, 450, 1.0) * 2048 == doctest::Approx(203889.777).epsilon(1e-8));
  CHECK(df::rho(K::fully_connected, C::all_gather, 8, 10) == doctest::Approx(1.0 / 80));
  CHECK(df::rho(K::ring, C::all_to_all, 8, 10) == doctest::Approx(64.0 / 80));
  CHECK(df::rho(K::switched, C::all_to_all, 8, 10) == doctest::Approx(8.0 / 40));
  CHECK(df::rho(K::switched, C::point_to_point, 8, 10) == doctest::Approx(0.1));
  CHECK(df::rho(K::ring, C::all_reduce, 1, 10) == 0.0);
  CHECK_THROWS_AS((void)df::rho(K::ring, C::all_reduce, 0, 10), std::invalid_argument);
}

TEST_CASE("named compositions: kinds, degrees and the cost units of the authors' table") {
  const auto t3 = df::torus3d(8, 64, 2, 450, 50, 50);
  CHECK(df::num_chips(t3) == 1024);
  CHECK(df::degree(t3, df::parallelism::pp) == 64);
  CHECK(df::degree(t3, df::parallelism::dp) == 2);
  const auto u = df::cost_units(df::dragonfly(8, 128, 50, 50));
  CHECK(u.links == std::vector<double>{8.0 * 7 * 128, 128.0 * 127});
  CHECK(u.switches == std::vector<double>{0, 128.0 * 128});
  CHECK(df::cost_units(df::dgx1(8, 128, 50, 50)).switches == std::vector<double>{256, 128});
  CHECK(df::cost_units(df::dgx2(8, 128, 50, 50)).links == std::vector<double>{1024, 128});
  CHECK_THROWS_AS(df::torus2d(4, 2, 50, 50, df::parallelism::tp, df::parallelism::tp), std::invalid_argument);
  // GPT3-1T example (REFERENCE_RESULTS §2): 1024 SN30, 8x128 torus at 450/50 GB/s, cost 21,033,984 $
  df::system s;
  s.net = df::torus2d(8, 128, 450, 50);
  s.mem.dram_gbps = 300;
  s.cost.accelerator_price = 16522.25023;
  s.cost.accelerator_power = 444.7061955;
  s.cost.dram_unit_power = 0.16248;
  s.cost.link_unit_power = {0.0104, 0.052, 0.052};
  CHECK(df::system_cost(s) == doctest::Approx(21033984.0).epsilon(1e-6));
  CHECK(df::system_power(s) == doctest::Approx(518779.73142290115).epsilon(1e-6));
}

TEST_CASE("to_matrix_topology: the library's bandwidth matrix of a composed network") {
  const auto t = df::to_matrix_topology(df::dgx1(4, 2, 100, 25));
  static_assert(devplace::device_topology<devplace::matrix_topology>);
  CHECK(t.num_devices() == 8);
  CHECK(t.bandwidth_gbps(0, 1) == 100);        // ring neighbours
  CHECK(t.bandwidth_gbps(0, 2) == 50);         // two hops on the ring
  CHECK(t.bandwidth_gbps(0, 4) == 25);         // across the switch
  CHECK(t.bandwidth_gbps(1, 6) == 25);         // both: the slower dimension
  const auto r = df::to_matrix_topology(df::ring(8, 10));
  CHECK(r.bandwidth_gbps(0, 7) == 10);         // wrap-around
  CHECK(r.bandwidth_gbps(0, 4) == doctest::Approx(2.5));
  CHECK_THROWS_AS((void)df::to_matrix_topology(df::ring(1, 10)), std::invalid_argument);
}

TEST_CASE("to_matrix_topology: the library's mapper runs on a composed network") {
  // 4 pipeline stages x 2 replicas on DGX-1-like 4 x 2 (ring 100 GB/s, switch 25 GB/s): the
  // heavy stage-to-stage traffic should stay on ring links.
  const auto t = df::to_matrix_topology(df::dgx1(4, 2, 100, 25));
  const std::vector<std::vector<double>> comm{{0, 1e8, 0, 0}, {1e8, 0, 1e8, 0}, {0, 1e8, 0, 1e8}, {0, 0, 1e8, 0}};
  const devplace::stage_graph g(2, {1, 1, 1, 1}, {0, 0, 0, 0}, comm);
  const auto r = devplace::map_devices(g, t, {.threads = 1});
  REQUIRE(r.status == devplace::status::optimal);
  CHECK(r.objective_ms > 0);
  CHECK(r.lower_bound_ms <= r.objective_ms);
}

TEST_CASE("size_assignments: TP / PP / DP degrees whose product is the chip count") {
  auto t = df::torus3d(1, 1, 1, 50, 50, 50);
  t.dims[0].size = 0;
  t.dims[2].size = 0;
  t.dims[1].size = 2;
  const auto all = df::size_assignments(t, 16);
  REQUIRE(all.size() == 4);  // x·z = 8: (1,8) (2,4) (4,2) (8,1)
  CHECK(all[0].dims[0].size == 1);
  CHECK(all[0].dims[2].size == 8);
  CHECK(all[3].dims[0].size == 8);
  for (const auto& n : all) CHECK(df::num_chips(n) == 16);
  CHECK(df::size_assignments(t, 7).empty());  // 7 is not a multiple of the fixed 2
  auto u = df::ring(0, 10);
  CHECK(df::size_assignments(u, 12).size() == 1);
  CHECK(df::size_assignments(u, 12)[0].dims[0].size == 12);
}
