#include "devplace/map/stage_graph.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "devplace/dag/op_graph.hpp"
#include "support/random_dag.hpp"

using namespace devplace;

TEST_CASE("stage_graph: built from an operator graph and a partition") {
  // 0 -> 1 -> 3, 0 -> 2 -> 3, 1 -> 2; stages {0, 1}, {2}, {3}
  op_graph_builder b;
  for (int i = 0; i < 4; ++i)
    b.add_op({.id = i, .fwd_ms = double(i + 1), .bwd_ms = 1, .param_bytes = double(10 * (i + 1))});
  b.add_edge(0, 1, 100);
  b.add_edge(0, 2, 200);
  b.add_edge(1, 2, 50);
  b.add_edge(1, 3, 400);
  b.add_edge(2, 3, 800);
  const op_graph g = std::move(b).build();
  const std::vector<std::size_t> stage_of{0, 0, 1, 2};
  const auto sg = make_stage_graph(g, stage_of, 3, 2);
  CHECK(sg.stages() == 3);
  CHECK(sg.replicas() == 2);
  CHECK(sg.vertices() == 6);
  CHECK(sg.compute_ms(0) == 1 + 1 + 2 + 1);
  CHECK(sg.compute_ms(1) == 3 + 1);
  CHECK(sg.param_bytes(0) == 30);
  CHECK(sg.param_bytes(2) == 40);
  CHECK(sg.message_bytes(0, 1) == 250);  // 0->2 and 1->2
  CHECK(sg.message_bytes(1, 0) == 250);
  CHECK(sg.message_bytes(0, 2) == 400);
  CHECK(sg.message_bytes(1, 2) == 800);
  CHECK(sg.message_bytes(1, 1) == 0);
  // neighbours, largest message first
  CHECK(std::vector<std::size_t>(sg.neighbours(0).begin(), sg.neighbours(0).end()) == std::vector<std::size_t>{2, 1});
  CHECK(std::vector<std::size_t>(sg.neighbours(1).begin(), sg.neighbours(1).end()) == std::vector<std::size_t>{2, 0});
  CHECK(sg.vertex(2, 1) == 5);
  CHECK(sg.stage_of_vertex(5) == 2);
  CHECK(sg.replica_of_vertex(5) == 1);
  CHECK(sg.allreduce_bytes(0) == doctest::Approx(30.0));  // 2 (R-1)/R P = P for R = 2
  // rho = (30 + 30 + 40) / (250 + 400 + 800)
  CHECK(sg.allreduce_to_p2p_ratio() == doctest::Approx(100.0 / 1450.0));
  CHECK_THROWS_AS((void)make_stage_graph(g, std::vector<std::size_t>{0, 0, 1}, 3, 2), std::invalid_argument);
  CHECK_THROWS_AS((void)make_stage_graph(g, std::vector<std::size_t>{0, 0, 1, 3}, 3, 2), std::invalid_argument);
}

TEST_CASE("stage_graph: sums are conserved on random partitions") {
  std::mt19937_64 rng(61);
  for (int it = 0; it < 20; ++it) {
    const auto adj = test::random_adjacency(rng, 12 + rng() % 20, test::all_shapes[it % 5]);
    const auto g = test::random_op_graph(rng, adj);
    const std::size_t S = 1 + rng() % 5;
    std::vector<std::size_t> stage_of(g.num_vertices());
    for (auto& s : stage_of) s = rng() % S;
    const auto sg = make_stage_graph(g, stage_of, S, 1 + rng() % 3);
    double c = 0, p = 0, cut = 0, m = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      c += g.compute_ms(v);
      p += g.param_bytes(v);
      for (auto w : g.out_edges(v))
        if (stage_of[v] != stage_of[w]) cut += g.edge_bytes(v, w);
    }
    double cs = 0, ps = 0;
    for (std::size_t s = 0; s < S; ++s) {
      cs += sg.compute_ms(s);
      ps += sg.param_bytes(s);
      for (std::size_t t = s + 1; t < S; ++t) {
        m += sg.message_bytes(s, t);
        CHECK(sg.message_bytes(s, t) == sg.message_bytes(t, s));
      }
    }
    CHECK(cs == doctest::Approx(c));
    CHECK(ps == doctest::Approx(p));
    CHECK(m == doctest::Approx(cut));
  }
}

TEST_CASE("stage_graph: direct construction is validated") {
  CHECK_NOTHROW(stage_graph(2, {1, 2}, {0, 5}, {{0, 3}, {3, 0}}));
  CHECK_THROWS_AS(stage_graph(0, {1}, {0}, {{0}}), std::invalid_argument);
  CHECK_THROWS_AS(stage_graph(1, {}, {}, {}), std::invalid_argument);
  CHECK_THROWS_AS(stage_graph(1, {1, 2}, {0}, {{0, 3}, {3, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(stage_graph(1, {1, 2}, {0, 0}, {{0, 3}, {4, 0}}), std::invalid_argument);  // not symmetric
  CHECK_THROWS_AS(stage_graph(1, {1, -2}, {0, 0}, {{0, 3}, {3, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(stage_graph(1, {1, 2}, {0, 0}, {{0, 3}}), std::invalid_argument);
  const stage_graph one(1, {1}, {7}, {{0}});
  CHECK(one.allreduce_bytes(0) == 0);  // R = 1: nothing to reduce
  CHECK(one.allreduce_to_p2p_ratio() == 0);
}
