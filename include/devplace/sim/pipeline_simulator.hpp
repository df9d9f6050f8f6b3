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
///     index order) at once, i.e. 2(R−1)/R · P / (slowest ring bandwidth) plus 2(R−1) latencies
///     (`ring_collective_ms` of cost/collective.hpp on the slowest ring link);
///   * with `dp_bucket_bytes` b > 0, AR(s) is instead K = ⌈P / b⌉ bucketed allreduces, as PyTorch
///     DDP runs them: the gradients fill the buckets in the order the backward produces them while
///     the last backward B*(s, r) of stage s on each replica runs (the last in the device's
///     order), bucket k (bytes P_k = min(b, P − k b)) is full at start(B*) + ρ + x_k · β, where ρ
///     is the recomputed forward (0 without recomputation), β the backward time and x_k the
///     fraction of the backward after which its last byte exists (sim/detail/gradient_buckets.hpp):
///     with the stage's gradient profile (`pipeline_model::gradient_profile`, its operators in
///     backward order, filled by `make_pipeline_model`) the time of the operators up to the first
///     one whose cumulative parameter bytes reach the bucket's end, over their total; without one
///     Σ_{i ≤ k} P_i / P (gradients at a constant rate). Its allreduce AR_k(s) starts once every
///     replica has filled it; the buckets of the devices' data-parallel group run one at a time
///     on its communicator (one NCCL stream, first ready first served), overlapped with the
///     remaining compute;
///   * the iteration ends when the last task does, plus `update_ms`.
/// Dependencies: F(s, r, m) needs its incoming activations, B(s, r, m) its incoming gradients and
/// F(s, r, m). Each device runs its compute tasks in the order of the schedule (sim/schedule.hpp:
/// GPipe, 1F1B, or interleaved 1F1B with v = `virtual_stages` model chunks per device, where the
/// model's S stages are S / v pipeline ranks × v chunks and chunk c runs on the devices of rank
/// c mod S / v).
/// Per-stage replica counts (a `general_dp` plan): row s of `device_of` may hold its own R_s
/// devices. A micro-batch round then carries R̂ · micro_batch_size samples, R̂ = `replicas` (the
/// reference count, e.g. max_s R_s), and replica i of stage s works on the share [i/R_s, (i+1)/R_s)
/// of it: F and B take R̂/R_s times the stage's per-micro-batch times, and replica i sends to
/// replica j of a later stage the part M(s, s') · R̂ · |share_i ∩ share_j| both hold (one transfer
/// per overlapping pair; the redistribution between stages of different widths), gradients the
/// same way back. The allreduce of stage s runs over its R_s replicas. With equal rows and
/// R̂ = R this is exactly the model above (the same tasks, times and bytes).
/// Links: with `serialize_links` (default) a directed device pair carries one transfer at a time,
/// first come first served; otherwise transfers never wait. Nodes (the topology's `node_of`,
/// `nic_count` and `nic_bandwidth_gbps`, topology/concepts.hpp): a transfer from one node to
/// another runs at min(link, NIC bandwidths) and holds one egress NIC of the sending node and one
/// ingress NIC of the receiving node (each NIC carries one transfer at a time, first come first
/// served; the first free NIC is taken); a ring link of an allreduce that leaves a node whose n
/// NICs carry k ring links gets min(1, n / k) of a NIC's bandwidth, and the allreduce holds
/// min(n, k) egress NICs of every node its ring leaves and min(n, k) ingress NICs of every node
/// it enters (the first free), so allreduces and point-to-point transfers through a node's NICs
/// wait for one another, first come first served. NICs of infinite bandwidth (the default) are no
/// bottleneck and no resource. A task starts as soon as its dependencies are done and its device
/// (or links, NICs, communicator) are free; of tasks ready at the same time the one created first
/// goes first (compute, then transfers, then allreduces).
///
/// Outputs: iteration time, samples per second (micro_batch_size · R · MB per iteration), the
/// bubble fraction 1 − (Σ compute busy time of the used devices) / (devices · iteration), which
/// for S equal stages and no communication under GPipe is (S − 1) / (MB + S − 1); per-device busy
/// time; peak in-flight micro-batches per stage; and the full event timeline, each event with the
/// bytes it moves and the event whose end set its start (from which sim/critical_path.hpp walks
/// back the chain of tasks that sets the iteration time).
///
/// Complexity: O(T log T) for the T = O(S R MB + |E_S| R MB + S K) tasks (K buckets per stage).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <cstddef>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/config.hpp"
#include "devplace/cost/collective.hpp"
#include "devplace/cost/transfer.hpp"
#include "devplace/sim/detail/gradient_buckets.hpp"
#include "devplace/sim/detail/network.hpp"
#include "devplace/sim/pipeline_model.hpp"
#include "devplace/sim/schedule.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

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
  /// v, model chunks per device of the interleaved schedule (the model's S stages are S / v
  /// pipeline ranks × v chunks); 1 for GPipe and 1F1B.
  std::size_t virtual_stages = 1;
  /// Gradient bucket size b of the data-parallel allreduce, overlapped with the last backward
  /// (PyTorch DDP's default is 25 MiB); 0: one allreduce of the stage after its last backward.
  double dp_bucket_bytes = 0;
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
  std::size_t stage, replica, micro_batch;           ///< for an allreduce: the stage, 0 and the bucket
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

