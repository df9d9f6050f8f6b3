#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/plan_search.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/random_dag.hpp"
#include "support/random_pipeline.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/partition/stage_cost.hpp"
#include "devplace/sim/from_plan.hpp"
#include "devplace/sim/schedule.hpp"

#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#endif

using namespace devplace;

namespace {

/// A chain of n operators of fwd 1 ms and bwd 1 ms, 0-byte edges, no parameters.
op_graph unit_chain(std::size_t n) {
  op_graph_builder b;
  for (std::size_t v = 0; v < n; ++v) b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = 1, .bwd_ms = 1});
  for (std::size_t v = 0; v + 1 < n; ++v) b.add_edge(v, v + 1, 0);
  return std::move(b).build();
}

const plan_candidate* find(const plan_search_result& r, std::size_t S, std::size_t R, std::size_t v) {
  for (const auto& c : r.candidates)
    if (!c.general && c.stages == S && c.replicas == R && c.virtual_stages == v) return &c;
  return nullptr;
}

/// The iteration of a plan with free communication (0-byte edges, no parameters) as a fixpoint of
/// start = max(end of the device's previous pass, end of the pass's dependencies), independent of
/// the simulator's event loop: F(c, m) after F(c − 1, m); B(c, m) after B(c + 1, m) and F(c, m).
/// The device of chunk c is the plan's row c; each device runs its passes in the schedule's order.
double fixpoint_iteration(const op_graph& g, const plan& p) {
  const std::size_t C = p.stages, S = pipeline_ranks(p), v = p.virtual_stages, MB = p.micro_batches;
  std::vector<double> f(C, 0.0), b(C, 0.0);
  for (std::size_t u = 0; u < g.num_vertices(); ++u) f[p.stage_of[u]] += g.forward_ms(u), b[p.stage_of[u]] += g.compute_ms(u) - g.forward_ms(u);
  constexpr double unset = -1;
  std::vector<std::vector<double>> F(C, std::vector<double>(MB, unset)), B = F;  // end times
  struct pass { bool backward; std::size_t chunk, mb; };
  std::map<std::size_t, std::vector<pass>> order;  // by device
  for (std::size_t k = 0; k < S; ++k)
    for (const auto& st : device_order(v > 1 ? pipeline_schedule::interleaved : pipeline_schedule::one_f_one_b, S, k, v, MB))
      order[p.device_of[k][0]].push_back({st.backward, k + st.chunk * S, st.micro_batch});
  for (std::size_t c = 0; c < C; ++c) REQUIRE(p.device_of[c] == p.device_of[c % S]);  // chunk c on rank c mod S
  std::map<std::size_t, std::size_t> next;
  std::map<std::size_t, double> free_at;
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto& [d, passes] : order) {
      while (next[d] < passes.size()) {
        const pass& x = passes[next[d]];
        double ready = free_at[d];
        if (!x.backward) {
          if (x.chunk > 0 && F[x.chunk - 1][x.mb] == unset) break;
          if (x.chunk > 0) ready = std::max(ready, F[x.chunk - 1][x.mb]);
          F[x.chunk][x.mb] = free_at[d] = ready + f[x.chunk];
        } else {
          if (F[x.chunk][x.mb] == unset || (x.chunk + 1 < C && B[x.chunk + 1][x.mb] == unset)) break;
          ready = std::max(ready, F[x.chunk][x.mb]);
          if (x.chunk + 1 < C) ready = std::max(ready, B[x.chunk + 1][x.mb]);
          B[x.chunk][x.mb] = free_at[d] = ready + b[x.chunk];
        }
        ++next[d];
        progress = true;
      }
    }
  }
  double end = 0;
  for (auto& [d, passes] : order) {
    REQUIRE(next[d] == passes.size());  // no deadlock
    end = std::max(end, free_at[d]);
  }
  return end;
}

}  // namespace

