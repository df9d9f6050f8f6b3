#pragma once
/// \file map/mapper_options.hpp
/// The device mapper's options (`mapper_options`, shared by `map_devices` and `mapping_search`)
/// and the answer of one inner search at a target (`target_search_result`).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/oracle.hpp"

namespace devplace {

struct mapper_options {
  cost_choice cost = cost_choice::automatic;  ///< model, for the overloads that do not take one
  unsigned threads = 0;                       ///< targets searched at once; 0: hardware concurrency
  double timeout_s = std::numeric_limits<double>::infinity();         ///< whole run
  double target_timeout_s = std::numeric_limits<double>::infinity();  ///< one target (paper heuristic)
  double epsilon = 1e-9;                      ///< relative width at which the bracket is closed
  double epsilon_abs = 0;                     ///< absolute width (ms)
  /// With two or more threads, once the bracket [t_l, t_r] is narrower than 16 probe widths
  /// (t_r ≤ t_l(1 + 16·probe_gap)), or 64 while the last refutation raised t_l by a quarter of the
  /// bracket or more, one worker searches the target t_l(1 + probe_gap) while no other target lies in that range:
  /// a mapping found there certifies a relative gap ≤ probe_gap even when the targets in the
  /// middle of the bracket are too hard. 0: plain bisection (Algorithm 1)
  double probe_gap = 1e-3;
  bool symmetry_breaking = true;
  bool extra_pruning = true;                  ///< partial bounds, per-device bounds, counting check
  bool assignment_bound = true;               ///< start from the assignment bound (else eq. 10/11)
  /// allreduce: raise the initial bound to the ring-component bound (map/ring_bound.hpp): a ring
  /// lies in one component of the links fast enough for it, and the rings share the components
  bool ring_component_bound = true;
  /// p2p and combined with equal replica counts: raise the initial bound to the copy-component
  /// bound (map/copy_bound.hpp): a copy's heavy edges must use fast links, so its pieces lie in
  /// components of the fast-link graph, and the R copies share the components
  bool copy_component_bound = true;
  bool restarts = true;                       ///< alternate two value orders with doubling budgets
  /// p2p with equal replica counts: per target, drop the devices of a stage on which no placement
  /// of its neighbours inside their own allowed devices meets the target, to a fixpoint
  /// (needs `extra_pruning`). Sound, but off: on the bench_mapper cases it removed nothing at the
  /// targets searched (docs/mapping.md, "Algorithm 2")
  bool domain_filtering = false;
  /// p2p with equal replica counts: after each placement, bound the copy's placed vertices with
  /// their unplaced neighbours on the fastest links to *free* devices, and count the free devices
  /// near the new one that no unplaced vertex can take within the target (needs `extra_pruning`)
  bool free_link_pruning = true;
  /// The target oracles that answer targets before and between the depth-first runs, in order,
  /// each in its phase and with its node limit (map/oracle.hpp, docs/mapping-oracles.md): by
  /// default every built-in cover, each where its model form and topology allow.
  /// `oracle_portfolio("none")`: the depth-first search alone.
  std::vector<oracle_spec> oracles = default_oracles();
  /// A user's oracles, joining the portfolio where `oracles` names them.
  std::vector<custom_oracle> custom_oracles;
  /// Rows an oracle lists per target (copy embeddings, rings, count vectors; also ≤ 256 MB)
  std::size_t max_copy_embeddings = 200'000;
  /// The node limit per target of an oracle whose spec gives none (each cover scales it into its
  /// listing, packing and realisation limits: docs/mapping-oracles.md)
  std::uint64_t copy_cover_nodes = 1'000'000;
  std::uint64_t seed = 1;                     ///< random baseline map
  /// MB of `cost_choice::combined` (its allreduce is amortised over MB): the simulation's MB
  /// (simulation_options::micro_batches) when the mapping is to match the simulated iteration.
  std::size_t micro_batches = 1;
  /// Mappings (device of vertex s·R + r) evaluated with the baselines for the initial incumbent;
  /// each must be an injection onto the devices.
  std::vector<std::vector<std::size_t>> warm_starts;
  std::uint64_t automorphism_budget = 20'000'000;  ///< link comparisons spent finding orbits
  /// Local search (moves and swaps, map/local_search.hpp) on the best baseline / warm start
  /// before the exact search (at most 1/4 of a finite `timeout_s`) and on the incumbent when the
  /// run ends unproved (the last 1/16 of a finite `timeout_s` is kept for it)
  bool local_search = true;
  /// Large-neighbourhood search (map/neighbourhood_search.hpp) on the incumbent when the exact
  /// search ends unproved and the model's blocks are independent (p2p: replica copies; allreduce:
  /// stage rings): the last 1/4 of a finite `timeout_s` is kept for it and the local search
  bool neighbourhood_search = true;
  /// Once the optimum is proved, the mapping returned is the one that a search at the optimum
  /// (plus ε) finds afresh, having forgotten what the targets before taught it, within this many
  /// nodes: so it is one mapping whatever the thread count and whichever concurrent target found
  /// an optimal mapping first (docs/mapping.md, "Determinism"). 0: the first mapping found stays
  std::uint64_t settle_nodes = std::uint64_t{1} << 20;
  std::size_t neighbourhood_blocks = 3;  ///< blocks freed per step (≥ 2)
  double neighbourhood_step_s = 0.03;    ///< exact search of one sub-problem
};

/// The answer of one inner search (Algorithm 2) at a target t.
struct target_search_result {
  bool found = false;      ///< a mapping with every stage time ≤ t
  bool completed = false;  ///< found, or the whole tree searched (false when stopped)
  std::vector<std::size_t> dev;  ///< the mapping when found (device of every vertex s·R + r)
  double objective_ms = 0;       ///< its objective t_p ≤ t
  /// When completed without finding: every mapping has objective ≥ this (and it is > t).
  double next_lower_bound_ms = std::numeric_limits<double>::infinity();
  std::uint64_t nodes = 0;       ///< placements tried
  std::string oracle;            ///< the oracle that answered (map/oracle.hpp); empty: the depth-first search
};

}  // namespace devplace
