#include "devplace/dag/op_graph.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace devplace;

TEST_CASE("op_graph_builder builds a profiled graph and merges parallel edge bytes") {
  op_graph_builder b;
  const auto a = b.add_op({.id = 10, .name = "a", .fwd_ms = 1, .bwd_ms = 2, .fwd_mem_bytes = 5, .bwd_mem_bytes = 7, .param_bytes = 3});
  const auto c = b.add_op({.id = 20, .name = "c", .fwd_ms = 0.5, .bwd_ms = 0.25});
  b.add_edge(a, c, 100);
  b.add_edge(a, c, 50);
  const op_graph g = std::move(b).build();
  CHECK(g.num_vertices() == 2);
  CHECK(g.num_edges() == 1);
  CHECK(compute_ms(g, 0) == 3.0);
  CHECK(memory_bytes(g, 0) == 7.0);
  CHECK(param_bytes(g, 0) == 3.0);
  CHECK(edge_bytes(g, 0, 1) == 150.0);
  CHECK(edge_bytes(g, 1, 0) == 0.0);
  CHECK(g.vertex_of_id(20) == 1);
  CHECK(g.vertex_of_id(99) == 2);
}

TEST_CASE("op_graph_builder rejects self-loops, duplicates, bad numbers and cycles") {
  op_graph_builder b;
  b.add_op({.id = 1});
  CHECK_THROWS_AS(b.add_op({.id = 1}), graph_error);
  CHECK_THROWS_WITH_AS(b.add_op({.id = 2, .fwd_ms = -1}), doctest::Contains("fwd_ms"), graph_error);
  CHECK_THROWS_WITH_AS(b.add_edge(0, 0, 1), doctest::Contains("self-loop"), graph_error);

  op_graph_builder cyc;
  for (int i = 0; i < 4; ++i) cyc.add_op({.id = 100 + i});
  cyc.add_edge(0, 1, 1);
  cyc.add_edge(1, 2, 1);
  cyc.add_edge(2, 3, 1);
  cyc.add_edge(3, 1, 1);
  try {
    (void)std::move(cyc).build();
    FAIL("expected a cycle error");
  } catch (const graph_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("cycle") != std::string::npos);
    CHECK(msg.find("101") != std::string::npos);
    CHECK(msg.find("102") != std::string::npos);
    CHECK(msg.find("103") != std::string::npos);
    CHECK(msg.find("100") == std::string::npos);
  }
}
