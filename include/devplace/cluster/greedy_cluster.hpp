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
/// Complexity: an indexed 4-ary heap holding every adjacent pair once, re-keyed in place when a
/// merge changes it (no rescan, no stale entries); the
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
  // The memory test is per device: a hyper-operator must fit one device (R = 1), whatever R the
  // later DP uses; m(X) and the budget are stage_cost.hpp's (stage_memory_bytes, stage_fits).
  stage_cost_options one_device = opt.cost;
  one_device.replicas = 1;

  // Hyper-node state, indexed by representative id (the original vertex id of its first member).
  std::vector<double> cu(n), mem_int(n), boundary(n, 0.0);
  // Every adjacent pair of hyper-nodes is one record (parallel edges combined, bytes summed),
  // referenced from both ends' adjacency lists; a merge re-points or retires records.
  struct pair_record {
    std::uint32_t from, to;  // edge direction from -> to (representatives)
    double bytes;
  };
  struct edge_ref {
    std::size_t w;     // the neighbour
    std::uint32_t id;  // its pair record
  };
  std::vector<pair_record> pairs;
  std::vector<std::vector<edge_ref>> out(n), in(n);
  for (std::size_t v = 0; v < n; ++v) {
    cu[v] = g.compute_ms(v);
    mem_int[v] = g.memory_bytes(v);
  }
  constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> slot(n, npos);  // a neighbour's record while a list is being combined
  const auto& s = g.structure();
  pairs.reserve(s.num_edges());
  for (std::size_t u = 0; u < n; ++u) {
    const auto succ = s.out_edges(u);
    for (std::size_t k = 0; k < succ.size(); ++k) {
      const double b = g.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(u) + k));
      const std::size_t w = succ[k];
      boundary[u] += b;
      boundary[w] += b;
      if (slot[w] != npos) {
        pairs[slot[w]].bytes += b;
        continue;
      }
      slot[w] = pairs.size();
      out[u].push_back({w, static_cast<std::uint32_t>(pairs.size())});
      in[w].push_back({u, static_cast<std::uint32_t>(pairs.size())});
      pairs.push_back({static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(w), b});
    }
    for (auto [w, id] : out[u]) { (void)id; slot[w] = npos; }
  }
  std::vector<std::size_t> parent(n);  // union-find towards the representative
  for (std::size_t v = 0; v < n; ++v) parent[v] = v;
  std::vector<char> alive(n, 1);

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

  auto pair_cost = [&](const pair_record& p) {
    return cu[p.from] + cu[p.to] - opt.alpha * p.bytes * to_ms;
  };
  auto merged_fits = [&](const pair_record& p) {  // m(X) of the union (eq. 14) within one device
    const double internal = mem_int[p.from] + mem_int[p.to];
    const double cut = boundary[p.from] + boundary[p.to] - 2.0 * p.bytes;  // the pair's bytes become internal
    return stage_fits(stage_memory_bytes(internal, cut, one_device), one_device);
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

  // Every live pair sits in the heap once, keyed by (cost, smaller representative, larger one):
  // deterministic ties. A merge changes the keys of the merged node's pairs in place.
  struct key {
    double cost;
    std::uint32_t lo, hi;
    bool operator<(const key& o) const {
      if (cost != o.cost) return cost < o.cost;
      if (lo != o.lo) return lo < o.lo;
      return hi < o.hi;
    }
  };
  indexed_dary_heap<key, std::less<>> heap(pairs.size());
  heap.reserve(pairs.size());
  auto queue = [&](std::uint32_t id) {
    const pair_record& p = pairs[id];
    heap.set(id, {pair_cost(p), std::min(p.from, p.to), std::max(p.from, p.to)});
  };
  for (std::uint32_t id = 0; id < pairs.size(); ++id) queue(id);

  // A pair rejected for convexity can become valid when a vertex on the other path is absorbed
  // into one of its ends, i.e. when one of its ends takes part in a merge; every merge re-queues
  // every pair of the merged node (below), which covers it. Memory only grows: a pair over the
  // limit stays out until one of its ends merges (and is then re-tested, as the heap cannot tell).

  auto find = [&](std::size_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };

  std::size_t k = n;
  while (k > opt.max_clusters && !heap.empty()) {
    const std::uint32_t top = static_cast<std::uint32_t>(heap.top_id());
    heap.pop();
    const pair_record c = pairs[top];
    if (!merged_fits(c)) continue;        // re-queued when an end merges
    if (!convex(c.from, c.to)) continue;  // likewise
    // Merge the later-numbered representative into the smaller one.
    const std::size_t keep = std::min(c.from, c.to), gone = std::max(c.from, c.to);
    reorder(c.from, c.to, keep);  // uses the adjacency before the merge
    cu[keep] += cu[gone];
    mem_int[keep] += mem_int[gone];
    boundary[keep] += boundary[gone] - 2.0 * c.bytes;
    alive[gone] = 0;
    parent[gone] = keep;
    // Contract adjacency: the neighbours of both parts become neighbours of `keep`. A neighbour
    // of both keeps keep's record, which takes the bytes of gone's (keep's first, as the lists
    // are read); gone's other records are re-pointed at keep; the pair between them is retired.
    auto combine = [&](std::vector<edge_ref>& mine, std::vector<edge_ref>& theirs, bool outgoing) {
      std::vector<edge_ref> r;
      r.reserve(mine.size() + theirs.size());
      for (auto e : mine)
        if (e.w != gone) {
          slot[e.w] = r.size();
          r.push_back(e);
        }
      for (auto e : theirs) {
        if (e.w == keep) continue;
        auto& on_w = outgoing ? in[e.w] : out[e.w];
        if (slot[e.w] != npos) {  // both parts had this neighbour: one pair remains
          pairs[r[slot[e.w]].id].bytes += pairs[e.id].bytes;
          heap.erase(e.id);
          std::erase_if(on_w, [&](const edge_ref& x) { return x.id == e.id; });
        } else {
          (outgoing ? pairs[e.id].from : pairs[e.id].to) = static_cast<std::uint32_t>(keep);
          for (auto& x : on_w)
            if (x.id == e.id) x.w = keep;
          slot[e.w] = r.size();
          r.push_back(e);
        }
      }
      for (auto e : r) slot[e.w] = npos;
      mine = std::move(r);
      theirs.clear();
    };
    combine(out[keep], out[gone], true);
    combine(in[keep], in[gone], false);
    --k;
    ++result.merges;
    for (auto e : out[keep]) queue(e.id);
    for (auto e : in[keep]) queue(e.id);
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
