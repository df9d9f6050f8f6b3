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

/// The state of one clustering pass: the hyper-nodes, their pair records, the quotient's
/// topological order and the heap of candidate pairs; each step of the pass is a member.
class greedy_cluster_pass {
 public:
  greedy_cluster_pass(const op_graph& g, const greedy_cluster_options& opt)
      : opt_(opt), n_(g.num_vertices()), to_ms_(cut_ms_per_byte(opt.cost)), one_device_(opt.cost),
        cu_(n_), mem_int_(n_), boundary_(n_, 0.0), out_(n_), in_(n_), slot_(n_, npos), parent_(n_),
        alive_(n_, 1), ord_(n_), mark_(n_, 0), heap_(0) {
    // The memory test is per device: a hyper-operator must fit one device (R = 1), whatever R the
    // later DP uses; m(X) and the budget are stage_cost.hpp's (stage_memory_bytes, stage_fits).
    one_device_.replicas = 1;
    read_pairs(g);
    for (std::size_t v = 0; v < n_; ++v) parent_[v] = v;
    const auto topo = topological_sort(g.structure());
    for (std::size_t p = 0; p < n_; ++p) ord_[topo.order[p]] = p;
    heap_ = indexed_dary_heap<key, std::less<>>(pairs_.size());
    heap_.reserve(pairs_.size());
    for (std::uint32_t id = 0; id < pairs_.size(); ++id) queue(id);
  }

  /// Merges the cheapest valid pair until at most K hyper-nodes remain or no pair is left.
  ///
  /// A pair rejected for convexity can become valid when a vertex on the other path is absorbed
  /// into one of its ends, i.e. when one of its ends takes part in a merge; every merge re-queues
  /// every pair of the merged node, which covers it. Memory only grows: a pair over the limit
  /// stays out until one of its ends merges (and is then re-tested, as the heap cannot tell).
  void run() {
    while (k_ > opt_.max_clusters && !heap_.empty()) {
      const auto top = static_cast<std::uint32_t>(heap_.top_id());
      heap_.pop();
      const pair_record c = pairs_[top];
      if (!merged_fits(c)) continue;        // re-queued when an end merges
      if (!convex(c.from, c.to)) continue;  // likewise
      merge(c);
    }
  }

  /// The clusters, numbered in a topological order of the quotient.
  [[nodiscard]] clustering result() {
    clustering r;
    r.merges = merges_;
    std::vector<std::vector<std::size_t>> q(n_);
    for (std::size_t u = 0; u < n_; ++u)
      if (alive_[u])
        for (auto [w, b] : out_[u]) { (void)b; q[u].push_back(w); }
    const auto topo = topological_sort(q);  // dead vertices are isolated and ignored below
    std::vector<std::size_t> number(n_, n_);
    std::size_t next = 0;
    for (auto v : topo.order)
      if (alive_[v]) number[v] = next++;
    r.num_clusters = next;
    r.cluster_of.resize(n_);
    for (std::size_t v = 0; v < n_; ++v) r.cluster_of[v] = number[find(v)];
    r.status = k_ <= opt_.max_clusters ? status::feasible : status::infeasible;
    return r;
  }

