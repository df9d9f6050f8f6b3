#include "devplace/sim/pipeline_simulator.hpp"

#include <doctest/doctest.h>

#include "support/random_pipeline.hpp"

#include <algorithm>
#include <vector>

#include "devplace/dag/op_graph.hpp"
#include "devplace/topology/matrix_topology.hpp"

using namespace devplace;

namespace {
using test::flat_topology;
using test::uniform_chain;
}  // namespace

TEST_CASE("one stage: the micro-batches run back to back") {
  const auto r = simulate(uniform_chain(1, 1, 2.0, 3.0), flat_topology(1, 10), {.micro_batches = 4, .micro_batch_size = 8});
  CHECK(r.iteration_ms == doctest::Approx(20.0));
  CHECK(r.samples_per_s == doctest::Approx(8.0 * 4 / 0.020));
  CHECK(r.bubble_fraction == doctest::Approx(0.0));
  CHECK(r.timeline.size() == 8);
}

TEST_CASE("S equal stages under GPipe: (MB + S - 1)(f + b), bubble (S - 1)/(MB + S - 1)") {
  for (std::size_t S : {2, 3, 4, 8})
    for (std::size_t MB : {1, 2, 4, 7}) {
      const auto r = simulate(uniform_chain(S, 1, 1.5, 2.5), flat_topology(S, 10), {.micro_batches = MB});
      CAPTURE(S);
      CAPTURE(MB);
      CHECK(r.iteration_ms == doctest::Approx(double(MB + S - 1) * 4.0));
      CHECK(r.bubble_fraction == doctest::Approx(double(S - 1) / double(MB + S - 1)));
      for (std::size_t s = 0; s < S; ++s) CHECK(r.peak_in_flight[s] == MB);
      // 1F1B: the same iteration for uniform stages, with at most min(S - s, MB) in flight.
      const auto q = simulate(uniform_chain(S, 1, 1.5, 2.5), flat_topology(S, 10), {.micro_batches = MB, .schedule = pipeline_schedule::one_f_one_b});
      CHECK(q.iteration_ms == doctest::Approx(double(MB + S - 1) * 4.0));
      for (std::size_t s = 0; s < S; ++s) CHECK(q.peak_in_flight[s] == std::min(S - s, MB));
    }
}

TEST_CASE("a transfer across a slow link adds bytes / bandwidth each way") {
  // S = 2, MB = 1: F0, activation, F1, B1, gradient, B0. 50 MB over 5 GB/s = 10 ms each way.
  const Eigen::MatrixXd bw{{0.0, 5.0}, {5.0, 0.0}};
  const auto r = simulate(uniform_chain(2, 1, 1.0, 2.0, 50e6), matrix_topology(bw), {.micro_batches = 1});
  CHECK(r.iteration_ms == doctest::Approx(2 * 1.0 + 2 * 2.0 + 2 * 10.0));
  // With latency 100 us on the link: + 0.1 ms each way.
  Eigen::MatrixXd lat(2, 2);
  lat << 0, 100, 100, 0;
  const auto l = simulate(uniform_chain(2, 1, 1.0, 2.0, 50e6), matrix_topology(bw, lat, {1e9, 1e9}), {.micro_batches = 1});
  CHECK(l.iteration_ms == doctest::Approx(26.2));
}

TEST_CASE("two transfers sharing a link are serialised") {
  // Stage 0 forwards take 1 ms, each activation 10 ms on the same link: the second waits.
  const auto m = uniform_chain(2, 1, 1.0, 0.0, 10e6);
  const auto r = simulate(m, flat_topology(2, 1), {.micro_batches = 2, .allreduce = false});
  std::vector<sim_event> acts;
  for (const auto& e : r.timeline) if (e.kind == sim_task_kind::send_activation) acts.push_back(e);
  REQUIRE(acts.size() == 2);
  CHECK(acts[0].start_ms == doctest::Approx(1.0));
  CHECK(acts[1].start_ms == doctest::Approx(11.0));  // ready at 2, link free at 11
  CHECK(acts[1].end_ms == doctest::Approx(21.0));
  const auto free = simulate(m, flat_topology(2, 1), {.micro_batches = 2, .serialize_links = false});
  std::vector<sim_event> acts2;
  for (const auto& e : free.timeline) if (e.kind == sim_task_kind::send_activation) acts2.push_back(e);
  CHECK(acts2[1].start_ms == doctest::Approx(2.0));
}

TEST_CASE("ring allreduce on a known ring") {
  // One stage on 3 replicas, ring 0 -> 1 -> 2 -> 0 with bandwidths 10, 10 and 5 GB/s (symmetric).
  // P = 30 MB: each of the 2(R-1) = 4 steps moves P/R = 10 MB; the slowest link takes 2 ms.
  Eigen::MatrixXd bw(3, 3);
  bw << 0, 10, 5, 10, 0, 10, 5, 10, 0;
  pipeline_model m = uniform_chain(1, 3, 1.0, 1.0, 0, 30e6);
  m.device_of = {{0, 1, 2}};
  const auto r = simulate(m, matrix_topology(bw), {.micro_batches = 2});
  CHECK(r.iteration_ms == doctest::Approx(2 * 2.0 + 4 * 2.0));
  const auto no_ar = simulate(m, matrix_topology(bw), {.micro_batches = 2, .allreduce = false});
  CHECK(no_ar.iteration_ms == doctest::Approx(4.0));
  CHECK(std::count_if(r.timeline.begin(), r.timeline.end(), [](const sim_event& e) { return e.kind == sim_task_kind::allreduce; }) == 1);
}

TEST_CASE("recomputation adds the forward time to every backward") {
  const auto a = simulate(uniform_chain(3, 1, 1.0, 2.0), flat_topology(3, 10), {.micro_batches = 4});
  const auto b = simulate(uniform_chain(3, 1, 1.0, 2.0), flat_topology(3, 10), {.micro_batches = 4, .recompute = true});
  CHECK(a.iteration_ms == doctest::Approx(6 * 3.0));
  CHECK(b.iteration_ms == doctest::Approx(6 * 4.0));
}

TEST_CASE("make_pipeline_model sums stages and messages of an op graph") {
  op_graph_builder bld;
  for (int i = 0; i < 4; ++i) bld.add_op({.id = i, .fwd_ms = 1.0 + i, .bwd_ms = 2.0, .param_bytes = 10.0});
  bld.add_edge(0, 1, 5);
  bld.add_edge(1, 2, 7);
  bld.add_edge(0, 3, 11);
  bld.add_edge(2, 3, 13);
  const op_graph g = std::move(bld).build();
  const auto m = make_pipeline_model(g, {0, 0, 1, 1}, 2, {{0}, {1}});
  CHECK(m.forward_ms == std::vector<double>{3.0, 7.0});
  CHECK(m.backward_ms == std::vector<double>{4.0, 4.0});
  CHECK(m.param_bytes == std::vector<double>{20.0, 20.0});
  CHECK(m.message_bytes[0][1] == 18.0);  // 1 -> 2 and 0 -> 3
  CHECK(m.message_bytes[1][0] < 0);       // no edge that way
}
