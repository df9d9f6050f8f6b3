#include "devplace/partition/pipeline_dp.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "devplace/io/graph_json.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "support/random_dag.hpp"

using namespace devplace;

namespace {

// Oracle: every labelling σ: V -> {0..S-1} that is monotone along edges and leaves no stage
// empty (these are exactly the ordered convex partitions with an acyclic stage graph), costed
// from scratch by evaluate_partition. Returns +inf when none fits.
double brute_force(const op_graph& g, const partition_options& o) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  std::vector<std::size_t> sigma(n, 0);
  double best = std::numeric_limits<double>::infinity();
  for (;;) {
    const auto e = evaluate_partition(g, sigma, S, o.cost);
    if (e.valid && e.fits) best = std::min(best, e.objective_ms);
    std::size_t k = 0;
    while (k < n && sigma[k] == S - 1) sigma[k++] = 0;
    if (k == n) break;
    ++sigma[k];
  }
  return best;
}

void check_solution(const op_graph& g, const partition_options& o, const partition_result& r) {
  const auto e = evaluate_partition(g, r.stage_of, o.stages, o.cost);
  CHECK(e.valid);
  CHECK(e.fits);
  CHECK(r.objective_ms == doctest::Approx(e.objective_ms).epsilon(1e-12));
  REQUIRE(r.stage_time_ms.size() == o.stages);
}

}  // namespace

TEST_CASE("pipeline_dp equals brute force over all ordered convex partitions on seeded random DAGs") {
  std::mt19937_64 rng(41);
  int infeasible_seen = 0, strictly_better = 0;
  for (int trial = 0; trial < 240; ++trial) {
    // Up to 12 vertices; the oracle enumerates S^n labellings, so S shrinks as n grows.
    const std::size_t n = 1 + rng() % 12;
    const std::size_t max_s = n <= 9 ? 4 : (n <= 11 ? 3 : 2);
    const auto adj = test::random_adjacency(rng, n, test::all_shapes[trial % 5]);
    const op_graph g = test::random_op_graph(rng, adj);
    partition_options o{.stages = 1 + rng() % std::min<std::size_t>(n, max_s),
                        .cost = {.replicas = 1 + rng() % 3, .micro_batches = 1 + rng() % 3, .bandwidth_gbps = double(1 + rng() % 20)}};
    if (trial % 3 == 0) {  // a memory limit that is sometimes binding, sometimes impossible
      o.cost.device_memory_bytes = double(1 + rng() % 20) * 1e6 / double(o.cost.replicas);
    }
    CAPTURE(trial);
    CAPTURE(n);
    CAPTURE(o.stages);
    const double expect = brute_force(g, o);
    const auto r = pipeline_dp(g, o);
    const auto t = topo_dp(g, o);
    if (std::isinf(expect)) {
      CHECK(r.status == status::infeasible);
      CHECK(t.status == status::infeasible);
      ++infeasible_seen;
      continue;
    }
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(expect).epsilon(1e-12));
    check_solution(g, o, r);
    if (t.status == status::feasible) {
      check_solution(g, o, t);
      CHECK(r.objective_ms <= t.objective_ms * (1 + 1e-12));
      if (r.objective_ms < t.objective_ms * (1 - 1e-9)) ++strictly_better;
    }
  }
  CHECK(infeasible_seen > 5);
  CHECK(strictly_better > 5);
}

TEST_CASE("pipeline_dp on larger random DAGs is never worse than the fixed-order DP") {
  std::mt19937_64 rng(42);
  // Wide fans have exponentially many down-sets (2^(n-2)); they are covered by the brute-force
  // test above at small n.
  constexpr test::shape shapes[] = {test::shape::sparse, test::shape::dense, test::shape::chain_with_skips,
                                    test::shape::multi_source};
  for (int trial = 0; trial < 40; ++trial) {
    const auto adj = test::random_adjacency(rng, 10 + rng() % 14, shapes[trial % 4]);
    const op_graph g = test::random_op_graph(rng, adj);
    const partition_options o{.stages = 2 + rng() % 5, .cost = {.replicas = 1 + rng() % 2}};
    const auto r = pipeline_dp(g, o);
    const auto t = topo_dp(g, o);
    REQUIRE(t.status == status::feasible);
    REQUIRE(r.status == status::optimal);
    check_solution(g, o, r);
    CHECK(r.objective_ms <= t.objective_ms * (1 + 1e-12));
  }
}

