// The PHAZE generator's shared evaluation cache (phaze/evaluation_cache.hpp) changes no result:
// on PHAZE's cores.json × BERT-Large (read from ../shared; skipped when missing), the first 40
// points and 60 seeded-random ones, evaluated in order by one prepared space (one cache for
// all), give the JSON lines (time fields aside) that a fresh one-point space gives for each (a
// cache of its own, as a fresh process per point); the same for 20 points with the per-layer ILP
// when GLPK is there. K = 64 keeps the placement DP (linear in K) short; the keys do not depend
// on K being small (docs/sweep.md gives the same check at K = 1,024 through the program).
// evaluate_architecture with a cache equals it without, field by field, while the cache is hit; a
// run of configurations differing only in the global buffer is one group.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "devplace/io/read_graph.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif
#include "devplace/phaze/cores_json.hpp"
#include "devplace/phaze/evaluation_cache.hpp"
#include "devplace/phaze/workload.hpp"
#include "devplace/sweep/registry.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sweep/registry.ipp"  // every generator's definition (compiled mode: devplace::core)
#endif
#include "devplace/sweep/results.hpp"
#include "support/skip.hpp"
#ifdef DEVPLACE_HAS_GLPK
#include "devplace/ilp/backends/glpk.hpp"
#endif

using namespace devplace;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path cores_file = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "phaze" / "Estimator" / "arch_configs" / "cores.json";
const fs::path bert = fs::path(DEVPLACE_SOURCE_DIR) / "examples" / "data" / "bert_large_mbs4.json";

