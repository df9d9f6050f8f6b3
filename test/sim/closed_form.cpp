// The closed form of the simulated iteration, fill and drain included (sim/closed_form.hpp):
// GPipe exact against the discrete-event simulation on seeded random instances (stage DAGs with
// skip edges, equal and unequal replica counts, asymmetric links with latency, recomputation,
// allreduce, update); the fill + MB · load + drain bound under both schedules, attained by 1F1B
// on equal stages; and the combined mapping objective (steady state) below it.
#include "devplace/sim/closed_form.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/sim/iteration_mapping.hpp"
#include "devplace/views/with_costs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/topology/matrix_topology.hpp"

using namespace devplace;

namespace {

struct cf_instance {
  pipeline_model pm;
  stage_graph sg;
  matrix_topology topo;
};

/// S stages on a random D-device topology (1..100 GB/s, 0..20 us, asymmetric); a chain of
/// messages with random skip edges (some of 0 bytes); R_s replicas per stage (all R, or random
/// 1..3 when `unequal`), on a random injective mapping.
cf_instance cf_random(std::mt19937_64& rng, std::size_t S, std::size_t R, bool unequal, bool empty_messages = true) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::vector<std::size_t> reps(S, R);
  if (unequal)
    for (auto& r : reps) r = 1 + rng() % 3;
  const std::size_t used = std::accumulate(reps.begin(), reps.end(), std::size_t{0});
  const std::size_t D = used + rng() % 3;
  const auto n = static_cast<Eigen::Index>(D);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(n, n), lat = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index b = 0; b < n; ++b)
      if (a != b) bw(a, b) = 1.0 + 99.0 * U(rng), lat(a, b) = 20.0 * U(rng);
  cf_instance in{pipeline_model(), stage_graph(), matrix_topology(bw, lat, std::vector<double>(D, 1e12))};
  std::vector<double> c(S), p(S), f(S);
  std::vector<std::vector<double>> M(S, std::vector<double>(S, 0.0));
  in.pm.stages = S;
  in.pm.replicas = *std::max_element(reps.begin(), reps.end());
  in.pm.message_bytes.assign(S, std::vector<double>(S, -1.0));
  for (std::size_t s = 0; s < S; ++s) {
    f[s] = 0.5 + 5.0 * U(rng);
    c[s] = f[s] + 0.5 + 10.0 * U(rng);
    p[s] = U(rng) < 0.2 ? 0.0 : 1e6 + 5e8 * U(rng);
    for (std::size_t t = s + 1; t < S; ++t)
      if (t == s + 1 || U(rng) < 0.3) {
        const double x = empty_messages && U(rng) < 0.1 ? 0.0 : 1e5 + 2e8 * U(rng);
        M[s][t] = M[t][s] = x;
        in.pm.message_bytes[s][t] = x;
      }
  }
  in.pm.forward_ms = f;
  for (std::size_t s = 0; s < S; ++s) in.pm.backward_ms.push_back(c[s] - f[s]);
  in.pm.param_bytes = p;
  in.sg = stage_graph(reps, c, p, M);
  std::vector<std::size_t> perm(D);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  in.pm.device_of.assign(S, {});
  std::size_t k = 0;
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < reps[s]; ++r) in.pm.device_of[s].push_back(perm[k++]);
  return in;
}

}  // namespace

TEST_CASE("closed form: GPipe iteration = the simulated one (blocking sends, or links that never wait), 400 random instances") {
  std::mt19937_64 rng(2026);
  std::size_t checked = 0;
  for (int it = 0; it < 400; ++it) {
    const std::size_t S = 1 + rng() % 5, R = 1 + rng() % 3;
    const bool unequal = rng() % 3 == 0;
    const auto in = cf_random(rng, S, R, unequal);
    simulation_options o;
    o.micro_batches = 1 + rng() % 6;
    o.schedule = pipeline_schedule::gpipe;
    o.recompute = rng() % 2 == 0;
    o.blocking_sends = rng() % 3 != 0;
    o.serialize_links = o.blocking_sends ? rng() % 2 == 0 : false;  // overlapped sends: links that never wait
    o.allreduce = rng() % 5 != 0;
    o.update_ms = rng() % 2 == 0 ? 0.0 : 3.0;
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(o.micro_batches);
    const double sim = simulate(in.pm, in.topo, o).iteration_ms;
    const auto cf = closed_form_iteration(in.pm, in.topo, o);
    CHECK(cf.gpipe_ms == doctest::Approx(sim).epsilon(1e-9));
    CHECK(cf.lower_bound_ms <= sim * (1 + 1e-12));
    ++checked;
  }
  CHECK(checked == 400);
}

