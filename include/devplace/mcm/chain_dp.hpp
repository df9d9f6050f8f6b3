#pragma once
/// \file mcm/chain_dp.hpp
/// The valid-by-construction baselines of MCM partitioning (seed-mcm §2.8): contiguous chunks of
/// one topological order where every operator edge crosses at most one chunk boundary, so the
/// chip graph is a sub-path 0 -> 1 -> ... -> K-1 and eq. 2-4 hold.
///
/// `chain_dp` minimises the bottleneck max_k W(chunk k) over K <= C chunks, W = the sum of the
/// vertex weights (and optionally a memory cap per chunk), in O(C N^2). `greedy_chain` closes a
/// chunk once its load reaches total / C and the one-boundary rule allows it, in O(N + E).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/concepts.hpp"
#include "devplace/status.hpp"

namespace devplace::mcm {

struct chain_options {
  std::size_t chips = 0;                                          ///< C >= 1
  double memory_cap = std::numeric_limits<double>::infinity();   ///< per chunk, on `memory`
};

struct chain_result {
  devplace::status status = status::infeasible;  ///< optimal (over chunkings of the order) or infeasible
  std::vector<int> chip_of;                      ///< f(u)
  std::size_t chips_used = 0;                    ///< K
  double bottleneck = 0;                         ///< max chunk weight
};

namespace detail {

/// Position order and ms(p) (largest position of a successor of a vertex at position < p).
template <dag G>
void chain_prep(const G& g, std::vector<std::size_t>& order, std::vector<std::size_t>& ms) {
  const std::size_t n = devplace::num_vertices(g);
  const auto t = topological_sort(g);
  if (!t) throw std::invalid_argument("mcm: the graph has a cycle");
  order = t.order;
  std::vector<std::size_t> pos(n);
  for (std::size_t i = 0; i < n; ++i) pos[order[i]] = i;
  ms.assign(n + 1, 0);
  std::size_t m = 0;
  for (std::size_t p = 0; p < n; ++p) {
    ms[p] = m;  // over positions < p
    for (auto v : devplace::out_edges(g, order[p])) m = std::max(m, pos[static_cast<std::size_t>(v)]);
  }
  ms[n] = m;
}

}  // namespace detail

/// Optimal one-boundary chunking of a topological order. `weight` and `memory` have one entry per
/// vertex (`memory` may be empty). Throws std::invalid_argument on bad sizes or C == 0.
template <dag G>
[[nodiscard]] chain_result chain_dp(const G& g, std::span<const double> weight, const chain_options& o,
                                    std::span<const double> memory = {}) {
  const std::size_t n = devplace::num_vertices(g), C = o.chips;
  if (C == 0) throw std::invalid_argument("mcm::chain_dp: chips must be >= 1");
  if (weight.size() != n || (!memory.empty() && memory.size() != n))
    throw std::invalid_argument("mcm::chain_dp: one weight (and memory) per vertex expected");
  chain_result r;
  if (n == 0) { r.status = status::optimal; return r; }
  std::vector<std::size_t> order, ms;
  detail::chain_prep(g, order, ms);
  std::vector<double> pw(n + 1, 0), pm(n + 1, 0);
  for (std::size_t p = 0; p < n; ++p) {
    pw[p + 1] = pw[p] + weight[order[p]];
    pm[p + 1] = pm[p] + (memory.empty() ? 0.0 : memory[order[p]]);
  }
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t Kmax = std::min(C, n);
  // dp[k][j]: best bottleneck of positions [0, j) in k+1 chunks; arg[k][j]: start of the last chunk.
  std::vector<std::vector<double>> dp(Kmax, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::size_t>> arg(Kmax, std::vector<std::size_t>(n + 1, 0));
  for (std::size_t j = 1; j <= n; ++j)
    if (pm[j] <= o.memory_cap) dp[0][j] = pw[j];
  for (std::size_t k = 1; k < Kmax; ++k)
    for (std::size_t j = k + 1; j <= n; ++j)
      for (std::size_t i = k; i < j && ms[i] < j; ++i) {  // ms is non-decreasing: stop at the first bad i
        if (dp[k - 1][i] == inf || pm[j] - pm[i] > o.memory_cap) continue;
        const double c = std::max(dp[k - 1][i], pw[j] - pw[i]);
        if (c < dp[k][j]) dp[k][j] = c, arg[k][j] = i;
      }
  std::size_t bestK = 0;
  for (std::size_t k = 0; k < Kmax; ++k)
    if (dp[k][n] < dp[bestK][n]) bestK = k;
  if (dp[bestK][n] == inf) return r;
  r.status = status::optimal;
  r.bottleneck = dp[bestK][n];
  r.chips_used = bestK + 1;
  r.chip_of.assign(n, 0);
  std::size_t j = n;
  for (std::size_t k = bestK + 1; k-- > 0;) {
    const std::size_t i = k == 0 ? 0 : arg[k][j];
    for (std::size_t p = i; p < j; ++p) r.chip_of[order[p]] = static_cast<int>(k);
    j = i;
  }
  return r;
}

/// Greedy one-boundary chunking in O(N + E): always valid, status `feasible`.
template <dag G>
[[nodiscard]] chain_result greedy_chain(const G& g, std::span<const double> weight, const chain_options& o) {
  const std::size_t n = devplace::num_vertices(g), C = o.chips;
  if (C == 0) throw std::invalid_argument("mcm::greedy_chain: chips must be >= 1");
  if (weight.size() != n) throw std::invalid_argument("mcm::greedy_chain: one weight per vertex expected");
  chain_result r;
  r.status = status::feasible;
  r.chip_of.assign(n, 0);
  if (n == 0) return r;
  std::vector<std::size_t> order, ms;
  detail::chain_prep(g, order, ms);
  double total = 0;
  for (double w : weight) total += w;
  const double target = total / static_cast<double>(C);
  std::size_t chip = 0, start = 0, prev_start = 0;
  double load = 0, worst = 0;
  for (std::size_t p = 0; p < n; ++p) {
    // close the chunk [start, p) before p when full and every edge from before `start` ends before p
    if (p > start && load >= target && chip + 1 < C && (chip == 0 || ms[start] < p)) {
      worst = std::max(worst, load);
      ++chip, prev_start = start, start = p, load = 0;
    }
    r.chip_of[order[p]] = static_cast<int>(chip);
    load += weight[order[p]];
  }
  (void)prev_start;
  r.bottleneck = std::max(worst, load);
  r.chips_used = chip + 1;
  return r;
}

}  // namespace devplace::mcm
