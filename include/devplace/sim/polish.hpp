#pragma once
/// \file sim/polish.hpp
/// Polishing a device mapping on the simulation itself: local changes scored by the
/// discrete-event simulator (sim/pipeline_simulator.hpp), only those that simulate faster kept.
///
/// The mappers score a mapping with a model: the steady state per micro-batch
/// (map/cost_models.hpp) or the closed-form GPipe iteration (sim/closed_form.hpp, exact only
/// with blocking sends). The simulation is what those models approximate (fill and drain,
/// overlapped sends, one transfer at a time per link, the allreduce rings), and two mappings a
/// model ranks one way can simulate the other way round. `polish_mapping` takes a complete
/// mapping and improves it under the simulation:
///
///   auto model = make_pipeline_model(g, plan.stage_of, plan.stages, plan.device_of);
///   const auto r = polish_mapping(model, topology, simulation_options_of(plan), {.timeout_s = 2});
///   // r.device_of simulates in r.iteration_ms <= r.initial_iteration_ms
///
/// Neighbourhood of a mapping p (V slots (s, r) on distinct devices of the D):
///   * swap: two slots exchange their devices — V(V − 1)/2 changes;
///   * move: one slot to a device no slot uses — V(D − V);
///   * stage swap: two stages with as many replicas exchange their rows (ring order kept), the
///     change R single swaps would make at once — at most S(S − 1)/2.
/// Key: k(p) = (T(p), Σ_e end_e(p)) — T the simulated iteration, then the sum of the end times of
/// all the simulated tasks — compared lexicographically. A change is kept iff it lowers k
/// strictly: T never rises, and on a plateau of T (the iteration set by one chain of tasks the
/// change does not touch) the second term still rewards finishing the other tasks sooner, which
/// is what lets a later change shorten the chain. k strictly decreases over a finite set of
/// mappings, so the search ends. First improvement: the changes are scanned in a fixed cyclic
/// order (swaps, moves, stage swaps), resuming after the last kept one; V² + V(D − V) + S²
/// consecutive indices without a kept change (the inapplicable ones skipped at no cost) make a
/// local optimum.
///
/// Guarantees: T(result) ≤ T(input) (with equality only when nothing simulates faster in the
/// part scanned); with `local_optimum`, no single swap, move or stage swap lowers k, so none
/// simulates faster. Not a global optimum: when every mapping is one change from every other
/// (one slot, or two slots on two devices) the local optimum is the best mapping; otherwise a
/// local optimum can be worse (test/sim/polish.cpp measures both on brute-forced tiny instances).
///
/// Complexity: one evaluation is one simulation, O(τ log τ) for its τ = O(S R MB + |E_S| R MB + S)
/// tasks; a round is at most V² + V(D − V) + S² of them. The time limit (`timeout_s`,
/// `deadline`, `stop`) is checked before every evaluation; a stopped run returns the best mapping
/// so far with status `time_limit`.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/status.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

/// Where a polish stands, for a progress line.
struct polish_progress {
  double initial_ms = 0;          ///< T of the input
  double iteration_ms = 0;        ///< T of the best mapping so far
  std::uint64_t evaluations = 0;  ///< simulations run
  std::size_t kept = 0;           ///< changes kept
  double elapsed_s = 0;
};

struct polish_options {
  double timeout_s = std::numeric_limits<double>::infinity();  ///< ≥ 0, from the call
  /// Also stops at this steady-clock time (the earlier of the two applies).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* stop = nullptr;  ///< stops when it becomes true
  bool swaps = true;                        ///< two slots exchange their devices
  bool moves = true;                        ///< one slot to an unused device
  bool stage_swaps = true;                  ///< two stages of as many replicas exchange their rows
  /// Called at most every `progress_interval_s` while the polish runs, and once at its end.
  std::function<void(const polish_progress&)> progress;
  double progress_interval_s = 1.0;
};

struct polish_result {
  std::vector<std::vector<std::size_t>> device_of;  ///< S rows, as long as the input's
  double iteration_ms = 0;                          ///< simulated T of device_of
  double samples_per_s = 0;                         ///< simulated samples/s of device_of
  double initial_iteration_ms = 0;                  ///< simulated T of the input
  std::size_t swaps = 0, moves = 0, stage_swaps = 0;  ///< changes kept, by kind
  std::uint64_t evaluations = 0;                    ///< simulations run (the input's included)
  bool local_optimum = false;                       ///< no change lowers the key (false: stopped)
  /// feasible: a local optimum; time_limit: the limit (or `stop`) ended the scan first
  devplace::status status = status::feasible;
  std::size_t start = 0;                            ///< `polish_fastest`: the candidate it came from
  double time_s = 0;
};

