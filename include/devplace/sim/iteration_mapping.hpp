#pragma once
/// \file sim/iteration_mapping.hpp
/// Mapping for the simulated iteration, fill and drain included (issue 16).
///
/// The combined model (map/cost_models.hpp) is the steady state: the busiest device's load per
/// micro-batch. With few micro-batches and many stages the fill and drain of the pipeline are a
/// large part of the iteration, and a mapping with a lower steady state can simulate slower (BERT
/// on DGX-1 × 4, 16 stages × 2 replicas, MB = 4: 26.459 against the CS map's 27.430 ms per
/// micro-batch, but 524.983 against 507.165 ms per iteration). `map_for_iteration` therefore
/// maps under the combined model (`map_devices`, warm starts and all), then improves the mapping
/// by local search (map/local_search.hpp) under `iteration_cost` — the closed form of the GPipe
/// iteration, equal to `simulate(...).iteration_ms` of the mapping with blocking sends, and with
/// overlapped sends (the default) when no transfer waits for its link — from the combined mapping
/// and from the CS and p2p maps, and keeps the fastest. Its objective is that iteration (ms); no
/// lower bound is claimed and it is never reported optimal.
///
///   const auto fwd = stage_forward_ms(g, plan.stage_of, S);
///   const auto r = map_for_iteration(sg, link_costs(topology), fwd, {.micro_batches = 4, .recompute = true},
///                                    {.threads = 2, .timeout_s = 1});
///
/// Cost: the combined mapper's, then each evaluation of a move or swap is one closed form,
/// O(V · (V + A)) for V stage replicas and A exchanging replica pairs (12–32 µs for BERT-Large
/// at 64 devices), within the time left.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/dag/access.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/bisection_map.hpp"
#include "devplace/map/local_search.hpp"
#include "devplace/map/map_devices.hpp"
#include "devplace/sim/closed_form.hpp"

namespace devplace {

/// Stage s's forward time Σ forward_ms(g, v) of its operators (the rest of its c_u is backward),
/// for `iteration_cost::forward_ms`, on any `profiled_dag`. Throws std::invalid_argument when
/// stage_of does not fit g or S.
template <profiled_dag G>
[[nodiscard]] std::vector<double> stage_forward_ms(const G& g, std::span<const std::size_t> stage_of, std::size_t S) {
  const std::size_t n = devplace::num_vertices(g);
  if (stage_of.size() != n)
    throw std::invalid_argument("stage_forward_ms: stage_of has " + std::to_string(stage_of.size()) + " entries for " +
                                std::to_string(n) + " operators");
  std::vector<double> fwd(S, 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    if (stage_of[v] >= S)
      throw std::invalid_argument("stage_forward_ms: operator " + std::to_string(v) + " is in stage " +
                                  std::to_string(stage_of[v]) + " of " + std::to_string(S));
    fwd[stage_of[v]] += devplace::forward_ms(g, v);
  }
  return fwd;
}

struct iteration_mapping_settings {
  std::size_t micro_batches = 1;  ///< MB of the simulated iteration (≥ 1)
  bool recompute = false;         ///< backward repeats the forward, as in the simulation
  /// The simulation's sends: false (its default) overlaps them with compute, so a transfer only
  /// delays its receiver; true makes it part of the sender's task (`iteration_cost::blocking_sends`)
  bool blocking_sends = false;
  /// Share of the time limit for the combined mapper; the rest goes to the local search.
  double combined_share = 0.5;
};

/// The mapping (file comment): `map_devices` under the combined model with `o` (its
/// `micro_batches` set from `s`), then local search under `iteration_cost`. The result's
/// objective_ms is the closed-form GPipe iteration of the mapping, cost "iteration",
/// status `feasible` (or `time_limit` when the limit stopped either step), lower_bound_ms 0.
/// A template only so that the mapper is compiled where this is called, not where it is included
/// (as `map_devices` with a `cost_choice`, config.hpp); the parameter is never given. This header
/// declares the mapper only (map/map_devices.hpp): header-only, a file that calls this includes
/// map/mapper.hpp too (`devplace/sim.hpp` does); compiled mode needs nothing more.
template <int = 0>
[[nodiscard]] mapping_result map_for_iteration(const stage_graph& g, const link_costs& L, std::vector<double> stage_forward_ms,
                                               const iteration_mapping_settings& s, mapper_options o = {}) {
  using clock = std::chrono::steady_clock;
  if (stage_forward_ms.size() != g.stages())
    throw std::invalid_argument("map_for_iteration: forward_ms has " + std::to_string(stage_forward_ms.size()) +
                                " entries for " + std::to_string(g.stages()) + " stages");
  if (s.micro_batches == 0) throw std::invalid_argument("map_for_iteration: micro_batches must be >= 1");
  if (!(s.combined_share > 0 && s.combined_share <= 1))
    throw std::invalid_argument("map_for_iteration: combined_share must be in (0, 1]");
  const auto t0 = clock::now();
  const bool limited = std::isfinite(o.timeout_s) && o.timeout_s < 1e9;
  const auto deadline = limited ? t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.timeout_s))
                                : clock::time_point::max();
  o.cost = cost_choice::combined;
  o.micro_batches = s.micro_batches;
  if (limited) o.timeout_s *= s.combined_share;
  mapping_result r = map_devices(g, L, o);
  const iteration_cost model{.forward_ms = std::move(stage_forward_ms), .micro_batches = s.micro_batches, .recompute = s.recompute,
                             .blocking_sends = s.blocking_sends};
  std::vector<std::vector<std::size_t>> starts;
  if (r.has_solution()) starts.push_back(flatten(g, r.device_of));
  for (auto b : {baseline::cs, baseline::p2p}) starts.push_back(flatten(g, baseline_map(g, L.devices(), b, o.seed)));
  if (L.devices() <= detail::bisection_start_max_devices) {  // its ring searches within a sixteenth of the time left
    const auto now = clock::now();
    const auto until = deadline == clock::time_point::max() ? deadline : now + (std::max(deadline, now) - now) / 16;
    starts.push_back(flatten(g, bisection_map(g, L, s.micro_batches, until)));
  }
  // The fastest start first: it gets the time, the others what is left.
  std::vector<double> start_ms;
  for (const auto& d : starts) start_ms.push_back(evaluate_flat(g, L, model, std::span<const std::size_t>(d)).objective_ms);
  std::vector<std::size_t> order(starts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return start_ms[a] < start_ms[b]; });
  double best_ms = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> best;
  bool stopped = r.status == status::time_limit;
  for (const std::size_t i : order) {
    if (best.empty() || clock::now() < deadline) {
      auto p = improve_mapping_flat(g, L, model, std::span<const std::size_t>(starts[i]), {.deadline = deadline});
      stopped = stopped || !p.local_optimum;
      if (p.objective_ms < best_ms) best_ms = p.objective_ms, best = std::move(p.dev);
    } else if (start_ms[i] < best_ms) {
      best_ms = start_ms[i], best = starts[i];
    }
  }
  r.device_of = unflatten(g, best);
  r.objective_ms = best_ms;
  r.lower_bound_ms = 0;  // no claim
  r.optimal = false;
  r.status = stopped ? status::time_limit : status::feasible;
  r.cost = "iteration";
  r.time_s = std::chrono::duration<double>(clock::now() - t0).count();
  return r;
}

}  // namespace devplace
