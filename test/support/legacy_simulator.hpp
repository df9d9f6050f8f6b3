#pragma once
// The pipeline simulator's core as it was before bucketed data-parallel overlap, the interleaved
// schedule and shared NICs were added: one allreduce per stage after its last backward, GPipe or
// 1F1B, independent links. The oracle of "dp_bucket_bytes = 0 and no nodes reproduce the earlier
// results exactly" (test/sim/overlap.cpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <Eigen/Core>

#include "devplace/sim/pipeline_simulator.hpp"

namespace devplace::test::legacy {

/// The non-template core over dense bandwidth (GB/s) and latency (us) matrices.
inline simulation_result simulate_core(const pipeline_model& m, const Eigen::MatrixXd& bw, const Eigen::MatrixXd& lat,
                                       const simulation_options& o) {
  const std::size_t D = static_cast<std::size_t>(bw.rows());
  check_pipeline_model(m, D);
  if (o.micro_batches == 0) throw std::invalid_argument("simulate: micro_batches must be >= 1");
  if (!(o.micro_batch_size > 0) || !std::isfinite(o.micro_batch_size))
    throw std::invalid_argument("simulate: micro_batch_size must be a finite number > 0");
  if (!(o.update_ms >= 0) || !std::isfinite(o.update_ms))
    throw std::invalid_argument("simulate: update_ms must be a finite number >= 0");
  const std::size_t S = m.stages, R = m.replicas, MB = o.micro_batches;
  // Replica (s, r) is slot off[s] + r; R_s = device_of[s].size().
  std::vector<std::size_t> off(S + 1, 0);
  for (std::size_t s = 0; s < S; ++s) off[s + 1] = off[s] + m.device_of[s].size();
  auto reps = [&](std::size_t s) { return m.device_of[s].size(); };
  // The work of one replica of stage s per micro-batch round: R̂ / R_s micro-batches' worth.
  auto scale = [&](std::size_t s) { return reps(s) == R ? 1.0 : static_cast<double>(R) / static_cast<double>(reps(s)); };
  // The replicas j of stage t sharing data with replica i of stage s, and the bytes of each pair:
  // shares [i·b, (i+1)·b) and [j·a, (j+1)·a) in units of 1 / (a·b).
  struct pair_bytes {
    std::size_t j;
    double bytes;
  };
  auto exchanges = [&](std::size_t s, std::size_t i, std::size_t t, double bytes) {
    std::vector<pair_bytes> out;
    const std::size_t a = reps(s), b = reps(t);
    if (a == b) {
      out.push_back({i, a == R ? bytes : bytes * static_cast<double>(R) / static_cast<double>(a)});
      return out;
    }
    for (std::size_t j = i * b / a; j < ((i + 1) * b + a - 1) / a; ++j) {
      const std::size_t lo = std::max(i * b, j * a), hi = std::min((i + 1) * b, (j + 1) * a);
      if (hi > lo)
        out.push_back({j, bytes * static_cast<double>(R) * static_cast<double>(hi - lo) /
                              (static_cast<double>(a) * static_cast<double>(b))});
    }
    return out;
  };
  auto transfer = [&](std::size_t a, std::size_t b, double bytes) {
    if (a == b) return 0.0;
    return transfer_time_ms(bytes, bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)),
                            lat(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)));
  };
  // With blocking sends the sender is busy while it sends: F(s) carries its activation sends,
  // B(s) its gradient sends, and the transfers themselves only order the tasks.
  std::vector<double> send_after_f(off[S], 0.0), send_after_b(off[S], 0.0);
  if (o.blocking_sends)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t t = s + 1; t < S; ++t) {
        const double bytes = m.message_bytes[s][t];
        if (bytes < 0) continue;
        for (std::size_t r = 0; r < reps(s); ++r)
          for (auto [j, x] : exchanges(s, r, t, bytes)) {
            const std::size_t a = m.device_of[s][r], b = m.device_of[t][j];
            send_after_f[off[s] + r] += transfer(a, b, x);
            send_after_b[off[t] + j] += transfer(b, a, x);
          }
      }
  struct task {
    sim_task_kind kind;
    std::size_t stage, replica, mb, from, to;
    double duration, bytes;
    std::size_t missing = 0;            // unfinished dependencies
    double ready = 0;                   // when the last dependency finished
    std::size_t binding = sim_event::none;  // that dependency
    std::vector<std::size_t> next;      // dependents
  };
  std::vector<task> tasks;
  auto add = [&](sim_task_kind k, std::size_t s, std::size_t r, std::size_t mb, std::size_t from, std::size_t to, double d,
                 double bytes = 0) {
    tasks.push_back({k, s, r, mb, from, to, d, bytes, 0, 0, sim_event::none, {}});
    return tasks.size() - 1;
  };
  auto dep = [&](std::size_t before, std::size_t after) {
    tasks[before].next.push_back(after);
    ++tasks[after].missing;
  };
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  // F and B ids: [s][r][mb]
  std::vector<std::size_t> F(off[S] * MB), B(off[S] * MB);
  auto idx = [&](std::size_t s, std::size_t r, std::size_t mb) { return (off[s] + r) * MB + mb; };
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < reps(s); ++r) {
      const std::size_t d = m.device_of[s][r];
      const double k = scale(s);
      for (std::size_t mb = 0; mb < MB; ++mb) {
        F[idx(s, r, mb)] = add(sim_task_kind::forward, s, r, mb, d, d, k * m.forward_ms[s] + send_after_f[off[s] + r]);
        B[idx(s, r, mb)] = add(sim_task_kind::backward, s, r, mb, d, d,
                               k * (m.backward_ms[s] + (o.recompute ? m.forward_ms[s] : 0.0)) + send_after_b[off[s] + r]);
        dep(F[idx(s, r, mb)], B[idx(s, r, mb)]);
      }
    }
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t t = s + 1; t < S; ++t) {
      const double bytes = m.message_bytes[s][t];
      if (bytes < 0) continue;  // no edge
      for (std::size_t r = 0; r < reps(s); ++r)
        for (auto [j, x] : exchanges(s, r, t, bytes)) {
          const std::size_t a = m.device_of[s][r], b = m.device_of[t][j];
          for (std::size_t mb = 0; mb < MB; ++mb) {
            const auto act = add(sim_task_kind::send_activation, s, r, mb, a, b, o.blocking_sends ? 0.0 : transfer(a, b, x), x);
            dep(F[idx(s, r, mb)], act);
            dep(act, F[idx(t, j, mb)]);
            const auto grad = add(sim_task_kind::send_gradient, t, j, mb, b, a, o.blocking_sends ? 0.0 : transfer(b, a, x), x);
            dep(B[idx(t, j, mb)], grad);
            dep(grad, B[idx(s, r, mb)]);
          }
        }
    }
  std::vector<std::size_t> allreduce_task(S, none);
  if (o.allreduce)
    for (std::size_t s = 0; s < S; ++s) {
      const std::size_t Rs = reps(s);
      if (Rs <= 1 || m.param_bytes[s] <= 0) continue;
      double slowest = 0;  // per ring step: the slowest link moving P / R_s bytes
      for (std::size_t r = 0; r < Rs; ++r)
        slowest = std::max(slowest, transfer(m.device_of[s][r], m.device_of[s][(r + 1) % Rs], ring_step_bytes(m.param_bytes[s], Rs)));
      const auto ar = add(sim_task_kind::allreduce, s, 0, 0, m.device_of[s][0], m.device_of[s][0],
                          ring_allreduce_ms(slowest, Rs), m.param_bytes[s]);
      allreduce_task[s] = ar;
      for (std::size_t r = 0; r < Rs; ++r)
        for (std::size_t mb = 0; mb < MB; ++mb) dep(B[idx(s, r, mb)], ar);
    }
  // Per-device compute order of the schedule: chain consecutive tasks.
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < reps(s); ++r) {
      std::vector<std::size_t> order;
      if (o.schedule == pipeline_schedule::gpipe) {
        for (std::size_t mb = 0; mb < MB; ++mb) order.push_back(F[idx(s, r, mb)]);
        for (std::size_t mb = MB; mb-- > 0;) order.push_back(B[idx(s, r, mb)]);
      } else {
        const std::size_t warm = std::min(S - s, MB);
        std::size_t f = 0, b = 0;
        for (; f < warm; ++f) order.push_back(F[idx(s, r, f)]);
        while (b < MB) {
          order.push_back(B[idx(s, r, b++)]);
          if (f < MB) order.push_back(F[idx(s, r, f++)]);
        }
      }
      for (std::size_t k = 0; k + 1 < order.size(); ++k) dep(order[k], order[k + 1]);
    }

  // Event loop: a task whose dependencies are done waits for its link (if links serialise);
  // compute tasks are already sequenced per device by the schedule chain.
  simulation_result res;
  res.device_busy_ms.assign(D, 0.0);
  using entry = std::tuple<double, std::size_t>;  // (earliest start, task id)
  std::priority_queue<entry, std::vector<entry>, std::greater<>> ready;
  std::map<std::pair<std::size_t, std::size_t>, std::pair<double, std::size_t>> link_free;  // free at, last transfer
  std::vector<double> start(tasks.size(), 0.0), end(tasks.size(), 0.0);
  for (std::size_t t = 0; t < tasks.size(); ++t)
    if (tasks[t].missing == 0) ready.emplace(0.0, t);
  std::size_t done = 0;
  double last = 0;
  std::vector<std::size_t> event_task;  // timeline entry -> task id
  while (!ready.empty()) {
    auto [est, t] = ready.top();
    ready.pop();
    task& k = tasks[t];
    const bool is_link = k.kind == sim_task_kind::send_activation || k.kind == sim_task_kind::send_gradient;
    double s0 = k.ready;
    if (is_link && o.serialize_links && k.from != k.to) {
      auto& link = link_free.try_emplace({k.from, k.to}, 0.0, sim_event::none).first->second;
      const double free = link.first;
      if (free > est) {  // the link got busy since this entry was queued: wait in line
        ready.emplace(free, t);
        continue;
      }
      if (free > s0) {
        s0 = free;
        k.binding = link.second;
      }
      link = {s0 + k.duration, t};
    }
    start[t] = s0;
    end[t] = s0 + k.duration;
    last = std::max(last, end[t]);
    ++done;
    if (k.kind == sim_task_kind::forward || k.kind == sim_task_kind::backward) res.device_busy_ms[k.from] += k.duration;
    if (k.kind == sim_task_kind::allreduce && o.blocking_allreduce)
      for (auto d : m.device_of[k.stage]) res.device_busy_ms[d] += k.duration;
    res.timeline.push_back({k.kind, k.stage, k.replica, k.mb, k.from, k.to, start[t], end[t], k.bytes, k.binding});
    event_task.push_back(t);
    for (std::size_t n : k.next) {
      if (end[t] >= tasks[n].ready) {
        tasks[n].ready = end[t];
        tasks[n].binding = t;
      }
      if (--tasks[n].missing == 0) ready.emplace(tasks[n].ready, n);
    }
  }
  DEVPLACE_EXPECTS(done == tasks.size(), "simulate: the stage graph has a cycle (message_bytes must only link s < s')");
  res.iteration_ms = last + o.update_ms;
  res.samples_per_s = res.iteration_ms > 0 ? o.micro_batch_size * double(R) * double(MB) / (res.iteration_ms / 1000.0) : 0;
  double busy = 0;
  std::size_t used = 0;
  std::vector<char> is_used(D, 0);
  for (const auto& row : m.device_of)
    for (auto d : row) is_used[d] = 1;
  for (std::size_t d = 0; d < D; ++d)
    if (is_used[d]) {
      busy += res.device_busy_ms[d];
      ++used;
    }
  res.bubble_fraction = res.iteration_ms > 0 ? 1.0 - busy / (double(used) * res.iteration_ms) : 0;
  // Peak in flight per stage: forwards started minus backwards finished, over time (replica 0).
  res.peak_in_flight.assign(S, 0);
  for (std::size_t s = 0; s < S; ++s) {
    std::vector<std::pair<double, int>> ev;
    for (std::size_t mb = 0; mb < MB; ++mb) {
      ev.emplace_back(start[F[idx(s, 0, mb)]], +1);
      ev.emplace_back(end[B[idx(s, 0, mb)]], -1);
    }
    std::sort(ev.begin(), ev.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second < b.second; });
    int cur = 0, peak = 0;
    for (auto [time, d] : ev) {
      cur += d;
      peak = std::max(peak, cur);
    }
    res.peak_in_flight[s] = static_cast<std::size_t>(peak);
  }
  // The timeline in start order, `after` turned from task ids into timeline indices.
  std::vector<std::size_t> order(res.timeline.size()), position(tasks.size(), sim_event::none);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return res.timeline[a].start_ms < res.timeline[b].start_ms; });
  for (std::size_t i = 0; i < order.size(); ++i) position[event_task[order[i]]] = i;
  std::vector<sim_event> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) {
    sorted.push_back(res.timeline[i]);
    if (sorted.back().after != sim_event::none) sorted.back().after = position[sorted.back().after];
  }
  res.timeline = std::move(sorted);
  return res;
}


}  // namespace devplace::test::legacy
