#include "devplace/topology/generators.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

using namespace devplace;

namespace {
bool symmetric(const matrix_topology& t) {
  for (std::size_t a = 0; a < t.num_devices(); ++a)
    for (std::size_t b = 0; b < t.num_devices(); ++b)
      if (t.bandwidth_gbps(a, b) != t.bandwidth_gbps(b, a)) return false;
  return true;
}
double max_hops_seen(const matrix_topology& t) {  // smallest bandwidth = most hops
  double lo = 1e300;
  for (std::size_t a = 0; a < t.num_devices(); ++a)
    for (std::size_t b = 0; b < t.num_devices(); ++b)
      if (a != b) lo = std::min(lo, t.bandwidth_gbps(a, b));
  return lo;
}
}  // namespace

TEST_CASE("table IX hop bandwidths") {
  CHECK(hop_bandwidth_gbps(1) == 78.1);
  CHECK(hop_bandwidth_gbps(2) == 39.0);
  CHECK(hop_bandwidth_gbps(12) == 0.78);
  CHECK(hop_bandwidth_gbps(20) == 0.098);
  CHECK(hop_bandwidth_gbps(21) == 0.088);
  CHECK(hop_bandwidth_gbps(30) == 0.088);
  CHECK(hop_bandwidth_gbps(31) == 0.078);
  CHECK(hop_bandwidth_gbps(51) == 0.078);
  CHECK(hop_bandwidth_gbps(52) == 0.068);
  CHECK_THROWS((void)hop_bandwidth_gbps(0));
}

TEST_CASE("mesh and torus: hop counts, wrap-around and the digest's maximum hops") {
  const auto t = torus2d(8, 8);
  CHECK(t.num_devices() == 64);
  CHECK(t.bandwidth_gbps(0, 1) == 78.1);   // (0,0)-(0,1)
  CHECK(t.bandwidth_gbps(0, 7) == 78.1);   // wrap-around in y
  CHECK(t.bandwidth_gbps(0, 56) == 78.1);  // (0,0)-(7,0) wrap-around in x
  CHECK(t.bandwidth_gbps(0, 9) == 39.0);   // (1,1)
  CHECK(t.bandwidth_gbps(0, 36) == hop_bandwidth_gbps(8));  // (4,4): 4 + 4 hops
  const auto m = mesh2d(8, 8);
  CHECK(m.bandwidth_gbps(0, 7) == hop_bandwidth_gbps(7));
  CHECK(m.bandwidth_gbps(0, 63) == hop_bandwidth_gbps(14));
  CHECK(m.device_names()[9] == "(1,1)");
  // Maximum hop counts: 2d mesh 6/14/30, 2d torus 4/8/16, 3d mesh 9/21, 3d torus 6/12.
  CHECK(max_hops_seen(mesh2d(4, 4)) == hop_bandwidth_gbps(6));
  CHECK(max_hops_seen(mesh2d(16, 16)) == hop_bandwidth_gbps(30));
  CHECK(max_hops_seen(torus2d(4, 4)) == hop_bandwidth_gbps(4));
  CHECK(max_hops_seen(torus2d(16, 16)) == hop_bandwidth_gbps(16));
  CHECK(max_hops_seen(mesh3d(4, 4, 4)) == hop_bandwidth_gbps(9));
  CHECK(max_hops_seen(torus3d(4, 4, 4)) == hop_bandwidth_gbps(6));
  const auto m3 = mesh3d(4, 4, 4);
  CHECK(m3.bandwidth_gbps(0, 1) == 78.1);       // z neighbour (last coordinate fastest)
  CHECK(m3.bandwidth_gbps(0, 4) == 78.1);       // y neighbour
  CHECK(m3.bandwidth_gbps(0, 16) == 78.1);      // x neighbour
  CHECK(m3.bandwidth_gbps(0, 21) == 24.4);      // (1,1,1): 3 hops
  CHECK(torus3d(4, 4, 4).bandwidth_gbps(0, 3) == 78.1);
  CHECK(symmetric(t));
  CHECK(symmetric(m3));
}