TEST_CASE("closed form: the fill + MB x load + drain bound holds under 1F1B, the combined mapping objective lies below it") {
  std::mt19937_64 rng(7);
  std::size_t tight = 0;
  for (int it = 0; it < 300; ++it) {
    const std::size_t S = 1 + rng() % 5, R = 1 + rng() % 3;
    const auto in = cf_random(rng, S, R, rng() % 3 == 0);
    simulation_options o;
    o.micro_batches = 1 + rng() % 8;
    o.schedule = pipeline_schedule::one_f_one_b;
    o.blocking_sends = true;
    o.blocking_allreduce = true;
    CAPTURE(it);
    const double sim = simulate(in.pm, in.topo, o).iteration_ms;
    const auto cf = closed_form_iteration(in.pm, in.topo, o);
    CHECK(cf.lower_bound_ms <= sim * (1 + 1e-12));
    tight += cf.lower_bound_ms >= sim * (1 - 1e-9);
    // The mapper's combined objective (steady state: the busiest device's load per micro-batch)
    // times MB is the bound without its fill and drain.
    device_mapping dm(in.pm.device_of.begin(), in.pm.device_of.end());
    const double combined = evaluate(in.sg, in.topo, dm, cost_choice::combined, o.micro_batches).objective_ms;
    CHECK(static_cast<double>(o.micro_batches) * combined <= cf.lower_bound_ms * (1 + 1e-12));
  }
  MESSAGE("1F1B: the bound equals the simulated iteration on " << tight << " of 300 random instances");
}

TEST_CASE("closed form: hand-computed chains") {
  // S equal stages (f = 1, b = 2), no messages' bytes, one replica: GPipe and 1F1B both take
  // (MB + S − 1)(f + b); the closed form and the bound say so.
  const matrix_topology t(Eigen::MatrixXd::Constant(4, 4, 10.0));
  pipeline_model m;
  m.stages = 4;
  m.replicas = 1;
  m.forward_ms.assign(4, 1.0);
  m.backward_ms.assign(4, 2.0);
  m.param_bytes.assign(4, 0.0);
  m.message_bytes.assign(4, std::vector<double>(4, -1.0));
  for (std::size_t s = 0; s + 1 < 4; ++s) m.message_bytes[s][s + 1] = 0.0;
  m.device_of = {{0}, {1}, {2}, {3}};
  for (auto sched : {pipeline_schedule::gpipe, pipeline_schedule::one_f_one_b}) {
    const simulation_options o{.micro_batches = 5, .schedule = sched, .blocking_sends = true};
    const auto cf = closed_form_iteration(m, t, o);
    CHECK(cf.lower_bound_ms == doctest::Approx(24.0));  // (5 + 3) · 3
    CHECK(simulate(m, t, o).iteration_ms == doctest::Approx(24.0));
    CHECK(cf.gpipe_ms == doctest::Approx(24.0));
  }
  // Unequal stages f = (1, 3), b = (1, 1), MB = 3, one device each. GPipe: Σ(a + b) + (MB − 1)
  // (max a + max b) = 6 + 2 · 4 = 14 (stage 1 runs F 1–4, 4–7, 7–10, B 10–13; stage 0's backwards
  // 11–14). The bound at stage 1: head 1 + MB · 4 + tail 1 = 14.
  pipeline_model u;
  u.stages = 2;
  u.replicas = 1;
  u.forward_ms = {1.0, 3.0};
  u.backward_ms = {1.0, 1.0};
  u.param_bytes = {0.0, 0.0};
  u.message_bytes = {{-1.0, 0.0}, {-1.0, -1.0}};
  u.device_of = {{0}, {1}};
  const simulation_options og{.micro_batches = 3, .schedule = pipeline_schedule::gpipe, .blocking_sends = true};
  CHECK(closed_form_iteration(u, t, og).gpipe_ms == doctest::Approx(14.0));
  CHECK(simulate(u, t, og).iteration_ms == doctest::Approx(14.0));
  CHECK(closed_form_iteration(u, t, og).lower_bound_ms == doctest::Approx(14.0));
}