namespace detail {

/// The task graph of one iteration (see the file comment) and its event loop.
class pipeline_sim {
 public:
  pipeline_sim(const pipeline_model& m, const Eigen::MatrixXd& bw, const Eigen::MatrixXd& lat, const simulation_options& o,
               const network_nodes& net)
      : m_(m), bw_(bw), lat_(lat), o_(o), net_(net), S_(m.stages), R_(m.replicas), MB_(o.micro_batches),
        ranks_(m.stages / std::max<std::size_t>(o.virtual_stages, 1)) {
    off_.assign(S_ + 1, 0);
    for (std::size_t s = 0; s < S_; ++s) off_[s + 1] = off_[s] + m.device_of[s].size();
  }

  simulation_result run() {
    add_compute_and_transfers();
    chain_schedule();
    add_allreduces();
    return events();
  }

 private:
  static constexpr std::size_t none = sim_event::none;
  struct task {
    sim_task_kind kind;
    std::size_t stage, replica, mb, from, to;
    double duration, bytes;
    std::size_t missing = 0;                          // unfinished dependencies
    double ready = 0;                                 // when the last dependency finished
    std::size_t binding = none;                       // that dependency
    std::vector<std::size_t> next;                    // dependents, released at the end
    std::vector<std::pair<std::size_t, double>> lag;  // dependents released `lag` ms after the start
  };

  std::size_t reps(std::size_t s) const { return m_.device_of[s].size(); }
  // The work of one replica of stage s per micro-batch round: R̂ / R_s micro-batches' worth.
  double scale(std::size_t s) const { return reps(s) == R_ ? 1.0 : double(R_) / double(reps(s)); }
  std::size_t idx(std::size_t s, std::size_t r, std::size_t mb) const { return (off_[s] + r) * MB_ + mb; }
  double transfer(std::size_t a, std::size_t b, double bytes) const {
    if (a == b) return 0.0;
    const auto i = static_cast<Eigen::Index>(a), j = static_cast<Eigen::Index>(b);
    return transfer_time_ms(bytes, net_.limit(a, b, bw_(i, j)), lat_(i, j));
  }
  std::size_t add(sim_task_kind k, std::size_t s, std::size_t r, std::size_t mb, std::size_t from, std::size_t to, double d,
                  double bytes = 0) {
    tasks_.push_back({k, s, r, mb, from, to, d, bytes, 0, 0, none, {}, {}});
    return tasks_.size() - 1;
  }
  void dep(std::size_t before, std::size_t after) {
    tasks_[before].next.push_back(after);
    ++tasks_[after].missing;
  }
  void dep_after_start(std::size_t before, std::size_t after, double lag) {
    tasks_[before].lag.emplace_back(after, lag);
    ++tasks_[after].missing;
  }

