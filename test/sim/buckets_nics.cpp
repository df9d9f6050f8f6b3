#include "devplace/sim/pipeline_simulator.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "devplace/dag/op_graph.hpp"
#include "devplace/topology/matrix_topology.hpp"
#include "support/random_pipeline.hpp"

// Gradient buckets that fill as the operators' backward passes finish, and the data-parallel
// allreduce holding the NICs of the nodes its ring crosses. Every time below is computed by hand.

using namespace devplace;

namespace {  // names prefixed bn_: the unity build shares one anonymous namespace per batch

const sim_event& bn_only(const simulation_result& r, sim_task_kind k, std::size_t stage, std::size_t mb, std::size_t replica = 0) {
  const sim_event* found = nullptr;
  std::size_t n = 0;
  for (const auto& e : r.timeline)
    if (e.kind == k && e.stage == stage && e.micro_batch == mb && (k == sim_task_kind::allreduce || e.replica == replica)) {
      found = &e;
      ++n;
    }
  REQUIRE(n == 1);
  return *found;
}
void bn_span(const simulation_result& r, sim_task_kind k, std::size_t stage, std::size_t mb, double start, double end,
                std::size_t replica = 0) {
  CAPTURE(to_string(k));
  CAPTURE(stage);
  CAPTURE(mb);
  const auto& e = bn_only(r, k, stage, mb, replica);
  CHECK(e.start_ms == doctest::Approx(start));
  CHECK(e.end_ms == doctest::Approx(end));
}
// Bucket k of stage s runs from..to.
void bn_buckets(const simulation_result& r, std::size_t s, const std::vector<std::pair<double, double>>& spans) {
  for (std::size_t k = 0; k < spans.size(); ++k) bn_span(r, sim_task_kind::allreduce, s, k, spans[k].first, spans[k].second);
}
}  // namespace

TEST_CASE("gradient profile: buckets are full when the operators holding their bytes have run their backward") {
  // One stage on devices 0 and 1 (5 GB/s), f = 1, b = 4, P = 30 MB in 10 MB buckets: a bucket's
  // ring allreduce over 2 replicas is 2 (2 − 1) · 5 MB / 5 GB/s = 2 ms. MB = 1: F 0..1, B 1..5.
  pipeline_model m = test::uniform_chain(1, 2, 1.0, 4.0, 0.0, 30e6);
  const auto t = test::flat_topology(2, 5);
  const simulation_options o{.micro_batches = 1, .dp_bucket_bytes = 10e6};
  // No profile, a constant rate: full at 1 + 4 · (1/3, 2/3, 1) = 7/3, 11/3, 5; one at a time:
  // 7/3..13/3, 13/3..19/3, 19/3..25/3.
  auto r = simulate(m, t, o);
  bn_buckets(r, 0, {{7.0 / 3, 13.0 / 3}, {13.0 / 3, 19.0 / 3}, {19.0 / 3, 25.0 / 3}});
  CHECK(r.iteration_ms == doctest::Approx(25.0 / 3));
  // Backward order: a softmax (2 ms, no parameters), a layer (1 ms, 10 MB), an embedding (1 ms,
  // 20 MB). They end at 3, 4, 5: bucket 0 (bytes up to 10 MB) is full when the layer ends, 4;
  // buckets 1 and 2 (20, 30 MB) when the embedding ends, 5. 4..6, 6..8, 8..10.
  m.gradient_profile = {{{2, 0}, {1, 10e6}, {1, 20e6}}};
  r = simulate(m, t, o);
  bn_buckets(r, 0, {{4, 6}, {6, 8}, {8, 10}});
  CHECK(r.iteration_ms == doctest::Approx(10.0));
  // The same proportions in other units (times sum to 2, bytes to 15 MB): the same timeline.
  m.gradient_profile = {{{1, 0}, {0.5, 5e6}, {0.5, 10e6}}};
  CHECK(simulate(m, t, o).iteration_ms == doctest::Approx(10.0));
  // Parameters first: the embedding (1 ms, 20 MB) ends at 2 and fills buckets 0 and 1, the layer
  // (1 ms, 10 MB) at 3 fills bucket 2, the softmax runs to 5: 2..4, 4..6, 6..8; iteration 8.
  m.gradient_profile = {{{1, 20e6}, {1, 10e6}, {2, 0}}};
  r = simulate(m, t, o);
  bn_buckets(r, 0, {{2, 4}, {4, 6}, {6, 8}});
  CHECK(r.iteration_ms == doctest::Approx(8.0));
  // With recomputation ρ = f = 1 comes first: B 1..6, operators end at 4, 5, 6 (the softmax
  // profile): buckets full at 5, 6, 6: 5..7, 7..9, 9..11.
  m.gradient_profile = {{{2, 0}, {1, 10e6}, {1, 20e6}}};
  auto orc = o;
  orc.recompute = true;
  r = simulate(m, t, orc);
  bn_span(r, sim_task_kind::backward, 0, 0, 1, 6);
  bn_buckets(r, 0, {{5, 7}, {7, 9}, {9, 11}});
  // Without buckets the profile changes nothing: one 30 MB allreduce (6 ms) after B, 5..11.
  CHECK(simulate(m, t, {.micro_batches = 1}).iteration_ms == doctest::Approx(11.0));
}

