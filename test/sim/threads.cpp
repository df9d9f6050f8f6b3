// The one executor: exceptions thrown in a worker reach the caller (executor, parallel_for, the
// mapper's parallel targets), and results do not depend on the number of threads (the flow, the
// plan search, the mapper's proved objective).
#include "devplace/executor.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <stdexcept>
#include <vector>

#include "devplace/io/read_graph.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif
#include "map/map_support.hpp"

using namespace devplace;

TEST_CASE("executor: the first exception of a task reaches wait(), later tasks are dropped") {
  for (unsigned threads : {1u, 2u, 8u}) {
    CAPTURE(threads);
    executor ex(threads);
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i)
      ex.submit([&, i] {
        ++ran;
        if (i == 3) throw std::runtime_error("task 3 failed");
      });
    CHECK_THROWS_WITH_AS(ex.wait(), "task 3 failed", std::runtime_error);
    CHECK(ran.load() <= 100);
    // usable again afterwards
    std::atomic<int> after{0};
    for (int i = 0; i < 10; ++i) ex.submit([&] { ++after; });
    ex.wait();
    CHECK(after.load() == 10);
  }
}

TEST_CASE("parallel_for: every index once, and a worker's exception reaches the caller at 1 and 8 threads") {
  for (unsigned threads : {1u, 8u}) {
    CAPTURE(threads);
    std::vector<int> hits(1000, 0);
    parallel_for(hits.size(), threads, [&](std::size_t i) { ++hits[i]; });
    CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
    CHECK_THROWS_WITH_AS(parallel_for(1000, threads,
                                      [&](std::size_t i) {
                                        if (i == 500) throw std::logic_error("index 500");
                                      }),
                         "index 500", std::logic_error);
  }
}

namespace {
/// A p2p model whose time throws once the search reaches a deep enough placement.
struct throwing_cost : p2p_cost {
  [[nodiscard]] std::string_view name() const noexcept { return "throwing"; }
  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    std::size_t placed = 0;
    for (auto d : dev) placed += d != unplaced;
    if (placed >= 3) throw std::runtime_error("cost model failed");
    return p2p_cost::bound(g, L, dev, v);
  }
};
}  // namespace

TEST_CASE("mapper: an exception inside a target search reaches the caller at 1 and 8 threads") {
  std::mt19937_64 rng(11);
  const auto in = test::random_stage_graph(rng, 3, 3);
  const link_costs L(test::random_topology(rng, 9, test::topo_kind::continuous));
  for (unsigned threads : {1u, 8u}) {
    CAPTURE(threads);
    CHECK_THROWS_WITH_AS(static_cast<void>(map_devices(in, L, throwing_cost{}, {.threads = threads, .timeout_s = 30})),
                         "cost model failed", std::runtime_error);
  }
}

TEST_CASE("same answer at 1, 2 and 8 threads: the flow, the plan search, the mapper's proved optimum") {
  const op_graph g = io::read_graph(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/inception_v3_mbs32.json");
  const partition_options po{.stages = 4, .cost = {.replicas = 2, .micro_batches = 4}};
  const auto f1 = parmesan_partition(g, {.partition = po, .clusters = 24, .threads = 1});
  const auto t = two_level(2, 4);
  // Every configuration explored (what the pruned search skips depends on which finished first).
  const auto p1 = search_plan(g, t, {.exact_product = true, .clusters = 16, .map_timeout_s = 60, .threads = 1, .prune = false});
  REQUIRE(p1.status == status::feasible);
  const auto sg = make_stage_graph(g, f1.stage_of, 4, 2);
  const auto m1 = map_devices(sg, t, {.threads = 1, .timeout_s = 60});
  REQUIRE(m1.status == status::optimal);
  for (unsigned threads : {2u, 8u}) {
    CAPTURE(threads);
    const auto f = parmesan_partition(g, {.partition = po, .clusters = 24, .threads = threads});
    CHECK(f.stage_of == f1.stage_of);
    CHECK(f.objective_ms == f1.objective_ms);
    const auto p = search_plan(g, t, {.exact_product = true, .clusters = 16, .map_timeout_s = 60, .threads = threads, .prune = false});
    REQUIRE(p.candidates.size() == p1.candidates.size());
    CHECK(p.best == p1.best);
    const auto pruned = search_plan(g, t, {.exact_product = true, .clusters = 16, .map_timeout_s = 60, .threads = threads});
    CHECK(pruned.best == p1.best);
    CHECK(pruned.candidates[pruned.best].result.device_of == p1.candidates[p1.best].result.device_of);
    for (std::size_t i = 0; i < p.candidates.size(); ++i) {
      CHECK(p.candidates[i].samples_per_s == p1.candidates[i].samples_per_s);
      CHECK(p.candidates[i].result.stage_of == p1.candidates[i].result.stage_of);
      CHECK(p.candidates[i].result.device_of == p1.candidates[i].result.device_of);
    }
    const auto m = map_devices(sg, t, {.threads = threads, .timeout_s = 60});
    CHECK(m.status == status::optimal);
    CHECK(m.objective_ms == m1.objective_ms);
  }
}
