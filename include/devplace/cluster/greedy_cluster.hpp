#pragma once
/// \file cluster/greedy_cluster.hpp
/// Parmesan's operator clustering (seed-parmesan.md §5, eq. 4): repeatedly merge the adjacent
/// pair of hyper-operators (û, v̂) of minimum
///
///     cost(û, v̂) = c_u(û) + c_u(v̂) − α · c_m(û, v̂)
///
/// whose merge keeps the quotient graph acyclic (no other directed path û ⇝ v̂ of length ≥ 2)
/// and whose union fits device memory (eq. 14), until at most K hyper-operators remain or no
/// valid pair is left. c_u is forward + backward time, c_m(û, v̂) the transfer time of every byte
/// on edges between û and v̂ (either direction) at a constant bandwidth.
///
/// Ties are broken by (cost, smaller representative, larger representative), so the result is
/// deterministic. The result is a clustering usable through `views::quotient`.
///
/// Complexity: a 4-ary heap of 24-byte candidate edges with version stamps (no rescan per merge); the
/// convexity test is a search from û bounded by a topological order of the quotient that is
/// kept valid across merges (only the vertices between û and v̂ in it are visited and, on a
/// merge, reordered), so a test costs O(size of that region) and no n x n reachability is kept.
/// Memory O(n + m); time O(m log m) heap work plus the regions searched (small where the graph
/// is locally connected, as operator graphs are; O(n + m) each in the worst case).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/partition/stage_cost.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/detail/bitset.hpp"
#include "devplace/detail/dary_heap.hpp"
#include "devplace/status.hpp"

namespace devplace {

struct greedy_cluster_options {
  std::size_t max_clusters = 32;            ///< K: stop once at most K hyper-operators remain
  double alpha = 1.0;                       ///< α of eq. 4 (Parmesan tries 0.01, 1, 100)
  /// β̄ for c_m, DM and MB of eq. 14 (partition/stage_cost.hpp); a merged cluster's memory must
  /// stay within one device's memory (R is not used).
  stage_cost_options cost;
};

struct clustering {
  devplace::status status = status::optimal;  ///< `feasible`: K reached; `infeasible`: stopped early
                                              ///< with more than K clusters (no valid pair left)
  std::size_t num_clusters = 0;               ///< k
  std::vector<std::size_t> cluster_of;        ///< cluster 0..k-1 of every vertex; clusters are
                                              ///< numbered in a topological order of the quotient
  std::size_t merges = 0;                     ///< merges performed
};

namespace detail {

/// The non-template core over an op_graph.
inline clustering greedy_cluster_core(const op_graph& g, const greedy_cluster_options& opt) {
  const std::size_t n = g.num_vertices();
  clustering result;
  if (n == 0) return result;
  if (n >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("greedy_cluster: at most 2^32 - 2 operators are supported");
  const double to_ms = cut_ms_per_byte(opt.cost);
  const double mb = static_cast<double>(std::max<std::size_t>(opt.cost.micro_batches, 1));

  // Hyper-node state, indexed by representative id (the original vertex id of its first member).
  std::vector<double> cu(n), mem_int(n), boundary(n, 0.0);
  std::vector<std::vector<std::pair<std::size_t, double>>> out(n), in(n);  // neighbour, bytes
  for (std::size_t v = 0; v < n; ++v) {
    cu[v] = g.compute_ms(v);
    mem_int[v] = g.memory_bytes(v);
  }
  const auto& s = g.structure();
  for (std::size_t u = 0; u < n; ++u) {
    const auto succ = s.out_edges(u);
    for (std::size_t k = 0; k < succ.size(); ++k) {
      const double b = g.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(u) + k));
      out[u].emplace_back(succ[k], b);
      in[succ[k]].emplace_back(u, b);
      boundary[u] += b;
      boundary[succ[k]] += b;
    }
  }
  std::vector<std::size_t> parent(n);  // union-find towards the representative
  for (std::size_t v = 0; v < n; ++v) parent[v] = v;
  std::vector<char> alive(n, 1);
  std::vector<std::uint32_t> version(n, 0);

  // A topological order of the quotient, kept valid across merges (ord[rep]: its position; the
  // positions are those of a topological order of g, some left unused as clusters merge).
  std::vector<std::size_t> ord(n);
  {
    const auto topo = topological_sort(s);
    for (std::size_t p = 0; p < n; ++p) ord[topo.order[p]] = p;
  }
  std::vector<std::uint32_t> mark(n, 0);  // visit stamps of the searches below
  std::uint32_t stamp = 0;
  std::vector<std::size_t> fwd, bwd, stack;  // the forward / backward search regions