TEST_CASE("interleaved search, 4 unit operators on 2 devices, MB = 2: the timelines by hand") {
  // S = 2, v = 2: one operator per chunk, device a runs chunks 0 and 2, device b chunks 1 and 3
  // (f = b = 1 ms). Device a warms up with all 4 forwards, device b with 2:
  //   a: F0m0 0-1, F0m1 1-2, F2m0 2-3, F2m1 3-4, B2m0 5-6, B2m1 7-8, B0m0 8-9, B0m1 9-10
  //   b: F1m0 1-2, F1m1 2-3, F3m0 3-4, B3m0 4-5, F3m1 5-6, B3m1 6-7, B1m0 7-8, B1m1 8-9
  // -> 10 ms. 1F1B with two 2-operator stages (f = b = 2): a F0 0-2 F1 2-4 B0 6-8 B1 10-12,
  // b F0 2-4 B0 4-6 F1 6-8 B1 8-10 -> 12 ms.
  const op_graph g = unit_chain(4);
  const auto t = test::flat_topology(2, 10);
  const auto r = search_plan(g, t, {.exact_product = true, .micro_batches = 2, .micro_batch_size = 1,
                                    .schedule = pipeline_schedule::interleaved, .virtual_stages = {2}, .recompute = false,
                                    .threads = 1, .cost = cost_choice::p2p, .prune = false});
  REQUIRE(r.candidates.size() == 3);  // (1, 2, 1), (2, 1, 1), (2, 1, 2); no v = 2 for S = 1
  const auto* il = find(r, 2, 1, 2);
  const auto* one = find(r, 2, 1, 1);
  const auto* dp = find(r, 1, 2, 1);
  REQUIRE(il);
  REQUIRE(one);
  REQUIRE(dp);
  REQUIRE(il->status == status::feasible);
  CHECK(il->iteration_ms == doctest::Approx(10.0).epsilon(1e-12));
  CHECK(one->iteration_ms == doctest::Approx(12.0).epsilon(1e-12));
  CHECK(dp->iteration_ms == doctest::Approx(16.0).epsilon(1e-12));  // 2 x (4 + 4) ms on each device
  const plan& p = il->result;
  CHECK(p.stages == 4);
  CHECK(p.virtual_stages == 2);
  CHECK(p.stage_of == std::vector<std::size_t>{0, 1, 2, 3});
  REQUIRE(p.device_of.size() == 4);
  CHECK(p.device_of[0] != p.device_of[1]);
  CHECK(p.device_of[2] == p.device_of[0]);
  CHECK(p.device_of[3] == p.device_of[1]);
  REQUIRE(p.settings);
  CHECK(p.settings->schedule == "interleaved");
  CHECK(p.simulation->schedule == "interleaved");
  CHECK(one->result.settings->schedule == "1f1b");
  CHECK(one->result.virtual_stages == 1);
  CHECK(fixpoint_iteration(g, p) == doctest::Approx(10.0).epsilon(1e-12));
  CHECK(fixpoint_iteration(g, one->result) == doctest::Approx(12.0).epsilon(1e-12));
  // (1, 2) wins: 250 samples/s against 200 (interleaved) and 166.7 (1F1B); v is reported per candidate.
  CHECK(r.candidates[r.best].stages == 1);
}

TEST_CASE("property: an interleaved plan on free communication is the fixpoint timeline of its chunks") {
  std::mt19937_64 rng(2024);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const std::size_t n = 6 + rng() % 5;
    op_graph g = test::random_op_graph(rng, test::random_adjacency(rng, n, test::shape::chain_with_skips));
    op_graph_builder b;  // the same costs, 0-byte edges, no parameters: communication is free
    for (std::size_t u = 0; u < n; ++u)
      b.add_op({.id = static_cast<std::int64_t>(u), .fwd_ms = g.forward_ms(u), .bwd_ms = g.compute_ms(u) - g.forward_ms(u)});
    for (std::size_t u = 0; u < n; ++u)
      for (auto w : g.out_edges(u)) b.add_edge(u, w, 0);
    g = std::move(b).build();
    const std::size_t D = 2 + rng() % 2, MB = D * (1 + rng() % 2);
    const auto r = search_plan(g, test::flat_topology(D, 10),
                               {.micro_batches = MB, .micro_batch_size = 1, .schedule = pipeline_schedule::interleaved,
                                .virtual_stages = {2, 3}, .recompute = false, .threads = 1, .cost = cost_choice::p2p,
                                .prune = false});
    for (const auto& c : r.candidates) {
      if (c.status != status::feasible || c.virtual_stages == 1 || c.replicas != 1) continue;
      CAPTURE(trial);
      CAPTURE(c.stages);
      CAPTURE(c.virtual_stages);
      CHECK(c.iteration_ms == doctest::Approx(fixpoint_iteration(g, c.result)).epsilon(1e-9));
      ++checked;
    }
  }
  CHECK(checked >= 12);
}

