#include "devplace/partition/topo_dp.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "support/random_dag.hpp"
#include "topo_dp_reference.hpp"

using namespace devplace;

namespace {

// Oracle: every split of the order into S non-empty contiguous segments (S - 1 cut positions
// out of n - 1), costed from scratch by evaluate_partition. +inf when none fits memory.
double brute_force_splits(const op_graph& g, const std::vector<std::size_t>& order, const partition_options& o) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  std::vector<std::size_t> cuts(S - 1);  // positions 1..n-1, increasing
  for (std::size_t k = 0; k + 1 < S; ++k) cuts[k] = k + 1;
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> sigma(n);
  for (;;) {
    std::size_t stage = 0;
    for (std::size_t p = 0; p < n; ++p) {
      while (stage + 1 < S && cuts[stage] == p) ++stage;
      sigma[order[p]] = stage;
    }
    const auto e = evaluate_partition(g, sigma, S, o.cost);
    if (e.valid && e.fits) best = std::min(best, e.objective_ms);
    // next combination
    std::size_t k = S - 1;
    while (k > 0 && cuts[k - 1] == n - 1 - (S - 1 - k)) --k;
    if (k == 0) break;
    ++cuts[k - 1];
    for (std::size_t x = k; x + 1 < S; ++x) cuts[x] = cuts[x - 1] + 1;
  }
  return best;
}

// Random graph with non-integer attributes (so that rounding differs between summation orders)
// and, for some trials, zero compute on every operator.
op_graph random_graph(std::mt19937_64& rng, std::size_t n, bool zero_compute) {
  const auto adj = test::random_adjacency(rng, n, test::all_shapes[rng() % 5]);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  op_graph_builder b;
  for (std::size_t v = 0; v < n; ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = zero_compute ? 0.0 : 0.1 + 3 * u(rng),
              .bwd_ms = zero_compute ? 0.0 : 5 * u(rng), .fwd_mem_bytes = 1e6 * u(rng), .bwd_mem_bytes = 1e6 * u(rng)});
  for (std::size_t a = 0; a < n; ++a)
    for (int w : adj[a]) b.add_edge(a, static_cast<std::size_t>(w), 1e5 + 8e6 * u(rng));
  return std::move(b).build();
}

}  // namespace

TEST_CASE("topo_dp equals brute force over every contiguous split of the order on small random DAGs") {
  std::mt19937_64 rng(7);
  int infeasible = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng() % 11;
    const op_graph g = random_graph(rng, n, trial % 17 == 0);
    partition_options o{.stages = 1 + rng() % std::min<std::size_t>(n, 5),
                        .cost = {.replicas = 1 + rng() % 3, .micro_batches = 1 + rng() % 3, .bandwidth_gbps = 0.5 + double(rng() % 20)}};
    if (trial % 3 == 0) o.cost.device_memory_bytes = (0.5 + double(rng() % 12)) * 1e6 / double(o.cost.replicas);
    CAPTURE(trial);
    const double expect = brute_force_splits(g, topological_sort(g).order, o);
    const auto r = topo_dp(g, o);
    if (std::isinf(expect)) {
      CHECK(r.status == status::infeasible);
      ++infeasible;
      continue;
    }
    REQUIRE(r.status == status::feasible);
    CHECK(r.objective_ms == doctest::Approx(expect).epsilon(1e-12));
    const auto e = evaluate_partition(g, r.stage_of, o.stages, o.cost);
    CHECK(e.valid);
    CHECK(e.fits);
  }
  CHECK(infeasible > 5);
}

TEST_CASE("topo_dp gives exactly the labelling of the full-table fixed-order DP on random DAGs up to 200 operators") {
  std::mt19937_64 rng(11);
  int infeasible = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const std::size_t n = 1 + rng() % 200;
    const op_graph g = random_graph(rng, n, trial % 23 == 0);
    partition_options o{.stages = 1 + rng() % std::min<std::size_t>(n, 24),
                        .cost = {.replicas = 1 + rng() % 4, .micro_batches = 1 + rng() % 4, .bandwidth_gbps = 0.2 + double(rng() % 30)}};
    if (trial % 4 == 0) o.cost.device_memory_bytes = (1.0 + double(rng() % 60)) * 1e6 / double(o.cost.replicas);
    CAPTURE(trial);
    CAPTURE(n);
    CAPTURE(o.stages);
    const auto order = topological_sort(g).order;
    const auto expect = test::topo_dp_quadratic(g, order, o);
    const auto r = topo_dp(g, o);
    REQUIRE(r.status == expect.status);
    if (r.status == status::infeasible) {
      ++infeasible;
      continue;
    }
    CHECK(r.objective_ms == expect.objective_ms);
    CHECK(r.stage_of == expect.stage_of);
  }
  CHECK(infeasible > 2);
}

TEST_CASE("topo_dp on a chain of equal operators splits it evenly") {
  op_graph_builder b;
  for (int v = 0; v < 64; ++v) b.add_op({.id = v, .fwd_ms = 1, .bwd_ms = 1});
  for (std::size_t v = 0; v + 1 < 64; ++v) b.add_edge(v, v + 1, 0);
  const op_graph g = std::move(b).build();
  const auto r = topo_dp(g, {.stages = 8});
  REQUIRE(r.status == status::feasible);
  CHECK(r.objective_ms == 16.0);
  for (std::size_t v = 0; v < 64; ++v) CHECK(r.stage_of[v] == v / 8);
}