  // The replicas j of stage t sharing data with replica i of stage s, and the bytes of each pair:
  // shares [i·b, (i+1)·b) and [j·a, (j+1)·a) in units of 1 / (a·b).
  std::vector<std::pair<std::size_t, double>> exchanges(std::size_t s, std::size_t i, std::size_t t, double bytes) const {
    std::vector<std::pair<std::size_t, double>> out;
    const std::size_t a = reps(s), b = reps(t);
    if (a == b) {
      out.emplace_back(i, a == R_ ? bytes : bytes * double(R_) / double(a));
      return out;
    }
    for (std::size_t j = i * b / a; j < ((i + 1) * b + a - 1) / a; ++j) {
      const std::size_t lo = std::max(i * b, j * a), hi = std::min((i + 1) * b, (j + 1) * a);
      if (hi > lo) out.emplace_back(j, bytes * double(R_) * double(hi - lo) / (double(a) * double(b)));
    }
    return out;
  }

  void add_compute_and_transfers() {
    // With blocking sends the sender is busy while it sends: F(s) carries its activation sends,
    // B(s) its gradient sends, and the transfers themselves only order the tasks.
    std::vector<double> send_after_f(off_[S_], 0.0), send_after_b(off_[S_], 0.0);
    if (o_.blocking_sends)
      for (std::size_t s = 0; s < S_; ++s)
        for (std::size_t t = s + 1; t < S_; ++t) {
          if (m_.message_bytes[s][t] < 0) continue;
          for (std::size_t r = 0; r < reps(s); ++r)
            for (auto [j, x] : exchanges(s, r, t, m_.message_bytes[s][t])) {
              const std::size_t a = m_.device_of[s][r], b = m_.device_of[t][j];
              send_after_f[off_[s] + r] += transfer(a, b, x);
              send_after_b[off_[t] + j] += transfer(b, a, x);
            }
        }
    F_.assign(off_[S_] * MB_, none);
    B_.assign(off_[S_] * MB_, none);
    for (std::size_t s = 0; s < S_; ++s)
      for (std::size_t r = 0; r < reps(s); ++r) {
        const std::size_t d = m_.device_of[s][r];
        const double k = scale(s);
        for (std::size_t mb = 0; mb < MB_; ++mb) {
          F_[idx(s, r, mb)] = add(sim_task_kind::forward, s, r, mb, d, d, k * m_.forward_ms[s] + send_after_f[off_[s] + r]);
          B_[idx(s, r, mb)] = add(sim_task_kind::backward, s, r, mb, d, d,
                                  k * (m_.backward_ms[s] + (o_.recompute ? m_.forward_ms[s] : 0.0)) + send_after_b[off_[s] + r]);
          dep(F_[idx(s, r, mb)], B_[idx(s, r, mb)]);
        }
      }
    for (std::size_t s = 0; s < S_; ++s)
      for (std::size_t t = s + 1; t < S_; ++t) {
        const double bytes = m_.message_bytes[s][t];
        if (bytes < 0) continue;  // no edge
        for (std::size_t r = 0; r < reps(s); ++r)
          for (auto [j, x] : exchanges(s, r, t, bytes)) {
            const std::size_t a = m_.device_of[s][r], b = m_.device_of[t][j];
            for (std::size_t mb = 0; mb < MB_; ++mb) {
              const auto act = add(sim_task_kind::send_activation, s, r, mb, a, b, o_.blocking_sends ? 0.0 : transfer(a, b, x), x);
              dep(F_[idx(s, r, mb)], act);
              dep(act, F_[idx(t, j, mb)]);
              const auto grad = add(sim_task_kind::send_gradient, t, j, mb, b, a, o_.blocking_sends ? 0.0 : transfer(b, a, x), x);
              dep(B_[idx(t, j, mb)], grad);
              dep(grad, B_[idx(s, r, mb)]);
            }
          }
      }
  }

  // Per-device compute order of the schedule: chain consecutive tasks; note each replica's last
  // backward of every stage (chunk).
  void chain_schedule() {
    last_b_.assign(off_[S_], none);
    for (std::size_t k = 0; k < ranks_; ++k)
      for (std::size_t r = 0; r < reps(k); ++r) {
        std::size_t prev = none;
        for (const auto& st : device_order(o_.schedule, ranks_, k, o_.virtual_stages, MB_)) {
          const std::size_t s = k + st.chunk * ranks_, t = (st.backward ? B_ : F_)[idx(s, r, st.micro_batch)];
          if (st.backward) last_b_[off_[s] + r] = t;
          if (prev != none) dep(prev, t);
          prev = t;
        }
      }
  }