TEST_CASE("iteration_cost: the mapping objective is the simulated GPipe iteration, the mapper's optimum = brute force") {
  std::mt19937_64 rng(99);
  // (1) The objective of a mapping equals the simulated iteration (GPipe, blocking sends), 200 instances.
  for (int it = 0; it < 200; ++it) {
    const std::size_t S = 1 + rng() % 4, R = 1 + rng() % 3;
    const auto in = cf_random(rng, S, R, rng() % 3 == 0, /*empty_messages=*/false);
    const std::size_t MB = 1 + rng() % 6;
    const bool recompute = rng() % 2 == 0;
    const bool blocking = it % 2 == 0;
    const iteration_cost model{.forward_ms = in.pm.forward_ms, .micro_batches = MB, .recompute = recompute, .blocking_sends = blocking};
    const device_mapping dm(in.pm.device_of.begin(), in.pm.device_of.end());
    // overlapped sends: exact when no transfer waits for its link (links not serialised)
    const simulation_options o{.micro_batches = MB, .schedule = pipeline_schedule::gpipe, .recompute = recompute,
                               .serialize_links = blocking, .blocking_sends = blocking};
    CAPTURE(it);
    CHECK(evaluate(in.sg, link_costs(in.topo), dm, model).objective_ms ==
          doctest::Approx(simulate(in.pm, in.topo, o).iteration_ms).epsilon(1e-9));
  }
  // (2) The mapper with this model finds the fastest simulated mapping: brute force over every
  // injective mapping of the stage replicas on small instances.
  std::size_t cases = 0;
  for (int it = 0; it < 40; ++it) {
    const std::size_t S = 1 + rng() % 3, R = 1 + rng() % 2;
    auto in = cf_random(rng, S, R, rng() % 3 == 0, false);
    if (in.sg.vertices() > 5 || in.topo.num_devices() > 6) continue;
    const std::size_t MB = 1 + rng() % 4;
    const iteration_cost model{.forward_ms = in.pm.forward_ms, .micro_batches = MB};
    const simulation_options o{.micro_batches = MB, .schedule = pipeline_schedule::gpipe, .blocking_sends = true};
    const std::size_t V = in.sg.vertices(), D = in.topo.num_devices();
    double best = std::numeric_limits<double>::infinity();
    std::vector<std::size_t> dev(V);
    auto place = [&](auto&& self, std::size_t k, std::vector<char>& used) -> void {
      if (k == V) {
        in.pm.device_of = unflatten(in.sg, dev);
        best = std::min(best, simulate(in.pm, in.topo, o).iteration_ms);
        return;
      }
      for (std::size_t d = 0; d < D; ++d)
        if (!used[d]) {
          used[d] = 1, dev[k] = d;
          self(self, k + 1, used);
          used[d] = 0;
        }
    };
    std::vector<char> used(D, 0);
    place(place, 0, used);
    const auto r = map_devices(in.sg, in.topo, model, {.threads = 1, .timeout_s = 30});
    CAPTURE(it);
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(best).epsilon(1e-9));
    in.pm.device_of = r.device_of;
    CHECK(simulate(in.pm, in.topo, o).iteration_ms == doctest::Approx(best).epsilon(1e-9));
    ++cases;
  }
  CHECK(cases >= 15);
  MESSAGE("iteration_cost: mapper = brute force on " << cases << " instances");
}

