#include "devplace/refine/boundary_refine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace devplace;

namespace {

op_graph random_graph(std::mt19937_64& rng, std::size_t n, int edge_pct) {
  op_graph_builder b;
  for (std::size_t v = 0; v < n; ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = double(1 + rng() % 5), .bwd_ms = double(rng() % 7),
              .fwd_mem_bytes = double(rng() % 50), .bwd_mem_bytes = double(rng() % 50)});
  for (std::size_t u = 0; u < n; ++u)
    for (std::size_t v = u + 1; v < n; ++v)
      if (static_cast<int>(rng() % 100) < edge_pct) b.add_edge(u, v, double(1 + rng() % 9) * 1e6);
  return std::move(b).build();
}

// Oracle for the objective: stage times recomputed from scratch by the definition of eq. 3.
double objective_from_scratch(const op_graph& g, const std::vector<std::size_t>& sigma, std::size_t S,
                              std::size_t R, double bw) {
  std::vector<double> t(S, 0.0);
  for (std::size_t v = 0; v < g.num_vertices(); ++v) t[sigma[v]] += g.compute_ms(v);
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (auto w : g.out_edges(u))
      if (sigma[u] != sigma[w]) {
        t[sigma[u]] += g.edge_bytes(u, w) / (bw * 1e6);
        t[sigma[w]] += g.edge_bytes(u, w) / (bw * 1e6);
      }
  return *std::max_element(t.begin(), t.end()) / double(R);
}

double memory_from_scratch(const op_graph& g, const std::vector<std::size_t>& sigma, std::size_t s, std::size_t MB) {
  double m = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    if (sigma[v] == s) {
      m += g.memory_bytes(v);
      for (auto w : g.out_edges(v)) if (sigma[w] != s) m += g.edge_bytes(v, w);
      for (auto u : g.in_edges(v)) if (sigma[u] != s) m += g.edge_bytes(u, v);
    }
  return m / double(MB);
}

// A random labelling with S non-empty stages, monotone along edges: cut a topological order
// (vertex ids are one here) at S-1 random places.
std::vector<std::size_t> random_monotone(std::mt19937_64& rng, std::size_t n, std::size_t S) {
  std::vector<std::size_t> cuts;
  for (std::size_t k = 1; k < n; ++k) cuts.push_back(k);
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(S - 1);
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::size_t> sigma(n);
  std::size_t s = 0;
  for (std::size_t v = 0; v < n; ++v) {
    while (s < cuts.size() && v >= cuts[s]) ++s;
    sigma[v] = s;
  }
  return sigma;
}

}  // namespace

TEST_CASE("boundary_refine keeps labels monotone, stages non-empty and memory feasible, and never worsens the objective") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 150; ++trial) {
    const std::size_t n = 6 + rng() % 40;
    const op_graph g = random_graph(rng, n, 5 + static_cast<int>(rng() % 20));
    const std::size_t S = 2 + rng() % 4, R = 1 + rng() % 3, MB = 1 + rng() % 4;
    const auto init = random_monotone(rng, n, S);
    std::vector<std::size_t> delta(n);
    for (auto& d : delta) d = rng() % 4;
    double mem_limit = std::numeric_limits<double>::infinity();
    if (trial % 2) {  // a limit the initial labelling meets with little slack
      double worst = 0;
      for (std::size_t s = 0; s < S; ++s) worst = std::max(worst, memory_from_scratch(g, init, s, MB));
      mem_limit = worst * 1.05 / double(R);
    }
    for (auto policy : {refine_policy::paper, refine_policy::objective}) {
      const boundary_refine_options opt{.stages = S,
                                        .cost = {.replicas = R, .micro_batches = MB, .device_memory_bytes = mem_limit,
                                                 .bandwidth_gbps = 2.0},
                                        .policy = policy};
      const auto r = boundary_refine(g, init, opt, delta);
      CAPTURE(trial);
      REQUIRE(r.status == status::feasible);
      REQUIRE(r.stage_of.size() == n);
      for (std::size_t u = 0; u < n; ++u)
        for (auto w : g.out_edges(u)) CHECK(r.stage_of[u] <= r.stage_of[w]);
      for (std::size_t s = 0; s < S; ++s) {
        CHECK(std::count(r.stage_of.begin(), r.stage_of.end(), s) > 0);
        CHECK(memory_from_scratch(g, r.stage_of, s, MB) <= double(R) * mem_limit * (1 + 1e-9));
      }
      CHECK(r.initial_objective_ms == doctest::Approx(objective_from_scratch(g, init, S, R, 2.0)));
      CHECK(r.objective_ms == doctest::Approx(objective_from_scratch(g, r.stage_of, S, R, 2.0)));
      CHECK(r.objective_ms <= r.initial_objective_ms + 1e-12);
      CHECK(r.moves <= 100);
    }
  }
}

