// Topology, evaluators, policies and the search loop.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "archetypes/mcm_archetypes.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/mcm/search.hpp"
#include "support/random_dag.hpp"

namespace mcm = devplace::mcm;
using devplace::op_graph;
using devplace::op_graph_builder;

namespace {
/// chain a -> b -> c -> d plus a -> c, with fwd times 1, 2, 3, 4 and edge bytes 1e6.
op_graph small_graph(double param = 0) {
  op_graph_builder b;
  for (int i = 0; i < 4; ++i) b.add_op({.id = i, .fwd_ms = double(i + 1), .fwd_mem_bytes = 10, .param_bytes = param});
  b.add_edge(0, 1, 1e6);
  b.add_edge(1, 2, 2e6);
  b.add_edge(2, 3, 3e6);
  b.add_edge(0, 2, 4e6);
  return std::move(b).build();
}
}  // namespace

TEST_CASE("mcm: one-way ring and partly connected topologies route along directed links") {
  const auto ring = mcm::one_way_ring(4, 1000, 10);
  CHECK(ring.chips() == 4);
  CHECK(ring.reachable(0, 3));
  CHECK(!ring.reachable(3, 0));
  CHECK(ring.route(1, 3).size() == 2);
  CHECK(ring.route(1, 3)[1] == std::pair<std::size_t, std::size_t>{2, 3});
  CHECK(ring.route(3, 1).empty());
  // partly connected: 0 -> 2 direct, 1 isolated
  mcm::chip_topology t({{0, 0, 5}, {0, 0, 0}, {0, 0, 0}}, 1);
  CHECK(t.route(0, 2).size() == 1);
  CHECK(!t.reachable(0, 1));
  CHECK_THROWS_AS(mcm::chip_topology({{0, 1}, {1}}, 1), std::invalid_argument);
  CHECK_THROWS_AS(mcm::chip_topology({{1}}, 1), std::invalid_argument);
  CHECK_THROWS_AS(mcm::chip_topology({{0, -1}, {0, 0}}, 1), std::invalid_argument);
  CHECK_THROWS_AS(mcm::one_way_ring(0), std::invalid_argument);
}

TEST_CASE("mcm: compute and ring evaluators by hand") {
  const auto g = small_graph();
  const auto ring = mcm::one_way_ring(3, 1e9, 1);  // 1 GB/s = 1e6 bytes per ms
  const mcm::compute_evaluator comp(g, ring);
  const mcm::ring_evaluator rg(g, ring);
  const std::vector<int> f{0, 0, 0, 1};  // loads 6, 4
  auto e = comp(f);
  CHECK(e.compute_ms == 6);
  CHECK(e.throughput == doctest::Approx(1.0 / 6));
  e = rg(f);
  CHECK(e.link_ms == doctest::Approx(3.0));  // 3e6 bytes over link 0 -> 1
  CHECK(e.bottleneck_ms == 6);
  const std::vector<int> f2{0, 1, 1, 2};  // 0 -> {1, 2} sends max(1e6, 4e6) once to chip 1; 2 -> 3 sends 3e6
  e = rg(f2);
  CHECK(e.compute_ms == 5);
  CHECK(e.link_ms == doctest::Approx(4.0));  // link 0->1: 4e6; link 1->2: 3e6
  // chips spanning two links: traffic 0 -> 2 crosses both
  const std::vector<int> f3{0, 0, 2, 2};
  CHECK(rg(f3).link_ms == doctest::Approx(6.0));  // 4e6 from op 0 and 2e6 from op 1 cross both links
  CHECK_THROWS_AS((void)comp(std::vector<int>{0, 0}), std::invalid_argument);
  CHECK_THROWS_AS((void)comp(std::vector<int>{0, 0, 0, 5}), std::invalid_argument);
}

