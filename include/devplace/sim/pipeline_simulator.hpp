#pragma once
/// \file sim/pipeline_simulator.hpp
/// A discrete-event simulation of one training iteration of a mapped pipeline (seed-parmesan.md
/// §8.2): S stages × R replicas on devices `device_of[s][r]`, MB micro-batches.
///
/// Tasks, per replica r and micro-batch m:
///   * F(s, r, m) on device p(s, r), `forward_ms[s]`;
///   * B(s, r, m) on the same device, `backward_ms[s]` (+ `forward_ms[s]` with recomputation);
///   * for every stage-graph edge s → s' (M(s, s') > 0, s < s'): the activation A(s→s', r, m)
///     after F(s, r, m), and the gradient G(s'→s, r, m) after B(s', r, m), each taking
///     T(bytes) of cost/transfer.hpp (bytes / bandwidth + latency; 0 for an empty message, which
///     still orders the tasks) on the link p(s, r) → p(s', r) (or back); with `blocking_sends`
///     the sender's F (B) task carries its sends instead;
///   * AR(s): ring allreduce of the stage's P(s) parameter bytes over its replicas, after every
///     B(s, ·, ·); 2(R−1) steps moving P/R bytes over every link of the ring (replicas 0..R−1 in
///     index order) at once, i.e. 2(R−1)/R · P / (slowest ring bandwidth) plus 2(R−1) latencies;
///   * the iteration ends when the last task does, plus `update_ms`.
/// Dependencies: F(s, r, m) needs its incoming activations, B(s, r, m) its incoming gradients and
/// F(s, r, m). Each device runs its compute tasks in the order of the schedule:
///   * GPipe: F for m = 0..MB−1, then B for m = MB−1..0 (flush);
///   * 1F1B: min(S − s, MB) warm-up forwards, then one backward, one forward, ..., then the
///     remaining backwards, so at most min(S − s, MB) micro-batches are in flight on stage s.
/// Per-stage replica counts (a `general_dp` plan): row s of `device_of` may hold its own R_s
/// devices. A micro-batch round then carries R̂ · micro_batch_size samples, R̂ = `replicas` (the
/// reference count, e.g. max_s R_s), and replica i of stage s works on the share [i/R_s, (i+1)/R_s)
/// of it: F and B take R̂/R_s times the stage's per-micro-batch times, and replica i sends to
/// replica j of a later stage the part M(s, s') · R̂ · |share_i ∩ share_j| both hold (one transfer
/// per overlapping pair; the redistribution between stages of different widths), gradients the
/// same way back. The allreduce of stage s runs over its R_s replicas. With equal rows and
/// R̂ = R this is exactly the model above (the same tasks, times and bytes).
/// Links: with `serialize_links` (default) a directed device pair carries one transfer at a time,
/// first come first served; otherwise transfers never wait. A task starts as soon as its
/// dependencies are done and its device (or link) is free.
///
/// Outputs: iteration time, samples per second (micro_batch_size · R · MB per iteration), the
/// bubble fraction 1 − (Σ compute busy time of the used devices) / (devices · iteration), which
/// for S equal stages and no communication under GPipe is (S − 1) / (MB + S − 1); per-device busy
/// time; peak in-flight micro-batches per stage; and the full event timeline, each event with the
/// bytes it moves and the event whose end set its start (from which sim/critical_path.hpp walks
/// back the chain of tasks that sets the iteration time).
///
/// Complexity: O(T log T) for the T = O(S R MB + |E_S| R MB + S) tasks.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/config.hpp"
#include "devplace/cost/transfer.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

enum class pipeline_schedule { gpipe, one_f_one_b };

[[nodiscard]] constexpr std::string_view to_string(pipeline_schedule s) noexcept {
  return s == pipeline_schedule::gpipe ? "gpipe" : "1f1b";
}

/// A mapped pipeline: what the simulator needs, independent of how it was produced.
struct pipeline_model {
  std::size_t stages = 0;                              ///< S
  std::size_t replicas = 1;                            ///< R (R̂, the reference count, with rows of different lengths)
  std::vector<double> forward_ms, backward_ms;         ///< per stage, one micro-batch
  std::vector<double> param_bytes;                     ///< P(s)
  /// M[s][s'] for s < s': bytes of the stage-graph edge s → s' (activations forward, gradients
  /// back), ≥ 0 for every edge — a 0-byte edge is still a dependency — and negative where there
  /// is no edge.
  std::vector<std::vector<double>> message_bytes;
  std::vector<std::vector<std::size_t>> device_of;     ///< S rows of R devices (row s: R_s ≥ 1 devices)
};

