#pragma once
/// \file partition/even_split.hpp
/// The balance baseline of DeepSpeed's pipeline module ("uniform" / "parameters" partitioning):
/// cut one topological order into S contiguous segments whose weights are as even as prefix
/// sums allow. Segment s ends at the first position where the running weight reaches
/// (s + 1) / S of the total; every segment keeps at least one operator.
///
/// Weights: `split_weight::compute` (c_u = fwd + bwd, the default), `split_weight::parameters`
/// (param bytes, DeepSpeed's "parameters"), or `split_weight::uniform` (operator count).
///
/// Complexity: O((n + m) log n) for the order plus O(n).
#include <cstddef>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/status.hpp"

namespace devplace {

enum class split_weight { compute, parameters, uniform };

struct even_split_options {
  std::size_t stages = 1;
  split_weight weight = split_weight::compute;
};

struct even_split_result {
  devplace::status status = status::feasible;  ///< `infeasible` when S is 0 or exceeds the operator count
  std::vector<std::size_t> stage_of;           ///< monotone along edges by construction
};

template <profiled_dag G>
[[nodiscard]] even_split_result even_split(const G& g, const even_split_options& opt) {
  even_split_result r;
  const std::size_t n = devplace::num_vertices(g), S = opt.stages;
  if (S == 0 || S > n) {
    r.status = status::infeasible;
    return r;
  }
  const auto topo = topological_sort(g);
  std::vector<double> w(n);
  double total = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = topo.order[k];
    w[k] = opt.weight == split_weight::compute      ? devplace::compute_ms(g, v)
           : opt.weight == split_weight::parameters ? devplace::param_bytes(g, v)
                                                    : 1.0;
    total += w[k];
  }
  r.stage_of.assign(n, 0);
  std::size_t s = 0;
  double run = 0;
  for (std::size_t k = 0; k < n; ++k) {
    // Operators left must cover the stages left; move on once this stage's share is reached.
    // Stage s already holds an operator here (k > 0); when the operators left are exactly as
    // many as the stages after s, each of them must open a stage.
    const std::size_t left = n - k, stages_after = S - s - 1;
    if (s + 1 < S && k > 0 &&
        (left == stages_after || run >= total * static_cast<double>(s + 1) / static_cast<double>(S)))
      ++s;
    r.stage_of[topo.order[k]] = s;
    run += w[k];
  }
  return r;
}

}  // namespace devplace
