// The bound-pruned (S, R) search against the exhaustive one (`prune = false`) on every bundled
// graph and a few topologies: the same chosen plan, and every bound above what the simulator
// measures for the configuration (the exhaustive search simulates the pruned ones too).
#include "devplace/sim/plan_search.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "devplace/io/graph_json.hpp"
#include "devplace/topology/generators.hpp"

using namespace devplace;

namespace {

op_graph bundled(const std::string& name) {
  return io::read_graph_json(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/" + name + ".json");
}

void check_same_plan_as_exhaustive(const op_graph& g, const matrix_topology& t, plan_search_options o) {
  o.prune = false;
  const auto all = search_plan(g, t, o);
  o.prune = true;
  const auto pruned = search_plan(g, t, o);
  INFO(g.name() << " on " << t.name());
  REQUIRE(all.status == pruned.status);
  REQUIRE(all.candidates.size() == pruned.candidates.size());
  if (all.status != status::feasible) return;
  const auto& a = all.candidates[all.best];
  const auto& b = pruned.candidates[pruned.best];
  CHECK(all.best == pruned.best);
  CHECK(a.result.stage_of == b.result.stage_of);
  CHECK(a.result.device_of == b.result.device_of);
  CHECK(a.samples_per_s == b.samples_per_s);
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < all.candidates.size(); ++i) {
    const auto& x = all.candidates[i];
    const auto& y = pruned.candidates[i];
    CAPTURE(x.stages);
    CAPTURE(x.replicas);
    CHECK(x.outcome != config_outcome::pruned);
    // The bound is proved: the exhaustive search's simulation never beats it.
    if (x.status == status::feasible) {
      CHECK(x.samples_per_s <= x.bound_samples_per_s * (1 + 1e-9));
      CHECK(x.samples_per_s <= y.bound_samples_per_s * (1 + 1e-9));
    }
    if (y.outcome == config_outcome::pruned) {
      ++skipped;
      CHECK(y.bound_samples_per_s < b.samples_per_s);
    }
  }
  MESSAGE(g.name() << " on " << t.name() << ": " << skipped << " of " << all.candidates.size() << " pruned");
}

}  // namespace

TEST_CASE("pruned (S, R) search = exhaustive search on every bundled graph, S x R = D") {
  const char* graphs[] = {"resnet152_mbs64", "bert_large_mbs4", "swin_large_mbs32", "gpt2_medium_mbs8", "inception_v3_mbs32"};
  const matrix_topology topologies[] = {two_level(2, 4), torus2d(2, 4)};
  for (const char* name : graphs) {
    const op_graph g = bundled(name);
    for (const auto& t : topologies)
      check_same_plan_as_exhaustive(g, t, {.exact_product = true, .micro_batches = 4, .clusters = 16, .map_timeout_s = 2,
                                           .threads = 2});
  }
}

TEST_CASE("pruned (S, R) search = exhaustive search with every S x R <= D, and the combined cost model") {
  const op_graph g = bundled("gpt2_medium_mbs8");
  check_same_plan_as_exhaustive(g, two_level(1, 4), {.micro_batches = 4, .clusters = 16, .map_timeout_s = 2, .threads = 2});
  check_same_plan_as_exhaustive(g, two_level(2, 2),
                                {.micro_batches = 8, .clusters = 16, .map_timeout_s = 2, .threads = 1, .cost = cost_choice::combined});
}

TEST_CASE("search_plan reports progress once per configuration, counts consistent") {
  const op_graph g = bundled("inception_v3_mbs32");
  std::vector<plan_search_progress> seen;
  plan_search_options o{.exact_product = true, .micro_batches = 4, .clusters = 16, .map_timeout_s = 2, .threads = 2};
  o.progress = [&](const plan_search_progress& p) { seen.push_back(p); };
  const auto r = search_plan(g, two_level(2, 4), o);
  REQUIRE(seen.size() == r.candidates.size());
  for (std::size_t k = 0; k < seen.size(); ++k) {
    CHECK(seen[k].done == k + 1);
    CHECK(seen[k].total == r.candidates.size());
    CHECK(seen[k].explored + seen[k].pruned <= seen[k].done);
    if (k) CHECK(seen[k].best_samples_per_s >= seen[k - 1].best_samples_per_s);
  }
  std::size_t explored = 0, pruned = 0;
  for (const auto& c : r.candidates) explored += c.outcome == config_outcome::explored, pruned += c.outcome == config_outcome::pruned;
  CHECK(seen.back().explored == explored);
  CHECK(seen.back().pruned == pruned);
  REQUIRE(r.status == status::feasible);
  CHECK(seen.back().best_samples_per_s == r.candidates[r.best].samples_per_s);
}
