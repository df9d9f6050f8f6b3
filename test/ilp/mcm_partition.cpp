// The partition MILP with the MCM rows (eq. 4 chip triangle, eq. 3 with a free K): it accepts
// exactly the partitions mcm::validate accepts, and its optimum bounds the MCM search (B7).
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "devplace/ilp/builders/partition.hpp"
#include "devplace/mcm/search.hpp"
#include "ilp/solvers.hpp"
#include "support/random_dag.hpp"

namespace mcm = devplace::mcm;
using devplace::op_graph;

namespace {

/// Inference-style graph: fwd times from `w`, no backward, no bytes (the MILP's objective is then
/// the MCM compute-only bottleneck).
op_graph mcm_graph(const std::vector<std::vector<int>>& adj, const std::vector<double>& w) {
  devplace::op_graph_builder b;
  for (std::size_t v = 0; v < adj.size(); ++v) b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = w[v]});
  for (std::size_t u = 0; u < adj.size(); ++u)
    for (int v : adj[u]) b.add_edge(u, static_cast<std::size_t>(v), 0.0);
  return std::move(b).build();
}

const devplace::ilp::partition_ilp_options mcm_rows{.chip_triangle = true, .free_stage_count = true};

}  // namespace

TEST_CASE_TEMPLATE("MCM MILP rows accept exactly the partitions the validator accepts", S, DEVPLACE_ILP_BACKENDS) {
  std::mt19937_64 gen(8);
  const std::vector<std::vector<std::vector<int>>> graphs = {
      {{1, 3}, {2}, {3}, {}}, {{1, 2}, {3}, {3}, {}}, {{1, 2}, {2}, {}}, {{1, 2}, {3}, {}, {}},
      devplace::test::random_adjacency(gen, 4, devplace::test::shape::dense)};
  for (const auto& adj : graphs) {
    const std::size_t n = adj.size(), C = 3;
    const auto g = mcm_graph(adj, std::vector<double>(n, 1.0));
    std::vector<int> f(n, 0);
    for (;;) {
      auto p = devplace::ilp::build_partition_ilp(g, {.stages = C}, mcm_rows);
      for (std::size_t v = 0; v < n; ++v)
        for (std::size_t s = 0; s < C; ++s) p.model().fix(p.assignment(v, s), static_cast<int>(s) == f[v] ? 1.0 : 0.0);
      const auto sol = S{}.solve(p.model(), {});
      const bool feasible = sol.status == devplace::ilp::solve_status::optimal;
      CAPTURE(f[0]);
      CHECK(feasible == mcm::validate(adj, std::span<const int>(f), C).valid());
      std::size_t i = 0;
      while (i < n && static_cast<std::size_t>(++f[i]) == C) f[i++] = 0;
      if (i == n) break;
    }
  }
}

TEST_CASE_TEMPLATE("B7: search gets within a few percent of the MCM MILP optimum (N <= 30, C <= 5)", S, DEVPLACE_ILP_BACKENDS) {
  std::mt19937_64 gen(21);
  double worst = 1.0;
  int compared = 0;
  for (int t = 0; t < 4; ++t) {
    const std::size_t n = 16 + gen() % 15, C = 3 + gen() % 3;  // bench_mcm_table has the larger B7 sizes
    const auto adj = devplace::test::random_adjacency(gen, n, devplace::test::shape::chain_with_skips);
    std::vector<double> w(n);
    for (auto& x : w) x = static_cast<double>(1 + gen() % 9);
    const auto g = mcm_graph(adj, w);
    const auto p = devplace::ilp::build_partition_ilp(g, {.stages = C}, mcm_rows);
    // Sizes the backends prove in seconds (N = 60, C = 6 took CBC minutes); the limit is a guard.
    const auto sol = S{}.solve(p.model(), {.time_limit_s = 60});
    if (sol.status != devplace::ilp::solve_status::optimal) continue;
    ++compared;
    const auto stage_of = p.stages(sol);
    const std::vector<int> f(stage_of.begin(), stage_of.end());
    REQUIRE(mcm::validate(g, std::span<const int>(f), C).valid());
    const auto ring = mcm::one_way_ring(C);
    const mcm::compute_evaluator eval(g, ring);
    const double opt = eval(f).bottleneck_ms;
    CHECK(opt == doctest::Approx(sol.objective));
    mcm::softmax_policy rl(n, C);
    const auto r = mcm::search(g, ring, rl, eval, {.samples = 500, .seed = 1});
    CHECK(r.best.bottleneck_ms >= opt - 1e-9);  // the MILP is exact
    worst = std::max(worst, r.best.bottleneck_ms / opt);
    MESSAGE("N = " << n << ", C = " << C << ": MILP " << opt << " ms, search (rl, 500 samples) " << r.best.bottleneck_ms << " ms");
  }
  CHECK(compared >= 3);
  CHECK(worst <= 1.05);
  MESSAGE("worst search / optimum = " << worst << " over " << compared << " proved instances");
}