  auto bytes_between = [&](std::size_t a, std::size_t b) {
    double x = 0;
    for (auto [w, y] : out[a]) if (w == b) x += y;
    for (auto [w, y] : in[a]) if (w == b) x += y;
    return x;
  };
  auto pair_cost = [&](std::size_t a, std::size_t b) {
    return cu[a] + cu[b] - opt.alpha * bytes_between(a, b) * to_ms;
  };
  auto merged_memory = [&](std::size_t a, std::size_t b) {  // eq. 14 of the union
    return (mem_int[a] + mem_int[b] + boundary[a] + boundary[b] - 2.0 * bytes_between(a, b)) / mb;
  };
  // Edge a -> b can be contracted iff no other path a ⇝ b exists: no successor c != b of a
  // reaches b. Every vertex on such a path lies strictly between a and b in the order, so the
  // search from a stays within ord < ord[b]. Leaves the vertices it reached from a in `fwd`.
  auto convex = [&](std::size_t a, std::size_t b) {
    ++stamp;
    fwd.clear();
    stack.clear();
    for (auto [c, y] : out[a]) {
      (void)y;
      if (c != b && ord[c] < ord[b] && mark[c] != stamp) {
        mark[c] = stamp;
        stack.push_back(c);
      }
    }
    while (!stack.empty()) {
      const std::size_t x = stack.back();
      stack.pop_back();
      fwd.push_back(x);
      for (auto [c, y] : out[x]) {
        (void)y;
        if (c == b) return false;
        if (ord[c] < ord[b] && mark[c] != stamp) {
          mark[c] = stamp;
          stack.push_back(c);
        }
      }
    }
    return true;
  };
  // After convex(a, b) held: the vertices between a and b that reach b (`bwd`) move before the
  // merged node, those reached from a (`fwd`, disjoint from `bwd`) after it, reusing the
  // positions of a, b and both sets (Pearce–Kelly style); the order stays topological.
  auto reorder = [&](std::size_t a, std::size_t b, std::size_t merged) {
    ++stamp;
    bwd.clear();
    stack.clear();
    for (auto [c, y] : in[b]) {
      (void)y;
      if (c != a && ord[c] > ord[a] && mark[c] != stamp) {
        mark[c] = stamp;
        stack.push_back(c);
      }
    }
    while (!stack.empty()) {
      const std::size_t x = stack.back();
      stack.pop_back();
      bwd.push_back(x);
      for (auto [c, y] : in[x]) {
        (void)y;
        if (ord[c] > ord[a] && mark[c] != stamp) {
          mark[c] = stamp;
          stack.push_back(c);
        }
      }
    }
    if (fwd.empty() && bwd.empty()) {
      ord[merged] = ord[a];
      return;
    }
    auto by_ord = [&](std::size_t x, std::size_t y) { return ord[x] < ord[y]; };
    std::sort(fwd.begin(), fwd.end(), by_ord);
    std::sort(bwd.begin(), bwd.end(), by_ord);
    std::vector<std::size_t> pool;
    pool.reserve(fwd.size() + bwd.size() + 2);
    pool.push_back(ord[a]);
    pool.push_back(ord[b]);
    for (auto x : fwd) pool.push_back(ord[x]);
    for (auto x : bwd) pool.push_back(ord[x]);
    std::sort(pool.begin(), pool.end());
    std::size_t k = 0;
    for (auto x : bwd) ord[x] = pool[k++];
    ord[merged] = pool[k++];
    for (auto x : fwd) ord[x] = pool[k++];
  };

  // 24 bytes per entry: the heap outgrows the caches on large graphs, so its entries are small.
  struct candidate {
    double cost;
    std::uint32_t from, to;      // edge direction from -> to (representatives)
    std::uint32_t vfrom, vto;    // their versions when queued
    std::uint32_t lo() const { return std::min(from, to); }
    std::uint32_t hi() const { return std::max(from, to); }
    bool operator<(const candidate& o) const {  // (cost, lo, hi): deterministic ties
      if (cost != o.cost) return cost < o.cost;
      if (lo() != o.lo()) return lo() < o.lo();
      return hi() < o.hi();
    }
  };
  dary_heap<candidate, std::less<>> heap;
  heap.reserve(2 * s.num_edges());
  auto push = [&](std::size_t from, std::size_t to) {
    heap.push({pair_cost(from, to), static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to),
               version[from], version[to]});
  };
  for (std::size_t u = 0; u < n; ++u)
    for (auto [w, b] : out[u]) {
      (void)b;
      push(u, w);
    }