 private:
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
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  /// The hyper-node of every vertex and one pair record per adjacent pair of vertices.
  void read_pairs(const op_graph& g) {
    for (std::size_t v = 0; v < n_; ++v) {
      cu_[v] = g.compute_ms(v);
      mem_int_[v] = g.memory_bytes(v);
    }
    const auto& s = g.structure();
    pairs_.reserve(s.num_edges());
    for (std::size_t u = 0; u < n_; ++u) {
      const auto succ = s.out_edges(u);
      for (std::size_t k = 0; k < succ.size(); ++k) {
        const double b = g.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(u) + k));
        const std::size_t w = succ[k];
        boundary_[u] += b;
        boundary_[w] += b;
        if (slot_[w] != npos) {
          pairs_[slot_[w]].bytes += b;
          continue;
        }
        slot_[w] = pairs_.size();
        out_[u].push_back({w, static_cast<std::uint32_t>(pairs_.size())});
        in_[w].push_back({u, static_cast<std::uint32_t>(pairs_.size())});
        pairs_.push_back({static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(w), b});
      }
      for (auto [w, id] : out_[u]) { (void)id; slot_[w] = npos; }
    }
  }

  [[nodiscard]] double pair_cost(const pair_record& p) const {
    return cu_[p.from] + cu_[p.to] - opt_.alpha * p.bytes * to_ms_;
  }
  /// m(X) of the union (eq. 14) within one device.
  [[nodiscard]] bool merged_fits(const pair_record& p) const {
    const double internal = mem_int_[p.from] + mem_int_[p.to];
    const double cut = boundary_[p.from] + boundary_[p.to] - 2.0 * p.bytes;  // the pair's bytes become internal
    return stage_fits(stage_memory_bytes(internal, cut, one_device_), one_device_);
  }
  void queue(std::uint32_t id) {
    const pair_record& p = pairs_[id];
    heap_.set(id, {pair_cost(p), std::min(p.from, p.to), std::max(p.from, p.to)});
  }
  std::size_t find(std::size_t v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }

  /// Edge a -> b can be contracted iff no other path a ⇝ b exists: no successor c != b of a
  /// reaches b. Every vertex on such a path lies strictly between a and b in the order, so the
  /// search from a stays within ord < ord[b]. Leaves the vertices it reached from a in `fwd_`.
  bool convex(std::size_t a, std::size_t b) {
    ++stamp_;
    fwd_.clear();
    stack_.clear();
    for (auto [c, y] : out_[a]) {
      (void)y;
      if (c != b && ord_[c] < ord_[b] && mark_[c] != stamp_) {
        mark_[c] = stamp_;
        stack_.push_back(c);
      }
    }
    while (!stack_.empty()) {
      const std::size_t x = stack_.back();
      stack_.pop_back();
      fwd_.push_back(x);
      for (auto [c, y] : out_[x]) {
        (void)y;
        if (c == b) return false;
        if (ord_[c] < ord_[b] && mark_[c] != stamp_) {
          mark_[c] = stamp_;
          stack_.push_back(c);
        }
      }
    }
    return true;
  }

  /// After convex(a, b) held: the vertices between a and b that reach b (`bwd_`) move before the
  /// merged node, those reached from a (`fwd_`, disjoint from `bwd_`) after it, reusing the
  /// positions of a, b and both sets (Pearce–Kelly style); the order stays topological.
  void reorder(std::size_t a, std::size_t b, std::size_t merged) {
    ++stamp_;
    bwd_.clear();
    stack_.clear();
    for (auto [c, y] : in_[b]) {
      (void)y;
      if (c != a && ord_[c] > ord_[a] && mark_[c] != stamp_) {
        mark_[c] = stamp_;
        stack_.push_back(c);
      }
    }
    while (!stack_.empty()) {
      const std::size_t x = stack_.back();
      stack_.pop_back();
      bwd_.push_back(x);
      for (auto [c, y] : in_[x]) {
        (void)y;
        if (ord_[c] > ord_[a] && mark_[c] != stamp_) {
          mark_[c] = stamp_;
          stack_.push_back(c);
        }
      }
    }
    if (fwd_.empty() && bwd_.empty()) {
      ord_[merged] = ord_[a];
      return;
    }
    auto by_ord = [&](std::size_t x, std::size_t y) { return ord_[x] < ord_[y]; };
    std::sort(fwd_.begin(), fwd_.end(), by_ord);
    std::sort(bwd_.begin(), bwd_.end(), by_ord);
    std::vector<std::size_t> pool;
    pool.reserve(fwd_.size() + bwd_.size() + 2);
    pool.push_back(ord_[a]);
    pool.push_back(ord_[b]);
    for (auto x : fwd_) pool.push_back(ord_[x]);
    for (auto x : bwd_) pool.push_back(ord_[x]);
    std::sort(pool.begin(), pool.end());
    std::size_t k = 0;
    for (auto x : bwd_) ord_[x] = pool[k++];
    ord_[merged] = pool[k++];
    for (auto x : fwd_) ord_[x] = pool[k++];
  }

  /// Merges the later-numbered representative of valid pair c into the smaller one.
  void merge(const pair_record& c) {
    const std::size_t keep = std::min(c.from, c.to), gone = std::max(c.from, c.to);
    reorder(c.from, c.to, keep);  // uses the adjacency before the merge
    cu_[keep] += cu_[gone];
    mem_int_[keep] += mem_int_[gone];
    boundary_[keep] += boundary_[gone] - 2.0 * c.bytes;
    alive_[gone] = 0;
    parent_[gone] = keep;
    combine(out_[keep], out_[gone], true, keep, gone);
    combine(in_[keep], in_[gone], false, keep, gone);
    --k_;
    ++merges_;
    for (auto e : out_[keep]) queue(e.id);
    for (auto e : in_[keep]) queue(e.id);
  }

  /// Contracts one direction of the adjacency: the neighbours of both parts become neighbours of
  /// `keep`. A neighbour of both keeps keep's record, which takes the bytes of gone's (keep's
  /// first, as the lists are read); gone's other records are re-pointed at keep; the pair between
  /// them is retired.
  void combine(std::vector<edge_ref>& mine, std::vector<edge_ref>& theirs, bool outgoing,
               std::size_t keep, std::size_t gone) {
    std::vector<edge_ref> r;
    r.reserve(mine.size() + theirs.size());
    for (auto e : mine)
      if (e.w != gone) {
        slot_[e.w] = r.size();
        r.push_back(e);
      }
    for (auto e : theirs) {
      if (e.w == keep) continue;
      auto& on_w = outgoing ? in_[e.w] : out_[e.w];
      if (slot_[e.w] != npos) {  // both parts had this neighbour: one pair remains
        pairs_[r[slot_[e.w]].id].bytes += pairs_[e.id].bytes;
        heap_.erase(e.id);
        std::erase_if(on_w, [&](const edge_ref& x) { return x.id == e.id; });
      } else {
        (outgoing ? pairs_[e.id].from : pairs_[e.id].to) = static_cast<std::uint32_t>(keep);
        for (auto& x : on_w)
          if (x.id == e.id) x.w = keep;
        slot_[e.w] = r.size();
        r.push_back(e);
      }
    }
    for (auto e : r) slot_[e.w] = npos;
    mine = std::move(r);
    theirs.clear();
  }

  const greedy_cluster_options& opt_;
  std::size_t n_;
  double to_ms_;
  stage_cost_options one_device_;
  // Hyper-node state, indexed by representative id (the original vertex id of its first member).
  std::vector<double> cu_, mem_int_, boundary_;
  std::vector<pair_record> pairs_;
  std::vector<std::vector<edge_ref>> out_, in_;
  std::vector<std::size_t> slot_;    // a neighbour's record while a list is being combined
  std::vector<std::size_t> parent_;  // union-find towards the representative
  std::vector<char> alive_;
  // A topological order of the quotient, kept valid across merges (ord_[rep]: its position; the
  // positions are those of a topological order of g, some left unused as clusters merge).
  std::vector<std::size_t> ord_;
  std::vector<std::uint32_t> mark_;  // visit stamps of the searches
  std::uint32_t stamp_ = 0;
  std::vector<std::size_t> fwd_, bwd_, stack_;  // the forward / backward search regions
  indexed_dary_heap<key, std::less<>> heap_;
  std::size_t k_ = n_;  // hyper-nodes left
  std::size_t merges_ = 0;
};

/// The non-template core over an op_graph.
inline clustering greedy_cluster_core(const op_graph& g, const greedy_cluster_options& opt) {
  if (g.num_vertices() == 0) return {};
  if (g.num_vertices() >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("greedy_cluster: at most 2^32 - 2 operators are supported");
  greedy_cluster_pass pass(g, opt);
  pass.run();
  return pass.result();
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