TEST_CASE("mcm: memory check H, static and liveness") {
  const auto g = small_graph(100);
  const std::vector<int> f{0, 0, 1, 1};
  // static: chip 1 holds 200 params + 10 fwd mem + received max(2e6, 4e6) from op 1 and op 0 = 2e6 + 4e6
  mcm::compute_evaluator st(g, mcm::one_way_ring(2, 6.1e6, 1), {.memory = mcm::memory_check::static_sum});
  auto e = st(f);
  CHECK(e.peak_bytes == doctest::Approx(200 + 10 + 6e6));
  CHECK(e.valid);
  mcm::compute_evaluator tight(g, mcm::one_way_ring(2, 6e6, 1), {.memory = mcm::memory_check::static_sum});
  e = tight(f);
  CHECK(!e.valid);
  CHECK(e.throughput == 0);
  // liveness never exceeds static plus the largest produced tensor, and is at least the weights
  mcm::compute_evaluator lv(g, mcm::one_way_ring(2, 1e12, 1), {.memory = mcm::memory_check::liveness});
  e = lv(f);
  CHECK(e.peak_bytes >= 200);
  CHECK(e.peak_bytes <= 200 + 10 + 6e6 + 4e6);
}

TEST_CASE("mcm: search with the archetypes, Random, SA, PPO and cross-entropy returns valid partitions") {
  std::mt19937_64 gen(3);
  for (int t = 0; t < 6; ++t) {
    const auto adj = devplace::test::random_adjacency(gen, 10 + gen() % 20, devplace::test::all_shapes[t % 5]);
    const auto g = devplace::test::random_op_graph(gen, adj);
    const std::size_t C = 2 + gen() % 6, N = g.num_vertices();
    const auto ring = mcm::one_way_ring(C);
    const mcm::compute_evaluator eval(g, ring);
    devplace::test::policy_archetype arch;
    const auto ra = mcm::search(g, ring, arch, devplace::test::evaluator_archetype{}, {.samples = 9, .seed = 1});
    CHECK(arch.updates == 5);
    CHECK(ra.samples == 9);
    CHECK(mcm::validate(g, std::span<const int>(ra.chip_of), C).valid());
    mcm::uniform_policy rnd;
    mcm::annealing_policy sa(N, C, {.budget = 40});
    mcm::softmax_policy rl(N, C);
    mcm::cross_entropy_policy ce(N, C);
    const mcm::search_options o{.samples = 40, .seed = 7, .thresholds = {1.0, 100.0}};
    for (const auto& r : {mcm::search(g, ring, rnd, eval, o), mcm::search(g, ring, sa, eval, o),
                          mcm::search(g, ring, rl, eval, o), mcm::search(g, ring, ce, eval, o)}) {
      CHECK(r.samples == 40);
      CHECK(r.curve.size() == 40);
      CHECK(mcm::validate(g, std::span<const int>(r.chip_of), C).valid());
      CHECK(r.best.throughput == doctest::Approx(eval(r.chip_of).throughput));
      for (std::size_t k = 1; k < r.curve.size(); ++k) CHECK(r.curve[k].best_throughput >= r.curve[k - 1].best_throughput);
      CHECK(r.samples_to_threshold[1] == 0);
      CHECK(r.fallbacks == 0);
    }
  }
}

TEST_CASE("mcm: search is deterministic for a seed and the PPO policy learns on a chain") {
  op_graph_builder b;
  for (int i = 0; i < 24; ++i) b.add_op({.id = i, .fwd_ms = 1.0 + (i % 3)});
  for (int i = 0; i + 1 < 24; ++i) b.add_edge(i, i + 1, 1e3);
  const auto g = std::move(b).build();
  const auto ring = mcm::one_way_ring(6);
  const mcm::compute_evaluator eval(g, ring);
  mcm::softmax_policy a(24, 6), c(24, 6);
  const auto ra = mcm::search(g, ring, a, eval, {.samples = 200, .seed = 5});
  const auto rc = mcm::search(g, ring, c, eval, {.samples = 200, .seed = 5});
  CHECK(ra.chip_of == rc.chip_of);
  CHECK(a.logits() == c.logits());
  CHECK(ra.improvement() > 0.5);
  // the policy moved: some row is no longer uniform
  CHECK((a.probabilities().rowwise().maxCoeff().array() > 1.0 / 6 + 0.05).any());
  mcm::uniform_policy u;
  CHECK_THROWS_AS((void)mcm::search(g, ring, u, eval, {.samples = 0}), std::invalid_argument);
  CHECK_THROWS_AS(mcm::softmax_policy(24, 6, {.minibatches = 30}), std::invalid_argument);
  CHECK_THROWS_AS(mcm::annealing_policy(24, 6, {.rho = 0}), std::invalid_argument);
}
