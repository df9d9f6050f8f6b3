// One cost model: the mapper's objective of a mapping equals what the simulator measures for it
// (docs/simulator.md, "Steady state"). Two independent implementations of the same definition:
// the cost models' closed forms (map/cost_models.hpp) and the discrete-event simulation.
//   p2p:       the per-micro-batch time of 1F1B as MB grows, with blocking sends and no allreduce;
//   allreduce: one micro-batch per iteration, stages without p2p messages, blocking allreduce;
//   combined:  the busiest device's load per micro-batch with blocking sends and allreduce.
#include "devplace/sim/pipeline_simulator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/topology/matrix_topology.hpp"

using namespace devplace;

namespace {

struct instance {
  stage_graph sg;
  pipeline_model pm;
  matrix_topology topo;
  std::vector<std::size_t> dev;  // device of vertex s*R + r
};

/// Random S stages × R replicas on a random D-device topology (bandwidths 1..100 GB/s, latencies
/// 0..20 us, asymmetric), a random injective mapping; p2p messages along a chain with random skip
/// edges unless `no_messages`.
instance random_instance(std::mt19937_64& rng, std::size_t S, std::size_t R, std::size_t D, bool no_messages) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const auto n = static_cast<Eigen::Index>(D);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(n, n), lat = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index b = 0; b < n; ++b) {
      bw(a, b) = a == b ? 0.0 : 1.0 + 99.0 * U(rng);
      lat(a, b) = a == b ? 0.0 : 20.0 * U(rng);
    }
  instance in{stage_graph(), pipeline_model(),
              matrix_topology(bw, lat, std::vector<double>(D, 1e12)), {}};
  std::vector<double> c(S), p(S), f(S);
  std::vector<std::vector<double>> M(S, std::vector<double>(S, 0.0));
  in.pm.stages = S;
  in.pm.replicas = R;
  in.pm.message_bytes.assign(S, std::vector<double>(S, -1.0));
  for (std::size_t s = 0; s < S; ++s) {
    f[s] = 0.5 + 5.0 * U(rng);
    c[s] = f[s] + 0.5 + 10.0 * U(rng);
    p[s] = 1e6 + 5e8 * U(rng);
    if (no_messages) continue;
    for (std::size_t t = s + 1; t < S; ++t)
      if (t == s + 1 || U(rng) < 0.3) {
        const double x = U(rng) < 0.1 ? 0.0 : 1e5 + 2e8 * U(rng);  // some edges carry nothing
        M[s][t] = M[t][s] = x;
        in.pm.message_bytes[s][t] = x;
      }
  }
  in.pm.forward_ms = f;
  for (std::size_t s = 0; s < S; ++s) in.pm.backward_ms.push_back(c[s] - f[s]);
  in.pm.param_bytes = p;
  in.sg = stage_graph(R, c, p, M);
  std::vector<std::size_t> perm(D);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  in.dev.assign(perm.begin(), perm.begin() + std::ptrdiff_t(S * R));
  in.pm.device_of.assign(S, std::vector<std::size_t>(R));
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < R; ++r) in.pm.device_of[s][r] = in.dev[s * R + r];
  return in;
}

}  // namespace

TEST_CASE("p2p objective = the simulated 1F1B time per micro-batch as MB grows (blocking sends)") {
  std::mt19937_64 rng(20261123);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t S = 1 + rng() % 5, R = 1 + rng() % 3, D = S * R + rng() % 3;
    const auto in = random_instance(rng, S, R, D, false);
    const link_costs L(in.topo);
    const double objective = evaluate_flat(in.sg, L, p2p_cost{}, std::span<const std::size_t>(in.dev)).objective_ms;
    simulation_options so{.micro_batches = 240, .schedule = pipeline_schedule::one_f_one_b, .allreduce = false,
                          .blocking_sends = true};
    const double t1 = simulate(in.pm, in.topo, so).iteration_ms;
    so.micro_batches = 480;
    const double t2 = simulate(in.pm, in.topo, so).iteration_ms;
    CAPTURE(trial);
    CAPTURE(S);
    CAPTURE(R);
    CHECK((t2 - t1) / 240.0 == doctest::Approx(objective).epsilon(1e-9));
    ++compared;
  }
  CHECK(compared == 40);
}