TEST_CASE("DGX-1 and its cluster") {
  const auto& links = dgx1_nvlink_counts();
  int pairs = 0, doubles = 0;
  for (std::size_t a = 0; a < 8; ++a) {
    int row = 0;
    for (std::size_t b = 0; b < 8; ++b) {
      row += links[a][b];
      CHECK(links[a][b] == links[b][a]);
      if (a < b && links[a][b] > 0) ++pairs;
      if (a < b && links[a][b] == 2) ++doubles;
    }
    CHECK(row == 6);
  }
  CHECK(pairs == 16);
  CHECK(doubles == 8);
  const auto d = dgx1();
  CHECK(d.num_devices() == 8);
  CHECK(d.bandwidth_gbps(0, 1) == 43.2);
  CHECK(d.bandwidth_gbps(0, 2) == 21.4);
  CHECK(d.bandwidth_gbps(0, 5) == 10.1);
  const auto c = dgx1_cluster(4);
  CHECK(c.num_devices() == 32);
  CHECK(c.bandwidth_gbps(8, 9) == 43.2);   // GPU 0 and 1 of node 1
  CHECK(c.bandwidth_gbps(7, 8) == 1.4);    // across nodes
  CHECK(c.bandwidth_gbps(31, 24) == 10.1); // GPU 7 and 0 of node 3: no NVLink
  CHECK(c.device_names()[9] == "node1/gpu1");
  CHECK(symmetric(c));
}

TEST_CASE("two-level hierarchy") {
  const auto t = two_level();
  CHECK(t.num_devices() == 16);
  CHECK(t.bandwidth_gbps(0, 3) == 11.0);
  CHECK(t.bandwidth_gbps(3, 4) == 1.1);
  CHECK(t.bandwidth_gbps(15, 12) == 11.0);
  CHECK(t.device_memory_bytes(0) == 34359738368.0);
}

TEST_CASE("random generators: ranges, symmetry, block structure and determinism") {
  const double lo1 = 1e-4 / 0.001024, hi1 = 1e-2 / 0.001024, lo2 = 1e-5 / 0.001024;
  for (std::uint64_t seed : {1ull, 7ull, 12345ull}) {
    for (std::size_t D : {1ul, 5ul, 16ul, 64ul}) {
      const auto r1 = random_blk_1(D, seed);
      const auto r2 = random_blk_2(D, seed);
      const auto u = uniform_dist(D, seed);
      CHECK(symmetric(r1));
      CHECK(symmetric(r2));
      CHECK(symmetric(u));
      for (std::size_t a = 0; a < D; ++a)
        for (std::size_t b = 0; b < D; ++b) {
          if (a == b) continue;
          CHECK(u.bandwidth_gbps(a, b) >= lo2);
          CHECK(u.bandwidth_gbps(a, b) < hi1);
          CHECK(r1.bandwidth_gbps(a, b) >= lo1);
          CHECK(r1.bandwidth_gbps(a, b) < hi1);
        }
      // random_blk_1: inside a node every pair has the node's single value; across nodes 1e-4.
      const auto& names = r1.device_names();
      auto node = [&](std::size_t d) { return names[d].substr(0, names[d].find('/')); };
      for (std::size_t a = 0; a < D; ++a)
        for (std::size_t b = 0; b < D; ++b) {
          if (a == b) continue;
          if (node(a) != node(b)) CHECK(r1.bandwidth_gbps(a, b) == doctest::Approx(lo1));
          for (std::size_t c = 0; c < D; ++c)
            if (c != a && c != b && node(a) == node(b) && node(b) == node(c))
              CHECK(r1.bandwidth_gbps(a, b) == r1.bandwidth_gbps(a, c));
        }
      // random_blk_2: inter-node bandwidth = mean intra / 10 / |i - j| (node indices).
      const auto& n2 = r2.device_names();
      auto node2 = [&](std::size_t d) { return std::stoul(n2[d].substr(4, n2[d].find('/') - 4)); };
      double sum = 0;
      std::size_t cnt = 0;
      for (std::size_t a = 0; a < D; ++a)
        for (std::size_t b = a + 1; b < D; ++b)
          if (node2(a) == node2(b)) { sum += r2.bandwidth_gbps(a, b); ++cnt; }
      if (cnt > 0)
        for (std::size_t a = 0; a < D; ++a)
          for (std::size_t b = 0; b < D; ++b)
            if (node2(a) != node2(b)) {
              const double gap = std::abs(double(node2(a)) - double(node2(b)));
              CHECK(r2.bandwidth_gbps(a, b) == doctest::Approx(sum / double(cnt) / 10.0 / gap));
            }
      // Determinism: the same seed gives the same matrix; another seed another one.
      CHECK(uniform_dist(D, seed).bandwidth_matrix() == u.bandwidth_matrix());
      CHECK(random_blk_2(D, seed).bandwidth_matrix() == r2.bandwidth_matrix());
      if (D > 2) CHECK(uniform_dist(D, seed + 1).bandwidth_matrix() != u.bandwidth_matrix());
    }
  }
}

