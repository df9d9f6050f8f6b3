#include "devplace/sim/pipeline_simulator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "archetypes/node_topology.hpp"
#include "devplace/topology/matrix_topology.hpp"
#include "support/legacy_simulator.hpp"
#include "support/random_pipeline.hpp"

using namespace devplace;

namespace {
using test::flat_topology;
using test::uniform_chain;
using span = std::tuple<double, double>;
// The (start, end) of the events of one kind, stage and micro-batch (bucket), in start order.
std::vector<span> spans(const simulation_result& r, sim_task_kind k, std::size_t stage, std::size_t mb,
                        std::size_t replica = 0) {
  std::vector<span> out;
  for (const auto& e : r.timeline)
    if (e.kind == k && e.stage == stage && e.micro_batch == mb && (k == sim_task_kind::allreduce || e.replica == replica))
      out.emplace_back(e.start_ms, e.end_ms);
  return out;
}
void check_span(const simulation_result& r, sim_task_kind k, std::size_t stage, std::size_t mb, double start, double end,
                std::size_t replica = 0) {
  CAPTURE(to_string(k));
  CAPTURE(stage);
  CAPTURE(mb);
  const auto s = spans(r, k, stage, mb, replica);
  REQUIRE(s.size() == 1);
  CHECK(std::get<0>(s[0]) == doctest::Approx(start));
  CHECK(std::get<1>(s[0]) == doctest::Approx(end));
}
std::size_t count(const simulation_result& r, sim_task_kind k) {
  return std::size_t(std::count_if(r.timeline.begin(), r.timeline.end(), [&](const sim_event& e) { return e.kind == k; }));
}
}  // namespace

TEST_CASE("bucketed allreduce, GPipe, 2 stages x 2 replicas, MB = 2, 3 buckets: every event by hand") {
  // f = 1, b = 3, 0-byte activations (they order, take no time), P = 30 MB per stage, buckets of
  // 10 MB, 5 GB/s links: a bucket's ring allreduce over 2 replicas is 2 (2 − 1) T(10 MB / 2)
  // = 2 · 5e6 / 5e9 s = 2 ms. Both replicas of a stage run the same timeline.
  //   stage 0: F0 0..1, F1 1..2;  stage 1: F0 1..2, F1 2..3, B1 3..6, B0 6..9;
  //   stage 0: B1 6..9 (after B1 of stage 1), B0 9..12.
  // Last backward of stage 1: B0 6..9, buckets full at 6 + 3 · (1/3, 2/3, 1) = 7, 8, 9; one at a
  // time on the communicator: 7..9, 9..11, 11..13.
  // Stage 0: B0 9..12, full at 10, 11, 12: 10..12, 12..14, 14..16. Iteration 16.
  const auto m = uniform_chain(2, 2, 1.0, 3.0, 0.0, 30e6);
  const simulation_options o{.micro_batches = 2, .virtual_stages = 1, .dp_bucket_bytes = 10e6};
  const auto r = simulate(m, flat_topology(4, 5), o);
  for (std::size_t rep = 0; rep < 2; ++rep) {
    check_span(r, sim_task_kind::forward, 0, 0, 0, 1, rep);
    check_span(r, sim_task_kind::forward, 0, 1, 1, 2, rep);
    check_span(r, sim_task_kind::forward, 1, 0, 1, 2, rep);
    check_span(r, sim_task_kind::forward, 1, 1, 2, 3, rep);
    check_span(r, sim_task_kind::backward, 1, 1, 3, 6, rep);
    check_span(r, sim_task_kind::backward, 1, 0, 6, 9, rep);
    check_span(r, sim_task_kind::backward, 0, 1, 6, 9, rep);
    check_span(r, sim_task_kind::backward, 0, 0, 9, 12, rep);
  }
  check_span(r, sim_task_kind::allreduce, 1, 0, 7, 9);
  check_span(r, sim_task_kind::allreduce, 1, 1, 9, 11);
  check_span(r, sim_task_kind::allreduce, 1, 2, 11, 13);
  check_span(r, sim_task_kind::allreduce, 0, 0, 10, 12);
  check_span(r, sim_task_kind::allreduce, 0, 1, 12, 14);
  check_span(r, sim_task_kind::allreduce, 0, 2, 14, 16);
  CHECK(count(r, sim_task_kind::allreduce) == 6);
  CHECK(r.iteration_ms == doctest::Approx(16.0));
  // One allreduce of 30 MB after the last backward: 2 T(15 MB) = 6 ms after 12: 18.
  CHECK(simulate(m, flat_topology(4, 5), {.micro_batches = 2}).iteration_ms == doctest::Approx(18.0));
}

