#pragma once
/// \file sim/plan_search.hpp
/// The (S, R) search of Parmesan (Appendix B): for D devices, every configuration with S · R ≤ D
/// (only S · R = D with `exact_product`), S ≤ operators, runs partition (the Parmesan flow) →
/// map (binary search + backtracking) → simulate, in parallel threads, and picks the
/// configuration with the highest simulated throughput (samples per second; digest G17). Within
/// a configuration, α is chosen by simulation too: the partition of every α (and the flow's
/// reference) is mapped and simulated, the fastest kept. Each configuration also simulates the CS
/// map and the p2p map of the chosen partition, so the gain of the mapping is visible.
///
/// With `general` the search also runs Parmesan's general DP J(2) (partition/general_dp.hpp) for
/// every S (2 ≤ S < D): stages with their own replica counts R_s summing to D, on the graph itself
/// when it has at most K operators (proved optimal under eq. 2) and otherwise on the quotient of
/// each α's clustering; each such partition is mapped and simulated like the others, and the
/// fastest simulated plan of all configurations is kept (its `stage_replicas` say R_s).
///
/// With the interleaved schedule (Megatron-LM's interleaved 1F1B) every (S, R) is also tried with
/// each v of `virtual_stages` (v = 1, plain 1F1B, always among them, so the search can only gain):
/// the flow partitions the graph into S · v chunks (phase 1 unchanged, each chunk a stage of its
/// eq. 3 objective, device memory divided by v since a device holds v chunks), the mapper places
/// S pipeline ranks × R replicas on the stage graph folded by rank (chunk c on rank c mod S: per
/// rank the sum of its v chunks' compute, the messages between ranks the sum of their chunks'),
/// and the simulator runs the interleaved schedule on the S · v chunks, chunk c on the devices of
/// rank c mod S. docs/simulator.md ("Interleaved plans") gives the equations and why phase 1
/// balances chunks rather than each device's sum of chunks.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/plan.hpp"
#include "devplace/sim/schedule.hpp"
#include "devplace/status.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace {

/// What the search has done so far (for a progress line).
struct plan_search_progress {
  std::size_t done = 0, total = 0, explored = 0, pruned = 0;
  double best_samples_per_s = 0;       ///< 0 while nothing is simulated
  std::size_t best_stages = 0, best_replicas = 0;
  std::size_t best_virtual_stages = 1;  ///< v of the best so far (1 without interleaving)
  double elapsed_s = 0;
};

/// What happened to a configuration.
enum class config_outcome { explored, pruned, infeasible };

[[nodiscard]] constexpr std::string_view to_string(config_outcome c) noexcept {
  return c == config_outcome::explored ? "explored" : c == config_outcome::pruned ? "pruned" : "infeasible";
}

/// The search's settings. They are the inputs of every component it runs, each read through one
/// translation point below rather than restated: MB and β̄ become the phase-1 cost model
/// (`detail::plan_stage_cost`, a `stage_cost_options` whose R and device memory the search sets
/// per configuration: R from the configuration, memory the topology's smallest), MB the
/// mapper's combined model (`mapper_options::micro_batches`), and MB, micro-batch size,
/// schedule and recomputation the simulation (`detail::plan_simulation_options`). They are not
/// a nested `stage_cost_options` / `simulation_options`: half of those structs' fields are the
/// search's own choices (R, device memory) or have other defaults here (recomputation on, as
/// Parmesan trains; micro-batch size 0 = the graph's own), and a nested designated initialiser
/// (`.simulation = {.micro_batches = 8}`) would silently reset the others to the simulator's
/// defaults. The plan records all of them (`plan_settings`, `plan::micro_batches`).
struct plan_search_options {
  std::size_t devices = 0;             ///< D; 0: every device of the topology
  bool exact_product = false;          ///< only S·R = D (Parmesan's experiments), not every S·R ≤ D
  std::size_t micro_batches = 4;       ///< MB
  /// Samples per micro-batch (for samples/s); 0: the graph's own (`op_graph::micro_batch_size`),
  /// or 1 when it does not say.
  double micro_batch_size = 0;
  pipeline_schedule schedule = pipeline_schedule::gpipe;
  /// With the interleaved schedule: the v (model chunks per device) tried for every (S, R) with
  /// S ≥ 2 and S · v ≤ operators, besides v = 1 (1F1B), which is always tried; entries ≥ 1. A
  /// v ≥ 2 needs MB to be a multiple of S (else that configuration is infeasible, said in its
  /// `reason`). Ignored by GPipe and 1F1B.
  std::vector<std::size_t> virtual_stages{2};
  bool recompute = true;               ///< Parmesan trains with activation recomputation
  std::size_t clusters = 32;           ///< K of the flow
  double bandwidth_gbps = 10.0;        ///< β̄ of the phase-1 cost model (stage_cost_options::bandwidth_gbps)
  double map_timeout_s = 5.0;          ///< per configuration
  unsigned threads = 0;                ///< configurations at once; 0: hardware concurrency
  cost_choice cost = cost_choice::automatic;  ///< the mapper's cost model (combined: over MB micro-batches)
  /// Map every option with `map_for_iteration` (sim/iteration_mapping.hpp: the combined mapper,
  /// then local search on the closed-form GPipe iteration) instead of `map_devices` with `cost`.
  bool iteration_mapping = false;
  /// With `iteration_mapping`: the share of `map_timeout_s` for the last step, the simulation
  /// polish (sim/polish.hpp) of the fastest simulated of the mapping, the CS and the p2p map; 0: none.
  double polish_share = 0.5;
  bool prune = true;                   ///< bound-pruned search; false: every configuration explored
  /// Also the general DP J(2) for every S with 2 ≤ S < D: per-stage replica counts summing to D
  /// (a configuration of its own, listed after the equal-count ones).
  bool general = false;
  /// The general DP relaxes every (F', F) down-set pair for every pair of device counts (D² per
  /// pair): it runs only on graphs (the graph itself, or an α's quotient) with at most this many
  /// down-sets; the others are skipped (said in the candidate's `reason` when none is left).
  std::uint64_t general_max_downsets = 2'000;
  /// Gradient bucket of the data-parallel allreduce, overlapped with the last backward pass
  /// (`simulation_options::dp_bucket_bytes`); 0: one allreduce after it.
  double dp_bucket_bytes = 0;
  /// Called after every configuration (from the thread that finished it, one call at a time).
  std::function<void(const plan_search_progress&)> progress;
};