TEST_CASE("property: the interleaved search is never worse than 1F1B alone, and its plans are valid") {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 8; ++trial) {
    CAPTURE(trial);
    const std::size_t n = 8 + rng() % 5;
    const op_graph g = test::random_op_graph(rng, test::random_adjacency(rng, n, test::all_shapes[trial % 5]));
    const auto t = test::flat_topology(4, double(2 + rng() % 20));
    const plan_search_options base{.micro_batches = 4, .micro_batch_size = 1, .schedule = pipeline_schedule::one_f_one_b,
                                   .threads = 2, .cost = cost_choice::p2p, .prune = false};
    plan_search_options il = base;
    il.schedule = pipeline_schedule::interleaved;
    il.virtual_stages = {2};
    const auto r1 = search_plan(g, t, base);
    const auto r2 = search_plan(g, t, il);
    REQUIRE(r1.status == status::feasible);
    REQUIRE(r2.status == status::feasible);
    CHECK(r2.candidates[r2.best].samples_per_s >= r1.candidates[r1.best].samples_per_s * (1 - 1e-12));
    // Every v = 1 configuration of the interleaved search is the 1F1B search's own.
    for (const auto& c : r1.candidates) {
      const auto* d = find(r2, c.stages, c.replicas, 1);
      REQUIRE(d);
      CHECK(d->samples_per_s == doctest::Approx(c.samples_per_s).epsilon(1e-12));
    }
    for (const auto& c : r2.candidates) {
      if (c.status != status::feasible || c.virtual_stages == 1) continue;
      const plan& p = c.result;
      CHECK(p.stages == c.stages * c.virtual_stages);
      CHECK(p.virtual_stages == c.virtual_stages);
      CHECK(evaluate_partition(g, p.stage_of, p.stages, {.replicas = p.replicas}).valid);
      std::set<std::size_t> used;
      for (std::size_t s = 0; s < p.stages; ++s) {
        CHECK(p.device_of[s] == p.device_of[s % c.stages]);
        if (s < c.stages) used.insert(p.device_of[s].begin(), p.device_of[s].end());
      }
      CHECK(used.size() == c.stages * c.replicas);
      // Through the file: the same figures, from the settings the plan records.
      const plan q = io::plan_from_json(io::plan_to_json(p), "p.json", &g);
      const auto sim = simulate(make_pipeline_model(g, q.stage_of, q.stages, q.device_of), t, simulation_options_of(q));
      CHECK(sim.samples_per_s == doctest::Approx(c.samples_per_s).epsilon(1e-12));
    }
  }
}

TEST_CASE("interleaved search: bad options and configurations it cannot run") {
  const op_graph g = unit_chain(6);
  const auto t = test::flat_topology(4, 10);
  CHECK_THROWS_WITH((void)search_plan(g, t, {.schedule = pipeline_schedule::interleaved, .virtual_stages = {0, 2}}),
                    doctest::Contains("virtual_stages"));
  // MB = 4 is not a multiple of S = 3: that v = 2 configuration is infeasible, with its reason; S · v
  // beyond the 6 operators is not listed.
  const auto r = search_plan(g, t, {.micro_batches = 4, .schedule = pipeline_schedule::interleaved, .virtual_stages = {2, 3},
                                    .threads = 1, .cost = cost_choice::p2p, .prune = false});
  const auto* c = find(r, 3, 1, 2);
  REQUIRE(c);
  CHECK(c->status == status::infeasible);
  CHECK(c->reason.find("multiple of S") != std::string::npos);
  CHECK(find(r, 3, 1, 3) == nullptr);  // 9 chunks > 6 operators
  CHECK(find(r, 2, 2, 3) != nullptr);
  CHECK(find(r, 1, 4, 2) == nullptr);  // one rank: nothing to interleave
  // GPipe and 1F1B ignore virtual_stages.
  const auto q = search_plan(g, t, {.micro_batches = 4, .virtual_stages = {2}, .threads = 1, .cost = cost_choice::p2p});
  for (const auto& x : q.candidates) CHECK(x.virtual_stages == 1);
}
