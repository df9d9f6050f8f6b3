#pragma once
/// \file plan.hpp
/// `plan`: the result vocabulary of the whole flow, mirroring the `devplace.plan/1` document
/// (docs/formats.md). Each step fills its own part; optional parts are absent until computed.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace devplace {

/// One step of a partitioning flow (e.g. "cluster", "dp", "refine" for one alpha).
struct partition_step {
  std::string name;                      ///< what ran
  double alpha = 0;                      ///< clustering alpha, where it applies (else 0)
  std::size_t clusters = 0;              ///< hyper-operators, where it applies (else 0)
  double objective_ms = 0;               ///< objective after the step (0 where not applicable)
  double time_s = 0;                     ///< wall time of the step
  std::string status;                    ///< the step's status
};

/// Figures of the partitioning step (phase 1).
struct partition_summary {
  double objective_ms = 0;               ///< max stage time (eq. 3 with R replicas)
  std::vector<double> stage_time_ms;     ///< per stage
  std::vector<double> stage_memory_bytes;///< per stage, eq. 14
  std::string method;                    ///< e.g. "dp", "topo-dp", "cluster+dp+refine"
  bool optimal = false;                  ///< proved optimal under the partitioning cost model
  std::string status;                    ///< devplace::status as text
  double time_s = 0;                     ///< wall time of the step
  std::vector<partition_step> steps;     ///< the flow's steps, when it has several
};

/// Figures of the device-mapping step (phase 2).
struct mapping_summary {
  double objective_ms = 0;
  double lower_bound_ms = 0;
  std::string cost;                      ///< "p2p" or "allreduce"
  std::string method;                    ///< e.g. "binary_search_backtracking", "cs", "p2p", "random"
  bool optimal = false;
  std::size_t nodes_explored = 0;
  std::string status;
  double time_s = 0;
};

/// Figures of the simulation of one training iteration.
struct simulation_summary {
  std::string schedule;                  ///< "gpipe", "1f1b" or "interleaved"
  double iteration_ms = 0;
  double samples_per_s = 0;
  double bubble_fraction = 0;
};

/// Every setting that determines a plan's figures, so that `devplace simulate --plan P`
/// reproduces them with no other flag (docs/formats.md, `settings`).
struct plan_settings {
  double micro_batch_size = 1;           ///< samples per micro-batch (for samples/s)
  std::string schedule = "gpipe";        ///< "gpipe", "1f1b" or "interleaved" (with `plan::virtual_stages`)
  bool recompute = false;                ///< activation recomputation in the simulation
  bool blocking_sends = false;           ///< the simulation's communication model
  double phase1_bandwidth_gbps = 10.0;   ///< β̄ of the partitioning cost model
  std::string cost = "auto";             ///< mapping cost model asked for: "auto", "p2p", "allreduce" or "combined"
  /// Gradient bucket of the data-parallel allreduce overlapped with the last backward pass, bytes
  /// (`simulation_options::dp_bucket_bytes`); 0: one allreduce after it.
  double dp_bucket_bytes = 0;
};

struct plan {
  std::string graph;                     ///< graph name
  std::string topology;                  ///< topology name
  /// Stages the graph is cut into: S, or S · v model chunks with `virtual_stages` v > 1.
  std::size_t stages = 0;
  /// v, model chunks per device of the interleaved 1F1B schedule: the `stages` chunks run on
  /// stages / v pipeline ranks, chunk c on the devices of rank c mod (stages / v), so row c of
  /// `device_of` repeats row c − stages / v. 1: one stage per device (GPipe, 1F1B).
  std::size_t virtual_stages = 1;
  std::size_t replicas = 1;              ///< R (with per-stage counts: R̂ = max_s R_s)
  /// R_s per stage when the stages have their own replica counts (a `general_dp` plan, J(2));
  /// empty: every stage has `replicas`. When set: S entries ≥ 1 whose maximum is `replicas`.
  std::vector<std::size_t> stage_replicas;
  std::size_t micro_batches = 1;         ///< MB
  std::vector<std::size_t> stage_of;     ///< stage of every operator, in the graph's node order
  std::vector<std::vector<std::size_t>> device_of;  ///< S rows of R (R_s) device ids (empty before mapping)
  std::optional<plan_settings> settings;  ///< how the figures were made (absent in old plans)
  std::optional<partition_summary> partition;
  std::optional<mapping_summary> mapping;
  std::optional<simulation_summary> simulation;
};

/// R_s of every stage: `stage_replicas`, or `replicas` for each of the `stages` stages.
[[nodiscard]] inline std::vector<std::size_t> replicas_per_stage(const plan& p) {
  return p.stage_replicas.empty() ? std::vector<std::size_t>(p.stages, p.replicas) : p.stage_replicas;
}

/// Pipeline ranks: `stages` / `virtual_stages` (S; `stages` without interleaving).
[[nodiscard]] inline std::size_t pipeline_ranks(const plan& p) {
  return p.virtual_stages > 1 ? p.stages / p.virtual_stages : p.stages;
}

/// The devices the plan uses: Σ_s R_s over the pipeline ranks (S·R with equal counts; the later
/// chunks of an interleaved plan run on the same devices).
[[nodiscard]] inline std::size_t devices_used(const plan& p) {
  const auto reps = replicas_per_stage(p);
  std::size_t d = 0;
  for (std::size_t s = 0; s < std::min(reps.size(), pipeline_ranks(p)); ++s) d += reps[s];
  return d;
}

}  // namespace devplace