/// One configuration tried.
struct plan_candidate {
  /// S and R; for a general (J(2)) configuration R is R̂ = max_s R_s of its plan (0 without one).
  std::size_t stages = 0, replicas = 0;
  /// v: model chunks per device (the interleaved schedule with v ≥ 2; the plan then has S · v
  /// stages, `result.virtual_stages` = v); 1 otherwise.
  std::size_t virtual_stages = 1;
  bool general = false;                          ///< a J(2) configuration: per-stage replica counts over `devices`
  std::size_t devices = 0;                       ///< devices the configuration may use (S·R, or D for J(2))
  std::vector<std::size_t> stage_replicas;       ///< R_s of the plan (every entry R for an equal-count one)
  /// feasible when partition, map and simulation ran; pruned when a bound skipped it (it may be
  /// feasible); infeasible when no partition or mapping exists
  devplace::status status = status::infeasible;
  config_outcome outcome = config_outcome::infeasible;
  std::string reason;                            ///< why not, otherwise empty
  double bound_samples_per_s = 0;                ///< proved upper bound of its simulated samples/s
  double partition_ms = 0;                       ///< phase-1 objective
  double mapping_ms = 0;                         ///< phase-2 objective
  bool mapping_optimal = false;
  std::string cost;                              ///< p2p, allreduce or combined
  double iteration_ms = 0, samples_per_s = 0, bubble_fraction = 0;
  double cs_samples_per_s = 0, p2p_samples_per_s = 0;  ///< the baseline maps on the same partition
  double time_s = 0;
  plan result;                                   ///< the full plan of this configuration
};

struct plan_search_result {
  devplace::status status = status::infeasible;  ///< feasible when some configuration worked
  std::size_t best = 0;                          ///< index into `candidates`
  std::vector<plan_candidate> candidates;
  double time_s = 0;
};

namespace detail {
/// The definition of `search_plan` below, in sim/plan_search.ipp. Header-only, a file that calls
/// `search_plan` includes that file too (`devplace/sim.hpp` does); compiled mode (`devplace::core`)
/// needs nothing more. Where neither holds the call does not compile: this type is incomplete.
template <int>
struct search_plan_defined_in_sim_plan_search_ipp;
}  // namespace detail

/// Searches (S, R) — and v with the interleaved schedule — for `g` on `t` (see the file comment).
/// Throws std::invalid_argument on bad options (no micro-batches, a non-positive bandwidth or
/// micro-batch size, a negative bucket, a virtual_stages entry of 0).
/// Defined in plan_search.ipp, which this header does not include: it runs the partition flow, the
/// mapper under every cost model and the simulator, a compile time a file pays only where it
/// calls the search (include `devplace/sim/plan_search.ipp`, or `devplace/sim.hpp`, there), or
/// never (compiled mode: `devplace::core` compiles it once; see config.hpp). Called as
/// `search_plan(g, t, o)`: the template parameter is never given.
template <int N = 0>
[[nodiscard]] plan_search_result search_plan(const op_graph& g, const matrix_topology& t, const plan_search_options& o = {}) {
  return detail::search_plan_defined_in_sim_plan_search_ipp<N>::run(g, t, o);
}

/// The same for any `profiled_dag` and any `device_topology`, copied once (every cost through the
/// customisation points) into an `op_graph` and a `matrix_topology`.
template <profiled_dag G, device_topology T>
  requires(!std::is_same_v<G, op_graph> || !std::is_same_v<T, matrix_topology>)
[[nodiscard]] plan_search_result search_plan(const G& g, const T& t, const plan_search_options& o = {}) {
  return search_plan(to_op_graph(g), to_matrix_topology(t), o);
}

}  // namespace devplace

#if !DEVPLACE_HEADER_ONLY
namespace devplace {
extern template plan_search_result search_plan<0>(const op_graph&, const matrix_topology&, const plan_search_options&);
}  // namespace devplace
#endif
