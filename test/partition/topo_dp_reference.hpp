#pragma once
// Test-only reference: the fixed-order DP as it was before the scaling work (issue 11, part 5),
// with the full n x n table of segment times. O(n (n + m)) time, O(n^2) memory. The library's
// `topo_dp` must give the same objective and the same labelling.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <vector>

#include "devplace/dag/op_graph.hpp"
#include "devplace/partition/result.hpp"

namespace devplace::test {

inline partition_result topo_dp_quadratic(const op_graph& g, const std::vector<std::size_t>& order, const partition_options& o) {
  const auto start = std::chrono::steady_clock::now();
  partition_result r;
  const std::size_t n = g.num_vertices(), S = o.stages;
  r.downsets = n + 1;
  if (S == 0 || S > n || o.cost.replicas == 0) {
    r.status = status::infeasible;
    return r;
  }
  const auto& cost = o.cost;
  std::vector<std::size_t> pos(n);
  for (std::size_t k = 0; k < n; ++k) pos[order[k]] = k;
  // seg[i][j - i - 1]: time of segment [i, j) or +inf when over the memory budget.
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> seg(n);
  const auto& s = g.structure();
  for (std::size_t i = 0; i < n; ++i) {
    seg[i].resize(n - i);
    double compute = 0, internal = 0, cut = 0;
    for (std::size_t j = i; j < n; ++j) {
      const std::size_t v = order[j];
      compute += g.compute_ms(v);
      internal += g.memory_bytes(v);
      // v joins positions [i, j): edges to members become internal, others cut.
      const auto succ = s.out_edges(v);
      for (std::size_t k = 0; k < succ.size(); ++k) {
        const double b = g.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(v) + k));
        const std::size_t p = pos[succ[k]];
        cut += (p >= i && p < j) ? -b : b;
      }
      const auto pred = s.in_edges(v);
      const auto ids = s.in_edge_ids(v);
      for (std::size_t k = 0; k < pred.size(); ++k) {
        const double b = g.edge_bytes_of(ids[k]);
        const std::size_t p = pos[pred[k]];
        cut += (p >= i && p < j) ? -b : b;
      }
      const double mem = stage_memory_bytes(internal, cut, cost);
      seg[i][j - i] = stage_fits(mem, cost) ? stage_time_ms(compute, cut, cost) : inf;
    }
  }
  // T[s][j]: best max over s segments covering positions [0, j).
  std::vector<std::vector<double>> T(S + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::size_t>> arg(S + 1, std::vector<std::size_t>(n + 1, 0));
  T[0][0] = 0;
  for (std::size_t k = 1; k <= S; ++k)
    for (std::size_t j = k; j <= n; ++j)
      for (std::size_t i = k - 1; i < j; ++i) {
        if (T[k - 1][i] == inf) continue;
        const double v = std::max(T[k - 1][i], seg[i][j - 1 - i]);
        if (v < T[k][j]) {
          T[k][j] = v;
          arg[k][j] = i;
        }
      }
  if (T[S][n] == inf) {
    r.status = status::infeasible;
  } else {
    r.status = status::feasible;  // optimal among splits of this order only
    r.stage_of.assign(n, 0);
    std::size_t j = n;
    for (std::size_t k = S; k >= 1; --k) {
      const std::size_t i = arg[k][j];
      for (std::size_t p = i; p < j; ++p) r.stage_of[order[p]] = k - 1;
      j = i;
    }
    finish_partition(g, o, r);
  }
  r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace devplace::test
