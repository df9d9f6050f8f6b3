#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/plan_search.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "devplace/io/graph_json.hpp"
#include "devplace/map/baselines.hpp"  // evaluate, device_mapping
#include "devplace/partition/stage_cost.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif

using namespace devplace;

TEST_CASE("search_plan tries every S x R = D, keeps the fastest simulated configuration, and returns valid plans") {
  const op_graph g = io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/inception_v3_mbs32.json");
  const auto t = two_level(2, 4);  // 8 devices
  const auto r = search_plan(g, t, {.exact_product = true, .micro_batches = 4, .micro_batch_size = 32, .map_timeout_s = 5, .threads = 2});
  REQUIRE(r.status == status::feasible);
  std::set<std::pair<std::size_t, std::size_t>> configs;
  for (const auto& c : r.candidates) {
    configs.emplace(c.stages, c.replicas);
    CHECK(c.stages * c.replicas == 8);
    if (c.status != status::feasible) continue;
    CHECK(c.samples_per_s <= r.candidates[r.best].samples_per_s);
    const plan& p = c.result;
    // The plan is a valid partition mapped onto distinct devices, and its figures are its own.
    const auto e = evaluate_partition(g, p.stage_of, p.stages, {.replicas = p.replicas, .micro_batches = 4});
    CHECK(e.valid);
    std::set<std::size_t> used;
    for (const auto& row : p.device_of) {
      CHECK(row.size() == p.replicas);
      for (auto d : row) used.insert(d);
    }
    CHECK(used.size() == 8);
    CHECK(*used.rbegin() < 8);
    const auto sim = simulate(make_pipeline_model(g, p.stage_of, p.stages, p.device_of), t,
                              {.micro_batches = 4, .micro_batch_size = 32, .recompute = true});
    CHECK(sim.samples_per_s == doctest::Approx(c.samples_per_s));
    // The recorded mapping objective is the plan's mapping evaluated anew under its cost model.
    const auto sg = make_stage_graph(g, p.stage_of, p.stages, p.replicas);
    const auto ev = evaluate(sg, t, device_mapping(p.device_of.begin(), p.device_of.end()),
                             c.cost == "allreduce" ? cost_choice::allreduce : cost_choice::p2p);
    CHECK(c.mapping_ms == doctest::Approx(ev.objective_ms).epsilon(1e-12));
  }
  CHECK(configs == std::set<std::pair<std::size_t, std::size_t>>{{1, 8}, {2, 4}, {4, 2}, {8, 1}});
}

TEST_CASE("search_plan tries every S x R <= D by default") {
  const op_graph g = io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/inception_v3_mbs32.json");
  const auto r = search_plan(g, two_level(1, 4), {.micro_batch_size = 32, .map_timeout_s = 2, .threads = 2});
  std::set<std::pair<std::size_t, std::size_t>> configs;
  for (const auto& c : r.candidates) configs.emplace(c.stages, c.replicas);
  // S x R <= 4: (1,1..4), (2,1..2), (3,1), (4,1).
  CHECK(configs == std::set<std::pair<std::size_t, std::size_t>>{{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}, {2, 2}, {3, 1}, {4, 1}});
  CHECK(r.status == status::feasible);
}

TEST_CASE("search_plan with iteration_mapping: each mapping objective is its plan's simulated GPipe iteration") {
  const op_graph g = io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/inception_v3_mbs32.json");
  const auto t = two_level(2, 4);  // 8 devices
  const auto r = search_plan(g, t, {.exact_product = true, .micro_batches = 4, .micro_batch_size = 32, .map_timeout_s = 5,
                                    .threads = 2, .iteration_mapping = true});
  REQUIRE(r.status == status::feasible);
  int checked = 0;
  for (const auto& c : r.candidates) {
    if (c.status != status::feasible) continue;
    const plan& p = c.result;
    CHECK(c.cost == "iteration");
    REQUIRE(p.settings);
    CHECK(p.settings->cost == "iteration");
    CHECK_FALSE(c.mapping_optimal);
    // The objective is the closed form of the GPipe iteration with the plan's overlapped sends:
    // the simulator's when no transfer waits for its link.
    const auto free_links = simulate(make_pipeline_model(g, p.stage_of, p.stages, p.device_of), t,
                                     {.micro_batches = 4, .micro_batch_size = 32, .recompute = true, .serialize_links = false});
    CHECK(c.mapping_ms == doctest::Approx(free_links.iteration_ms).epsilon(1e-9));
    // The figures of the plan are the default (overlapped) simulation, as for every cost model.
    const auto sim = simulate(make_pipeline_model(g, p.stage_of, p.stages, p.device_of), t,
                              {.micro_batches = 4, .micro_batch_size = 32, .recompute = true});
    CHECK(sim.samples_per_s == doctest::Approx(c.samples_per_s));
    ++checked;
  }
  CHECK(checked >= 2);
}

TEST_CASE("search_plan with bucketed overlap: every candidate's figures are its plan simulated with the buckets") {
  const op_graph g = io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/inception_v3_mbs32.json");
  const auto t = two_level(2, 4);
  const double bucket = 25.0 * 1048576;
  const auto r = search_plan(g, t, {.exact_product = true, .micro_batches = 4, .micro_batch_size = 32, .map_timeout_s = 5,
                                    .threads = 2, .dp_bucket_bytes = bucket});
  REQUIRE(r.status == status::feasible);
  for (const auto& c : r.candidates) {
    if (c.status != status::feasible) continue;
    const plan& p = c.result;
    REQUIRE(p.settings);
    CHECK(p.settings->dp_bucket_bytes == bucket);
    const auto model = make_pipeline_model(g, p.stage_of, p.stages, p.device_of);
    const auto sim = simulate(model, t, {.micro_batches = 4, .micro_batch_size = 32, .recompute = true, .dp_bucket_bytes = bucket});
    CHECK(sim.samples_per_s == doctest::Approx(c.samples_per_s));
    // Never slower than the same plan with one allreduce after the backward.
    CHECK(sim.iteration_ms <= simulate(model, t, {.micro_batches = 4, .micro_batch_size = 32, .recompute = true}).iteration_ms + 1e-9);
  }
  CHECK_THROWS_WITH((void)search_plan(g, t, {.dp_bucket_bytes = -1}), doctest::Contains("dp_bucket_bytes"));
}
