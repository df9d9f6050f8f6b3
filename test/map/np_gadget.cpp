// The NP-hardness gadget of Thm 3 (Hamiltonian path, with the corrected threshold t = 2) and the
// 2 x 2 counter-example to consecutive mapping (Fig. 2).
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"

using namespace devplace;

namespace {

using adjacency = std::vector<std::vector<char>>;

bool has_hamiltonian_path(const adjacency& a) {
  const std::size_t n = a.size();
  std::vector<std::size_t> p(n);
  std::iota(p.begin(), p.end(), std::size_t{0});
  do {
    bool ok = true;
    for (std::size_t i = 0; i + 1 < n && ok; ++i) ok = a[p[i]][p[i + 1]];
    if (ok) return true;
  } while (std::next_permutation(p.begin(), p.end()));
  return false;
}

// Devices = vertices of the graph; B = 1 GB/s on its edges and 0.5 elsewhere. A chain of n
// stages with 1e6-byte messages (1 ms over an edge, 2 ms over a non-edge), no compute, R = 1.
struct gadget {
  stage_graph g;
  matrix_topology topo;
};

gadget make_gadget(const adjacency& a) {
  const std::size_t n = a.size();
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j) bw(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = a[i][j] ? 1.0 : 0.5;
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0.0));
  for (std::size_t s = 0; s + 1 < n; ++s) m[s][s + 1] = m[s + 1][s] = 1e6;
  return {stage_graph(1, std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), m), matrix_topology(bw)};
}

adjacency random_graph(std::mt19937_64& rng, std::size_t n, int percent) {
  adjacency a(n, std::vector<char>(n, 0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (static_cast<int>(rng() % 100) < percent) a[i][j] = a[j][i] = 1;
  return a;
}

}  // namespace

TEST_CASE("NP gadget: a mapping with every stage within t = 2 exists iff the graph has a Hamiltonian path") {
  std::mt19937_64 rng(31);
  int yes = 0, no = 0;
  for (int it = 0; it < 60; ++it) {
    const std::size_t n = 3 + rng() % 5;  // 3..7
    const auto a = random_graph(rng, n, 25 + static_cast<int>(rng() % 50));
    const bool ham = has_hamiltonian_path(a);
    (ham ? yes : no) += 1;
    const auto gd = make_gadget(a);
    const link_costs L(gd.topo);
    const mapping_search<p2p_cost> s(gd.g, L);
    const auto r = s.search(2.0);
    INFO("n=" << n << " hamiltonian=" << ham);
    CHECK(r.completed);
    CHECK(r.found == ham);
    if (r.found) {
      // the stages sit along a Hamiltonian path of the graph
      for (std::size_t k = 0; k + 1 < n; ++k) CHECK(a[r.dev[k]][r.dev[k + 1]]);
    } else {
      CHECK(r.next_lower_bound_ms > 2.0);
    }
    // the optimiser agrees: optimum ≤ 2 ms exactly on the yes-instances
    const auto m = map_devices(gd.g, L, p2p_cost{}, {.threads = 2});
    CHECK(m.optimal);
    CHECK((m.objective_ms <= 2.0 + 1e-12) == ham);
  }
  CHECK(yes > 5);
  CHECK(no > 5);
}

TEST_CASE("NP gadget: the printed threshold t = 1 is wrong (an interior stage always costs >= 2)") {
  // the path graph 0-1-2-3 is its own Hamiltonian path, yet no mapping fits t = 1
  adjacency a(4, std::vector<char>(4, 0));
  for (std::size_t i = 0; i + 1 < 4; ++i) a[i][i + 1] = a[i + 1][i] = 1;
  const auto gd = make_gadget(a);
  const link_costs L(gd.topo);
  const mapping_search<p2p_cost> s(gd.g, L);
  CHECK_FALSE(s.search(1.0).found);
  CHECK(s.search(2.0).found);
}

TEST_CASE("2 x 2 counter-example: consecutive mapping is about 1.4x worse than optimal") {
  // 2 nodes x 2 devices (11 GB/s inside a node, 1.1 GB/s across), 4 stages in a chain, R = 1;
  // the middle message is 1.5x the outer ones. CS map cuts the heavy middle link across nodes.
  const auto topo = two_level(2, 2);
  const double a = 1e7, b = 1.5e7;
  const stage_graph g(1, {0, 0, 0, 0}, {0, 0, 0, 0}, {{0, a, 0, 0}, {a, 0, b, 0}, {0, b, 0, a}, {0, 0, a, 0}});
  const auto cs = evaluate(g, topo, cs_map(g), cost_choice::p2p);
  const auto p2p = evaluate(g, topo, p2p_map(g), cost_choice::p2p);
  CHECK(cs.objective_ms == doctest::Approx(p2p.objective_ms));  // R = 1: the same map
  const auto r = map_devices(g, topo, {.cost = cost_choice::p2p, .threads = 2});
  REQUIRE(r.optimal);
  // CS: stage 1 pays a/11 + b/1.1; optimal: stages 1, 2 share a node, a/1.1 + b/11
  CHECK(cs.objective_ms == doctest::Approx(a / 11e6 + b / 1.1e6));
  CHECK(r.objective_ms == doctest::Approx(a / 1.1e6 + b / 11e6));
  CHECK(cs.objective_ms / r.objective_ms == doctest::Approx(16.0 / 11.5));
  CHECK(cs.objective_ms / r.objective_ms > 1.35);
  CHECK(r.device_of[1][0] / 2 == r.device_of[2][0] / 2);  // the heavy pair inside one node
  CHECK(r.device_of[0][0] / 2 != r.device_of[1][0] / 2);
}