  // The allreduce of `bytes` of stage s over its ring (see the file comment on NICs).
  double ring_ms(std::size_t s, double bytes) const {
    const auto& ring = m_.device_of[s];
    const auto& x = crossings_[s];
    const std::size_t n = ring.size();
    double slowest = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t a = ring[r], b = ring[(r + 1) % n];
      const auto i = static_cast<Eigen::Index>(a), j = static_cast<Eigen::Index>(b);
      double gbps = bw_(i, j);
      if (net_.crosses(a, b)) {
        const std::size_t na = net_.node_of[a], nb = net_.node_of[b];
        gbps = std::min({gbps, net_.nic_gbps[na] * std::min(1.0, double(net_.nics[na]) / double(x.out[na])),
                         net_.nic_gbps[nb] * std::min(1.0, double(net_.nics[nb]) / double(x.in[nb]))});
      }
      slowest = std::max(slowest, ring_collective_ms(collective_op::all_reduce, bytes, n, gbps, lat_(i, j)));
    }
    return slowest;
  }

  void add_allreduces() {
    if (!o_.allreduce) return;
    crossings_.resize(S_);
    for (std::size_t s = 0; s < S_; ++s) crossings_[s] = ring_crossings(net_, m_.device_of[s]);
    for (std::size_t s = 0; s < S_; ++s) {
      const std::size_t Rs = reps(s);
      const double P = m_.param_bytes[s];
      if (Rs <= 1 || P <= 0) continue;
      const std::size_t d0 = m_.device_of[s][0];
      if (!(o_.dp_bucket_bytes > 0)) {  // one allreduce after every backward of the stage
        const auto ar = add(sim_task_kind::allreduce, s, 0, 0, d0, d0, ring_ms(s, P), P);
        for (std::size_t r = 0; r < Rs; ++r)
          for (std::size_t mb = 0; mb < MB_; ++mb) dep(B_[idx(s, r, mb)], ar);
        continue;
      }
      const double rho = o_.recompute ? scale(s) * m_.forward_ms[s] : 0.0, beta = scale(s) * m_.backward_ms[s];
      if (P / o_.dp_bucket_bytes > 1e6)
        throw std::invalid_argument("simulate: dp_bucket_bytes " + std::to_string(o_.dp_bucket_bytes) + " cuts stage " +
                                    std::to_string(s) + "'s " + std::to_string(P) + " gradient bytes into over 10^6 buckets");
      static const std::vector<gradient_op> constant_rate;
      const auto& profile = m_.gradient_profile.empty() ? constant_rate : m_.gradient_profile[s];
      const auto buckets = gradient_buckets(profile, P, o_.dp_bucket_bytes);
      for (std::size_t k = 0; k < buckets.size(); ++k) {
        const auto ar = add(sim_task_kind::allreduce, s, 0, k, d0, d0, ring_ms(s, buckets[k].bytes), buckets[k].bytes);
        for (std::size_t r = 0; r < Rs; ++r) dep_after_start(last_b_[off_[s] + r], ar, rho + buckets[k].fill_fraction * beta);
      }
    }
  }

  // The servers task k must hold (links, NICs, communicator); empty for compute.
  std::vector<server*> servers_of(const task& k) {
    std::vector<server*> out;
    if (k.kind == sim_task_kind::allreduce) {
      out.push_back(&res_->communicator(k.from));
      const auto& x = crossings_[k.stage];
      for (std::size_t n = 0; n < x.out.size(); ++n) {
        if (x.out[n] > 0) res_->nics(n, true, std::min(net_.nics[n], x.out[n]), out);
        if (x.in[n] > 0) res_->nics(n, false, std::min(net_.nics[n], x.in[n]), out);
      }
    } else if (k.kind != sim_task_kind::forward && k.kind != sim_task_kind::backward && k.from != k.to) {
      if (o_.serialize_links) out.push_back(&res_->link(k.from, k.to));
      if (net_.crosses(k.from, k.to)) {
        auto [e, i] = res_->nics(k.from, k.to);
        out.push_back(e);
        out.push_back(i);
      }
    }
    return out;
  }

  simulation_result events();

