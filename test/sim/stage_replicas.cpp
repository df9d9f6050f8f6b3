// Simulating plans whose stages have their own replica counts (Parmesan's general DP, eq. 2):
// hand-computed iterations, a general_dp plan end to end, and the mapping models' closed forms
// against the simulation on random instances.
#include "devplace/sim/pipeline_simulator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "devplace/dag/op_graph.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/partition/general_dp.hpp"
#include "devplace/viz/stage_graph.hpp"
#include "devplace/topology/matrix_topology.hpp"

using namespace devplace;

TEST_CASE("simulate: stages with 2 and 1 replicas, hand-computed") {
  // Stage 0 on devices {0, 1}, stage 1 on {2}; R̂ = 2, so a round is 2 micro-batches' worth:
  // each stage-0 replica does one (F 2, B 2 ms), the single stage-1 replica two (F 2 x 1, B 2 x 1).
  // Each stage-0 replica holds half the round: it sends 1 MB (of the round's 2 x 1 MB) at 1 GB/s.
  // F0 0-2 | act 2-3 (two links at once) | F1 3-5 | B1 5-7 | grad 7-8 | B0 8-10: 10 ms.
  const matrix_topology t(Eigen::MatrixXd::Constant(3, 3, 1.0));
  pipeline_model pm{.stages = 2, .replicas = 2, .forward_ms = {2.0, 1.0}, .backward_ms = {2.0, 1.0},
                    .param_bytes = {0.0, 0.0}, .message_bytes = {{-1.0, 1e6}, {-1.0, -1.0}},
                    .device_of = {{0, 1}, {2}}};
  const auto r = simulate(pm, t, {.micro_batches = 1});
  CHECK(r.iteration_ms == doctest::Approx(10.0));
  CHECK(r.samples_per_s == doctest::Approx(1.0 * 2 * 1 / 0.010));
  CHECK(r.device_busy_ms[0] == doctest::Approx(4.0));
  CHECK(r.device_busy_ms[2] == doctest::Approx(4.0));
  std::size_t transfers = 0;
  for (const auto& e : r.timeline)
    if (e.kind == sim_task_kind::send_activation || e.kind == sim_task_kind::send_gradient) {
      ++transfers;
      CHECK(e.end_ms - e.start_ms == doctest::Approx(1.0));
    }
  CHECK(transfers == 4);
  // Stage 0's ring over its two replicas: 2 steps of P/2 at 1 GB/s after the backwards: + 2 x 1 ms.
  pm.param_bytes = {2e6, 5e6};
  CHECK(simulate(pm, t, {.micro_batches = 1}).iteration_ms == doctest::Approx(12.0));
  // The stage graph draws the ragged rows: three replica cells in all.
  const std::string svg = viz::stage_graph_svg(pm, viz::make_device_labels(3));
  std::size_t cells = 0;
  for (std::size_t k = svg.find("class=\"replica\""); k != std::string::npos; k = svg.find("class=\"replica\"", k + 1)) ++cells;
  CHECK(cells == 3);
}

TEST_CASE("a general_dp plan end to end: partition, stage graph, mapping, simulation (hand-computed)") {
  // a (F 1, B 3) -> b (F 1, B 1), 1 MB between them; 3 devices at 1 GB/s.
  op_graph_builder b;
  b.add_op({.id = 0, .fwd_ms = 1, .bwd_ms = 3});
  b.add_op({.id = 1, .fwd_ms = 1, .bwd_ms = 1});
  b.add_edge(0, 1, 1e6);
  const op_graph g = std::move(b).build();
  // J(2): ({a}, 2 replicas), ({b}, 1): max((4 + 1) / 2, (2 + 1) / 1) = 3 ms.
  const auto p = general_dp(g, {.stages = 2, .devices = 3, .cost = {.bandwidth_gbps = 1}});
  REQUIRE(p.status == status::optimal);
  REQUIRE(p.replicas == std::vector<std::size_t>{2, 1});
  CHECK(p.objective_ms == doctest::Approx(3.0));
  const stage_graph sg = make_stage_graph(g, p.stage_of, p.replicas);
  CHECK(sg.vertices() == 3);
  CHECK(sg.replica_compute_ms(0) == doctest::Approx(4.0));
  CHECK(sg.replica_compute_ms(1) == doctest::Approx(4.0));  // 2 ms x R̂ / 1
  const matrix_topology t(Eigen::MatrixXd::Constant(3, 3, 1.0));
  const auto m = map_devices(sg, t, {.cost = cost_choice::p2p, .threads = 1});
  REQUIRE(m.optimal);
  // p2p: replica 0 of a sends 1 MB (1 ms): 5 ms; b sends 1 MB to each: 4 + 2 = 6 ms.
  CHECK(m.objective_ms == doctest::Approx(6.0));
  REQUIRE(m.device_of.size() == 2);
  CHECK(m.device_of[0].size() == 2);
  CHECK(m.device_of[1].size() == 1);
  const pipeline_model pm = make_pipeline_model(g, p.stage_of, 2, m.device_of);
  CHECK(pm.replicas == 2);
  // F(a) 0-1 | act 1-2 | F(b) 2-4 | B(b) 4-6 | grad 6-7 | B(a) 7-10.
  const auto r = simulate(pm, t, {.micro_batches = 1, .micro_batch_size = 1});
  CHECK(r.iteration_ms == doctest::Approx(10.0));
  CHECK(r.samples_per_s == doctest::Approx(200.0));
}

