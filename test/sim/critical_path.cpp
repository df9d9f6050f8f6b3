// The critical path of a simulated iteration against an independent oracle: the task graph is
// rebuilt from the timeline by the simulator's documented rules (F → B; F → activation → the
// receiver's F; B → gradient → the sender's B; every B of a stage → its allreduce; each device's
// tasks in time order; each link's transfers in time order), every event must start when its
// latest predecessor ends (or at 0), and the longest path of that graph must equal both the
// iteration time (less the optimizer step) and the length of `critical_path`.
#include "devplace/sim/critical_path.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "support/random_pipeline.hpp"

using namespace devplace;

namespace {

bool is_compute(const sim_event& e) { return e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward; }

/// Predecessor lists of the timeline's events, by the rules in the file comment.
std::vector<std::vector<std::size_t>> rebuild_dag(const simulation_result& r, const pipeline_model& m,
                                                  const simulation_options& o) {
  const auto& tl = r.timeline;
  std::vector<std::vector<std::size_t>> pred(tl.size());
  std::map<std::tuple<std::size_t, bool, std::size_t>, std::size_t> compute;  // (device, backward, mb)
  for (std::size_t i = 0; i < tl.size(); ++i)
    if (is_compute(tl[i])) compute[{tl[i].from, tl[i].kind == sim_task_kind::backward, tl[i].micro_batch}] = i;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>> on_device, on_link;
  for (std::size_t i = 0; i < tl.size(); ++i) {
    const auto& e = tl[i];
    switch (e.kind) {
      case sim_task_kind::forward: break;
      case sim_task_kind::backward: pred[i].push_back(compute.at({e.from, false, e.micro_batch})); break;
      case sim_task_kind::send_activation:
        pred[i].push_back(compute.at({e.from, false, e.micro_batch}));
        pred[compute.at({e.to, false, e.micro_batch})].push_back(i);
        break;
      case sim_task_kind::send_gradient:
        pred[i].push_back(compute.at({e.from, true, e.micro_batch}));
        pred[compute.at({e.to, true, e.micro_batch})].push_back(i);
        break;
      case sim_task_kind::allreduce:
        for (auto d : m.device_of[e.stage])
          for (std::size_t mb = 0; mb < o.micro_batches; ++mb) pred[i].push_back(compute.at({d, true, mb}));
        break;
    }
    if (is_compute(e)) on_device[{e.from, 0}].push_back(i);
    else if (e.kind != sim_task_kind::allreduce && o.serialize_links && e.from != e.to) on_link[{e.from, e.to}].push_back(i);
  }
  for (auto* group : {&on_device, &on_link})
    for (auto& [key, list] : *group) {
      std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return tl[a].start_ms < tl[b].start_ms; });
      for (std::size_t k = 1; k < list.size(); ++k) pred[list[k]].push_back(list[k - 1]);
    }
  return pred;
}

/// Checks the timeline against the rebuilt graph and returns its longest path (ms).
double check_and_longest_path(const simulation_result& r, const pipeline_model& m, const simulation_options& o) {
  const auto& tl = r.timeline;
  const auto pred = rebuild_dag(r, m, o);
  std::vector<std::vector<std::size_t>> succ(tl.size());
  std::vector<std::size_t> missing(tl.size(), 0);
  for (std::size_t v = 0; v < tl.size(); ++v) {
    double ready = 0;
    for (auto u : pred[v]) {
      ready = std::max(ready, tl[u].end_ms);
      succ[u].push_back(v);
      ++missing[v];
    }
    INFO("event " << v << " starts at " << tl[v].start_ms << ", its predecessors end by " << ready);
    CHECK(tl[v].start_ms == doctest::Approx(ready).epsilon(1e-12).scale(1));
  }
  std::vector<std::size_t> order;  // Kahn
  for (std::size_t v = 0; v < tl.size(); ++v)
    if (missing[v] == 0) order.push_back(v);
  std::vector<double> dist(tl.size(), 0);
  double longest = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t v = order[k];
    double best = 0;
    for (auto u : pred[v]) best = std::max(best, dist[u]);
    dist[v] = best + (tl[v].end_ms - tl[v].start_ms);
    longest = std::max(longest, dist[v]);
    for (auto w : succ[v])
      if (--missing[w] == 0) order.push_back(w);
  }
  REQUIRE(order.size() == tl.size());  // the rebuilt graph is acyclic
  return longest;
}