TEST_CASE("boundary_refine (objective policy) balances a hand-computed chain") {
  // Chain 0 -> 1 -> 2 -> 3 with compute 1, 1, 1, 5 and no communication. Start {0}, {1, 2, 3}:
  // objective 7. Moving 1 then 2 into stage 0 gives {0, 1, 2}, {3}: max(3, 5) = 5, the optimum.
  op_graph_builder b;
  const double c[4] = {1, 1, 1, 5};
  for (int i = 0; i < 4; ++i) b.add_op({.id = i, .fwd_ms = c[i]});
  for (std::size_t i = 0; i + 1 < 4; ++i) b.add_edge(i, i + 1, 0);
  const op_graph g = std::move(b).build();
  const auto r = boundary_refine(g, {0, 1, 1, 1}, {.stages = 2, .policy = refine_policy::objective});
  CHECK(r.initial_objective_ms == 7.0);
  CHECK(r.objective_ms == 5.0);
  CHECK(r.stage_of == std::vector<std::size_t>{0, 0, 0, 1});
  CHECK(r.moves == 2);
}

TEST_CASE("boundary_refine (paper policy) moves the cut next to a reconverging vertex") {
  // 0 -> 1 -> 2 -> 3, δ = (2, 1, 0, 1): vertex 2 is the reconverging vertex. Stages {0}, {1,2,3}:
  // the boundary's smallest δ is min(δ0, δ1) = 1. Moving 1 to stage 0 makes it min(δ1, δ2) = 0.
  op_graph_builder b;
  for (int i = 0; i < 4; ++i) b.add_op({.id = i, .fwd_ms = 1});
  for (std::size_t i = 0; i + 1 < 4; ++i) b.add_edge(i, i + 1, 1e6);
  const op_graph g = std::move(b).build();
  const std::vector<std::size_t> delta{2, 1, 0, 1};
  const auto r = boundary_refine(g, {0, 1, 1, 1}, {.stages = 2, .policy = refine_policy::paper}, delta);
  CHECK(r.moves >= 1);
  CHECK(r.stage_of == std::vector<std::size_t>{0, 0, 1, 1});  // also the better objective here
}

TEST_CASE("boundary_refine: a bad call is an argument error naming the argument, never a status") {
  op_graph_builder b;
  for (int i = 0; i < 2; ++i) b.add_op({.id = i, .fwd_ms = 1});
  b.add_edge(0, 1, 0);
  const op_graph g = std::move(b).build();
  const boundary_refine_options objective{.stages = 2, .policy = refine_policy::objective};
  CHECK_THROWS_WITH_AS(boundary_refine(g, {1, 0}, objective), doctest::Contains("not monotone: edge 0 -> 1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(boundary_refine(g, {0}, objective), doctest::Contains("stage_of has 1 entries for 2 operators"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(boundary_refine(g, {0, 2}, objective), doctest::Contains("stage_of[1] = 2"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(boundary_refine(g, {0, 0}, {.stages = 0, .policy = refine_policy::objective}),
                       doctest::Contains("stages must be >= 1"), std::invalid_argument);
  // The default policy is the paper's, which needs delta.
  CHECK_THROWS_WITH_AS(boundary_refine(g, {0, 1}, {.stages = 2}), doctest::Contains("needs delta"), std::invalid_argument);
  // The same calls made right run.
  const std::vector<std::size_t> delta{0, 0};
  CHECK(boundary_refine(g, {0, 1}, {.stages = 2}, delta).status == status::feasible);
  CHECK(boundary_refine(g, {0, 1}, objective).objective_ms == doctest::Approx(1.0));
}

TEST_CASE("the incrementally kept Phi of the paper policy equals Phi recomputed from scratch after every move") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 2 + rng() % 40;
    const op_graph g = random_graph(rng, n, 10 + 10 * (trial % 4));
    const std::size_t S = 1 + rng() % std::min<std::size_t>(n, 6);
    // A monotone labelling: vertex ids are a topological order, so cut them into S runs.
    std::vector<std::size_t> sigma(n);
    for (std::size_t v = 0; v < n; ++v) sigma[v] = v * S / n;
    std::vector<std::size_t> delta(n);
    for (auto& d : delta) d = rng() % 7;
    const boundary_refine_options o{.stages = S};
    detail::stage_state tracked(g, sigma, o);
    tracked.track_phi(delta);
    for (int step = 0; step < 30; ++step) {
      // Any relabelling, monotone or not: Phi is defined for every labelling.
      const std::size_t v = rng() % n, j = rng() % S;
      tracked.move(v, j);
      const detail::stage_state fresh(g, tracked.labels(), o);  // Phi over all edges
      CAPTURE(trial);
      CAPTURE(step);
      CHECK(tracked.phi(delta) == fresh.phi(delta));
    }
  }
}
