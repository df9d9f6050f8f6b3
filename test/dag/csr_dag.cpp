#include "devplace/dag/csr_dag.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace devplace;

TEST_CASE("csr_dag sorts, merges parallel edges and mirrors in-edges") {
  std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> e{{2, 3}, {0, 2}, {0, 1}, {0, 2}, {1, 3}};
  std::vector<csr_dag::edge_type> merged;
  csr_dag g(4, e, &merged);
  REQUIRE(g.num_vertices() == 4);
  REQUIRE(g.num_edges() == 4);
  CHECK(std::vector<csr_dag::vertex_type>(g.out_edges(0).begin(), g.out_edges(0).end()) == std::vector<csr_dag::vertex_type>{1, 2});
  CHECK(std::vector<csr_dag::vertex_type>(g.in_edges(3).begin(), g.in_edges(3).end()) == std::vector<csr_dag::vertex_type>{1, 2});
  CHECK(g.in_degree(0) == 0);
  CHECK(g.out_degree(3) == 0);
  CHECK(merged[1] == merged[3]);
  for (csr_dag::edge_type id = 0; id < g.num_edges(); ++id) CHECK(g.find_edge(g.source(id), g.target(id)) == id);
  CHECK_FALSE(g.find_edge(3, 0).has_value());
  for (std::size_t v = 0; v < 4; ++v) {
    auto ids = g.in_edge_ids(v);
    auto src = g.in_edges(v);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      CHECK(g.target(ids[k]) == v);
      CHECK(g.source(ids[k]) == src[k]);
    }
  }
}

TEST_CASE("to_csr_dag copies a vector of vectors") {
  const std::vector<std::vector<int>> adj{{1, 2}, {3}, {3}, {}};
  const auto g = to_csr_dag(adj);
  CHECK(g.num_vertices() == 4);
  CHECK(g.num_edges() == 4);
  CHECK(g.find_edge(0, 2).has_value());
  CHECK(csr_dag{} == csr_dag{});
  CHECK(csr_dag{}.num_vertices() == 0);
}