TEST_CASE("bucketed allreduce, 1F1B with recomputation, MB = 3, 2 buckets: every event by hand") {
  // f = 1, b = 2, recomputation: B takes ρ + β = 1 + 2 = 3. Activations and gradients of 10 MB
  // over 10 GB/s: 1 ms each. P = 20 MB, buckets of 10 MB: 2 T(5 MB) = 1 ms each.
  // 1F1B: stage 0 runs F0 F1 B0 F2 B1 B2, stage 1 F0 B0 F1 B1 F2 B2.
  //   s0: F0 0..1, act0 1..2, F1 1..2, act1 2..3;  s1: F0 2..3, B0 3..6, grad0 6..7, F1 6..7,
  //   B1 7..10, grad1 10..11;  s0: B0 7..10, F2 10..11, act2 11..12, B1 11..14;
  //   s1: F2 12..13, B2 13..16, grad2 16..17;  s0: B2 17..20.
  // Buckets full at start(B2) + ρ + β · (1/2, 1): stage 1 at 15, 16 → 15..16, 16..17;
  // stage 0 at 19, 20 → 19..20, 20..21. Iteration 21 (one 20 MB allreduce: 2 ms after 20, 22).
  const auto m = uniform_chain(2, 2, 1.0, 2.0, 10e6, 20e6);
  const simulation_options o{.micro_batches = 3, .schedule = pipeline_schedule::one_f_one_b, .recompute = true,
                             .dp_bucket_bytes = 10e6};
  const auto r = simulate(m, flat_topology(4, 10), o);
  const double F[2][3][2] = {{{0, 1}, {1, 2}, {10, 11}}, {{2, 3}, {6, 7}, {12, 13}}};
  const double B[2][3][2] = {{{7, 10}, {11, 14}, {17, 20}}, {{3, 6}, {7, 10}, {13, 16}}};
  for (std::size_t rep = 0; rep < 2; ++rep)
    for (std::size_t s = 0; s < 2; ++s)
      for (std::size_t mb = 0; mb < 3; ++mb) {
        check_span(r, sim_task_kind::forward, s, mb, F[s][mb][0], F[s][mb][1], rep);
        check_span(r, sim_task_kind::backward, s, mb, B[s][mb][0], B[s][mb][1], rep);
      }
  check_span(r, sim_task_kind::send_activation, 0, 2, 11, 12);
  check_span(r, sim_task_kind::send_gradient, 1, 2, 16, 17);
  check_span(r, sim_task_kind::allreduce, 1, 0, 15, 16);
  check_span(r, sim_task_kind::allreduce, 1, 1, 16, 17);
  check_span(r, sim_task_kind::allreduce, 0, 0, 19, 20);
  check_span(r, sim_task_kind::allreduce, 0, 1, 20, 21);
  CHECK(r.iteration_ms == doctest::Approx(21.0));
  CHECK(simulate(m, flat_topology(4, 10), {.micro_batches = 3, .schedule = pipeline_schedule::one_f_one_b, .recompute = true})
            .iteration_ms == doctest::Approx(22.0));
}