TEST_CASE("allreduce objective = the simulated iteration of one micro-batch with a blocking allreduce") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t S = 1 + rng() % 4, R = 1 + rng() % 4, D = S * R + rng() % 3;
    const auto in = random_instance(rng, S, R, D, true);
    const link_costs L(in.topo);
    const double objective = evaluate_flat(in.sg, L, allreduce_cost{}, std::span<const std::size_t>(in.dev)).objective_ms;
    const auto sim = simulate(in.pm, in.topo, {.micro_batches = 1});
    CAPTURE(trial);
    CHECK(sim.iteration_ms == doctest::Approx(objective).epsilon(1e-12));
  }
}

TEST_CASE("latency: 2(R-1) per ring allreduce in both the mapper and the simulator, none for an empty message") {
  // Two replicas of one stage on a 2-device topology with 10 us latency and 1 GB/s: the ring is
  // 2 steps of P/2 bytes, each paying the latency: 2 * (P/2 / 1e6 + 0.01) ms.
  Eigen::MatrixXd bw(2, 2), lat(2, 2);
  bw << 0, 1, 1, 0;
  lat << 0, 10, 10, 0;
  const matrix_topology t(bw, lat, {1e12, 1e12});
  const double P = 4e6;
  const stage_graph sg(2, {3.0}, {P}, {{0.0}});
  const link_costs L(t);
  const std::vector<std::size_t> dev{0, 1};
  const double expected = 3.0 + 2 * (P / 2 / 1e6 + 0.010);
  CHECK(evaluate_flat(sg, L, allreduce_cost{}, std::span<const std::size_t>(dev)).objective_ms == doctest::Approx(expected));
  pipeline_model pm{.stages = 1, .replicas = 2, .forward_ms = {1.0}, .backward_ms = {2.0}, .param_bytes = {P},
                    .message_bytes = {{-1.0}}, .device_of = {{0, 1}}};
  CHECK(simulate(pm, t, {.micro_batches = 1}).iteration_ms == doctest::Approx(expected));
  // An edge that carries 0 bytes costs nothing in either (it still orders the tasks).
  const stage_graph sg2(1, {1.0, 1.0}, {0.0, 0.0}, {{0.0, 0.0}, {0.0, 0.0}});
  const std::vector<std::size_t> dev2{0, 1};
  CHECK(evaluate_flat(sg2, L, p2p_cost{}, std::span<const std::size_t>(dev2)).objective_ms == doctest::Approx(1.0));
  pipeline_model pm2{.stages = 2, .replicas = 1, .forward_ms = {0.5, 0.5}, .backward_ms = {0.5, 0.5}, .param_bytes = {0, 0},
                     .message_bytes = {{-1.0, 0.0}, {-1.0, -1.0}}, .device_of = {{0}, {1}}};
  CHECK(simulate(pm2, t, {.micro_batches = 1}).iteration_ms == doctest::Approx(2.0));
}

TEST_CASE("simulate rejects a malformed model with std::invalid_argument naming the field") {
  const matrix_topology t(Eigen::MatrixXd::Constant(2, 2, 10.0));
  pipeline_model pm{.stages = 1, .replicas = 1, .forward_ms = {1.0}, .backward_ms = {1.0}, .param_bytes = {0.0},
                    .message_bytes = {{-1.0}}, .device_of = {{5}}};
  CHECK_THROWS_WITH_AS(static_cast<void>(simulate(pm, t)), doctest::Contains("names device 5"), std::invalid_argument);
  pm.device_of = {{0}};
  pm.forward_ms = {-1.0};
  CHECK_THROWS_AS(static_cast<void>(simulate(pm, t)), std::invalid_argument);
  pm.forward_ms = {1.0};
  pm.backward_ms = {};
  CHECK_THROWS_AS(static_cast<void>(simulate(pm, t)), std::invalid_argument);
  pm.backward_ms = {1.0};
  CHECK_THROWS_AS(static_cast<void>(simulate(pm, t, {.micro_batches = 0})), std::invalid_argument);
  CHECK_NOTHROW(static_cast<void>(simulate(pm, t)));
}