/// How one iteration is run. MB is the same MB as `stage_cost_options::micro_batches` (phase 1,
/// eq. 14) and `mapper_options::micro_batches` (the combined mapping model); `search_plan` sets
/// all three from its one `plan_search_options::micro_batches` (sim/plan_search.hpp says why
/// these structs are not nested in one another).
struct simulation_options {
  std::size_t micro_batches = 4;                       ///< MB
  double micro_batch_size = 1;                         ///< samples per micro-batch
  pipeline_schedule schedule = pipeline_schedule::gpipe;
  bool recompute = false;                              ///< activation recomputation
  bool serialize_links = true;                         ///< one transfer at a time per directed device pair
  bool allreduce = true;                               ///< simulate the gradient allreduce
  /// A device is busy while it sends (F(s) includes its activation sends, B(s) its gradient
  /// sends); off: transfers run on the links, overlapped with compute. The p2p mapping model
  /// assumes blocking sends (docs/simulator.md, "Steady state").
  bool blocking_sends = false;
  /// The devices of a stage are busy during its allreduce: it counts in their `device_busy_ms`
  /// (in one iteration the allreduce follows every backward of its devices either way). With
  /// blocking sends, MB times the combined mapping model is the largest busy time.
  bool blocking_allreduce = false;
  double update_ms = 0;                                ///< optimizer step after the last task
};

enum class sim_task_kind { forward, backward, send_activation, send_gradient, allreduce };

[[nodiscard]] constexpr std::string_view to_string(sim_task_kind k) noexcept {
  switch (k) {
    case sim_task_kind::forward: return "forward";
    case sim_task_kind::backward: return "backward";
    case sim_task_kind::send_activation: return "activation";
    case sim_task_kind::send_gradient: return "gradient";
    case sim_task_kind::allreduce: return "allreduce";
  }
  return "?";
}

/// One event of the timeline. Transfers name both devices; compute tasks have `to == from`.
struct sim_event {
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  sim_task_kind kind;
  std::size_t stage, replica, micro_batch;
  std::size_t from, to;                                ///< devices
  double start_ms, end_ms;
  double bytes = 0;                                    ///< moved by a transfer or an allreduce; 0 for compute
  /// The timeline index of the event whose end set this one's start: its latest dependency (an
  /// incoming transfer, the device's previous task, its own forward) or, for a transfer that
  /// waited for its link, the link's previous transfer; `none` for an event with neither.
  /// Following it from the last event gives a critical path (sim/critical_path.hpp).
  std::size_t after = none;
};

struct simulation_result {
  double iteration_ms = 0;
  double samples_per_s = 0;
  double bubble_fraction = 0;
  std::vector<double> device_busy_ms;                  ///< compute busy time (+ blocking sends and allreduce), by device id
  std::vector<std::size_t> peak_in_flight;             ///< per stage: max micro-batches forwarded, not yet backwarded
  std::vector<sim_event> timeline;                     ///< every task, in start order
};