namespace {

struct sr_instance {
  stage_graph sg;
  pipeline_model pm;
  matrix_topology topo;
  std::vector<std::size_t> dev;
};

sr_instance sr_random_instance(std::mt19937_64& rng, const std::vector<std::size_t>& reps, std::size_t D, bool messages) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const std::size_t S = reps.size();
  const auto n = static_cast<Eigen::Index>(D);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(n, n), lat = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index c = 0; c < n; ++c) {
      bw(a, c) = a == c ? 0.0 : 1.0 + 99.0 * U(rng);
      lat(a, c) = a == c ? 0.0 : 20.0 * U(rng);
    }
  sr_instance in{stage_graph(), pipeline_model(), matrix_topology(bw, lat, std::vector<double>(D, 1e12)), {}};
  std::vector<double> c(S), p(S), f(S);
  std::vector<std::vector<double>> M(S, std::vector<double>(S, 0.0));
  in.pm.stages = S;
  in.pm.message_bytes.assign(S, std::vector<double>(S, -1.0));
  for (std::size_t s = 0; s < S; ++s) {
    f[s] = 0.5 + 5.0 * U(rng);
    c[s] = f[s] + 0.5 + 10.0 * U(rng);
    p[s] = 1e6 + 5e8 * U(rng);
    if (!messages) continue;
    for (std::size_t t = s + 1; t < S; ++t)
      if (t == s + 1 || U(rng) < 0.3) {
        const double x = U(rng) < 0.1 ? 0.0 : 1e5 + 2e8 * U(rng);
        M[s][t] = M[t][s] = x;
        in.pm.message_bytes[s][t] = x;
      }
  }
  in.pm.forward_ms = f;
  for (std::size_t s = 0; s < S; ++s) in.pm.backward_ms.push_back(c[s] - f[s]);
  in.pm.param_bytes = p;
  in.sg = stage_graph(reps, c, p, M);
  in.pm.replicas = in.sg.replicas();
  std::vector<std::size_t> perm(D);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  in.dev.assign(perm.begin(), perm.begin() + std::ptrdiff_t(in.sg.vertices()));
  in.pm.device_of = unflatten(in.sg, in.dev);
  return in;
}

std::vector<std::size_t> sr_random_counts(std::mt19937_64& rng, std::size_t S) {
  std::vector<std::size_t> reps(S);
  for (auto& r : reps) r = 1 + rng() % 4;
  return reps;
}

}  // namespace

TEST_CASE("per-stage replica counts: combined objective = the busiest device's simulated load per micro-batch") {
  std::mt19937_64 rng(20261125);
  int unequal = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const auto reps = sr_random_counts(rng, 1 + rng() % 5);
    const std::size_t V = std::accumulate(reps.begin(), reps.end(), std::size_t{0});
    const std::size_t MB = 1 + rng() % 8;
    const auto in = sr_random_instance(rng, reps, V + rng() % 3, true);
    if (!in.sg.uniform_replicas()) ++unequal;
    const link_costs L(in.topo);
    const double objective =
        evaluate_flat(in.sg, L, combined_cost{.micro_batches = MB}, std::span<const std::size_t>(in.dev)).objective_ms;
    const simulation_options so{.micro_batches = MB,
                                .schedule = trial % 2 ? pipeline_schedule::one_f_one_b : pipeline_schedule::gpipe,
                                .blocking_sends = true, .blocking_allreduce = true};
    const auto sim = simulate(in.pm, in.topo, so);
    const double busiest = *std::max_element(sim.device_busy_ms.begin(), sim.device_busy_ms.end());
    CAPTURE(trial);
    CAPTURE(MB);
    CHECK(busiest / double(MB) == doctest::Approx(objective).epsilon(1e-9));
    CHECK(sim.iteration_ms >= double(MB) * objective * (1 - 1e-12));
    // p2p: the 1F1B time per micro-batch as MB grows, without the allreduce.
    const double p2p = evaluate_flat(in.sg, L, p2p_cost{}, std::span<const std::size_t>(in.dev)).objective_ms;
    simulation_options sp{.micro_batches = 240, .schedule = pipeline_schedule::one_f_one_b, .allreduce = false,
                          .blocking_sends = true};
    const double t1 = simulate(in.pm, in.topo, sp).iteration_ms;
    sp.micro_batches = 480;
    CHECK((simulate(in.pm, in.topo, sp).iteration_ms - t1) / 240.0 == doctest::Approx(p2p).epsilon(1e-9));
  }
  CHECK(unequal > 40);
}

TEST_CASE("per-stage replica counts: allreduce objective = the simulated iteration of one micro-batch") {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 40; ++trial) {
    const auto reps = sr_random_counts(rng, 1 + rng() % 4);
    const std::size_t V = std::accumulate(reps.begin(), reps.end(), std::size_t{0});
    const auto in = sr_random_instance(rng, reps, V + rng() % 3, false);
    const link_costs L(in.topo);
    const double objective = evaluate_flat(in.sg, L, allreduce_cost{}, std::span<const std::size_t>(in.dev)).objective_ms;
    CAPTURE(trial);
    CHECK(simulate(in.pm, in.topo, {.micro_batches = 1}).iteration_ms == doctest::Approx(objective).epsilon(1e-12));
  }
}