TEST_CASE("map_for_iteration: its objective is the simulated iteration, never slower than the CS map or the combined optimum") {
  std::mt19937_64 rng(1234);
  int faster_than_combined = 0;
  for (int it = 0; it < 60; ++it) {
    const std::size_t S = 1 + rng() % 4, R = 1 + rng() % 3;
    auto in = cf_random(rng, S, R, rng() % 4 == 0, /*empty_messages=*/false);
    const std::size_t MB = 1 + rng() % 6;
    const bool recompute = rng() % 2 == 0, blocking = it % 2 == 0;
    const link_costs L(in.topo);
    const simulation_options o{.micro_batches = MB, .schedule = pipeline_schedule::gpipe, .recompute = recompute,
                               .serialize_links = blocking, .blocking_sends = blocking};
    mapper_options mo;
    mo.threads = 1;
    const auto r = map_for_iteration(in.sg, L, in.pm.forward_ms, {.micro_batches = MB, .recompute = recompute, .blocking_sends = blocking}, mo);
    CAPTURE(it);
    REQUIRE(r.has_solution());
    CHECK(r.cost == "iteration");
    CHECK_FALSE(r.optimal);
    CHECK(r.status == status::feasible);  // no time limit: every local search ran to its local optimum
    in.pm.device_of = r.device_of;
    const double mine = simulate(in.pm, in.topo, o).iteration_ms;
    CHECK(r.objective_ms == doctest::Approx(mine).epsilon(1e-9));
    in.pm.device_of = cs_map(in.sg);
    CHECK(mine <= simulate(in.pm, in.topo, o).iteration_ms * (1 + 1e-9));
    mo.cost = cost_choice::combined;
    mo.micro_batches = MB;
    in.pm.device_of = map_devices(in.sg, L, mo).device_of;
    const double combined = simulate(in.pm, in.topo, o).iteration_ms;
    CHECK(mine <= combined * (1 + 1e-9));
    faster_than_combined += mine < combined * (1 - 1e-9);
  }
  MESSAGE("map_for_iteration: faster than the combined optimum on " << faster_than_combined << " of 60 instances");
}

TEST_CASE("map_for_iteration and stage_forward_ms: arguments are checked") {
  op_graph_builder b;
  b.add_op({.id = 0, .fwd_ms = 1, .bwd_ms = 3});
  b.add_op({.id = 1, .fwd_ms = 2, .bwd_ms = 1});
  b.add_op({.id = 2, .fwd_ms = 4, .bwd_ms = 1});
  b.add_edge(0, 1, 1e6);
  b.add_edge(1, 2, 1e6);
  const op_graph g = std::move(b).build();
  const std::vector<std::size_t> stage_of{0, 0, 1};
  CHECK(stage_forward_ms(g, stage_of, 2) == std::vector<double>{3.0, 4.0});
  // any profiled_dag: the forward times of a with_costs view over plain adjacency lists
  const std::vector<std::vector<int>> adj{{1}, {2}, {}};
  const auto view = views::with_costs(adj, costs{.forward_ms = [](const auto&, std::size_t v) { return 1.0 + double(v); }});
  CHECK(stage_forward_ms(view, stage_of, 2) == std::vector<double>{3.0, 3.0});
  CHECK_THROWS_AS((void)stage_forward_ms(g, std::vector<std::size_t>{0, 1}, 2), std::invalid_argument);
  CHECK_THROWS_AS((void)stage_forward_ms(g, std::vector<std::size_t>{0, 1, 2}, 2), std::invalid_argument);
  const stage_graph sg(1, {2.0, 3.0}, {0.0, 0.0}, {{0.0, 1e6}, {1e6, 0.0}});
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(3, 3, 10.0);
  const link_costs L{matrix_topology(bw)};
  CHECK_THROWS_AS((void)map_for_iteration(sg, L, {1.0}, {.micro_batches = 2}), std::invalid_argument);
  CHECK_THROWS_AS((void)map_for_iteration(sg, L, {1.0, 1.0}, {.micro_batches = 0}), std::invalid_argument);
  CHECK_THROWS_AS((void)map_for_iteration(sg, L, {1.0, 1.0}, {.micro_batches = 2, .combined_share = 0.0}), std::invalid_argument);
}