  // Pairs rejected for convexity can become valid when a vertex on the other path is absorbed
  // into one of their ends, i.e. when one of their ends takes part in a merge; every merge
  // re-queues every edge of the merged node (below), which covers them. (Queuing them once more
  // from a list of rejected pairs only added duplicates, re-tested with the same outcome and
  // re-listed each time: the heap grew super-linearly.)

  auto find = [&](std::size_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };

  constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> slot(n, npos);  // combine(): index of a neighbour in the list being built
  std::size_t k = n;
  while (k > opt.max_clusters && !heap.empty()) {
    const candidate c = heap.top();
    heap.pop();
    if (!alive[c.from] || !alive[c.to] || version[c.from] != c.vfrom || version[c.to] != c.vto) continue;
    if (merged_memory(c.from, c.to) > opt.cost.device_memory_bytes) continue;  // only grows: drop
    if (!convex(c.from, c.to)) continue;  // re-queued when either end merges
    // Merge the later-numbered representative into the smaller one.
    const std::size_t keep = c.lo(), gone = c.hi();
    reorder(c.from, c.to, keep);  // uses the adjacency before the merge
    const double between = bytes_between(keep, gone);
    cu[keep] += cu[gone];
    mem_int[keep] += mem_int[gone];
    boundary[keep] += boundary[gone] - 2.0 * between;
    alive[gone] = 0;
    parent[gone] = keep;
    // Contract adjacency: the neighbours of both parts become neighbours of `keep`; parallel
    // edges add their bytes; the edge between the two parts disappears.
    auto combine = [&](const std::vector<std::pair<std::size_t, double>>& x,
                       const std::vector<std::pair<std::size_t, double>>& y) {
      std::vector<std::pair<std::size_t, double>> r;
      for (const auto* l : {&x, &y})
        for (auto [w, b] : *l) {
          if (w == keep || w == gone) continue;
          if (slot[w] == npos) {
            slot[w] = r.size();
            r.emplace_back(w, b);
          } else {
            r[slot[w]].second += b;
          }
        }
      for (auto [w, b] : r) { (void)b; slot[w] = npos; }
      return r;
    };
    auto nout = combine(out[keep], out[gone]);
    auto nin = combine(in[keep], in[gone]);
    auto is_part = [&](const auto& e) { return e.first == keep || e.first == gone; };
    for (auto [w, b] : nout) { (void)b; std::erase_if(in[w], is_part); }
    for (auto [w, b] : nin) { (void)b; std::erase_if(out[w], is_part); }
    for (auto [w, b] : nout) in[w].emplace_back(keep, b);
    for (auto [w, b] : nin) out[w].emplace_back(keep, b);
    out[keep] = std::move(nout);
    in[keep] = std::move(nin);
    out[gone].clear();
    in[gone].clear();
    ++version[keep];
    --k;
    ++result.merges;
    for (auto [w, b] : out[keep]) { (void)b; push(keep, w); }
    for (auto [w, b] : in[keep]) { (void)b; push(w, keep); }
  }

  // Number clusters in a topological order of the quotient.
  std::vector<std::vector<std::size_t>> q(n);
  for (std::size_t u = 0; u < n; ++u)
    if (alive[u])
      for (auto [w, b] : out[u]) { (void)b; q[u].push_back(w); }
  const auto topo = topological_sort(q);  // dead vertices are isolated and ignored below
  std::vector<std::size_t> number(n, n);
  std::size_t next = 0;
  for (auto v : topo.order)
    if (alive[v]) number[v] = next++;
  result.num_clusters = next;
  result.cluster_of.resize(n);
  for (std::size_t v = 0; v < n; ++v) result.cluster_of[v] = number[find(v)];
  result.status = k <= opt.max_clusters ? status::feasible : status::infeasible;
  return result;
}

}  // namespace detail

/// Clusters any `profiled_dag` (copied once into an `op_graph`).
template <profiled_dag G>
[[nodiscard]] clustering greedy_cluster(const G& g, const greedy_cluster_options& opt = {}) {
  check_cost_options(opt.cost, "greedy_cluster");
  if (!(opt.alpha >= 0) || !std::isfinite(opt.alpha)) throw std::invalid_argument("greedy_cluster: alpha must be a finite number >= 0");
  if constexpr (std::is_same_v<G, op_graph>)
    return detail::greedy_cluster_core(g, opt);
  else
    return detail::greedy_cluster_core(to_op_graph(g), opt);
}

}  // namespace devplace