TEST_CASE("interleaved 1F1B, S = 2, v = 2, MB = 4: every pass by hand") {
  // Chunks 0..3, chunk c on device c mod 2, f = 1, b = 2, 0-byte messages, one replica.
  // Rank 0: W = (2−0−1)·2 + (2−1)·2 = 4 warm-up forwards; rank 1: W = 2. Forward i is local chunk
  // (i mod 4) / 2 on micro-batch (i / 4)·2 + i mod 2, backward i the other chunk first.
  //   dev 0: F(c0,m0) 0..1, F(c0,m1) 1..2, F(c2,m0) 2..3, F(c2,m1) 3..4, F(c0,m2) 4..5,
  //          B(c2,m0) 6..8, F(c0,m3) 8..9, B(c2,m1) 9..11, F(c2,m2) 11..12, B(c0,m0) 12..14,
  //          F(c2,m3) 14..15, B(c0,m1) 15..17, B(c2,m2) 18..20, B(c2,m3) 21..23, B(c0,m2) 23..25,
  //          B(c0,m3) 25..27
  //   dev 1: F(c1,m0) 1..2, F(c1,m1) 2..3, F(c3,m0) 3..4, B(c3,m0) 4..6, F(c3,m1) 6..7,
  //          B(c3,m1) 7..9, F(c1,m2) 9..10, B(c1,m0) 10..12, F(c1,m3) 12..13, B(c1,m1) 13..15,
  //          F(c3,m2) 15..16, B(c3,m2) 16..18, F(c3,m3) 18..19, B(c3,m3) 19..21, B(c1,m2) 21..23,
  //          B(c1,m3) 23..25
  // Iteration 27 = m v (f + b) + (S − 1)(f + b) = 24 + 3.
  pipeline_model m = uniform_chain(4, 1, 1.0, 2.0, 0.0, 0.0);
  m.device_of = {{0}, {1}, {0}, {1}};
  const auto r = simulate(m, flat_topology(2, 10), {.micro_batches = 4, .schedule = pipeline_schedule::interleaved, .virtual_stages = 2});
  const double F[4][4][2] = {{{0, 1}, {1, 2}, {4, 5}, {8, 9}},
                             {{1, 2}, {2, 3}, {9, 10}, {12, 13}},
                             {{2, 3}, {3, 4}, {11, 12}, {14, 15}},
                             {{3, 4}, {6, 7}, {15, 16}, {18, 19}}};
  const double B[4][4][2] = {{{12, 14}, {15, 17}, {23, 25}, {25, 27}},
                             {{10, 12}, {13, 15}, {21, 23}, {23, 25}},
                             {{6, 8}, {9, 11}, {18, 20}, {21, 23}},
                             {{4, 6}, {7, 9}, {16, 18}, {19, 21}}};
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t mb = 0; mb < 4; ++mb) {
      check_span(r, sim_task_kind::forward, c, mb, F[c][mb][0], F[c][mb][1]);
      check_span(r, sim_task_kind::backward, c, mb, B[c][mb][0], B[c][mb][1]);
    }
  CHECK(r.iteration_ms == doctest::Approx(27.0));
  CHECK(r.bubble_fraction == doctest::Approx(1.0 - 24.0 / 27.0));
}

