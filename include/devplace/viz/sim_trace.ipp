#pragma once
/// \file viz/sim_trace.ipp
/// The definition of `viz::simulation_trace` (viz/sim_trace.hpp): it reads the simulator's
/// timeline and computes its critical path, so it is compiled where it is included and called
/// (header-only mode: viz/sim_trace.hpp does not include it; devplace/viz.hpp does) or once in
/// `devplace::core` (compiled mode; see config.hpp).
#include <algorithm>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "devplace/sim/critical_path.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/viz/labels.hpp"
#include "devplace/viz/sim_trace.hpp"
#include "devplace/viz/trace.hpp"

namespace devplace::viz {

namespace detail {

/// Transfer lanes per device: each event goes to the first lane free at its start.
template <int = 0>
std::vector<std::size_t> transfer_lanes(const simulation_result& r, std::size_t devices) {
  std::vector<std::vector<double>> lane_end(devices);
  std::vector<std::size_t> lane(r.timeline.size(), 0);
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    const auto& e = r.timeline[i];
    if (e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward) continue;
    auto& ends = lane_end[e.from];
    std::size_t k = 0;
    while (k < ends.size() && ends[k] > e.start_ms) ++k;
    if (k == ends.size()) ends.push_back(0);
    ends[k] = e.end_ms;
    lane[i] = k + 1;  // lane 0: compute
  }
  return lane;
}

template <int = 0>
std::string trace_name(const sim_event& e) {
  switch (e.kind) {
    case sim_task_kind::forward: return "forward mb" + std::to_string(e.micro_batch);
    case sim_task_kind::backward: return "backward mb" + std::to_string(e.micro_batch);
    case sim_task_kind::send_activation: return "activation mb" + std::to_string(e.micro_batch);
    case sim_task_kind::send_gradient: return "gradient mb" + std::to_string(e.micro_batch);
    case sim_task_kind::allreduce: return "allreduce stage " + std::to_string(e.stage);
  }
  return "?";
}

template <int = 0>
nlohmann::json trace_args(const sim_event& e, const pipeline_model& m, const device_labels& l,
                                 const std::vector<std::size_t>& stage_of_device) {
  nlohmann::json a = {{"stage", e.stage}, {"device", l.name[e.from]}};
  if (e.kind == sim_task_kind::allreduce) {
    nlohmann::json ring = nlohmann::json::array();
    for (auto d : m.device_of[e.stage]) ring.push_back(l.name[d]);
    a["bytes"] = e.bytes;
    a["ring"] = std::move(ring);
    return a;
  }
  a["replica"] = e.replica;
  a["micro_batch"] = e.micro_batch;
  if (e.kind == sim_task_kind::send_activation || e.kind == sim_task_kind::send_gradient) {
    a["bytes"] = e.bytes;
    a["to"] = l.name[e.to];
    a["to_stage"] = stage_of_device[e.to];
  }
  return a;
}

/// The trace of `r` (simulation_trace's body).
template <int = 0>
trace_builder sim_trace(const simulation_result& r, const pipeline_model& m, const simulation_options& o,
                               const device_labels& l, const sim_trace_options& opt) {
  const std::size_t D = l.num_devices(), MB = o.micro_batches, ranks = m.stages / std::max<std::size_t>(o.virtual_stages, 1);
  check_pipeline_model(m, D, o.virtual_stages);
  std::vector<std::size_t> stage_of_device(D, m.stages), replica_of(D, 0);
  for (std::size_t s = 0; s < ranks; ++s)  // interleaved: a device by its pipeline rank (its first chunk)
    for (std::size_t k = 0; k < m.device_of[s].size(); ++k) {
      stage_of_device[m.device_of[s][k]] = s;
      replica_of[m.device_of[s][k]] = k;
    }
  constexpr std::size_t none = sim_event::none;
  // (device, backward?, micro-batch) -> its events, one per chunk the device runs, in start order
  std::vector<std::vector<std::size_t>> compute(D * MB * 2);
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    const auto& e = r.timeline[i];
    if (e.from >= D || e.to >= D || stage_of_device[e.from] == m.stages || e.micro_batch >= std::max<std::size_t>(MB, 1))
      throw std::invalid_argument("simulation_trace: timeline event " + std::to_string(i) + " is outside the model");
    if (e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward)
      compute[(e.from * MB + e.micro_batch) * 2 + (e.kind == sim_task_kind::backward)].push_back(i);
  }
  const auto path = critical_path(r);
  std::vector<char> critical(r.timeline.size(), 0);
  for (auto i : path) critical[i] = 1;
  const auto lane = transfer_lanes(r, D);
  trace_builder t;
  std::vector<char> named_node(l.nodes.size(), 0);
  std::map<std::pair<std::size_t, std::size_t>, int> tid;  // (device, lane) -> tid
  auto thread_of = [&](std::size_t d, std::size_t k) {
    auto [it, fresh] = tid.try_emplace({d, k}, static_cast<int>(tid.size()) + 1);
    if (!fresh) return it->second;
    const int pid = static_cast<int>(l.node_of[d]) + 1;
    if (!named_node[l.node_of[d]]) {
      t.process(pid, l.nodes[l.node_of[d]], pid);
      named_node[l.node_of[d]] = 1;
    }
    const std::string name = k == 0 ? l.short_name[d] + ": stage " + std::to_string(stage_of_device[d]) + ", replica " +
                                          std::to_string(replica_of[d])
                                    : l.short_name[d] + " sends" + (k > 1 ? " " + std::to_string(k) : std::string());
    t.thread(pid, it->second, name, static_cast<int>(d * 1000 + k));
    return it->second;
  };
  for (std::size_t s = 0; s < m.stages; ++s)  // compute threads first, in device order per node
    for (auto d : m.device_of[s]) thread_of(d, 0);
  auto pid_of = [&](std::size_t d) { return static_cast<int>(l.node_of[d]) + 1; };
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    const auto& e = r.timeline[i];
    auto args = trace_args(e, m, l, stage_of_device);
    if (critical[i]) args["critical"] = true;
    t.complete(trace_name(e), std::string(to_string(e.kind)), pid_of(e.from), thread_of(e.from, lane[i]), 1000 * e.start_ms,
               1000 * (e.end_ms - e.start_ms), std::move(args));
  }
  auto mid = [&](std::size_t i) { return 500 * (r.timeline[i].start_ms + r.timeline[i].end_ms); };
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    const auto& e = r.timeline[i];
    const bool act = e.kind == sim_task_kind::send_activation;
    if (!act && e.kind != sim_task_kind::send_gradient) continue;
    // The receiver's first pass of that kind and micro-batch starting after the transfer, the
    // sender's last one ending before it (one each without interleaving).
    std::size_t target = none, issuer = none;
    for (auto k : compute[(e.to * MB + e.micro_batch) * 2 + (act ? 0 : 1)])
      if (target == none && r.timeline[k].start_ms >= e.end_ms) target = k;
    for (auto k : compute[(e.from * MB + e.micro_batch) * 2 + (act ? 0 : 1)])
      if (r.timeline[k].end_ms <= e.start_ms) issuer = k;
    if (target == none) continue;
    const bool from_send = e.end_ms > e.start_ms || issuer == none;
    t.flow(act ? "activation" : "gradient", act ? "activation" : "gradient", pid_of(e.from),
           thread_of(e.from, from_send ? lane[i] : 0), from_send ? mid(i) : mid(issuer), pid_of(e.to), thread_of(e.to, 0),
           mid(target));
  }
  if (o.update_ms > 0)
    for (std::size_t s = 0; s < ranks; ++s)
      for (auto d : m.device_of[s])
        t.complete("optimizer step", "optimizer", pid_of(d), thread_of(d, 0), 1000 * (r.iteration_ms - o.update_ms),
                   1000 * o.update_ms, {{"stage", s}, {"device", l.name[d]}});
  t.other_data("title", opt.title);
  t.other_data("iteration_ms", r.iteration_ms);
  t.other_data("samples_per_s", r.samples_per_s);
  t.other_data("bubble_fraction", r.bubble_fraction);
  t.other_data("schedule", std::string(to_string(o.schedule)));
  t.other_data("micro_batches", MB);
  t.other_data("recompute", o.recompute);
  t.other_data("critical_path_ms", path_length_ms(r, path) + o.update_ms);
  t.other_data("critical_path_tasks", path.size());
  return t;
}

}  // namespace detail

/// The body of `simulation_trace` (viz/sim_trace.hpp declares this type and calls `run`).
template <int>
struct detail::simulation_trace_defined_in_viz_sim_trace_ipp {
  static trace_builder run(const simulation_result& r, const pipeline_model& m, const simulation_options& o,
                           const device_labels& l, const sim_trace_options& opt) {
    return sim_trace(r, m, o, l, opt);
  }
};

}  // namespace devplace::viz