TEST_CASE("pipeline_dp beats the fixed-order DP on a graph that needs a non-topological-order cut") {
  // A source s feeds two branches a1 -> a2 and b1 -> b2 that join at t; ids give the fixed order
  // s, a1, a2, b1, b2, t. Every branch operator computes 10 ms. The edges s -> b1 and a2 -> t
  // carry 2e7 bytes (2 ms at 10 GB/s); the others none. The best prefix split, {s, a1, a2} |
  // {b1, b2, t}, cuts both heavy edges: 20 + 4 = 24 ms per stage. The exact DP cuts across the
  // branches, {s, a1, b1} | {a2, b2, t}, which no prefix of the order is: 20 ms.
  op_graph_builder b;
  const double c[6] = {0, 10, 10, 10, 10, 0};
  for (int i = 0; i < 6; ++i) b.add_op({.id = i, .fwd_ms = c[i]});
  b.add_edge(0, 1, 0);
  b.add_edge(1, 2, 0);
  b.add_edge(0, 3, 2e7);
  b.add_edge(3, 4, 0);
  b.add_edge(2, 5, 2e7);
  b.add_edge(4, 5, 0);
  const op_graph g = std::move(b).build();
  const partition_options o{.stages = 2};
  const auto t = topo_dp(g, o);
  const auto r = pipeline_dp(g, o);
  CHECK(t.objective_ms == doctest::Approx(24.0));
  CHECK(r.objective_ms == doctest::Approx(20.0));
  CHECK(r.status == status::optimal);
  CHECK(r.stage_of == std::vector<std::size_t>{0, 0, 1, 0, 1, 1});
}

TEST_CASE("pipeline_dp hand-computed: a chain with communication and replicas") {
  // Chain 0 -> 1 -> 2, compute 4, 2, 4; edges of 10^7 bytes at 10 GB/s = 1 ms each. S = 2, R = 2:
  // {0} | {1, 2}: t = (4 + 1) / 2 = 2.5 and (6 + 1) / 2 = 3.5; {0, 1} | {2}: 3.5 and 2.5. Optimum 3.5.
  op_graph_builder b;
  const double c[3] = {4, 2, 4};
  for (int i = 0; i < 3; ++i) b.add_op({.id = i, .fwd_ms = c[i]});
  b.add_edge(0, 1, 1e7);
  b.add_edge(1, 2, 1e7);
  const op_graph g = std::move(b).build();
  const auto r = pipeline_dp(g, {.stages = 2, .cost = {.replicas = 2}});
  CHECK(r.objective_ms == doctest::Approx(3.5));
  CHECK(pipeline_dp(g, {.stages = 3}).objective_ms == doctest::Approx(5.0));  // 4 + 1 | 2 + 2 | 4 + 1
  CHECK(pipeline_dp(g, {.stages = 4}).status == status::infeasible);           // more stages than operators
}

TEST_CASE("pipeline_dp on the real Inception-v3 graph (S = 4) is optimal and valid") {
  const op_graph g = io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/inception_v3_mbs32.json");
  const partition_options o{.stages = 4, .cost = {.replicas = 1}};
  const auto r = pipeline_dp(g, o);
  const auto t = topo_dp(g, o);
  REQUIRE(r.status == status::optimal);
  check_solution(g, o, r);
  // The exact DP strictly beats the fixed topological order on this graph, and is at least the
  // compute lower bound max(Σ c_u / S, max_v c_u(v)).
  CHECK(r.objective_ms < t.objective_ms);
  double total = 0, biggest = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) total += g.compute_ms(v), biggest = std::max(biggest, g.compute_ms(v));
  CHECK(r.objective_ms >= std::max(total / 4, biggest) * (1 - 1e-12));
}

TEST_CASE("pipeline_dp stops at max_visits on 2^40 down-sets and attaches the fixed-order split") {
  // 40 independent operators: every subset is a down-set, nearly all over the bound.
  devplace::op_graph_builder b;
  for (int v = 0; v < 40; ++v) b.add_op({.id = v, .fwd_ms = 1.0 + v % 7, .bwd_ms = 2.0});
  const auto g = std::move(b).build();
  const devplace::partition_options o{.stages = 4, .max_visits = 100'000};
  const auto r = devplace::pipeline_dp(g, o);
  CHECK(r.status == devplace::status::work_limit);
  REQUIRE(r.has_solution());
  const auto fixed = devplace::topo_dp(g, {.stages = 4});
  CHECK(r.objective_ms == doctest::Approx(fixed.objective_ms));
  CHECK(r.objective_ms == doctest::Approx(devplace::evaluate_partition(g, r.stage_of, 4, o.cost).objective_ms));
}
