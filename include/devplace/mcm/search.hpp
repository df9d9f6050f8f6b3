#pragma once
/// \file mcm/search.hpp
/// The MCM search loop (seed-mcm §3.6): propose (P, y) -> repair (SAMPLE or FIX) -> evaluate ->
/// feed the rewards back to the policy, under a sample budget and a wall-time budget.
///
///   auto ring = mcm::one_way_ring(36);
///   mcm::compute_evaluator eval(g, ring);
///   mcm::softmax_policy rl(num_vertices(g), 36);
///   auto r = mcm::search(g, ring, rl, eval, {.samples = 500, .seed = 1});
///   // r.chip_of (always valid under eq. 2-4), r.best, r.curve, r.samples_to_threshold
///
/// One sample is one evaluated repaired partition, including fallbacks and ones failing H (A19).
/// The reward is T(y') / T(baseline) with the chain-DP baseline (A16), 0 when H fails. With the
/// same seed and inputs the result is the same (the wall-time budget aside).
#include <chrono>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/dag/properties.hpp"
#include "devplace/mcm/chain_dp.hpp"
#include "devplace/mcm/engine.hpp"
#include "devplace/mcm/evaluate.hpp"
#include "devplace/mcm/policy.hpp"
#include "devplace/mcm/repair.hpp"
#include "devplace/mcm/topology.hpp"
#include "devplace/status.hpp"

namespace devplace::mcm {

struct search_options {
  std::size_t samples = 100;                                     ///< sample budget (>= 1)
  double seconds = std::numeric_limits<double>::infinity();      ///< wall-time budget
  std::uint64_t seed = 0;
  repair_options repair{};
  std::vector<double> thresholds{};  ///< improvement levels for samples_to_threshold
  std::vector<int> baseline{};       ///< reference partition; empty: chain DP on the evaluator's t_u
};

struct curve_point {
  std::size_t sample = 0;      ///< 1-based
  double seconds = 0;
  double throughput = 0;       ///< of this sample
  double best_throughput = 0;  ///< best so far
  bool valid = false;          ///< passed H
  bool fallback = false;
};

struct search_result {
  devplace::status status = status::feasible;  ///< feasible, or time_limit when the wall budget stopped it
  std::vector<int> chip_of;                    ///< the best partition (valid under eq. 2-4)
  evaluation best{};
  double baseline_throughput = 0;
  std::vector<curve_point> curve;
  /// per threshold: the first sample whose best-so-far reaches threshold x baseline; 0 = never
  std::vector<std::size_t> samples_to_threshold;
  std::size_t samples = 0, fallbacks = 0, restarts = 0, backtracks = 0, invalid = 0;
  [[nodiscard]] double improvement() const noexcept {
    return baseline_throughput > 0 ? best.throughput / baseline_throughput : 0.0;
  }
};

namespace detail {

template <class G>
std::vector<double> chain_weights(const G& g) {
  std::vector<double> w(devplace::num_vertices(g), 1.0);
  if constexpr (profiled_dag<G>)
    for (std::size_t u = 0; u < w.size(); ++u) w[u] = devplace::forward_ms(g, u);
  return w;
}

template <dag G, class Engine, policy Policy, evaluator Eval>
search_result search_with(const G& g, Engine& engine, Policy& pol, const Eval& eval, const search_options& o) {
  const std::size_t C = engine.chips();
  const std::size_t N = engine.num_vertices();
  std::vector<int> base = o.baseline;
  if (base.empty()) base = chain_dp(engine.graph(), detail::chain_weights(g), {.chips = C}).chip_of;
  if (base.size() != N || !validate(engine.graph(), base, C))
    throw std::invalid_argument("mcm::search: the baseline partition is not a valid partition of the graph");
  search_result r;
  const evaluation be = eval(std::span<const int>(base));
  r.baseline_throughput = be.valid ? be.throughput : 0.0;
  r.samples_to_threshold.assign(o.thresholds.size(), 0);
  random_engine rng(o.seed);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double best = -1;
  std::vector<rollout> batch;
  while (r.samples < o.samples) {
    if (elapsed() > o.seconds) {
      r.status = status::time_limit;
      break;
    }
    batch.clear();
    const std::size_t B = std::min<std::size_t>(pol.batch_size(), o.samples - r.samples);
    for (std::size_t k = 0; k < B; ++k) {
      rollout ro;
      ro.proposed = pol.propose(rng);
      auto rep = ro.proposed.mode == repair_mode::fix ? repair_fix(engine, ro.proposed.y, rng, o.repair, base)
                                                      : repair_sample(engine, ro.proposed.P, rng, o.repair, base);
      ro.chip_of = std::move(rep.chip_of);
      const evaluation e = eval(std::span<const int>(ro.chip_of));
      ro.valid = e.valid;
      ro.reward = e.valid && r.baseline_throughput > 0 ? e.throughput / r.baseline_throughput : e.valid ? e.throughput : 0.0;
      ++r.samples;
      r.fallbacks += rep.fallback, r.restarts += rep.restarts, r.backtracks += rep.backtracks, r.invalid += !e.valid;
      if (e.valid && e.throughput > best) best = e.throughput, r.best = e, r.chip_of = ro.chip_of;
      r.curve.push_back({r.samples, elapsed(), e.valid ? e.throughput : 0.0, std::max(best, 0.0), e.valid, rep.fallback});
      for (std::size_t t = 0; t < o.thresholds.size(); ++t)
        if (!r.samples_to_threshold[t] && best >= o.thresholds[t] * r.baseline_throughput && best > 0)
          r.samples_to_threshold[t] = r.samples;
      batch.push_back(std::move(ro));
    }
    pol.update(std::span<const rollout>(batch), rng);
  }
  if (r.chip_of.empty()) {  // nothing passed H: report the baseline
    r.chip_of = base;
    r.best = be;
  }
  return r;
}

}  // namespace detail

/// Runs the loop (on the narrowest engine that fits the topology's C chips: `with_engine`).
/// Throws std::invalid_argument on samples == 0, a chip count of the topology outside
/// 1 .. max_engine_chips (1024), or a baseline of the wrong size / invalid.
template <dag G, policy Policy, evaluator Eval>
[[nodiscard]] search_result search(const G& g, const chip_topology& mcm, Policy& pol, const Eval& eval,
                                   const search_options& o = {}) {
  if (o.samples == 0) throw std::invalid_argument("mcm::search: samples must be >= 1");
  return with_engine(g, mcm.chips(), [&](auto& engine) { return detail::search_with(g, engine, pol, eval, o); });
}

/// The same on any `device_topology` (its num_devices chips; the evaluator holds the links).
template <dag G, device_topology T, policy Policy, evaluator Eval>
[[nodiscard]] search_result search(const G& g, const T& topology, Policy& pol, const Eval& eval, const search_options& o = {}) {
  if (o.samples == 0) throw std::invalid_argument("mcm::search: samples must be >= 1");
  return with_engine(g, devplace::num_devices(topology), [&](auto& engine) { return detail::search_with(g, engine, pol, eval, o); });
}

}  // namespace devplace::mcm
