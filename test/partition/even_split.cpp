#include "devplace/partition/even_split.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "devplace/dag/op_graph.hpp"

using namespace devplace;

TEST_CASE("even_split cuts a chain where the running compute reaches each share") {
  op_graph_builder b;
  const double c[6] = {1, 1, 1, 1, 4, 4};  // total 12, shares 4 and 8 for S = 3
  for (int i = 0; i < 6; ++i) b.add_op({.id = i, .fwd_ms = c[i], .param_bytes = i == 5 ? 10.0 : 0.0});
  for (std::size_t i = 0; i + 1 < 6; ++i) b.add_edge(i, i + 1, 0);
  const op_graph g = std::move(b).build();
  CHECK(even_split(g, {.stages = 3}).stage_of == std::vector<std::size_t>{0, 0, 0, 0, 1, 2});
  CHECK(even_split(g, {.stages = 3, .weight = split_weight::uniform}).stage_of ==
        std::vector<std::size_t>{0, 0, 1, 1, 2, 2});
  // All parameters sit on the last operator: the first stages take one operator each.
  CHECK(even_split(g, {.stages = 3, .weight = split_weight::parameters}).stage_of ==
        std::vector<std::size_t>{0, 0, 0, 0, 1, 2});
  CHECK(even_split(g, {.stages = 7}).status == status::infeasible);
  CHECK(even_split(g, {.stages = 6}).stage_of == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("even_split gives S non-empty stages, monotone along edges, on random DAGs") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng() % 60;
    op_graph_builder b;
    for (std::size_t v = 0; v < n; ++v) b.add_op({.id = std::int64_t(v), .fwd_ms = double(rng() % 10)});
    for (std::size_t u = 0; u < n; ++u)
      for (std::size_t v = u + 1; v < n; ++v)
        if (rng() % 100 < 10) b.add_edge(u, v, 1);
    const op_graph g = std::move(b).build();
    const std::size_t S = 1 + rng() % n;
    for (auto w : {split_weight::compute, split_weight::parameters, split_weight::uniform}) {
      const auto r = even_split(g, {.stages = S, .weight = w});
      REQUIRE(r.status == status::feasible);
      for (std::size_t s = 0; s < S; ++s) CHECK(std::count(r.stage_of.begin(), r.stage_of.end(), s) > 0);
      for (std::size_t u = 0; u < n; ++u)
        for (auto v : g.out_edges(u)) CHECK(r.stage_of[u] <= r.stage_of[v]);
    }
  }
}