void check_path(const simulation_result& r, const std::vector<std::size_t>& path) {
  REQUIRE_FALSE(path.empty());
  CHECK(r.timeline[path.front()].start_ms == 0);
  for (std::size_t k = 1; k < path.size(); ++k)
    CHECK(r.timeline[path[k]].start_ms == r.timeline[path[k - 1]].end_ms);
}

}  // namespace

TEST_CASE("critical path: two stages, one replica, two micro-batches (hand-computed)") {
  // F 1 ms per stage, B 1 ms (stage 0) and 2 ms (stage 1), 2 MB at 1 GB/s (2 ms) from device 0
  // to device 1, GPipe. dev0: F(0) 0-1, F(1) 1-2; the link: act(0) 1-3, act(1) 3-5 (waits for
  // act(0)); dev1: F(0) 3-4, F(1) 5-6, B(1) 6-8, B(0) 8-10; grad(1) 8-10, grad(0) 10-12;
  // dev0: B(1) 10-11, B(0) 12-13. Critical: F0(0) act(0) act(1) F1(1) B1(1) B1(0) grad(0) B0(0).
  const matrix_topology t(Eigen::MatrixXd::Constant(2, 2, 1.0));
  const pipeline_model m{.stages = 2, .replicas = 1, .forward_ms = {1, 1}, .backward_ms = {1, 2}, .param_bytes = {0, 0},
                         .message_bytes = {{-1, 2e6}, {-1, -1}}, .device_of = {{0}, {1}}};
  const simulation_options o{.micro_batches = 2};
  const auto r = simulate(m, t, o);
  CHECK(r.iteration_ms == doctest::Approx(13));
  const auto path = critical_path(r);
  check_path(r, path);
  using K = sim_task_kind;
  const std::vector<std::tuple<K, std::size_t, std::size_t>> expected{
      {K::forward, 0, 0}, {K::send_activation, 0, 0}, {K::send_activation, 0, 1}, {K::forward, 1, 1},
      {K::backward, 1, 1}, {K::backward, 1, 0}, {K::send_gradient, 1, 0}, {K::backward, 0, 0}};
  REQUIRE(path.size() == expected.size());
  for (std::size_t k = 0; k < path.size(); ++k) {
    const auto& e = r.timeline[path[k]];
    CHECK(std::tuple(e.kind, e.stage, e.micro_batch) == expected[k]);
  }
  CHECK(path_length_ms(r, path) == doctest::Approx(13));
  CHECK(check_and_longest_path(r, m, o) == doctest::Approx(13));
}

TEST_CASE("critical path: the longest path of the rebuilt task graph on random pipelines") {
  std::mt19937_64 rng(37);
  for (int trial = 0; trial < 150; ++trial) {
    const auto p = test::make_random_pipeline(rng, trial % 3 == 0);
    const auto r = simulate(p.model, p.topology, p.options);
    INFO("trial " << trial);
    const double longest = check_and_longest_path(r, p.model, p.options);
    CHECK(longest + p.options.update_ms == doctest::Approx(r.iteration_ms));
    const auto path = critical_path(r);
    check_path(r, path);
    CHECK(path_length_ms(r, path) == doctest::Approx(longest));
    for (const auto& e : r.timeline) {  // bytes: transfers and the allreduce carry them, compute none
      if (e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward) CHECK(e.bytes == 0);
      if (e.kind == sim_task_kind::allreduce) CHECK(e.bytes == p.model.param_bytes[e.stage]);
    }
  }
}

TEST_CASE("critical path: an empty timeline and a broken one") {
  CHECK(critical_path(simulation_result{}).empty());
  simulation_result r;
  r.timeline.push_back({sim_task_kind::forward, 0, 0, 0, 0, 0, 0.0, 1.0, 0.0, 5});  // `after` out of range
  CHECK_THROWS_AS((void)critical_path(r), std::invalid_argument);
  r.timeline[0].after = 0;  // a cycle
  CHECK_THROWS_AS((void)critical_path(r), std::invalid_argument);
}
