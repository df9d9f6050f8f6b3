#include "devplace/ilp/builders/partition.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "devplace/partition/pipeline_dp.hpp"
#include "ilp/solvers.hpp"
#include "support/random_dag.hpp"

using namespace devplace;

namespace {

/// Calls f(stage_of) for every labelling V -> {0..S-1} that is a valid partition (monotone along
/// edges, every stage non-empty) and fits the memory budget.
template <class F>
void for_each_valid_partition(const op_graph& g, const partition_options& o, F&& f) {
  const std::size_t n = g.num_vertices(), S = o.stages;
  std::vector<std::size_t> sigma(n, 0);
  for (;;) {
    const auto e = evaluate_partition(g, sigma, S, o.cost);
    if (e.valid && e.fits) f(sigma, e);
    std::size_t k = 0;
    while (k < n && sigma[k] == S - 1) sigma[k++] = 0;
    if (k == n) break;
    ++sigma[k];
  }
}

double brute_force(const op_graph& g, const partition_options& o) {
  double best = std::numeric_limits<double>::infinity();
  for_each_valid_partition(g, o, [&](const auto&, const partition_evaluation& e) { best = std::min(best, e.objective_ms); });
  return best;
}

partition_options random_options(std::mt19937_64& rng, std::size_t n, std::size_t max_s, int trial) {
  partition_options o{.stages = 1 + rng() % std::min<std::size_t>(n, max_s),
                      .cost = {.replicas = 1 + rng() % 3, .micro_batches = 1 + rng() % 3, .bandwidth_gbps = double(1 + rng() % 20)}};
  if (trial % 3 == 0) o.cost.device_memory_bytes = double(1 + rng() % 20) * 1e6 / double(o.cost.replicas);  // sometimes binding
  return o;
}

}  // namespace

TEST_CASE_TEMPLATE("partition ILP optimum equals brute force over all ordered convex partitions", S, DEVPLACE_ILP_ALL_SOLVERS) {
  std::mt19937_64 rng(5);
  const bool reference = std::is_same_v<S, test::reference_solver>;
  int infeasible = 0, solved = 0;
  for (int trial = 0; trial < (reference ? 30 : 60); ++trial) {
    CAPTURE(trial);
    const std::size_t n = 1 + rng() % (reference ? 5 : 8);
    const auto adj = test::random_adjacency(rng, n, test::all_shapes[trial % 5]);
    const op_graph g = test::random_op_graph(rng, adj);
    const auto o = random_options(rng, n, reference ? 3 : 4, trial);
    CAPTURE(n);
    CAPTURE(o.stages);
    const double want = brute_force(g, o);
    const auto p = ilp::build_partition_ilp(g, o);
    const auto sol = S{}.solve(p.model(), {});
    const auto r = p.decode(sol);
    if (std::isinf(want)) {
      ++infeasible;
      CHECK(r.status == status::infeasible);
      continue;
    }
    ++solved;
    REQUIRE(r.status == status::optimal);
    CHECK(p.model().max_violation(sol.values) <= 1e-6);
    const auto e = evaluate_partition(g, r.stage_of, o.stages, o.cost);
    CHECK(e.valid);
    CHECK(e.fits);
    CHECK(r.objective_ms == doctest::Approx(want).epsilon(1e-9));
    CHECK(sol.objective == doctest::Approx(r.objective_ms).epsilon(1e-7));  // model objective = plan objective (ms)
  }
  CHECK(infeasible >= 1);
  CHECK(solved >= 20);
}

TEST_CASE_TEMPLATE("the tightening rows keep the partition optimum", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 20; ++trial) {
    CAPTURE(trial);
    const std::size_t n = 2 + rng() % 8;
    const op_graph g = test::random_op_graph(rng, test::random_adjacency(rng, n, test::all_shapes[trial % 5]));
    const auto o = random_options(rng, n, 4, trial);
    const auto a = ilp::solve_partition_ilp(g, o, S{}, {.tighten = true});
    const auto b = ilp::solve_partition_ilp(g, o, S{}, {.tighten = false});
    REQUIRE(a.status == b.status);
    if (a.status == status::optimal) CHECK(a.objective_ms == doctest::Approx(b.objective_ms).epsilon(1e-9));
  }
}

TEST_CASE_TEMPLATE("property: the partition ILP optimum equals pipeline_dp's", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(12);
  int compared = 0;
  for (int trial = 0; trial < 30; ++trial) {
    CAPTURE(trial);
    const std::size_t n = 4 + rng() % 11;  // up to 14 operators: beyond brute force
    const op_graph g = test::random_op_graph(rng, test::random_adjacency(rng, n, test::all_shapes[trial % 5]));
    auto o = random_options(rng, n, 5, trial);
    const auto dp = pipeline_dp(g, o);
    const auto r = ilp::solve_partition_ilp(g, o, S{}, {}, {.time_limit_s = 30});
    CAPTURE(n);
    CAPTURE(o.stages);
    if (dp.status == status::infeasible) {
      CHECK(r.status == status::infeasible);
      continue;
    }
    if (dp.status != status::optimal || r.status != status::optimal) continue;
    ++compared;
    CHECK(r.objective_ms == doctest::Approx(dp.objective_ms).epsilon(1e-9));
  }
  CHECK(compared >= 15);
}