TEST_CASE("combined objective = the busiest device's simulated load per micro-batch (blocking sends and allreduce)") {
  // Messages and allreduce together, random MB and schedule: MB x objective is the largest busy
  // time of a device in the simulated iteration, and no iteration is shorter than it.
  std::mt19937_64 rng(20261124);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t S = 1 + rng() % 5, R = 1 + rng() % 4, D = S * R + rng() % 3, MB = 1 + rng() % 8;
    const auto in = random_instance(rng, S, R, D, false);
    const link_costs L(in.topo);
    const double objective =
        evaluate_flat(in.sg, L, combined_cost{.micro_batches = MB}, std::span<const std::size_t>(in.dev)).objective_ms;
    const simulation_options so{.micro_batches = MB,
                                .schedule = trial % 2 ? pipeline_schedule::one_f_one_b : pipeline_schedule::gpipe,
                                .blocking_sends = true, .blocking_allreduce = true};
    const auto sim = simulate(in.pm, in.topo, so);
    const double busiest = *std::max_element(sim.device_busy_ms.begin(), sim.device_busy_ms.end());
    CAPTURE(trial);
    CAPTURE(S);
    CAPTURE(R);
    CAPTURE(MB);
    CHECK(busiest / double(MB) == doctest::Approx(objective).epsilon(1e-9));
    CHECK(sim.iteration_ms >= double(MB) * objective * (1 - 1e-12));
  }
}

TEST_CASE("combined objective: R = 1 is the p2p model, no messages and MB = 1 the allreduce model") {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 30; ++trial) {
    const std::size_t S = 1 + rng() % 5, MB = 1 + rng() % 6;
    const auto one = random_instance(rng, S, 1, S + rng() % 3, false);
    const link_costs L1(one.topo);
    const std::span<const std::size_t> d1(one.dev);
    CHECK(evaluate_flat(one.sg, L1, combined_cost{.micro_batches = MB}, d1).objective_ms ==
          doctest::Approx(evaluate_flat(one.sg, L1, p2p_cost{}, d1).objective_ms).epsilon(1e-12));
    const std::size_t R = 2 + rng() % 3;
    const auto silent = random_instance(rng, S, R, S * R + rng() % 3, true);
    const link_costs L2(silent.topo);
    const std::span<const std::size_t> d2(silent.dev);
    CHECK(evaluate_flat(silent.sg, L2, combined_cost{.micro_batches = 1}, d2).objective_ms ==
          doctest::Approx(evaluate_flat(silent.sg, L2, allreduce_cost{}, d2).objective_ms).epsilon(1e-12));
  }
}

TEST_CASE("the mapper's combined optimum simulates at least as fast as the CS, p2p, random maps and the other models' optima") {
  // The simulated measure is the busiest device per micro-batch (blocking sends and allreduce),
  // which the previous test shows equals the combined objective; here it is read from the
  // simulation of each mapping, the mapper's optimum proved.
  std::mt19937_64 rng(4242);
  int compared = 0;
  for (int trial = 0; trial < 25; ++trial) {
    const std::size_t S = 2 + rng() % 3, R = 1 + rng() % 3, D = S * R + rng() % 3, MB = 1 + rng() % 8;
    auto in = random_instance(rng, S, R, D, false);
    const link_costs L(in.topo);
    const simulation_options so{.micro_batches = MB, .blocking_sends = true, .blocking_allreduce = true};
    auto simulated = [&](const device_mapping& m) {
      in.pm.device_of.assign(m.begin(), m.end());
      const auto sim = simulate(in.pm, in.topo, so);
      return *std::max_element(sim.device_busy_ms.begin(), sim.device_busy_ms.end()) / double(MB);
    };
    const auto best = map_devices(in.sg, L, combined_cost{.micro_batches = MB}, {.threads = 1});
    REQUIRE(best.optimal);
    const double mine = simulated(best.device_of);
    CAPTURE(trial);
    for (auto b : {baseline::cs, baseline::p2p, baseline::random}) CHECK(mine <= simulated(baseline_map(in.sg, D, b, 7)) * (1 + 1e-9));
    CHECK(mine <= simulated(map_devices(in.sg, L, p2p_cost{}, {.threads = 1}).device_of) * (1 + 1e-9));
    CHECK(mine <= simulated(map_devices(in.sg, L, allreduce_cost{}, {.threads = 1}).device_of) * (1 + 1e-9));
    ++compared;
  }
  CHECK(compared == 25);
}
