// The (S, R) search with Parmesan's general DP J(2) (`plan_search_options::general`): the general
// configurations' partitions against a brute-force oracle of eq. 2, the written plan read back and
// simulated to the same figures, and the bound-pruned search against the exhaustive one.
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/partition/stage_cost.hpp"
#include "devplace/sim/detail/plan_bounds.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "devplace/io/graph_json.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/sim/from_plan.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif
#include "support/checks.hpp"

using namespace devplace;

namespace {

op_graph pgen_graph(const std::string& path) { return io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/" + path); }

// J(2) by brute force: every labelling V -> {0..S-1} with no edge running backwards and no empty
// stage (its stages are then convex), times every vector of S counts >= 1 summing to D, costed
// from the operator and edge attributes here: max_s (Σ c_u + cut bytes / β̄) / R_s, +inf over the
// memory budget (eq. 14).
double pgen_brute_force(const op_graph& g, std::size_t S, std::size_t D, const stage_cost_options& o) {
  const std::size_t n = g.num_vertices();
  const auto vectors = test::replica_compositions(S, D);
  std::vector<std::size_t> sigma(n, 0);
  double best = std::numeric_limits<double>::infinity();
  for (;;) {
    bool ok = true;
    std::vector<double> c(S, 0.0), mem(S, 0.0), cut(S, 0.0);
    std::vector<std::size_t> size(S, 0);
    for (std::size_t v = 0; v < n; ++v) c[sigma[v]] += g.compute_ms(v), mem[sigma[v]] += g.memory_bytes(v), ++size[sigma[v]];
    for (std::size_t u = 0; u < n && ok; ++u)
      for (auto v : g.out_edges(u)) {
        if (sigma[u] > sigma[v]) ok = false;
        if (sigma[u] != sigma[v]) cut[sigma[u]] += g.edge_bytes(u, v), cut[sigma[v]] += g.edge_bytes(u, v);
      }
    for (std::size_t k = 0; k < S && ok; ++k) ok = size[k] > 0;
    if (ok)
      for (const auto& r : vectors) {
        double worst = 0;
        for (std::size_t k = 0; k < S; ++k) {
          const double rk = static_cast<double>(r[k]);
          if ((mem[k] + cut[k]) / static_cast<double>(o.micro_batches) > rk * o.device_memory_bytes)
            worst = std::numeric_limits<double>::infinity();
          worst = std::max(worst, (c[k] + cut[k] / (o.bandwidth_gbps * 1e6)) / rk);
        }
        best = std::min(best, worst);
      }
    std::size_t k = 0;
    while (k < n && sigma[k] == S - 1) sigma[k++] = 0;
    if (k == n) break;
    ++sigma[k];
  }
  return best;
}

}  // namespace

TEST_CASE("search_plan --general: every J(2) configuration's partition is the brute-force optimum, the plan round-trips") {
  // test/cli/data/unequal6.json (the CLI test's graph): one heavy operator without parameters, then
  // light ones holding 3.2 GB of parameters: giving the heavy stage more replicas than the light
  // one avoids the allreduce of the parameters and halves the heavy stage.
  const op_graph g = pgen_graph("test/cli/data/unequal6.json");
  const matrix_topology t = two_level(1, 4);
  // Exhaustive (no pruning): every configuration is simulated, whatever the threads' timing.
  plan_search_options o{.micro_batches = 8, .micro_batch_size = 1, .clusters = 32, .map_timeout_s = 5, .threads = 2,
                        .prune = false, .general = true};
  const auto r = search_plan(g, t, o);
  REQUIRE(r.status == status::feasible);
  const stage_cost_options cost{.micro_batches = o.micro_batches, .device_memory_bytes = t.device_memory_bytes(0),
                                .bandwidth_gbps = o.bandwidth_gbps};
  double best_equal = 0, best_general = 0;
  std::size_t generals = 0;
  for (const auto& c : r.candidates) {
    CAPTURE(c.stages);
    CAPTURE(c.general);
    if (!c.general) {
      if (c.status == status::feasible) best_equal = std::max(best_equal, c.samples_per_s);
      continue;
    }
    ++generals;
    CHECK(c.devices == 4);
    REQUIRE(c.status == status::feasible);
    best_general = std::max(best_general, c.samples_per_s);
    // The graph has at most K operators: the DP ran on it directly and proved its optimum.
    REQUIRE(c.result.partition);
    CHECK(c.result.partition->optimal);
    CHECK(c.result.partition->method == "general-dp");
    CHECK(c.partition_ms == doctest::Approx(pgen_brute_force(g, c.stages, 4, cost)).epsilon(1e-12));
    std::size_t sum = 0;
    for (auto x : c.stage_replicas) sum += x;
    CHECK(sum == 4);
    CHECK(c.replicas == *std::max_element(c.stage_replicas.begin(), c.stage_replicas.end()));
  }
  CHECK(generals == 2);  // S = 2, 3 of D = 4
  // The chosen plan is a general one here, and at least as fast as every equal-count plan.
  const auto& best = r.candidates[r.best];
  CHECK(best.general);
  CHECK(best.samples_per_s == best_general);
  CHECK(best.samples_per_s >= best_equal);
  MESSAGE("unequal6 on 4 devices: best equal-count " << best_equal << " samples/s, J(2) " << best.samples_per_s);
  const plan& p = best.result;
  REQUIRE_FALSE(p.stage_replicas.empty());
  CHECK(p.stage_replicas == best.stage_replicas);
  for (std::size_t s = 0; s < p.stages; ++s) CHECK(p.device_of[s].size() == p.stage_replicas[s]);
  // Written and read back (checked against the graph), the plan simulates to the same figures.
  const auto dir = std::filesystem::temp_directory_path() / "devplace_test_plan_general";
  std::filesystem::create_directories(dir);
  io::write_plan_json(p, dir / "p.json");
  const plan q = io::read_plan_json(dir / "p.json", &g);
  std::filesystem::remove_all(dir);
  CHECK(q.stage_replicas == p.stage_replicas);
  CHECK(q.device_of == p.device_of);
  const auto sim = simulate(make_pipeline_model(g, q.stage_of, q.stages, q.device_of), t, simulation_options_of(q));
  CHECK(sim.samples_per_s == doctest::Approx(best.samples_per_s).epsilon(1e-12));
  CHECK(sim.iteration_ms == doctest::Approx(best.iteration_ms).epsilon(1e-12));
}

TEST_CASE("search_plan --general: the pruned search chooses the exhaustive search's plan, bounds hold") {
  const op_graph small = pgen_graph("test/cli/data/unequal6.json");
  const op_graph big = pgen_graph("examples/data/inception_v3_mbs32.json");
  struct pgen_case {
    const op_graph* g;
    matrix_topology t;
    plan_search_options o;
  };
  const pgen_case cases[] = {
      {&small, two_level(1, 4), {.micro_batches = 8, .micro_batch_size = 1, .map_timeout_s = 2, .threads = 2, .general = true}},
      {&small, two_level(2, 3), {.exact_product = true, .micro_batches = 4, .map_timeout_s = 2, .threads = 2, .general = true}},
      {&big, two_level(2, 3), {.exact_product = true, .micro_batches = 4, .clusters = 16, .map_timeout_s = 2, .threads = 2,
                               .general = true}},
  };
  for (const auto& k : cases) {
    plan_search_options o = k.o;
    o.prune = false;
    const auto all = search_plan(*k.g, k.t, o);
    o.prune = true;
    const auto pruned = search_plan(*k.g, k.t, o);
    CAPTURE(k.g->name());
    REQUIRE(all.status == status::feasible);
    REQUIRE(pruned.status == status::feasible);
    CHECK(all.best == pruned.best);
    const auto& a = all.candidates[all.best];
    const auto& b = pruned.candidates[pruned.best];
    CHECK(a.result.stage_of == b.result.stage_of);
    CHECK(a.result.stage_replicas == b.result.stage_replicas);
    CHECK(a.result.device_of == b.result.device_of);
    CHECK(a.samples_per_s == b.samples_per_s);
    std::size_t general_feasible = 0;
    for (const auto& x : all.candidates) general_feasible += x.general && x.status == status::feasible;
    CHECK(general_feasible >= 1);  // the J(2) path ran (on the graph, or on a quotient under the cap)
    for (std::size_t i = 0; i < all.candidates.size(); ++i) {
      const auto& x = all.candidates[i];
      const auto& y = pruned.candidates[i];
      CAPTURE(x.stages);
      CAPTURE(x.general);
      if (x.status == status::feasible) {
        CHECK(x.samples_per_s <= x.bound_samples_per_s * (1 + 1e-9));
        CHECK(x.samples_per_s <= y.bound_samples_per_s * (1 + 1e-9));
      }
      if (y.outcome == config_outcome::pruned) CHECK(y.bound_samples_per_s < b.samples_per_s);
    }
  }
}

TEST_CASE("search_plan --general: a graph over the down-set cap is skipped with its reason, the equal-count plan stays") {
  const op_graph g = pgen_graph("test/cli/data/unequal6.json");  // a chain of 6: 7 down-sets
  plan_search_options o{.micro_batches = 8, .micro_batch_size = 1, .threads = 1, .prune = false, .general = true,
                        .general_max_downsets = 6};
  const auto r = search_plan(g, two_level(1, 4), o);
  REQUIRE(r.status == status::feasible);
  std::size_t generals = 0;
  for (const auto& c : r.candidates) {
    if (!c.general) continue;
    ++generals;
    CHECK(c.outcome == config_outcome::infeasible);
    CHECK(c.reason == "general DP skipped (the graph: over 6 down-sets)");
  }
  CHECK(generals == 2);
  CHECK_FALSE(r.candidates[r.best].general);
  o.general_max_downsets = 7;
  const auto r7 = search_plan(g, two_level(1, 4), o);
  CHECK(r7.candidates[r7.best].general);
}