namespace detail {

/// The key k(p) of the file comment.
struct polish_key {
  double iteration_ms = std::numeric_limits<double>::infinity();
  double end_sum_ms = std::numeric_limits<double>::infinity();
  [[nodiscard]] bool operator<(const polish_key& o) const noexcept {
    return iteration_ms < o.iteration_ms || (iteration_ms == o.iteration_ms && end_sum_ms < o.end_sum_ms);
  }
};

inline polish_key polish_score(const pipeline_model& m, const Eigen::MatrixXd& bw, const Eigen::MatrixXd& lat,
                               const simulation_options& so, double& samples_per_s) {
  const simulation_result r = simulate_core(m, bw, lat, so);
  double sum = 0;
  for (const auto& e : r.timeline) sum += e.end_ms;
  samples_per_s = r.samples_per_s;
  return {r.iteration_ms, sum};
}

/// The polish of the file comment on dense bandwidth / latency matrices; `m.device_of` is the input.
inline polish_result polish_core(pipeline_model m, const Eigen::MatrixXd& bw, const Eigen::MatrixXd& lat,
                                 const simulation_options& so, const polish_options& po) {
  using clock = std::chrono::steady_clock;
  if (!(po.timeout_s >= 0)) throw std::invalid_argument("polish_mapping: timeout_s must be >= 0");
  if (!(po.progress_interval_s >= 0)) throw std::invalid_argument("polish_mapping: progress_interval_s must be >= 0");
  const std::size_t D = static_cast<std::size_t>(bw.rows());
  check_pipeline_model(m, D);
  const auto t0 = clock::now();
  auto deadline = po.deadline;
  if (std::isfinite(po.timeout_s) && po.timeout_s < 1e9)
    deadline = std::min(deadline, t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(po.timeout_s)));
  const std::size_t S = m.stages;
  std::vector<std::pair<std::size_t, std::size_t>> slot;  // (s, r) of slot v
  std::vector<char> used(D, 0);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < m.device_of[s].size(); ++r) {
      slot.emplace_back(s, r);
      used[m.device_of[s][r]] = 1;
    }
  std::vector<std::size_t> unused;
  for (std::size_t d = 0; d < D; ++d)
    if (!used[d]) unused.push_back(d);
  const std::size_t V = slot.size(), F = unused.size();
  auto dev = [&](std::size_t v) -> std::size_t& { return m.device_of[slot[v].first][slot[v].second]; };

  polish_result res;
  double samples = 0;
  polish_key cur = polish_score(m, bw, lat, so, samples);
  res.initial_iteration_ms = cur.iteration_ms;
  res.samples_per_s = samples;
  res.evaluations = 1;
  auto report = [&] {
    if (po.progress)
      po.progress({.initial_ms = res.initial_iteration_ms, .iteration_ms = cur.iteration_ms, .evaluations = res.evaluations,
                   .kept = res.swaps + res.moves + res.stage_swaps,
                   .elapsed_s = std::chrono::duration<double>(clock::now() - t0).count()});
  };
  auto last_report = t0;
  // Change index k: [0, V²) swaps (a, b), a < b; [V², V² + VF) moves; then S² stage swaps (s, t), s < t.
  const std::size_t n_swap = po.swaps ? V * V : 0, n_move = po.moves ? V * F : 0, n_stage = po.stage_swaps ? S * S : 0;
  const std::size_t N = n_swap + n_move + n_stage;
  // Every change exchanges two entries, so applying it again undoes it. Returns the counter of
  // its kind, or nullptr when the index names no change (a ≥ b, rows of different lengths).
  auto apply = [&](std::size_t k) -> std::size_t* {
    if (k < n_swap) {
      const std::size_t a = k / V, b = k % V;
      if (a >= b) return nullptr;
      std::swap(dev(a), dev(b));
      return &res.swaps;
    }
    if (k < n_swap + n_move) {
      std::swap(dev((k - n_swap) / F), unused[(k - n_swap) % F]);
      return &res.moves;
    }
    const std::size_t s = (k - n_swap - n_move) / S, t = (k - n_swap - n_move) % S;
    if (s >= t || m.device_of[s].size() != m.device_of[t].size()) return nullptr;
    std::swap(m.device_of[s], m.device_of[t]);
    return &res.stage_swaps;
  };
  bool stopped = false;
  for (std::size_t k = 0, since = 0; N > 0 && since < N; k = (k + 1) % N, ++since) {
    const auto now = clock::now();
    if (now >= deadline || (po.stop && po.stop->load(std::memory_order_relaxed))) {
      stopped = true;
      break;
    }
    std::size_t* kind = apply(k);
    if (!kind) continue;
    if (po.progress && std::chrono::duration<double>(now - last_report).count() >= po.progress_interval_s) {
      report();
      last_report = now;
    }
    double sps = 0;
    const polish_key next = polish_score(m, bw, lat, so, sps);
    ++res.evaluations;
    if (next < cur) {
      cur = next;
      res.samples_per_s = sps;
      ++*kind;
      since = 0;
    } else {
      apply(k);
    }
  }
  report();
  res.device_of = std::move(m.device_of);
  res.iteration_ms = cur.iteration_ms;
  res.local_optimum = !stopped;
  res.status = stopped ? status::time_limit : status::feasible;
  res.time_s = std::chrono::duration<double>(clock::now() - t0).count();
  return res;
}