TEST_CASE("two inter-node flows share the node's NIC: every event by hand") {
  // Node 0 holds devices 0, 1 (stage 0), node 1 devices 2, 3 (stage 1); links 10 GB/s, 10 MB
  // messages (1 ms), f = b = 1, MB = 1, no parameters.
  // Independent links: F 0..1, both activations 1..2, F 2..3, B 3..4, gradients 4..5, B 5..6.
  // One NIC per node: the activation of replica 0 holds node 0's egress and node 1's ingress NIC
  // 1..2, replica 1's waits: 2..3. dev 2: F 2..3, B 3..4, grad 4..5; dev 3: F 3..4, B 4..5,
  // grad 5..6; B on dev 0 5..6, on dev 1 6..7. Iteration 7.
  const auto m = uniform_chain(2, 2, 1.0, 1.0, 10e6, 0.0);
  matrix_topology t = flat_topology(4, 10);
  const simulation_options o{.micro_batches = 1};
  CHECK(simulate(m, t, o).iteration_ms == doctest::Approx(6.0));
  t.set_nodes({0, 0, 1, 1}, {1, 1}, {10.0, 10.0});
  const auto r = simulate(m, t, o);
  check_span(r, sim_task_kind::send_activation, 0, 0, 1, 2, 0);
  check_span(r, sim_task_kind::send_activation, 0, 0, 2, 3, 1);
  check_span(r, sim_task_kind::forward, 1, 0, 2, 3, 0);
  check_span(r, sim_task_kind::forward, 1, 0, 3, 4, 1);
  check_span(r, sim_task_kind::send_gradient, 1, 0, 4, 5, 0);
  check_span(r, sim_task_kind::send_gradient, 1, 0, 5, 6, 1);
  check_span(r, sim_task_kind::backward, 0, 0, 5, 6, 0);
  check_span(r, sim_task_kind::backward, 0, 0, 6, 7, 1);
  CHECK(r.iteration_ms == doctest::Approx(7.0));
  // Two NICs per node: no waiting (6); two NICs of 5 GB/s: every transfer 2 ms, 1..3, F 3..4,
  // B 4..5, grad 5..7, B 7..8.
  t.set_nodes({0, 0, 1, 1}, {2, 2}, {10.0, 10.0});
  CHECK(simulate(m, t, o).iteration_ms == doctest::Approx(6.0));
  t.set_nodes({0, 0, 1, 1}, {2, 2}, {5.0, 5.0});
  CHECK(simulate(m, t, o).iteration_ms == doctest::Approx(8.0));
  // The same through the node archetype.
  const archetypes::node_topology a{std::vector<std::vector<double>>(4, std::vector<double>(4, 10.0)), {0, 0, 1, 1}, {1, 1}, {10.0, 10.0}};
  CHECK(simulate(m, a, o).iteration_ms == doctest::Approx(7.0));
}

TEST_CASE("an allreduce ring across nodes is limited by the NICs its links share") {
  // One stage on devices 0, 1 (node 0) and 2, 3 (node 1), ring 0 → 1 → 2 → 3 → 0, links 10 GB/s.
  // P = 40 MB: 2 (4 − 1) = 6 steps of 10 MB. Independent links: 1 ms a step, 6 ms. One NIC of
  // 5 GB/s per node, one ring link leaving each node: 2 ms a step, 12 ms; the same NIC with the
  // ring 0 → 2 → 1 → 3 → 0 (every link crosses, two per NIC): 2.5 GB/s, 4 ms a step, 24 ms.
  pipeline_model m = uniform_chain(1, 4, 0.0, 0.0, 0.0, 40e6);
  matrix_topology t = flat_topology(4, 10);
  CHECK(simulate(m, t, {.micro_batches = 1}).iteration_ms == doctest::Approx(6.0));
  t.set_nodes({0, 0, 1, 1}, {1, 1}, {5.0, 5.0});
  CHECK(simulate(m, t, {.micro_batches = 1}).iteration_ms == doctest::Approx(12.0));
  m.device_of = {{0, 2, 1, 3}};
  CHECK(simulate(m, t, {.micro_batches = 1}).iteration_ms == doctest::Approx(24.0));
}

TEST_CASE("interleaved with equal chunks and no communication: llm/evaluate.hpp's closed form") {
  // T = m · t_max + (Σ_i t_i − t_max) / v with t_i = v c per device: (m v + S − 1) c, a bubble
  // of (S − 1) / (v m) of the ideal m v c.
  for (std::size_t S : {2, 3, 4})
    for (std::size_t v : {1, 2, 3, 4})
      for (std::size_t k : {1, 2, 3}) {
        const std::size_t MB = k * S;
        pipeline_model m = uniform_chain(S * v, 1, 1.5, 2.5, 0.0, 0.0);
        for (std::size_t c = 0; c < S * v; ++c) m.device_of[c] = {c % S};
        const auto r = simulate(m, flat_topology(S, 10), {.micro_batches = MB, .schedule = pipeline_schedule::interleaved, .virtual_stages = v});
        CAPTURE(S);
        CAPTURE(v);
        CAPTURE(MB);
        const double c = 4.0, tmax = double(v) * c, sum = double(S) * tmax;
        CHECK(r.iteration_ms == doctest::Approx(double(MB) * tmax + (sum - tmax) / double(v)));
        CHECK(r.iteration_ms / (double(MB * v) * c) - 1 == doctest::Approx(double(S - 1) / double(v * MB)));
      }
}

