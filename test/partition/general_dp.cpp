#include "devplace/partition/general_dp.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "devplace/partition/pipeline_dp.hpp"
#include "support/random_dag.hpp"
#include "support/checks.hpp"

using namespace devplace;

namespace {

// The stage times of a labelling with per-stage replica counts, costed here from the operator
// and edge attributes (not through evaluate_partition): +inf when a stage is empty, an edge runs
// backwards or a stage is over its memory budget; else max_s (Σ c_u + cut bytes / β̄) / r_s.
double gdp_oracle_cost(const op_graph& g, const std::vector<std::size_t>& sigma, const std::vector<std::size_t>& reps,
                       const stage_cost_options& o) {
  const std::size_t S = reps.size();
  std::vector<double> c(S, 0.0), mem(S, 0.0), cut(S, 0.0);
  std::vector<std::size_t> size(S, 0);
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    c[sigma[v]] += g.compute_ms(v);
    mem[sigma[v]] += g.memory_bytes(v);
    ++size[sigma[v]];
  }
  const auto& s = g.structure();
  for (std::size_t u = 0; u < g.num_vertices(); ++u) {
    const auto out = s.out_edges(u);
    for (std::size_t k = 0; k < out.size(); ++k) {
      const std::size_t v = out[k];
      if (sigma[u] > sigma[v]) return std::numeric_limits<double>::infinity();
      if (sigma[u] == sigma[v]) continue;
      const double b = g.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(u) + k));
      cut[sigma[u]] += b;
      cut[sigma[v]] += b;
    }
  }
  double worst = 0;
  for (std::size_t k = 0; k < S; ++k) {
    if (size[k] == 0) return std::numeric_limits<double>::infinity();
    const double r = static_cast<double>(reps[k]);
    if ((mem[k] + cut[k]) / static_cast<double>(o.micro_batches) > r * o.device_memory_bytes)
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, (c[k] + cut[k] / (o.bandwidth_gbps * 1e6)) / r);
  }
  return worst;
}

// Brute force over every labelling V -> {0..S-1} and every vector of S counts ≥ 1 summing to D.
double gdp_brute_force(const op_graph& g, const general_partition_options& o) {
  const std::size_t n = g.num_vertices(), S = o.stages, D = o.devices;
  const auto vectors = test::replica_compositions(S, D);
  std::vector<std::size_t> sigma(n, 0);
  double best = std::numeric_limits<double>::infinity();
  for (;;) {
    for (const auto& v : vectors) best = std::min(best, gdp_oracle_cost(g, sigma, v, o.cost));
    std::size_t k = 0;
    while (k < n && sigma[k] == S - 1) sigma[k++] = 0;
    if (k == n) break;
    ++sigma[k];
  }
  return best;
}

op_graph gdp_chain(const std::vector<double>& ms, double bytes) {
  op_graph_builder b;
  for (std::size_t v = 0; v < ms.size(); ++v) b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = ms[v]});
  for (std::size_t v = 0; v + 1 < ms.size(); ++v) b.add_edge(v, v + 1, bytes);
  return std::move(b).build();
}

}  // namespace

TEST_CASE("general_dp: hand-computed two-stage chains with unequal replica counts") {
  // a (4 ms) -> b (2 ms), 1 MB between them at 1 GB/s (1 ms), D = 3 devices.
  // ({a}, 2) and ({b}, 1): max((4 + 1) / 2, (2 + 1) / 1) = 3; ({a}, 1), ({b}, 2): max(5, 1.5) = 5.
  const op_graph g = gdp_chain({4, 2}, 1e6);
  const auto r = general_dp(g, {.stages = 2, .devices = 3, .cost = {.bandwidth_gbps = 1}});
  REQUIRE(r.status == status::optimal);
  CHECK(r.objective_ms == doctest::Approx(3.0));
  CHECK(r.replicas == std::vector<std::size_t>{2, 1});
  CHECK(r.stage_of == std::vector<std::size_t>{0, 1});
  REQUIRE(r.stage_time_ms.size() == 2);
  CHECK(r.stage_time_ms[0] == doctest::Approx(2.5));
  CHECK(r.stage_time_ms[1] == doctest::Approx(3.0));
  // No communication: 4 / 2 = 2 = 2 / 1.
  const auto free = general_dp(gdp_chain({4, 2}, 0), {.stages = 2, .devices = 3});
  REQUIRE(free.status == status::optimal);
  CHECK(free.objective_ms == doctest::Approx(2.0));
  CHECK(free.replicas == std::vector<std::size_t>{2, 1});
  // One stage takes every device.
  const auto one = general_dp(g, {.stages = 1, .devices = 3, .cost = {.bandwidth_gbps = 1}});
  REQUIRE(one.status == status::optimal);
  CHECK(one.objective_ms == doctest::Approx(2.0));
  CHECK(one.replicas == std::vector<std::size_t>{3});
  // Memory: a stage may only hold r · device memory (ops of 10 bytes here, MB = 1).
  op_graph_builder b;
  b.add_op({.id = 0, .fwd_ms = 1, .fwd_mem_bytes = 30});
  b.add_op({.id = 1, .fwd_ms = 1, .fwd_mem_bytes = 10});
  b.add_edge(0, 1, 0);
  const op_graph m = std::move(b).build();
  // Device memory 10: operator 0 needs 3 replicas, operator 1 one: D = 4 fits, D = 3 does not.
  const auto fits = general_dp(m, {.stages = 2, .devices = 4, .cost = {.device_memory_bytes = 10}});
  REQUIRE(fits.status == status::optimal);
  CHECK(fits.replicas == std::vector<std::size_t>{3, 1});
  CHECK(fits.objective_ms == doctest::Approx(1.0));
  CHECK(general_dp(m, {.stages = 2, .devices = 3, .cost = {.device_memory_bytes = 10}}).status == status::infeasible);
}