/// The D × D bandwidth (GB/s) and latency (us) matrices of `simulate`.
template <device_topology T>
std::pair<Eigen::MatrixXd, Eigen::MatrixXd> polish_matrices(const T& topology) {
  const std::size_t D = devplace::num_devices(topology);
  const auto n = static_cast<Eigen::Index>(D);
  std::pair<Eigen::MatrixXd, Eigen::MatrixXd> m{Eigen::MatrixXd::Ones(n, n), Eigen::MatrixXd::Zero(n, n)};
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) {
        m.first(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = devplace::bandwidth_gbps(topology, a, b);
        m.second(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = devplace::latency_us(topology, a, b);
      }
  return m;
}

}  // namespace detail

/// Polishes `m.device_of` on any `device_topology` (file comment). Throws std::invalid_argument
/// when `m` is not a well-formed model on the topology's devices (`check_pipeline_model`), when a
/// simulation option is invalid, or when `timeout_s` or `progress_interval_s` is negative or NaN.
template <device_topology T>
[[nodiscard]] polish_result polish_mapping(pipeline_model m, const T& topology, const simulation_options& so = {},
                                           const polish_options& po = {}) {
  const auto [bw, lat] = detail::polish_matrices(topology);
  return detail::polish_core(std::move(m), bw, lat, so, po);
}

/// The portfolio: simulates every candidate mapping (each S rows, in place of `m.device_of`),
/// polishes them fastest first while the time limit allows, and returns the fastest polished
/// mapping (`start`: its candidate). Its T is at most every candidate's T. Status `time_limit`
/// when the limit stopped a polish or left a candidate unpolished, else `feasible`. Throws
/// std::invalid_argument when `candidates` is empty, and as `polish_mapping`.
template <device_topology T>
[[nodiscard]] polish_result polish_fastest(pipeline_model m, const T& topology,
                                           std::span<const std::vector<std::vector<std::size_t>>> candidates,
                                           const simulation_options& so = {}, polish_options po = {}) {
  using clock = std::chrono::steady_clock;
  if (candidates.empty()) throw std::invalid_argument("polish_fastest: no candidate mapping");
  if (!(po.timeout_s >= 0)) throw std::invalid_argument("polish_fastest: timeout_s must be >= 0");
  const auto t0 = clock::now();
  if (std::isfinite(po.timeout_s) && po.timeout_s < 1e9)
    po.deadline = std::min(po.deadline, t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(po.timeout_s)));
  po.timeout_s = std::numeric_limits<double>::infinity();
  const auto [bw, lat] = detail::polish_matrices(topology);
  std::vector<detail::polish_key> key(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    m.device_of = candidates[i];
    check_pipeline_model(m, static_cast<std::size_t>(bw.rows()));
    double sps = 0;
    key[i] = detail::polish_score(m, bw, lat, so, sps);
  }
  std::vector<std::size_t> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  polish_result best;
  std::uint64_t evaluations = candidates.size();
  bool stopped = false;
  for (std::size_t n = 0; n < order.size(); ++n) {
    // The fastest candidate is always polished (at least scored); the others while time is left.
    if (n > 0 && (clock::now() >= po.deadline || (po.stop && po.stop->load()))) {
      stopped = true;
      break;
    }
    m.device_of = candidates[order[n]];
    polish_result r = detail::polish_core(m, bw, lat, so, po);
    evaluations += r.evaluations - 1;  // its input's simulation is counted above
    stopped = stopped || r.status == status::time_limit;
    r.start = order[n];
    if (n == 0 || r.iteration_ms < best.iteration_ms) best = std::move(r);
  }
  best.status = stopped ? status::time_limit : status::feasible;
  best.evaluations = evaluations;
  best.time_s = std::chrono::duration<double>(clock::now() - t0).count();
  return best;
}

}  // namespace devplace