TEST_CASE("uniform_dist is pinned bit for bit (cross-platform determinism)") {
  // splitmix64(seed 42): first output 0xbdd732262feb6e95; top 53 bits / 2^53 = u; value in GB/s is
  // (1e-5 + (1e-2 - 1e-5) u) / 0.001024. Computed here from the generator's definition.
  std::uint64_t z = 42 + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  CHECK(z == 0xbdd732262feb6e95ull);
  const double u = double(z >> 11) * 0x1.0p-53;
  const auto t = uniform_dist(3, 42);
  CHECK(t.bandwidth_gbps(0, 1) == (1e-5 + (1e-2 - 1e-5) * u) / 0.001024);
}

TEST_CASE("generate_topology expands specs and names the bad field") {
  CHECK(generate_topology({.generator = "torus2d", .shape = {8, 8}}).bandwidth_gbps(0, 1) == 78.1);
  CHECK(generate_topology({.generator = "dgx1_cluster"}).num_devices() == 32);
  CHECK(generate_topology({.generator = "two_level", .shape = {2, 4}, .intra_gbps = 20.0}).bandwidth_gbps(0, 1) == 20.0);
  const auto lat = generate_topology({.generator = "dgx1", .memory_bytes = 16e9, .latency_us = 5.0});
  CHECK(lat.latency_us(0, 1) == 5.0);
  CHECK(lat.latency_us(2, 2) == 0.0);
  CHECK(lat.device_memory_bytes(3) == 16e9);
  auto field_of = [](const generator_spec& s) {
    try {
      (void)generate_topology(s);
    } catch (const spec_error& e) {
      return e.field() + ": " + e.what();
    }
    return std::string("no error");
  };
  CHECK(field_of({.generator = "hypercube"}).rfind("generator: unknown generator 'hypercube'", 0) == 0);
  CHECK(field_of({.generator = "mesh2d"}).rfind("shape:", 0) == 0);
  CHECK(field_of({.generator = "mesh3d", .shape = {4, 4}}).rfind("shape:", 0) == 0);
  CHECK(field_of({.generator = "torus2d", .shape = {0, 4}}).rfind("shape:", 0) == 0);
  CHECK(field_of({.generator = "uniform_dist", .seed = 3}).rfind("devices:", 0) == 0);
  CHECK(field_of({.generator = "uniform_dist", .devices = 3}).rfind("seed:", 0) == 0);
  CHECK(field_of({.generator = "uniform_dist", .devices = 0, .seed = 1}).rfind("devices:", 0) == 0);
  CHECK(field_of({.generator = "dgx1", .memory_bytes = -1.0}).rfind("memory_bytes:", 0) == 0);
  CHECK(field_of({.generator = "dgx1", .latency_us = -1.0}).rfind("latency_us:", 0) == 0);
  CHECK(field_of({.generator = "two_level", .inter_gbps = 0.0}).rfind("inter_gbps:", 0) == 0);
  CHECK(field_of({.generator = "mesh2d", .shape = {2, 2}, .devices = 4}).rfind("devices:", 0) == 0);
  // Every generator's output is a valid topology (the constructor validated it) and names itself.
  for (auto name : generator_names()) {
    generator_spec s{.generator = std::string(name)};
    if (name == "mesh2d" || name == "torus2d") s.shape = {3, 5};
    if (name == "mesh3d" || name == "torus3d") s.shape = {2, 3, 2};
    if (name.substr(0, 6) == "random" || name == "uniform_dist") { s.devices = 12; s.seed = 9; }
    const auto t = generate_topology(s);
    CHECK(t.name() == (name == "dgx1" ? "dgx1" : std::string(name)));
    CHECK(t.device_names().size() == t.num_devices());
  }
}
