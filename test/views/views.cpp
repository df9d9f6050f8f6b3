#include "devplace/views/all.hpp"
#include "devplace/views/induced.hpp"
#include "devplace/views/quotient.hpp"
#include "devplace/views/reverse.hpp"
#include "devplace/views/with_costs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "support/random_dag.hpp"

using namespace devplace;

namespace {
template <class G>
std::set<std::pair<std::size_t, std::size_t>> edge_set(const G& g) {
  std::set<std::pair<std::size_t, std::size_t>> s;
  for (std::size_t u = 0; u < num_vertices(g); ++u)
    for (auto v : out_edges(g, u)) s.emplace(u, static_cast<std::size_t>(v));
  return s;
}
template <class G>
std::set<std::pair<std::size_t, std::size_t>> in_edge_set(const G& g) {  // (u, v) for u in in_edges(v)
  std::set<std::pair<std::size_t, std::size_t>> s;
  for (std::size_t v = 0; v < num_vertices(g); ++v)
    for (auto u : in_edges(g, v)) s.emplace(static_cast<std::size_t>(u), v);
  return s;
}
}  // namespace

TEST_CASE("views::reverse and views::induced agree with explicit constructions on random DAGs") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    const auto adj = test::random_adjacency(rng, 2 + rng() % 30, test::all_shapes[trial % 5]);
    const csr_dag g = to_csr_dag(adj);
    const std::size_t n = g.num_vertices();
    // reverse
    const auto r = views::reverse(g);
    std::set<std::pair<std::size_t, std::size_t>> flipped;
    for (auto [u, v] : edge_set(g)) flipped.emplace(v, u);
    CHECK(edge_set(r) == flipped);
    CHECK(in_edge_set(r) == flipped);
    // induced on a random subset, renumbered in increasing base order
    std::vector<std::size_t> subset;
    for (std::size_t v = 0; v < n; ++v) if (rng() % 2) subset.push_back(v);
    const auto ind = views::induced(g, subset);
    REQUIRE(ind.num_vertices() == subset.size());
    std::set<std::pair<std::size_t, std::size_t>> expect;
    for (auto [u, v] : edge_set(g)) {
      const auto iu = std::find(subset.begin(), subset.end(), u), iv = std::find(subset.begin(), subset.end(), v);
      if (iu != subset.end() && iv != subset.end())
        expect.emplace(std::size_t(iu - subset.begin()), std::size_t(iv - subset.begin()));
    }
    CHECK(edge_set(ind) == expect);
    CHECK(in_edge_set(ind) == expect);
    for (std::size_t k = 0; k < subset.size(); ++k) {
      CHECK(ind.to_base(k) == subset[k]);
      CHECK(ind.to_local(subset[k]) == k);
    }
    // composition: reverse of induced
    const auto ri = views::reverse(views::induced(g, subset));
    std::set<std::pair<std::size_t, std::size_t>> rexpect;
    for (auto [u, v] : expect) rexpect.emplace(v, u);
    CHECK(edge_set(ri) == rexpect);
    CHECK(topological_sort(ri).status == status::optimal);
  }
}

TEST_CASE("views::quotient contracts, sums attributes and detects cycles") {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 60; ++trial) {
    const auto adj = test::random_adjacency(rng, 2 + rng() % 25, test::all_shapes[trial % 5]);
    const op_graph g = test::random_op_graph(rng, adj);
    const std::size_t n = g.num_vertices(), k = 1 + rng() % n;
    std::vector<std::size_t> c(n);
    for (auto& x : c) x = rng() % k;
    c[0] = k - 1;  // make the largest id appear
    const auto q = views::quotient(g, c);
    REQUIRE(q.num_vertices() == k);
    // Oracle: explicit contracted edge set, bytes and acyclicity.
    std::set<std::pair<std::size_t, std::size_t>> expect;
    std::map<std::pair<std::size_t, std::size_t>, double> bytes;
    for (auto [u, v] : edge_set(g))
      if (c[u] != c[v]) {
        expect.emplace(c[u], c[v]);
        bytes[{c[u], c[v]}] += g.edge_bytes(u, v);
      }
    CHECK(edge_set(q) == expect);
    CHECK(in_edge_set(q) == expect);
    for (auto& [e, b] : bytes) CHECK(q.edge_bytes(e.first, e.second) == b);
    std::vector<std::vector<int>> qa(k);
    for (auto [a, b] : expect) qa[a].push_back(static_cast<int>(b));
    const bool acyclic = topological_sort(qa).status == status::optimal;
    CHECK(q.acyclic() == acyclic);
    if (!acyclic) {  // the reported cycle is one
      const auto& cy = q.cycle();
      REQUIRE(cy.size() >= 2);
      for (std::size_t i = 0; i < cy.size(); ++i) CHECK(expect.count({cy[i], cy[(i + 1) % cy.size()]}) == 1);
    }
    double f = 0, fq = 0, m = 0, mq = 0, p = 0, pq = 0;
    for (std::size_t v = 0; v < n; ++v) { f += g.forward_ms(v); m += g.memory_bytes(v); p += g.param_bytes(v); }
    for (std::size_t a = 0; a < k; ++a) { fq += forward_ms(q, a); mq += memory_bytes(q, a); pq += param_bytes(q, a); }
    CHECK(f == fq);
    CHECK(m == mq);
    CHECK(p == pq);
    std::size_t members = 0;
    for (std::size_t a = 0; a < k; ++a) members += q.members(a).size();
    CHECK(members == n);
  }
}

TEST_CASE("views::with_costs attaches attributes to a plain graph") {
  const csr_dag g = to_csr_dag(std::vector<std::vector<int>>{{1, 2}, {2}, {}});
  const std::vector<double> t{1, 2, 3};
  const auto pg = views::with_costs(g, costs{.forward_ms = [&](const auto&, std::size_t v) { return t[v]; },
                                             .edge_bytes = [](const auto&, std::size_t u, std::size_t v) {
                                               return double(10 * u + v);
                                             }});
  CHECK(compute_ms(pg, 2) == 3.0);
  CHECK(backward_ms(pg, 2) == 0.0);
  CHECK(edge_bytes(pg, 0, 2) == 2.0);
  CHECK(edge_bytes(pg, 1, 2) == 12.0);
  const auto r = views::reverse(pg);  // a reversed profiled view is profiled, bytes follow the edge
  CHECK(edge_bytes(r, 2, 1) == 12.0);
  const op_graph copy = to_op_graph(pg);
  CHECK(copy.edge_bytes(1, 2) == 12.0);
  CHECK(copy.compute_ms(1) == 2.0);
}