TEST_CASE("gradient profile: scaled to a replica's share with unequal replica counts, under GPipe with MB = 2") {
  // Stage 0 on devices 0, 1 (f = 1, b = 2, P = 20 MB, 10 MB buckets: 2 ms each at 5 GB/s), stage 1
  // on devices 2, 3, 4, 5 (f = b = 1, no parameters), 0-byte activations: R̂ = 4, so stage 0's
  // replicas run twice its times (F 2, B 4) and stage 1's once.
  //   s0: F0 0..2, F1 2..4;  s1: F0 2..3, F1 4..5, B1 5..6, B0 6..7;  s0: B1 6..10, B0 10..14.
  // Profile (backward order): a 1 ms operator without parameters, then 1 ms holding the 20 MB.
  // Scaled to B = 4 ms: they end at 12 and 14; both buckets full at 14: 14..16, 16..18.
  // Without it: full at 10 + 4 · (1/2, 1) = 12, 14: 12..14, 14..16.
  pipeline_model m = test::uniform_chain(2, 2, 1.0, 1.0, 0.0, 0.0);
  m.replicas = 4;
  m.forward_ms = {1, 1};
  m.backward_ms = {2, 1};
  m.param_bytes = {20e6, 0};
  m.device_of = {{0, 1}, {2, 3, 4, 5}};
  const auto t = test::flat_topology(6, 5);
  const simulation_options o{.micro_batches = 2, .dp_bucket_bytes = 10e6};
  auto r = simulate(m, t, o);
  bn_span(r, sim_task_kind::backward, 0, 0, 10, 14);
  bn_buckets(r, 0, {{12, 14}, {14, 16}});
  m.gradient_profile = {{{1, 0}, {1, 20e6}}, {}};
  r = simulate(m, t, o);
  bn_buckets(r, 0, {{14, 16}, {16, 18}});
  CHECK(r.iteration_ms == doctest::Approx(18.0));
}

TEST_CASE("make_pipeline_model fills the gradient profile in backward (reverse topological) order") {
  // Operators added as 0 = head (F 0.25, B 2.5, no parameters), 1 = layer (F 0.25, B 1, 10 MB),
  // 2 = embedding (F 0.5, B 0.5, 20 MB), edges embedding → layer → head: the backward runs head,
  // layer, embedding (not the reverse of the ids).
  op_graph_builder b;
  b.add_op({.id = 0, .fwd_ms = 0.25, .bwd_ms = 2.5});
  b.add_op({.id = 1, .fwd_ms = 0.25, .bwd_ms = 1, .param_bytes = 10e6});
  b.add_op({.id = 2, .fwd_ms = 0.5, .bwd_ms = 0.5, .param_bytes = 20e6});
  b.add_edge(2, 1, 1e6);
  b.add_edge(1, 0, 1e6);
  const op_graph g = std::move(b).build();
  const auto m = make_pipeline_model(g, {0, 0, 0}, 1, {{0, 1}});
  REQUIRE(m.gradient_profile.size() == 1);
  REQUIRE(m.gradient_profile[0].size() == 3);
  const double expect[3][2] = {{2.5, 0}, {1, 10e6}, {0.5, 20e6}};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(m.gradient_profile[0][i].backward_ms == expect[i][0]);
    CHECK(m.gradient_profile[0][i].param_bytes == expect[i][1]);
  }
  // F 0..1, B 1..5; the operators end at 3.5, 4.5, 5: bucket 0 (10 MB) full at 4.5, buckets 1 and
  // 2 at 5; 2 ms each at 5 GB/s: 4.5..6.5, 6.5..8.5, 8.5..10.5. (The constant rate gives 25/3,
  // the reverse of the ids 7.5.)
  const auto r = simulate(m, test::flat_topology(2, 5), {.micro_batches = 1, .dp_bucket_bytes = 10e6});
  bn_buckets(r, 0, {{4.5, 6.5}, {6.5, 8.5}, {8.5, 10.5}});
  CHECK(r.iteration_ms == doctest::Approx(10.5));
  // Two stages: the embedding and the layer in stage 0, the head in stage 1; a row per stage.
  const auto two = make_pipeline_model(g, {1, 0, 0}, 2, {{0}, {1}});
  REQUIRE(two.gradient_profile.size() == 2);
  REQUIRE(two.gradient_profile[0].size() == 2);
  REQUIRE(two.gradient_profile[1].size() == 1);
  CHECK(two.gradient_profile[0][0].param_bytes == 10e6);
  CHECK(two.gradient_profile[0][1].param_bytes == 20e6);
  CHECK(two.gradient_profile[1][0].backward_ms == 2.5);
}

