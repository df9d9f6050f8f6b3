// The bound-pruned (S, R) search against the exhaustive one (`prune = false`) on every bundled
// graph and a few topologies: the same chosen plan, and every bound above what the simulator
// measures for the configuration (the exhaustive search simulates the pruned ones too).
#include "devplace/sim/plan_search.hpp"
#include "devplace/partition/stage_cost.hpp"
#include "devplace/sim/detail/plan_bounds.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "devplace/io/graph_json.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif

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
    // A pruned configuration is reported as pruned, never as infeasible; one the pruned search
    // calls infeasible is infeasible in the exhaustive search too.
    CHECK((y.status == status::pruned) == (y.outcome == config_outcome::pruned));
    if (y.status == status::infeasible) CHECK(x.status == status::infeasible);
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
  for (const auto& c : r.candidates) {
    explored += c.outcome == config_outcome::explored, pruned += c.outcome == config_outcome::pruned;
    CHECK((c.status == status::pruned) == (c.outcome == config_outcome::pruned));
    CHECK((c.status == status::feasible) == (c.outcome == config_outcome::explored));
  }
  CHECK(pruned > 0);  // the check above has something to check
  CHECK(seen.back().explored == explored);
  CHECK(seen.back().pruned == pruned);
  REQUIRE(r.status == status::feasible);
  CHECK(seen.back().best_samples_per_s == r.candidates[r.best].samples_per_s);
}

TEST_CASE("ring bound theta_R: never above the slowest link of any ring of R devices (brute force), exact on two_level") {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> U(0.5, 20.0);
  for (int it = 0; it < 30; ++it) {
    const std::size_t D = 2 + rng() % 5;
    Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(Eigen::Index(D), Eigen::Index(D));
    for (Eigen::Index a = 0; a < bw.rows(); ++a)
      for (Eigen::Index b = 0; b < bw.rows(); ++b)
        if (a != b) bw(a, b) = U(rng);  // asymmetric
    const matrix_topology t(bw);
    const auto f = detail::make_link_bounds(t);
    for (std::size_t R = 2; R <= D; ++R) {
      // every ordered choice of R distinct devices is a ring; its slowest link in ms per byte
      double best = std::numeric_limits<double>::infinity();
      std::vector<std::size_t> perm(D);
      std::iota(perm.begin(), perm.end(), std::size_t{0});
      do {
        double worst = 0;
        for (std::size_t i = 0; i < R; ++i) worst = std::max(worst, 1.0 / (bw(Eigen::Index(perm[i]), Eigen::Index(perm[(i + 1) % R])) * 1e6));
        best = std::min(best, worst);
      } while (std::next_permutation(perm.begin(), perm.end()));
      CAPTURE(R);
      CHECK(f.ring_ms_per_byte[R] <= best * (1 + 1e-12));
      CHECK(f.ring_ms_per_byte[R] > 0);
    }
  }
  const auto f = detail::make_link_bounds(two_level(2, 4, 11.0, 1.1));  // 11 GB/s inside a node, 1.1 across
  CHECK(f.ring_ms_per_byte[4] == doctest::Approx(1.0 / 11e6));
  CHECK(f.ring_ms_per_byte[5] == doctest::Approx(1.0 / 1.1e6));
}