TEST_CASE("interleaved schedule: bad settings are clear errors") {
  pipeline_model m = uniform_chain(4, 1, 1.0, 1.0, 0.0, 0.0);
  m.device_of = {{0}, {1}, {0}, {1}};
  const auto t = flat_topology(2, 10);
  CHECK_THROWS_WITH(simulate(m, t, {.micro_batches = 3, .schedule = pipeline_schedule::interleaved, .virtual_stages = 2}),
                    doctest::Contains("multiple of the 2 pipeline ranks"));
  CHECK_THROWS_WITH(simulate(m, t, {.micro_batches = 4, .schedule = pipeline_schedule::one_f_one_b, .virtual_stages = 2}),
                    doctest::Contains("interleaved schedule"));
  m.device_of[3] = {0};
  CHECK_THROWS_WITH(simulate(m, flat_topology(2, 10), {.micro_batches = 4, .schedule = pipeline_schedule::interleaved, .virtual_stages = 2}),
                    doctest::Contains("must repeat row 1"));
  CHECK_THROWS_WITH(simulate(uniform_chain(2, 1, 1, 1, 0, 0), flat_topology(2, 10), {.dp_bucket_bytes = -1}), doctest::Contains("dp_bucket_bytes"));
  CHECK_THROWS_WITH(simulate(uniform_chain(1, 2, 1, 1, 0, 2e6), flat_topology(2, 10), {.dp_bucket_bytes = 1}), doctest::Contains("over 10^6 buckets"));
}

namespace {
// The simulation with no latency (a bucket pays 2 (R − 1) latencies of its own).
test::random_pipeline ov_random(std::mt19937_64& rng, bool ragged) {
  auto p = test::make_random_pipeline(rng, ragged);
  const Eigen::MatrixXd& bw = p.topology.bandwidth_matrix();
  p.topology = matrix_topology(bw, Eigen::MatrixXd::Zero(bw.rows(), bw.cols()), p.topology.memory());
  return p;
}
bool same_timeline(const simulation_result& a, const simulation_result& b) {
  if (a.iteration_ms != b.iteration_ms || a.timeline.size() != b.timeline.size() || a.device_busy_ms != b.device_busy_ms ||
      a.peak_in_flight != b.peak_in_flight)
    return false;
  for (std::size_t i = 0; i < a.timeline.size(); ++i) {
    const auto &x = a.timeline[i], &y = b.timeline[i];
    if (x.kind != y.kind || x.stage != y.stage || x.replica != y.replica || x.micro_batch != y.micro_batch ||
        x.start_ms != y.start_ms || x.end_ms != y.end_ms || x.bytes != y.bytes || x.after != y.after)
      return false;
  }
  return true;
}
}  // namespace

TEST_CASE("property: dp_bucket_bytes = 0 and no nodes reproduce the earlier simulator exactly") {
  std::mt19937_64 rng(20261128);
  for (int trial = 0; trial < 300; ++trial) {
    const auto p = test::make_random_pipeline(rng, trial % 2 == 1);
    CAPTURE(trial);
    const auto now = simulate(p.model, p.topology, p.options);
    const auto before = test::legacy::simulate_core(p.model, p.topology.bandwidth_matrix(), p.topology.latency_matrix(), p.options);
    CHECK(same_timeline(now, before));
  }
}

TEST_CASE("property: bucketed overlap is never slower than one allreduce, never faster than compute or communication alone") {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 300; ++trial) {
    auto p = ov_random(rng, trial % 2 == 1);
    CAPTURE(trial);
    const auto one = simulate(p.model, p.topology, p.options);
    auto o = p.options;
    o.dp_bucket_bytes = 1e6 * double(1 + rng() % 20);
    const auto bucketed = simulate(p.model, p.topology, o);
    CHECK(bucketed.iteration_ms <= one.iteration_ms + 1e-9);
    auto compute_only = p.options;
    compute_only.allreduce = false;
    double comm = 0;  // the longest stage allreduce alone (its buckets add up to it without latency)
    for (const auto& e : one.timeline)
      if (e.kind == sim_task_kind::allreduce) comm = std::max(comm, e.end_ms - e.start_ms);
    const double lower = std::max(simulate(p.model, p.topology, compute_only).iteration_ms, comm + o.update_ms);
    CHECK(bucketed.iteration_ms >= lower - 1e-9);
  }
}