TEST_CASE("general_dp equals brute force over all convex splits x replica vectors on seeded random DAGs") {
  std::mt19937_64 rng(2026);
  int infeasible_seen = 0, unequal_counts = 0, beats_fixed = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const std::size_t n = 1 + rng() % 8;
    const std::size_t max_s = n <= 6 ? 3 : 2;
    const auto adj = test::random_adjacency(rng, n, test::all_shapes[trial % 5]);
    const op_graph g = test::random_op_graph(rng, adj);
    general_partition_options o{.stages = 1 + rng() % std::min<std::size_t>(n, max_s)};
    o.devices = o.stages + rng() % 4;
    o.cost = {.micro_batches = 1 + rng() % 3, .bandwidth_gbps = double(1 + rng() % 20)};
    if (trial % 3 == 0) o.cost.device_memory_bytes = double(10 + rng() % 60);  // sometimes binding
    CAPTURE(trial);
    CAPTURE(n);
    CAPTURE(o.stages);
    CAPTURE(o.devices);
    const double expect = gdp_brute_force(g, o);
    const auto r = general_dp(g, o);
    if (std::isinf(expect)) {
      CHECK(r.status == status::infeasible);
      CHECK_FALSE(r.has_solution());
      ++infeasible_seen;
      continue;
    }
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(expect).epsilon(1e-12));
    // The solution is what it claims: S counts ≥ 1 summing to D, costed the same by the oracle.
    REQUIRE(r.replicas.size() == o.stages);
    std::size_t sum = 0;
    for (auto x : r.replicas) {
      CHECK(x >= 1);
      sum += x;
    }
    CHECK(sum == o.devices);
    CHECK(gdp_oracle_cost(g, r.stage_of, r.replicas, o.cost) == doctest::Approx(r.objective_ms).epsilon(1e-12));
    if (std::adjacent_find(r.replicas.begin(), r.replicas.end(), std::not_equal_to<>()) != r.replicas.end())
      ++unequal_counts;
    // Eq. 13 is the case of equal counts: never better.
    if (o.devices % o.stages == 0) {
      partition_options po{.stages = o.stages, .cost = o.cost};
      po.cost.replicas = o.devices / o.stages;
      const auto f = pipeline_dp(g, po);
      if (f.status == status::optimal) {
        CHECK(r.objective_ms <= f.objective_ms * (1 + 1e-12));
        if (r.objective_ms < f.objective_ms * (1 - 1e-9)) ++beats_fixed;
      }
    }
  }
  // The sample exercises what it is meant to.
  CHECK(infeasible_seen > 0);
  CHECK(unequal_counts > 20);
  CHECK(beats_fixed > 0);
  MESSAGE("general_dp oracle: ", infeasible_seen, " infeasible, ", unequal_counts, " optima with unequal counts, ",
          beats_fixed, " strictly better than equal counts");
}

TEST_CASE("general_dp: arguments, bounds and limits") {
  const op_graph g = gdp_chain({1, 2, 3, 4}, 1e6);
  CHECK_THROWS_AS((void)general_dp(g, {.stages = 0, .devices = 2}), std::invalid_argument);
  CHECK_THROWS_AS((void)general_dp(g, {.stages = 3, .devices = 2}), std::invalid_argument);
  CHECK_THROWS_AS((void)general_dp(g, {.stages = 2, .devices = 2, .cost = {.bandwidth_gbps = 0}}), std::invalid_argument);
  CHECK(general_dp(g, {.stages = 5, .devices = 6}).status == status::infeasible);  // more stages than operators
  const auto best = general_dp(g, {.stages = 2, .devices = 5});
  REQUIRE(best.status == status::optimal);
  // A bound at the optimum still finds it; one just below finds nothing.
  CHECK(general_dp(g, {.stages = 2, .devices = 5, .upper_bound_ms = best.objective_ms}).objective_ms ==
        doctest::Approx(best.objective_ms));
  CHECK(general_dp(g, {.stages = 2, .devices = 5, .upper_bound_ms = best.objective_ms * 0.99}).status ==
        status::infeasible);
  // A visit cap stops the search (status work_limit, the equal-count solution attached when S | D).
  const auto capped = general_dp(g, {.stages = 2, .devices = 4, .max_visits = 1});
  CHECK(capped.status == status::work_limit);
  CHECK(capped.replicas == std::vector<std::size_t>{2, 2});
}