/// Builds the model of `g` cut by `stage_of` into S stages with R replicas on `device_of`, for any
/// `profiled_dag`: per stage, forward = Σ forward_ms(v) and backward = Σ (compute_ms(v) −
/// forward_ms(v)), so that forward + backward is the stage's c_u, the same compute the partitioner
/// and the mapper read; parameter bytes Σ param_bytes(v); and M(s, s') = bytes of the edges between
/// s and s' (either direction, parallel edges once: dag/edges.hpp); -1 where no edge.
/// Throws std::invalid_argument on a size mismatch, a stage ≥ S, rows of different lengths, or an
/// operator whose compute_ms is less than its forward_ms.
template <profiled_dag G>
[[nodiscard]] pipeline_model make_pipeline_model(const G& g, const std::vector<std::size_t>& stage_of, std::size_t stages,
                                                 std::vector<std::vector<std::size_t>> device_of) {
  const std::size_t n = devplace::num_vertices(g);
  if (stage_of.size() != n)
    throw std::invalid_argument("make_pipeline_model: stage_of has " + std::to_string(stage_of.size()) +
                                " entries, the graph " + std::to_string(n) + " operators");
  if (stages == 0) throw std::invalid_argument("make_pipeline_model: at least one stage is needed");
  if (device_of.size() != stages)
    throw std::invalid_argument("make_pipeline_model: device_of has " + std::to_string(device_of.size()) +
                                " rows, one per stage (" + std::to_string(stages) + ") is needed");
  pipeline_model m;
  m.stages = stages;
  m.replicas = 0;
  for (std::size_t s = 0; s < stages; ++s) {
    if (device_of[s].empty())
      throw std::invalid_argument("make_pipeline_model: device_of row " + std::to_string(s) + " has no device");
    m.replicas = std::max(m.replicas, device_of[s].size());  // R̂ = max_s R_s
  }
  m.forward_ms.assign(stages, 0.0);
  m.backward_ms.assign(stages, 0.0);
  m.param_bytes.assign(stages, 0.0);
  m.message_bytes.assign(stages, std::vector<double>(stages, -1.0));
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t s = stage_of[v];
    if (s >= stages)
      throw std::invalid_argument("make_pipeline_model: operator " + std::to_string(v) + " has stage " +
                                  std::to_string(s) + " >= S = " + std::to_string(stages));
    const double f = devplace::forward_ms(g, v), c = devplace::compute_ms(g, v);
    if (c < f)
      throw std::invalid_argument("make_pipeline_model: operator " + std::to_string(v) + " has compute_ms " +
                                  std::to_string(c) + " < forward_ms " + std::to_string(f));
    m.forward_ms[s] += f;
    m.backward_ms[s] += c - f;
    m.param_bytes[s] += devplace::param_bytes(g, v);
  }
  for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) {
    const std::size_t a = stage_of[u], b = stage_of[v];
    if (a == b) return;
    double& mb = m.message_bytes[std::min(a, b)][std::max(a, b)];
    mb = std::max(mb, 0.0) + bytes;
  });
  m.device_of = std::move(device_of);
  return m;
}

/// Throws std::invalid_argument naming the field when `m` is not a well-formed model on `devices`
/// devices: sizes, finite costs ≥ 0, device ids < devices, and distinct devices.
inline void check_pipeline_model(const pipeline_model& m, std::size_t devices) {
  const std::size_t S = m.stages, R = m.replicas;
  auto fail = [](const std::string& what) { throw std::invalid_argument("simulate: " + what); };
  // R is the reference count R̂; each row holds its stage's R_s devices.
  if (S == 0 || R == 0) fail("the model needs at least one stage and one replica");
  if (m.forward_ms.size() != S || m.backward_ms.size() != S || m.param_bytes.size() != S || m.message_bytes.size() != S ||
      m.device_of.size() != S)
    fail("forward_ms, backward_ms, param_bytes, message_bytes and device_of need one entry per stage (S = " +
         std::to_string(S) + ")");
  std::vector<char> used(devices, 0);
  for (std::size_t s = 0; s < S; ++s) {
    for (double x : {m.forward_ms[s], m.backward_ms[s], m.param_bytes[s]})
      if (!(x >= 0) || !std::isfinite(x)) fail("stage " + std::to_string(s) + " has a negative or non-finite cost");
    if (m.message_bytes[s].size() != S) fail("message_bytes row " + std::to_string(s) + " needs S entries");
    for (double x : m.message_bytes[s])
      if (!std::isfinite(x)) fail("message_bytes row " + std::to_string(s) + " has a non-finite entry");
    if (m.device_of[s].empty()) fail("device_of row " + std::to_string(s) + " has no device");
    for (auto d : m.device_of[s]) {
      if (d >= devices)
        fail("device_of[" + std::to_string(s) + "] names device " + std::to_string(d) + ", the topology has " +
             std::to_string(devices));
      if (used[d]) fail("device " + std::to_string(d) + " runs two stage replicas");
      used[d] = 1;
    }
  }
}

namespace detail {

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

}  // namespace detail

/// Simulates one iteration of `m` on any `device_topology`.
template <device_topology T>
[[nodiscard]] simulation_result simulate(const pipeline_model& m, const T& topology, const simulation_options& o = {}) {
  const std::size_t D = devplace::num_devices(topology);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Ones(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  Eigen::MatrixXd lat = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) {
        bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = devplace::bandwidth_gbps(topology, a, b);
        lat(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = devplace::latency_us(topology, a, b);
      }
  return detail::simulate_core(m, bw, lat, o);
}

}  // namespace devplace
