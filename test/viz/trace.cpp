// The trace export against the Trace Event format and the simulation it records: required
// fields of every event, durations >= 0, one complete event per simulated task (per kind), the
// compute time of every device equal to the simulator's busy time, the last end equal to the
// iteration, slices of a thread never overlapping, every flow's ends inside slices of their
// threads, named processes and threads, and the critical path marked task by task.
#include "devplace/viz/sim_trace.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devplace/sim/critical_path.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/generators.hpp"
#include "devplace/viz/labels.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/viz/sim_trace.ipp"  // simulation_trace's definition (compiled mode: devplace::core)
#endif
#include "support/random_pipeline.hpp"

using namespace devplace;
using nlohmann::json;

namespace {

void check_trace(const simulation_result& r, const pipeline_model& m, const simulation_options& o, const viz::device_labels& l) {
  const json doc = json::parse(viz::simulation_trace(r, m, o, l, {.title = "t"}).str());
  REQUIRE(doc.at("traceEvents").is_array());
  CHECK(doc.at("displayTimeUnit") == "ms");
  std::map<std::string, std::size_t> per_kind, expected_kind;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;  // (pid, tid) -> [ts, end]
  std::map<std::pair<int, int>, std::string> thread_names;
  std::set<int> named_processes;
  std::map<std::size_t, std::vector<json>> flows;
  double last_end = 0, bytes = 0;
  std::size_t critical = 0;
  for (const auto& e : doc["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("name"));
    REQUIRE(e.at("pid").is_number_integer());
    REQUIRE(e.at("tid").is_number_integer());
    const std::string ph = e["ph"];
    const std::pair<int, int> thread{e["pid"], e["tid"]};
    if (ph == "M") {
      if (e["name"] == "process_name") named_processes.insert(thread.first);
      if (e["name"] == "thread_name") thread_names[thread] = e["args"]["name"];
      continue;
    }
    REQUIRE(e.at("ts").is_number());
    if (ph == "s" || ph == "f") {
      flows[e.at("id").get<std::size_t>()].push_back(e);
      continue;
    }
    REQUIRE(ph == "X");
    const double ts = e["ts"], dur = e.at("dur");
    CHECK(dur >= 0);
    slices[thread].emplace_back(ts, ts + dur);
    last_end = std::max(last_end, ts + dur);
    ++per_kind[e.at("cat").get<std::string>()];
    if (e["args"].contains("critical")) ++critical;
    if (e["cat"] == "activation" || e["cat"] == "gradient") bytes += e["args"]["bytes"].get<double>();
  }
  // One event per task, per kind; the optimizer once per device.
  double sent = 0;
  std::set<std::size_t> devices;  // an interleaved model's later chunks repeat the ranks' devices
  for (const auto& row : m.device_of) devices.insert(row.begin(), row.end());
  const std::size_t used = devices.size();
  for (const auto& e : r.timeline) {
    ++expected_kind[std::string(to_string(e.kind))];
    if (e.kind == sim_task_kind::send_activation || e.kind == sim_task_kind::send_gradient) sent += e.bytes;
  }
  if (o.update_ms > 0) expected_kind["optimizer"] = used;
  CHECK(per_kind == expected_kind);
  CHECK(bytes == doctest::Approx(sent));
  CHECK(last_end == doctest::Approx(1000 * r.iteration_ms));
  CHECK(critical == critical_path(r).size());
  CHECK(doc["otherData"]["iteration_ms"].get<double>() == r.iteration_ms);
  CHECK(doc["otherData"]["critical_path_ms"].get<double>() == doctest::Approx(r.iteration_ms));
  // Busy time per device: its compute thread ("name: stage s, replica k").
  for (std::size_t s = 0; s < m.stages; ++s)
    for (auto d : m.device_of[s]) {
      double busy = 0;
      std::size_t threads = 0;
      for (const auto& [thread, name] : thread_names)
        if (name.rfind(l.short_name[d] + ": stage ", 0) == 0 && thread.first == static_cast<int>(l.node_of[d]) + 1) {
          ++threads;
          for (auto [a, b] : slices[thread]) busy += b - a;
        }
      CHECK(threads == 1);
      const double optimizer = o.update_ms;
      if (!o.blocking_allreduce) CHECK(busy == doctest::Approx(1000 * (r.device_busy_ms[d] + optimizer)));
    }
  // Slices of one thread never overlap; every thread and process is named.
  for (auto& [thread, list] : slices) {
    CHECK(thread_names.count(thread) == 1);
    CHECK(named_processes.count(thread.first) == 1);
    std::sort(list.begin(), list.end());
    for (std::size_t k = 1; k < list.size(); ++k) CHECK(list[k].first >= list[k - 1].second - 1e-6);
  }
  // Flows: an "s" and an "f" each, both inside a slice of their thread; one per send.
  std::size_t sends = 0;
  for (const auto& e : r.timeline) sends += e.kind == sim_task_kind::send_activation || e.kind == sim_task_kind::send_gradient;
  CHECK(flows.size() == sends);
  for (const auto& [id, ends] : flows) {
    REQUIRE(ends.size() == 2);
    CHECK(ends[0]["ph"] == "s");
    CHECK(ends[1]["ph"] == "f");
    for (const auto& f : ends) {
      const double ts = f["ts"];
      const auto& list = slices[{f["pid"], f["tid"]}];
      CHECK(std::any_of(list.begin(), list.end(), [&](auto s) { return s.first <= ts + 1e-9 && ts <= s.second + 1e-9; }));
    }
  }
}

}  // namespace

TEST_CASE("trace: two stages of two replicas on two nodes") {
  const auto t = two_level(2, 2);
  const pipeline_model m{.stages = 2, .replicas = 2, .forward_ms = {1, 1}, .backward_ms = {2, 2}, .param_bytes = {1e6, 1e6},
                         .message_bytes = {{-1, 1e6}, {-1, -1}}, .device_of = {{0, 1}, {2, 3}}};
  const simulation_options o{.micro_batches = 3, .update_ms = 0.25};
  const auto r = simulate(m, t, o);
  check_trace(r, m, o, viz::make_device_labels(t));
  // One process per node, named after it.
  const json doc = json::parse(viz::simulation_trace(r, m, o, viz::make_device_labels(t)).str());
  std::set<std::string> processes;
  for (const auto& e : doc["traceEvents"])
    if (e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
  CHECK(processes == std::set<std::string>{"node0", "node1"});
}

TEST_CASE("trace: an interleaved pipeline links every send to the right chunk's pass") {
  // S = 2 ranks x v = 2 chunks on two nodes: each device runs two chunks, so a send's target is
  // found by chunk, not by device alone. A chain: activations go from chunk c to c + 1,
  // gradients from c + 1 to c.
  const auto t = two_level(2, 2);
  pipeline_model m = test::uniform_chain(4, 2, 1, 2, 1e6, 1e6);
  m.device_of = {{0, 1}, {2, 3}, {0, 1}, {2, 3}};
  const simulation_options o{.micro_batches = 4, .schedule = pipeline_schedule::interleaved, .update_ms = 0.25,
                             .virtual_stages = 2};
  const auto r = simulate(m, t, o);
  const auto l = viz::make_device_labels(t);
  check_trace(r, m, o, l);
  const json doc = json::parse(viz::simulation_trace(r, m, o, l).str());
  struct slice { double ts, end; std::string cat; std::size_t stage; };
  std::map<std::pair<int, int>, std::vector<slice>> slices;
  std::map<std::size_t, std::vector<json>> flows;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["args"].contains("stage"))
      slices[{e["pid"], e["tid"]}].push_back({e["ts"], e["ts"].get<double>() + e["dur"].get<double>(), e["cat"], e["args"]["stage"]});
    if (e["ph"] == "s" || e["ph"] == "f") flows[e["id"].get<std::size_t>()].push_back(e);
  }
  auto at = [&](const json& f, bool compute) -> const slice* {
    const double ts = f["ts"];
    for (const auto& x : slices[{f["pid"], f["tid"]}])
      if (x.ts <= ts + 1e-9 && ts <= x.end + 1e-9 && (!compute || x.cat == "forward" || x.cat == "backward")) return &x;
    return nullptr;
  };
  std::size_t checked = 0;
  for (const auto& [id, ends] : flows) {
    REQUIRE(ends.size() == 2);
    const slice* from = at(ends[0], false);
    const slice* to = at(ends[1], true);
    REQUIRE(from);
    REQUIRE(to);
    const bool act = ends[0]["name"] == "activation";
    CHECK(to->cat == (act ? "forward" : "backward"));
    CHECK(to->stage == (act ? from->stage + 1 : from->stage - 1));
    ++checked;
  }
  CHECK(checked == 2 * 3 * 2 * 4);  // 3 chunk boundaries x 2 replicas x MB, both ways
}

TEST_CASE("trace: random pipelines") {
  std::mt19937_64 rng(737);
  for (int trial = 0; trial < 40; ++trial) {
    const auto p = test::make_random_pipeline(rng, trial % 2 == 0);
    INFO("trial " << trial);
    check_trace(simulate(p.model, p.topology, p.options), p.model, p.options, viz::make_device_labels(p.topology.num_devices()));
  }
}

TEST_CASE("trace: the builder refuses what the format does not allow") {
  viz::trace_builder b;
  CHECK_THROWS_WITH_AS(b.complete("x", "c", 1, 1, 0, -1), doctest::Contains("\"x\""), std::invalid_argument);
  CHECK_THROWS_AS(b.complete("x", "c", 1, 1, std::nan(""), 1), std::invalid_argument);
  CHECK_THROWS_AS((void)b.flow("x", "c", 1, 1, INFINITY, 1, 2, 0), std::invalid_argument);
  b.complete("x", "c", 1, 1, 0, 0);
  CHECK(json::parse(b.str())["traceEvents"].size() == 1);
}