fs::path scratch(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("devplace_test_sweep_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// A PHAZE space file over `what` (a "cores" file or "configurations") × BERT-Large at K = 64.
fs::path space_file(const fs::path& dir, const std::string& name, const json& what, double ilp_s) {
  json space{{"graphs", {bert.string()}}, {"devices", {64}}, {"batch", 4096}};
  space.update(what);
  if (ilp_s > 0) space["ilp_time_limit_s"] = ilp_s;
  const auto p = dir / name;
  std::ofstream(p) << json{{"format", "devplace.sweep.space/1"}, {"generator", "phaze"}, {"space", space}}.dump();
  return p;
}

/// A line without its time fields and its configuration index (which differ between spaces).
json comparable(json line) {
  line.erase("wall_time_s");
  line.erase("cpu_time_s");
  line.erase("index");
  line["inputs"].erase("configuration");
  return line;
}

/// The first `first` indices and `random` distinct seeded-random ones above them, ascending.
std::vector<std::size_t> sample(std::size_t first, std::size_t random, std::size_t n, unsigned seed) {
  std::set<std::size_t> s;
  for (std::size_t i = 0; i < first; ++i) s.insert(i);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(first, n - 1);
  while (s.size() < first + random) s.insert(pick(rng));
  return {s.begin(), s.end()};
}

/// Each sampled point of the whole space, evaluated in order by one prepared space, equals the
/// point of a one-point space holding its configuration alone.
void check_against_fresh(const std::vector<std::size_t>& points, const sweep::prepare_context& ctx, double ilp_s,
                         const std::string& name) {
  const auto dir = scratch(name);
  const auto all = json::parse(std::ifstream(cores_file));
  const auto whole = sweep::prepare(sweep::read_space_file(space_file(dir, "whole.json", {{"cores", cores_file.string()}}, ilp_s)), ctx);
  REQUIRE(whole.size == all.size());
  std::size_t optimal = 0;
  for (auto i : points) {
    const auto shared = comparable(sweep::evaluate_line(whole, i));
    const auto one = space_file(dir, "one.json", {{"configurations", json::array({all[i]})}}, ilp_s);
    const auto fresh = sweep::prepare(sweep::read_space_file(one), ctx);
    REQUIRE(fresh.size == 1);
    CHECK_MESSAGE(shared == comparable(sweep::evaluate_line(fresh, 0)), "point ", i);
    optimal += shared["status"] == "optimal";
    if (ilp_s > 0) CHECK(shared["result"].contains("proved_passes"));
  }
  CHECK(optimal == points.size());  // every configuration fits: the plans are compared, not empty results
}

}  // namespace

TEST_CASE("sweep: phaze lines with the shared cache equal a fresh space per point (first 40, 60 random)") {
  if (!test::require_path(cores_file)) return;
  check_against_fresh(sample(40, 60, 29360, 20261128), {}, 0, "phaze_cache");
}

#ifdef DEVPLACE_HAS_GLPK
TEST_CASE("sweep: phaze lines with the per-layer ILP and the shared cache equal a fresh space per point") {
  if (!test::require_path(cores_file)) return;
  sweep::prepare_context ctx;
  ctx.ilp = [](const ilp::model& m, const ilp::solve_options& o) { return ilp::glpk_solver{}.solve(m, o); };
  // A limit no pass reaches here (a pass stopped by it would be timing-dependent).
  check_against_fresh(sample(14, 6, 29360, 7), ctx, 60, "phaze_cache_ilp");
}
#endif

TEST_CASE("sweep: evaluate_architecture with an evaluation cache equals it without, and hits") {
  if (!test::require_path(cores_file)) return;
  const auto configs = phaze::read_cores_json(cores_file);
  const auto g = io::read_graph(bert);
  const auto split = phaze::workload_layers(g, 24);
  phaze::architecture_options o;
  o.placement.devices = 256;
  o.placement.global_batch = 1024;
  phaze::evaluation_cache cache;
  auto with = o;
  with.workload.cache = &cache;
  for (std::size_t c = 0; c < 6; ++c) {
    const auto a = phaze::evaluate_architecture(g, split, configs[c], o);
    const auto b = phaze::evaluate_architecture(g, split, configs[c], with);
    CHECK(a.samples_per_s == b.samples_per_s);
    CHECK(a.hbm_bytes == b.hbm_bytes);
    CHECK(a.plan.time_per_batch_ms == b.plan.time_per_batch_ms);
    CHECK(a.plan.data_parallel == b.plan.data_parallel);
    CHECK(a.plan.micro_batch == b.plan.micro_batch);
    CHECK(a.plan.recompute == b.plan.recompute);
    REQUIRE(a.plan.stages.size() == b.plan.stages.size());
    for (std::size_t s = 0; s < a.plan.stages.size(); ++s) {
      CHECK(a.plan.stages[s].layers == b.plan.stages[s].layers);
      CHECK(a.plan.stages[s].latency_ms == b.plan.stages[s].latency_ms);
    }
    REQUIRE(a.report.layers.size() == b.report.layers.size());
    for (std::size_t l = 0; l < a.report.layers.size(); ++l) {
      CHECK(a.report.layers[l].forward.makespan_ms == b.report.layers[l].forward.makespan_ms);
      CHECK(a.report.layers[l].backward.makespan_ms == b.report.layers[l].backward.makespan_ms);
    }
  }
  const auto n = cache.counts();
  // The first 6 configurations are 2 runs of equal cores and arrays (5 and 1 global buffers):
  // every configuration after the first of its run hits, once per HBM size (runs whose layer
  // graphs come out equal share too). The breadth is in the test above (100 whole lines).
  CHECK(n.placement_misses + n.placement_hits == 6 * 3);
  CHECK(n.placement_misses <= 2 * 3);
  CHECK(n.placement_misses >= 3);
  CHECK(n.schedule_hits > 0);
}

TEST_CASE("sweep: a phaze group is a run of configurations with equal cores and arrays") {
  const auto dir = scratch("phaze_groups");
  auto cfg = [](int tc, int vc, int x, int y, double glb) {
    return json{{"num_tc", tc}, {"num_vc", vc}, {"width", x}, {"depth", y}, {"GLB_Buffer", glb}, {"area", 1.0}};
  };
  const json configs = json::array({cfg(2, 2, 8, 8, 1 << 21), cfg(2, 2, 8, 8, 1 << 22), cfg(2, 2, 8, 16, 1 << 21),
                                    cfg(2, 2, 8, 8, 1 << 21), cfg(4, 2, 8, 8, 1 << 21), cfg(4, 2, 8, 8, 1 << 23)});
  json space{{"configurations", configs}, {"graphs", {bert.string()}}, {"devices", {64, 128}}};
  const auto p = dir / "s.json";
  std::ofstream(p) << json{{"format", "devplace.sweep.space/1"}, {"generator", "phaze"}, {"space", space}}.dump();
  const auto s = sweep::prepare(sweep::read_space_file(p));
  REQUIRE(s.size == 12);
  REQUIRE(static_cast<bool>(s.group));
  // By hand: runs {0, 1}, {2}, {3}, {4, 5} for each K; the second K's runs are other groups.
  const std::vector<int> run{0, 0, 1, 2, 3, 3};
  for (std::size_t i = 0; i < 12; ++i)
    for (std::size_t j = 0; j < 12; ++j) {
      const bool same = i / 6 == j / 6 && run[i % 6] == run[j % 6];
      CHECK_MESSAGE((s.group(i) == s.group(j)) == same, i, " ", j);
    }
}