  const pipeline_model& m_;
  const Eigen::MatrixXd &bw_, &lat_;
  const simulation_options& o_;
  const network_nodes& net_;
  std::size_t S_, R_, MB_, ranks_;
  std::vector<std::size_t> off_;  // replica (s, r) is slot off[s] + r; R_s = device_of[s].size()
  std::vector<task> tasks_;
  std::vector<std::size_t> F_, B_, last_b_;
  std::vector<ring_crossings> crossings_;  // per stage, its ring's links across nodes
  resources* res_ = nullptr;
};

/// The event loop: a task whose dependencies are done waits for its servers; compute tasks are
/// already sequenced per device by the schedule chain.
inline simulation_result pipeline_sim::events() {
  resources res(net_);
  res_ = &res;
  simulation_result out;
  const std::size_t D = static_cast<std::size_t>(bw_.rows());
  out.device_busy_ms.assign(D, 0.0);
  using entry = std::tuple<double, std::size_t>;  // (earliest start, task id)
  std::priority_queue<entry, std::vector<entry>, std::greater<>> ready;
  std::vector<double> start(tasks_.size(), 0.0), end(tasks_.size(), 0.0);
  for (std::size_t t = 0; t < tasks_.size(); ++t)
    if (tasks_[t].missing == 0) ready.emplace(0.0, t);
  std::size_t done = 0;
  double last = 0;
  std::vector<std::size_t> event_task;  // timeline entry -> task id
  auto release = [&](std::size_t n, double at, std::size_t by) {
    if (at >= tasks_[n].ready) {
      tasks_[n].ready = at;
      tasks_[n].binding = by;
    }
    if (--tasks_[n].missing == 0) ready.emplace(tasks_[n].ready, n);
  };
  while (!ready.empty()) {
    auto [est, t] = ready.top();
    ready.pop();
    task& k = tasks_[t];
    const auto held = servers_of(k);
    double s0 = k.ready;
    const server* busiest = nullptr;
    for (const server* x : held)
      if (!busiest || x->free_at > busiest->free_at) busiest = x;
    if (busiest && busiest->free_at > est) {  // a server got busy since this entry was queued: wait in line
      ready.emplace(busiest->free_at, t);
      continue;
    }
    if (busiest && busiest->free_at > s0) {
      s0 = busiest->free_at;
      k.binding = busiest->last;
    }
    for (server* x : held) *x = {s0 + k.duration, t};
    start[t] = s0;
    end[t] = s0 + k.duration;
    last = std::max(last, end[t]);
    ++done;
    if (k.kind == sim_task_kind::forward || k.kind == sim_task_kind::backward) out.device_busy_ms[k.from] += k.duration;
    if (k.kind == sim_task_kind::allreduce && o_.blocking_allreduce)
      for (auto d : m_.device_of[k.stage]) out.device_busy_ms[d] += k.duration;
    out.timeline.push_back({k.kind, k.stage, k.replica, k.mb, k.from, k.to, start[t], end[t], k.bytes, k.binding});
    event_task.push_back(t);
    for (auto [n, lag] : k.lag) release(n, start[t] + lag, t);
    for (std::size_t n : k.next) release(n, end[t], t);
  }
  DEVPLACE_EXPECTS(done == tasks_.size(), "simulate: the stage graph has a cycle (message_bytes must only link s < s')");
  out.iteration_ms = last + o_.update_ms;
  out.samples_per_s = out.iteration_ms > 0 ? o_.micro_batch_size * double(R_) * double(MB_) / (out.iteration_ms / 1000.0) : 0;
  double busy = 0;
  std::size_t used = 0;
  std::vector<char> is_used(D, 0);
  for (const auto& row : m_.device_of)
    for (auto d : row) is_used[d] = 1;
  for (std::size_t d = 0; d < D; ++d)
    if (is_used[d]) {
      busy += out.device_busy_ms[d];
      ++used;
    }
  out.bubble_fraction = out.iteration_ms > 0 ? 1.0 - busy / (double(used) * out.iteration_ms) : 0;
  // Peak in flight per stage: forwards started minus backwards finished, over time (replica 0).
  out.peak_in_flight.assign(S_, 0);
  for (std::size_t s = 0; s < S_; ++s) {
    std::vector<std::pair<double, int>> ev;
    for (std::size_t mb = 0; mb < MB_; ++mb) {
      ev.emplace_back(start[F_[idx(s, 0, mb)]], +1);
      ev.emplace_back(end[B_[idx(s, 0, mb)]], -1);
    }
    std::sort(ev.begin(), ev.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second < b.second; });
    int cur = 0, peak = 0;
    for (auto [time, d] : ev) peak = std::max(peak, cur += d);
    out.peak_in_flight[s] = static_cast<std::size_t>(peak);
  }
  // The timeline in start order, `after` turned from task ids into timeline indices.
  std::vector<std::size_t> order(out.timeline.size()), position(tasks_.size(), sim_event::none);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return out.timeline[a].start_ms < out.timeline[b].start_ms; });
  for (std::size_t i = 0; i < order.size(); ++i) position[event_task[order[i]]] = i;
  std::vector<sim_event> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) {
    sorted.push_back(out.timeline[i]);
    if (sorted.back().after != sim_event::none) sorted.back().after = position[sorted.back().after];
  }
  out.timeline = std::move(sorted);
  res_ = nullptr;
  return out;
}

