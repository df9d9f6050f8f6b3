#pragma once
/// \file llm/balance.hpp
/// Uneven layer splits: the layers of each pipeline stage that minimise the slowest stage, with
/// every stage's memory within the GPU's, by the successor-closed-set DP that PHAZE's placement
/// and Piper's planner share (partition/successor_dp.hpp) over the chain of layers.
///
/// The first stage also runs the embedding and the last the LM head and the cross-entropy, so with
/// a large vocabulary they should carry fewer layers than L / pp. For 1F1B (vp = 1) the iteration
/// is (m − 1) max_i t_i + Σ_i t_i + sends + tail, where Σ_i t_i and the sends do not depend on the
/// split: the split that minimises the slowest stage minimises the term the m − 1 micro-batches
/// weigh. The tail (the gradient reduction and optimizer of the stage that finishes last, which
/// shrink with its parameters) is not in the objective, so a split with the same slowest stage
/// and a lighter first stage can end a little sooner. The DP keeps, for every suffix of the
/// chain (the layers of the later stages) and stage count s, the least slowest stage; a stage at
/// position s from the end holds min(m, s) micro-batches in flight, and a stage that does not fit
/// in memory is not offered.
///
/// Complexity: O(L²) stages, each evaluated in O(1), times O(pp) positions: O(L² pp).
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "devplace/dag/csr_dag.hpp"
#include "devplace/llm/evaluate.hpp"
#include "devplace/partition/successor_dp.hpp"

namespace devplace::llm {

/// The layers per stage (first stage first) of a split of `e` (vp must be 1) whose slowest stage
/// is the least of every split that fits in memory, or nullopt when none fits. Throws std::invalid_argument for an invalid execution.
[[nodiscard]] inline std::optional<std::vector<std::int64_t>> balance_layers(const model& m, const hardware& hw,
                                                                             execution e) {
  check_model(m);
  check_system(hw);
  if (e.vp != 1) throw std::invalid_argument("llm balance_layers: uneven splits need vp = 1");
  e.layers_per_stage.clear();
  if (e.pp > m.layers) throw std::invalid_argument("llm balance_layers: more stages than layers");
  {
    execution probe = e;  // check everything but the layer split
    probe.layers_per_stage.assign(static_cast<std::size_t>(e.pp), 0);
    probe.layers_per_stage[0] = m.layers;
    check_execution(probe, m);
  }
  const std::size_t L = static_cast<std::size_t>(m.layers), P = static_cast<std::size_t>(e.pp);
  std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> edges;
  for (std::size_t i = 0; i + 1 < L; ++i)
    edges.emplace_back(static_cast<csr_dag::vertex_type>(i), static_cast<csr_dag::vertex_type>(i + 1));
  const successor_sets sets(csr_dag(L, edges));
  successor_dp_table<> table(sets.size(), P, P, stage_count::exact);
  auto x = sets.make_stage();
  const layer_cost c = cost_of_layer(m, hw, e);
  const double hbm = hw.gpu.hbm_gib * double(1ull << 30);
  constexpr double inf = std::numeric_limits<double>::infinity();
  // The time of a stage holding x's layers at position s from the end (inf when it does not fit).
  auto cost = [&](const successor_stage& st, std::size_t s) {
    const bool first = st.member[0] != 0, last = st.member[L - 1] != 0;
    // On the chain the stage holding layer 0 ends up at s = P and the one holding layer L − 1 at
    // s = 1; other positions of them only fill cells that no full pipeline reads.
    const std::size_t i = P - s;
    execution at = e;
    at.layers_per_stage.assign(P, 1);
    at.layers_per_stage[i] = static_cast<std::int64_t>(st.nodes.size());
    if (memory_of_stage(m, at, static_cast<std::int64_t>(i), hw.gpu.fused_attention).total() > hbm) return inf;
    return detail::work_of(m, hw, e, c, double(st.nodes.size()), first, last).total();
  };
  (void)successor_dp_fill(sets, table, x, sets.size(), [](std::size_t, double) { return true; },
                          [&](std::size_t, std::size_t sub, const successor_stage& st, auto& t) {
                            t.relax(sub, 1, 1, [&](std::size_t s) { return cost(st, s); });
                          });
  if (table.at(sets.full(), P, P) == inf) return std::nullopt;
  std::vector<std::int64_t> layers;
  successor_dp_backtrack(
      sets, x, sets.full(), P, P, backtrack_pick::smallest_subset,
      [&](std::size_t set, std::size_t sub, const successor_stage& st, std::size_t k,
          std::size_t s) -> std::optional<successor_step> {
        if (k < 1 || s < 1) return std::nullopt;
        const double rest = table.at(sub, k - 1, s - 1), here = cost(st, s);
        if (rest == inf || here == inf || std::max(rest, here) != table.at(set, k, s)) return std::nullopt;
        return successor_step{1, 1};
      },
      [&](std::size_t, const successor_stage& st, successor_step) {
        layers.push_back(static_cast<std::int64_t>(st.nodes.size()));
      });
  return layers;
}

}  // namespace devplace::llm
