#include "devplace/partition/parmesan.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>

#include "devplace/io/graph_json.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "support/random_dag.hpp"

using namespace devplace;

TEST_CASE("the Parmesan flow gives valid partitions, never better than the exact optimum, equal to it without clustering") {
  std::mt19937_64 rng(51);
  constexpr test::shape shapes[] = {test::shape::sparse, test::shape::dense, test::shape::chain_with_skips,
                                    test::shape::multi_source};
  for (int trial = 0; trial < 40; ++trial) {
    const auto adj = test::random_adjacency(rng, 6 + rng() % 14, shapes[trial % 4]);
    const op_graph g = test::random_op_graph(rng, adj);
    const partition_options po{.stages = 2 + rng() % 3, .cost = {.replicas = 1 + rng() % 2}};
    const auto exact = pipeline_dp(g, po);
    REQUIRE(exact.status == status::optimal);
    for (std::size_t K : {std::size_t{4}, std::size_t{8}, g.num_vertices()}) {
      const auto r = parmesan_partition(g, {.partition = po, .clusters = K});
      CAPTURE(trial);
      CAPTURE(K);
      if (K < po.stages) continue;
      REQUIRE(r.status == status::feasible);
      const auto e = evaluate_partition(g, r.stage_of, po.stages, po.cost);
      CHECK(e.valid);
      CHECK(e.fits);
      CHECK(r.objective_ms == doctest::Approx(e.objective_ms));
      CHECK(r.objective_ms >= exact.objective_ms * (1 - 1e-12));
      CHECK(r.objective_ms <= topo_dp(g, po).objective_ms * (1 + 1e-12));  // never worse than its reference
      REQUIRE(r.steps.size() == 3);
      for (const auto& st : r.steps) {
        CHECK(st.objective_ms <= st.dp_objective_ms * (1 + 1e-12));  // refinement never worsens
        CHECK(st.clusters <= g.num_vertices());  // fewer than K only where no convex pair is left
      }
      if (K >= g.num_vertices())  // no clustering: the DP step is the exact optimum
        for (const auto& st : r.steps) CHECK(st.dp_objective_ms == doctest::Approx(exact.objective_ms));
    }
  }
}

TEST_CASE("the Parmesan flow on BERT-Large (591 operators, K = 48, S = 8)") {
  const op_graph g = io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/bert_large_mbs4.json");
  const partition_options po{.stages = 8, .cost = {.replicas = 1}};
  const auto r = parmesan_partition(g, {.partition = po, .clusters = 48});
  REQUIRE(r.status == status::feasible);
  const auto e = evaluate_partition(g, r.stage_of, 8, po.cost);
  CHECK(e.valid);
  double total = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) total += g.compute_ms(v);
  CHECK(r.objective_ms >= total / 8);
  // The reported objective is the partition's own (recomputed from scratch), the flow is never
  // worse than the fixed-order DP, and within 20% of the compute-only lower bound (it pays the
  // activations it cuts at 10 GB/s: 14.7% above it today).
  const auto t = topo_dp(g, po);
  CHECK(r.objective_ms == doctest::Approx(e.objective_ms).epsilon(1e-12));
  CHECK(r.objective_ms <= t.objective_ms * (1 + 1e-12));
  CHECK(r.objective_ms <= 1.2 * total / 8);
}