TEST_CASE("gradient profile: bad profiles are clear errors") {
  pipeline_model m = test::uniform_chain(2, 2, 1.0, 1.0, 0.0, 1e6);
  const auto t = test::flat_topology(4, 5);
  m.gradient_profile = {{{1, 1e6}}};
  CHECK_THROWS_WITH(simulate(m, t), doctest::Contains("gradient_profile needs no row or one per stage"));
  m.gradient_profile = {{{1, -1}}, {}};
  CHECK_THROWS_WITH(simulate(m, t), doctest::Contains("gradient_profile row 0 has a negative or non-finite entry"));
  m.gradient_profile = {{}, {{1, 0}}};
  CHECK_THROWS_WITH(simulate(m, t), doctest::Contains("gradient_profile row 1 has no parameter bytes"));
  m.gradient_profile = {{{0, 1e6}}, {}};
  CHECK_THROWS_WITH(simulate(m, t), doctest::Contains("gradient_profile row 0 has no backward time"));
  m.gradient_profile = {{{1, 1e6}}, {}};
  CHECK(simulate(m, t, {.dp_bucket_bytes = 1e5}).iteration_ms > 0);
}

namespace {
// Devices 0, 1 on node 0 and 2, 3 on node 1, links 10 GB/s. Stage 0: devices 0 and 2 (its ring
// 0 → 2 → 0 leaves and enters each node once), P = 40 MB: 2 (2 − 1) · 20 MB / 10 GB/s = 4 ms.
// Stage 1 on device 1 (node 0), stage 2 on device 3 (node 1), one replica each, so with R̂ = 2
// they run twice their times: F1 = 2, B1 = 1, F2 = B2 = 1. The edge 1 → 2 carries 5 MB per
// micro-batch, 10 MB for the round: 1 ms each way, between the nodes. No edge joins stage 0.
pipeline_model bn_crossing_model(double f0) {
  pipeline_model m;
  m.stages = 3;
  m.replicas = 2;
  m.forward_ms = {f0, 1, 0.5};
  m.backward_ms = {1, 0.5, 0.5};
  m.param_bytes = {40e6, 0, 0};
  m.message_bytes.assign(3, std::vector<double>(3, -1.0));
  m.message_bytes[1][2] = 5e6;
  m.device_of = {{0, 2}, {1}, {3}};
  return m;
}
}  // namespace