/// The core over dense bandwidth (GB/s) and latency (us) matrices and the nodes (empty:
/// independent links); a template only so that compiled mode compiles it once, in
/// devplace::core (config.hpp).
template <int = 0>
simulation_result simulate_core(const pipeline_model& m, const Eigen::MatrixXd& bw, const Eigen::MatrixXd& lat,
                                const simulation_options& o, const network_nodes& net = {}) {
  const std::size_t D = static_cast<std::size_t>(bw.rows());
  check_pipeline_model(m, D, o.virtual_stages);
  if (o.micro_batches == 0) throw std::invalid_argument("simulate: micro_batches must be >= 1");
  if (!(o.micro_batch_size > 0) || !std::isfinite(o.micro_batch_size))
    throw std::invalid_argument("simulate: micro_batch_size must be a finite number > 0");
  if (!(o.update_ms >= 0) || !std::isfinite(o.update_ms))
    throw std::invalid_argument("simulate: update_ms must be a finite number >= 0");
  if (!(o.dp_bucket_bytes >= 0) || !std::isfinite(o.dp_bucket_bytes))
    throw std::invalid_argument("simulate: dp_bucket_bytes must be a finite number >= 0");
  check_schedule(o.schedule, m.stages / o.virtual_stages, o.virtual_stages, o.micro_batches);
  if (!net.empty() && (net.node_of.size() != D || net.nics.size() != net.nic_gbps.size()))
    throw std::invalid_argument("simulate: the nodes need one entry per device and one NIC count per node");
  for (std::size_t n : net.node_of)
    if (n >= net.nics.size()) throw std::invalid_argument("simulate: a device names a node the topology does not have");
  for (std::size_t n = 0; n < net.nics.size(); ++n)
    if (net.nics[n] == 0 || !(net.nic_gbps[n] > 0))
      throw std::invalid_argument("simulate: node " + std::to_string(n) + " needs at least one NIC of bandwidth > 0");
  return pipeline_sim(m, bw, lat, o, net).run();
}

#if !DEVPLACE_HEADER_ONLY
extern template simulation_result simulate_core<0>(const pipeline_model&, const Eigen::MatrixXd&, const Eigen::MatrixXd&,
                                                   const simulation_options&, const network_nodes&);
#endif

/// The nodes of any `device_topology` (empty when every NIC has infinite bandwidth).
template <device_topology T>
[[nodiscard]] network_nodes network_nodes_of(const T& t) {
  const std::size_t D = devplace::num_devices(t);
  network_nodes net;
  for (std::size_t d = 0; d < D; ++d) net.node_of.push_back(devplace::node_of(t, d));
  const std::size_t N = D == 0 ? 0 : *std::max_element(net.node_of.begin(), net.node_of.end()) + 1;
  bool finite = false;
  for (std::size_t n = 0; n < N; ++n) {
    net.nics.push_back(devplace::nic_count(t, n));
    net.nic_gbps.push_back(devplace::nic_bandwidth_gbps(t, n));
    finite = finite || std::isfinite(net.nic_gbps.back());
  }
  if (!finite) return {};
  return net;
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
  return detail::simulate_core(m, bw, lat, o, detail::network_nodes_of(topology));
}

}  // namespace devplace