TEST_CASE_TEMPLATE("repair finds the valid partition closest to a candidate", S, DEVPLACE_ILP_ALL_SOLVERS) {
  std::mt19937_64 rng(21);
  const bool reference = std::is_same_v<S, test::reference_solver>;
  int repaired = 0;
  for (int trial = 0; trial < (reference ? 20 : 40); ++trial) {
    CAPTURE(trial);
    const std::size_t n = 2 + rng() % (reference ? 4 : 7);
    const op_graph g = test::random_op_graph(rng, test::random_adjacency(rng, n, test::all_shapes[trial % 5]));
    const auto o = random_options(rng, n, 3, trial);
    std::vector<std::size_t> candidate(n);
    for (auto& y : candidate) y = rng() % (o.stages + 1);  // sometimes out of range: never matched
    std::size_t want = n + 1;
    for_each_valid_partition(g, o, [&](const std::vector<std::size_t>& sigma, const partition_evaluation&) {
      std::size_t d = 0;
      for (std::size_t v = 0; v < n; ++v) d += sigma[v] != candidate[v];
      want = std::min(want, d);
    });
    const auto p = ilp::build_partition_repair_ilp(g, o, candidate);
    const auto sol = S{}.solve(p.model(), {});
    const auto rr = p.decode_repair(sol);
    if (want == n + 1) {
      CHECK(rr.partition.status == status::infeasible);
      continue;
    }
    ++repaired;
    REQUIRE(rr.partition.status == status::optimal);
    CHECK(rr.changed == want);
    CHECK(sol.objective == doctest::Approx(double(want)));
    const auto e = evaluate_partition(g, rr.partition.stage_of, o.stages, o.cost);
    CHECK(e.valid);
    CHECK(e.fits);
  }
  CHECK(repaired >= 10);
}

TEST_CASE_TEMPLATE("repair keeps a valid candidate and breaks ties by time when asked", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 10; ++trial) {
    const std::size_t n = 3 + rng() % 6;
    const op_graph g = test::random_op_graph(rng, test::random_adjacency(rng, n, test::shape::chain_with_skips));
    const partition_options o{.stages = 2};
    const auto best = pipeline_dp(g, o);
    REQUIRE(best.status == status::optimal);
    // A valid candidate is its own closest partition.
    const auto same = ilp::repair_partition_ilp(g, o, best.stage_of, S{});
    CHECK(same.changed == 0);
    CHECK(same.partition.stage_of == best.stage_of);
    // All in stage 0 is invalid for S = 2; with a time weight the repair is also the fastest among the closest.
    const std::vector<std::size_t> all0(n, 0);
    const auto fast = ilp::repair_partition_ilp(g, o, all0, S{}, {.time_weight = 1e-6});
    REQUIRE(fast.partition.status == status::optimal);
    double best_time = std::numeric_limits<double>::infinity();
    std::size_t closest = n + 1;
    for_each_valid_partition(g, o, [&](const std::vector<std::size_t>& sigma, const partition_evaluation& e) {
      std::size_t d = 0;
      for (std::size_t v = 0; v < n; ++v) d += sigma[v] != 0;
      if (d < closest) closest = d, best_time = e.objective_ms;
      else if (d == closest) best_time = std::min(best_time, e.objective_ms);
    });
    CHECK(fast.changed == closest);
    CHECK(fast.partition.objective_ms == doctest::Approx(best_time).epsilon(1e-9));
  }
}

TEST_CASE("partition ILP rejects malformed requests") {
  std::mt19937_64 rng(1);
  const op_graph g = test::random_op_graph(rng, test::random_adjacency(rng, 4, test::shape::sparse));
  CHECK_THROWS_AS((void)ilp::build_partition_ilp(g, {.stages = 0}), std::invalid_argument);
  CHECK_THROWS_AS((void)ilp::build_partition_ilp(g, {.stages = 2, .cost = {.replicas = 0}}), std::invalid_argument);
  CHECK_THROWS_AS((void)ilp::build_partition_repair_ilp(g, {.stages = 2}, {0, 1}), std::invalid_argument);
  // More stages than operators: a model that is infeasible, not an error.
  const auto r = ilp::solve_partition_ilp(g, {.stages = 5}, test::reference_solver{});
  CHECK(r.status == status::infeasible);
}