TEST_CASE("an allreduce across nodes and a p2p transfer contend for one NIC per node: every event by hand") {
  matrix_topology t = test::flat_topology(4, 10);
  const simulation_options o{.micro_batches = 1};
  // Both ready at 2 (stage 0: F 0..1, B 1..2; stage 1: F 0..2). The activation, created first,
  // takes node 0's egress and node 1's ingress NIC 2..3; the allreduce needs every NIC of both
  // nodes and runs 3..7. F2 3..4, B2 4..5; the gradient 3 → 1 needs node 1's egress and node 0's
  // ingress NIC, held by the allreduce: 7..8; B1 8..9.
  t.set_nodes({0, 0, 1, 1}, {1, 1}, {10.0, 10.0});
  auto r = simulate(bn_crossing_model(1.0), t, o);
  bn_span(r, sim_task_kind::send_activation, 1, 0, 2, 3);
  bn_span(r, sim_task_kind::allreduce, 0, 0, 3, 7);
  bn_span(r, sim_task_kind::forward, 2, 0, 3, 4);
  bn_span(r, sim_task_kind::send_gradient, 2, 0, 7, 8);
  bn_span(r, sim_task_kind::backward, 1, 0, 8, 9);
  CHECK(r.iteration_ms == doctest::Approx(9.0));
  // Without nodes they overlap: activation 2..3, allreduce 2..6, gradient 5..6, B1 6..7.
  const simulation_result free_nics[2] = {simulate(bn_crossing_model(1.0), test::flat_topology(4, 10), o), [&] {
                                            matrix_topology inf = test::flat_topology(4, 10);
                                            const double x = std::numeric_limits<double>::infinity();
                                            inf.set_nodes({0, 0, 1, 1}, {1, 1}, {x, x});
                                            return simulate(bn_crossing_model(1.0), inf, o);
                                          }()};
  for (const auto& f : free_nics) {
    bn_span(f, sim_task_kind::send_activation, 1, 0, 2, 3);
    bn_span(f, sim_task_kind::allreduce, 0, 0, 2, 6);
    bn_span(f, sim_task_kind::send_gradient, 2, 0, 5, 6);
    CHECK(f.iteration_ms == doctest::Approx(7.0));
  }
  // The allreduce first: with F0 = 0.5 it is ready at 1.5 and holds the NICs 1.5..5.5; the
  // activation ready at 2 waits: 5.5..6.5, F2 6.5..7.5, B2 7.5..8.5, gradient 8.5..9.5, B1
  // 9.5..10.5. Without nodes: 7 as above.
  r = simulate(bn_crossing_model(0.5), t, o);
  bn_span(r, sim_task_kind::allreduce, 0, 0, 1.5, 5.5);
  bn_span(r, sim_task_kind::send_activation, 1, 0, 5.5, 6.5);
  bn_span(r, sim_task_kind::send_gradient, 2, 0, 8.5, 9.5);
  CHECK(r.iteration_ms == doctest::Approx(10.5));
  CHECK(simulate(bn_crossing_model(0.5), test::flat_topology(4, 10), o).iteration_ms == doctest::Approx(7.0));
}

TEST_CASE("an allreduce holds min(n, k) of a node's n NICs for its k ring links: every event by hand") {
  // Node 0 = devices 0, 1, 4; node 1 = 2, 3, 5; links 10 GB/s. Stage 0 on 0, 2, 1, 3: the ring
  // 0 → 2 → 1 → 3 → 0 crosses on every link, 2 leaving and 2 entering each node; P = 40 MB,
  // 2 (4 − 1) = 6 steps of 10 MB at 10 GB/s (n ≥ 2 NICs: min(1, n / 2) of a 10 GB/s NIC): 6 ms.
  // Stage 1 on device 4, stage 2 on device 5, R̂ = 4: F1 = 4 · 0.5 = 2, B1 = F2 = B2 = 1; the
  // edge 1 → 2 carries 4 · 2.5 MB = 10 MB: 1 ms. Stage 0: F 0..1, B 1..2.
  pipeline_model m;
  m.stages = 3;
  m.replicas = 4;
  m.forward_ms = {1, 0.5, 0.25};
  m.backward_ms = {1, 0.25, 0.25};
  m.param_bytes = {40e6, 0, 0};
  m.message_bytes.assign(3, std::vector<double>(3, -1.0));
  m.message_bytes[1][2] = 2.5e6;
  m.device_of = {{0, 2, 1, 3}, {4}, {5}};
  matrix_topology t = test::flat_topology(6, 10);
  const simulation_options o{.micro_batches = 1};
  // Two NICs per node: at 2 the activation takes one egress NIC of node 0 (2..3), the allreduce
  // needs both: 3..9. F2 3..4, B2 4..5, the gradient needs an egress NIC of node 1, both held: 9..10,
  // B1 10..11.
  t.set_nodes({0, 0, 1, 1, 0, 1}, {2, 2}, {10.0, 10.0});
  auto r = simulate(m, t, o);
  bn_span(r, sim_task_kind::send_activation, 1, 0, 2, 3);
  bn_span(r, sim_task_kind::allreduce, 0, 0, 3, 9);
  bn_span(r, sim_task_kind::send_gradient, 2, 0, 9, 10);
  CHECK(r.iteration_ms == doctest::Approx(11.0));
  // Three NICs per node: the allreduce holds two, 2..8, the transfers take the third: gradient
  // 5..6, B1 6..7; iteration 8, as without nodes.
  t.set_nodes({0, 0, 1, 1, 0, 1}, {3, 3}, {10.0, 10.0});
  r = simulate(m, t, o);
  bn_span(r, sim_task_kind::send_activation, 1, 0, 2, 3);
  bn_span(r, sim_task_kind::allreduce, 0, 0, 2, 8);
  bn_span(r, sim_task_kind::send_gradient, 2, 0, 5, 6);
  CHECK(r.iteration_ms == doctest::Approx(8.0));
  CHECK(simulate(m, test::flat_topology(6, 10), o).iteration_ms == doctest::Approx(8.0));
}