TEST_CASE("property: interleaved with v = 1 is 1F1B exactly") {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 200; ++trial) {
    auto p = test::make_random_pipeline(rng, trial % 2 == 1);
    p.options.schedule = pipeline_schedule::one_f_one_b;
    auto i = p.options;
    i.schedule = pipeline_schedule::interleaved;
    CAPTURE(trial);
    CHECK(same_timeline(simulate(p.model, p.topology, p.options), simulate(p.model, p.topology, i)));
  }
}

TEST_CASE("property: NICs that are never a bottleneck equal independent links") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    auto p = test::make_random_pipeline(rng, trial % 2 == 1);
    CAPTURE(trial);
    const auto plain = simulate(p.model, p.topology, p.options);
    const std::size_t D = p.topology.num_devices(), N = 1 + rng() % D;
    std::vector<std::size_t> node(D);
    for (auto& n : node) n = rng() % N;
    for (std::size_t n = 0; n < N; ++n) node[n] = n;  // every node holds a device
    matrix_topology t = p.topology;
    t.set_nodes(node, std::vector<std::size_t>(N, 1), std::vector<double>(N, std::numeric_limits<double>::infinity()));
    CHECK(same_timeline(plain, simulate(p.model, t, p.options)));
    // Finite NICs as fast as the fastest link, more of them than transfers: never waited for.
    t.set_nodes(node, std::vector<std::size_t>(N, 100000), std::vector<double>(N, std::max(1.0, t.bandwidth_matrix().maxCoeff())));
    CHECK(same_timeline(plain, simulate(p.model, t, p.options)));
  }
}

TEST_CASE("device_order: every pass once, each forward before its backward, Megatron's warm-up") {
  for (std::size_t S : {1, 2, 3, 4})
    for (std::size_t v : {1, 2, 3})
      for (std::size_t k : {1, 2, 3}) {
        const std::size_t MB = k * S;
        for (std::size_t rank = 0; rank < S; ++rank) {
          CAPTURE(S);
          CAPTURE(v);
          CAPTURE(MB);
          CAPTURE(rank);
          const auto order = device_order(pipeline_schedule::interleaved, S, rank, v, MB);
          REQUIRE(order.size() == 2 * MB * v);
          std::vector<int> seen(2 * MB * v, 0);
          std::size_t first_backward = order.size();
          for (std::size_t i = 0; i < order.size(); ++i) {
            const auto& st = order[i];
            REQUIRE(st.chunk < v);
            REQUIRE(st.micro_batch < MB);
            const std::size_t f = st.chunk * MB + st.micro_batch;
            if (st.backward) {
              CHECK(seen[f] == 1);  // its forward ran
              first_backward = std::min(first_backward, i);
            }
            ++seen[(st.backward ? MB * v : 0) + f];
          }
          for (int x : seen) CHECK(x == 1);
          // Forwards before the first backward: the W warm-up ones and one more of the steady
          // phase, W = 2 (S − rank − 1) + (v − 1) S capped at MB v (1F1B: min(S − rank, MB)).
          const std::size_t W = v == 1 ? std::min(S - rank, MB) - 1 : std::min(2 * (S - rank - 1) + (v - 1) * S, MB * v);
          CHECK(first_backward == std::min(W + 1, MB * v));
        }
      }
  CHECK_THROWS_WITH((void)device_order(pipeline_schedule::gpipe, 2, 0, 2, 4), doctest::Contains("one chunk per device"));
  CHECK_THROWS_WITH((void)device_order(pipeline_schedule::interleaved, 2, 2, 2, 4), doctest::Contains("rank 2 >= S = 2"));
}
