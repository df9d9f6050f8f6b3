#pragma once
/// \file map/ring_bound.hpp
/// The ring-component lower bound of the allreduce model. At a target t a ring of stage s may only
/// use links with c(s) + x_s · w(a, b) ≤ t, so its devices lie in one component (rings of R ≥ 3:
/// one block) of that link graph; the graphs of all stages are nested, their components form a
/// tree, and `ring_component_test::holds` checks by a max flow over it that every stage gets a
/// component with room. The least t at which it holds is a lower bound, found by bisection over
/// the event values. Soundness, what it sees and cost: docs/mapping.md, "Bounds"
/// ("Ring-component bound").
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "devplace/detail/disjoint_sets.hpp"
#include "devplace/map/detail/event_bisection.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

namespace detail {

/// Dinic's maximum flow on a small graph with integer capacities.
template <int = 0>
class basic_small_max_flow {
 public:
  explicit basic_small_max_flow(std::size_t n) : head_(n, none), level_(n), it_(n) {}
  void add_edge(std::size_t u, std::size_t v, std::size_t cap) {
    edges_.push_back({v, head_[u], cap});
    head_[u] = edges_.size() - 1;
    edges_.push_back({u, head_[v], 0});
    head_[v] = edges_.size() - 1;
  }
  std::size_t run(std::size_t s, std::size_t t) {
    std::size_t flow = 0;
    while (bfs(s, t)) {
      it_ = head_;
      while (const std::size_t f = dfs(s, t, std::numeric_limits<std::size_t>::max())) flow += f;
    }
    return flow;
  }

 private:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  struct edge {
    std::size_t to, next, cap;
  };
  bool bfs(std::size_t s, std::size_t t) {
    std::fill(level_.begin(), level_.end(), none);
    std::vector<std::size_t> queue{s};
    level_[s] = 0;
    for (std::size_t i = 0; i < queue.size(); ++i)
      for (std::size_t e = head_[queue[i]]; e != none; e = edges_[e].next)
        if (edges_[e].cap > 0 && level_[edges_[e].to] == none) {
          level_[edges_[e].to] = level_[queue[i]] + 1;
          queue.push_back(edges_[e].to);
        }
    return level_[t] != none;
  }
  std::size_t dfs(std::size_t u, std::size_t t, std::size_t f) {  // depth ≤ stages + 4
    if (u == t) return f;
    for (std::size_t& e = it_[u]; e != none; e = edges_[e].next) {
      const std::size_t v = edges_[e].to;
      if (edges_[e].cap == 0 || level_[v] != level_[u] + 1) continue;
      if (const std::size_t got = dfs(v, t, std::min(f, edges_[e].cap)); got > 0) {
        edges_[e].cap -= got;
        edges_[e ^ 1].cap += got;
        return got;
      }
    }
    return 0;
  }
  std::vector<edge> edges_;
  std::vector<std::size_t> head_, level_, it_;
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using small_max_flow = basic_small_max_flow<>;

/// The ring-component condition of `ring_component_lower_bound` at targets t.
template <int = 0>
class basic_ring_component_test {
 public:
  /// Stage s costs at least offset_ms[s] + ring_ms(s) / divisor.
  basic_ring_component_test(const stage_graph& g, const link_costs& L, std::span<const double> offset_ms, double divisor)
      : D_(L.devices()), divisor_(divisor) {
    const std::size_t S = g.stages();
    unit_ = g.uniform_replicas();
    bool all_rings_3 = true;
    for (std::size_t s = 0; s < S; ++s) {
      const double c = offset_ms[s];
      compute_max_ = std::max(compute_max_, c);
      if (g.replicas(s) >= 2 && g.allreduce_bytes(s) > 0) {
        rings_.push_back({c, g.allreduce_bytes(s), g.replicas(s)});
        all_rings_3 = all_rings_3 && g.replicas(s) >= 3;
      } else {
        free_demand_ += unit_ ? 1 : g.replicas(s);
      }
    }
    replicas_ = S > 0 ? g.replicas(0) : 1;
    core_ = all_rings_3;
    for (std::size_t a = 0; a < D_; ++a)
      for (std::size_t b = a + 1; b < D_; ++b)
        links_.push_back({std::min(L.ms_per_byte(a, b), L.ms_per_byte(b, a)), static_cast<std::uint32_t>(a),
                          static_cast<std::uint32_t>(b)});
    std::sort(links_.begin(), links_.end(), [](const link& p, const link& q) { return p.w < q.w; });
  }

  [[nodiscard]] bool has_rings() const noexcept { return !rings_.empty(); }
  /// max_s c(s): no mapping is faster.
  [[nodiscard]] double compute_max() const noexcept { return compute_max_; }
  /// Any t at which every stage's graph holds every link (the condition then holds).
  [[nodiscard]] double all_links() const noexcept {
    double t = compute_max_;
    const double w = links_.empty() ? 0.0 : links_.back().w;
    for (const auto& r : rings_) t = std::max(t, at(r, w));
    return t;
  }

  /// The smallest value above t at which some stage's graph gains a link (+inf: none).
  [[nodiscard]] double next_event(double t) const {
    double next = std::numeric_limits<double>::infinity();
    for (const auto& r : rings_) {
      const std::size_t k = prefix(r, t);
      if (k < links_.size()) next = std::min(next, at(r, links_[k].w));
    }
    return next;
  }

  /// Whether every stage can take a component (with rings of three or more, a block) of its graph
  /// at t with enough devices.
  [[nodiscard]] bool holds(double t) const {
    if (t < compute_max_) return false;
    // Stages in order of their prefixes (nested graphs).
    std::vector<std::size_t> order(rings_.size()), pre(rings_.size());
    for (std::size_t i = 0; i < rings_.size(); ++i) pre[i] = prefix(rings_[i], t);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pre[a] < pre[b]; });

    // Tree nodes: per level (ring stage in `order`), its components (its blocks); then the root.
    std::vector<std::size_t> node_size, node_parent;
    std::vector<std::vector<std::size_t>> level_nodes(order.size());
    constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    std::size_t added = 0;
    if (core_) {
      // blocks: each is represented by one of its edges; its parent is the block of that edge at
      // the next level (the one block holding both its ends)
      std::vector<std::vector<std::uint32_t>> adj(D_), blocks_of(D_);
      std::vector<std::pair<std::uint32_t, std::uint32_t>> prev_rep;  // an edge per node of the previous level
      std::vector<std::size_t> prev_nodes;
      for (std::size_t k = 0; k < order.size(); ++k) {
        for (; added < pre[order[k]]; ++added) {
          const auto& e = links_[added];
          adj[e.a].push_back(e.b);
          adj[e.b].push_back(e.a);
        }
        std::vector<std::size_t> sizes;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> reps;
        blocks(adj, blocks_of, sizes, reps);
        std::vector<std::size_t> id(sizes.size(), none);
        for (std::size_t b = 0; b < sizes.size(); ++b) {
          if (sizes[b] < 3) continue;  // a bridge holds no cycle
          id[b] = node_size.size();
          node_size.push_back(sizes[b]);
          node_parent.push_back(none);
          level_nodes[k].push_back(id[b]);
        }
        for (std::size_t i = 0; i < prev_nodes.size(); ++i) {  // the block of the same edge now
          const auto& bu = blocks_of[prev_rep[i].first];
          const auto& bw = blocks_of[prev_rep[i].second];
          for (const auto b : bu)
            if (std::find(bw.begin(), bw.end(), b) != bw.end()) node_parent[prev_nodes[i]] = id[b];
        }
        prev_nodes.clear(), prev_rep.clear();
        for (std::size_t b = 0; b < sizes.size(); ++b)
          if (id[b] != none) prev_nodes.push_back(id[b]), prev_rep.push_back(reps[b]);
      }
    } else {
      std::vector<std::size_t> label(D_), next_label(D_), prev_label;  // device -> node at the previous level
      disjoint_sets ds(D_);
      for (std::size_t k = 0; k < order.size(); ++k) {
        for (; added < pre[order[k]]; ++added) ds.unite(links_[added].a, links_[added].b);
        for (std::size_t d = 0; d < D_; ++d) label[d] = ds.find(d);
        // label[d]: a representative; number the components of this level.
        std::fill(next_label.begin(), next_label.end(), none);
        for (std::size_t d = 0; d < D_; ++d) {
          std::size_t& id = next_label[label[d]];
          if (id == none) {
            id = node_size.size();
            node_size.push_back(0);
            node_parent.push_back(none);
            level_nodes[k].push_back(id);
          }
          ++node_size[id];
          if (!prev_label.empty()) node_parent[prev_label[d]] = id;
        }
        prev_label.assign(D_, none);
        for (std::size_t d = 0; d < D_; ++d) prev_label[d] = next_label[label[d]];
      }
    }
    const std::size_t root = node_size.size();
    node_size.push_back(D_);
    node_parent.push_back(none);
    for (std::size_t i = 0; i < root; ++i)
      if (node_parent[i] == none) node_parent[i] = root;

    auto capacity = [&](std::size_t n) { return unit_ ? n / replicas_ : n; };
    // Flow network: source, sink, one node per ring stage, the tree nodes.
    const std::size_t src = 0, sink = 1, first_stage = 2, first_node = first_stage + order.size();
    small_max_flow f(first_node + node_size.size());
    std::size_t demand = free_demand_;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto& r = rings_[order[k]];
      const std::size_t need = unit_ ? 1 : r.replicas;
      demand += need;
      f.add_edge(src, first_stage + k, need);
      for (const std::size_t n : level_nodes[k])
        if (node_size[n] >= r.replicas) f.add_edge(first_stage + k, first_node + n, need);
    }
    for (std::size_t n = 0; n < root; ++n) f.add_edge(first_node + n, first_node + node_parent[n], capacity(node_size[n]));
    if (free_demand_ > 0) f.add_edge(src, first_node + root, free_demand_);
    f.add_edge(first_node + root, sink, capacity(D_));
    return f.run(src, sink) == demand;
  }

 private:
  struct ring {
    double compute, bytes;
    std::size_t replicas;
  };
  struct link {
    double w;
    std::uint32_t a, b;
  };

  /// The stage's time bound with its ring's slowest link at w ms per byte (the same floating-point
  /// operations as the model's time without latency, so monotone in w and never above it).
  [[nodiscard]] double at(const ring& r, double w) const noexcept { return r.compute + r.bytes * w / divisor_; }

  /// The links of stage r's graph at t: those with at(r, w) ≤ t (a prefix of `links_`).
  [[nodiscard]] std::size_t prefix(const ring& r, double t) const {
    return static_cast<std::size_t>(
        std::partition_point(links_.begin(), links_.end(), [&](const link& e) { return at(r, e.w) <= t; }) -
        links_.begin());
  }

  /// The biconnected components (blocks) of the graph `adj` (Hopcroft–Tarjan, iterative): per
  /// block its number of devices and one of its edges; blocks_of[d] = the blocks with device d
  /// (two blocks share at most one device, so an edge's two ends have exactly one block in
  /// common: the edge's). O(D + E).
  void blocks(const std::vector<std::vector<std::uint32_t>>& adj, std::vector<std::vector<std::uint32_t>>& blocks_of,
              std::vector<std::size_t>& sizes, std::vector<std::pair<std::uint32_t, std::uint32_t>>& reps) const {
    constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> disc(D_, none), low(D_, 0), parent(D_, none), next(D_, 0);
    for (auto& b : blocks_of) b.clear();
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // the edge stack
    std::vector<std::uint32_t> path;                             // the depth-first path
    std::uint32_t timer = 0;
    auto add = [&](std::uint32_t z, std::uint32_t b, std::size_t& n) {
      if (blocks_of[z].empty() || blocks_of[z].back() != b) blocks_of[z].push_back(b), ++n;
    };
    for (std::uint32_t r = 0; r < D_; ++r) {
      if (disc[r] != none) continue;
      disc[r] = low[r] = timer++;
      path.push_back(r);
      while (!path.empty()) {
        const std::uint32_t v = path.back();
        if (next[v] < adj[v].size()) {
          const std::uint32_t w = adj[v][next[v]++];
          if (disc[w] == none) {  // a tree edge
            edges.push_back({v, w});
            parent[w] = v;
            disc[w] = low[w] = timer++;
            path.push_back(w);
          } else if (w != parent[v] && disc[w] < disc[v]) {  // a back edge
            edges.push_back({v, w});
            low[v] = std::min(low[v], disc[w]);
          }
          continue;
        }
        path.pop_back();
        if (path.empty()) break;
        const std::uint32_t p = path.back();
        low[p] = std::min(low[p], low[v]);
        if (low[v] < disc[p]) continue;
        // p separates v's subtree: its edges down to the tree edge p -> v are one block
        const auto b = static_cast<std::uint32_t>(sizes.size());
        std::size_t n = 0;
        for (;;) {
          const auto [x, y] = edges.back();
          edges.pop_back();
          add(x, b, n), add(y, b, n);
          if (x == p && y == v) break;
        }
        sizes.push_back(n);
        reps.push_back({p, v});
      }
    }
  }

  std::size_t D_;
  double divisor_ = 1;
  bool unit_ = true, core_ = true;
  std::size_t replicas_ = 1, free_demand_ = 0;
  double compute_max_ = 0;
  std::vector<ring> rings_;
  std::vector<link> links_;
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using ring_component_test = basic_ring_component_test<>;

}  // namespace detail

/// The ring-component bound (file comment) of any model whose stage s costs at least
/// offset_ms[s] + ring_ms(s) / divisor (ring_ms as in `allreduce_cost`): a lower bound of the
/// objective of every mapping of `g` onto `L`, and at least `at_least` when that is one too.
/// `combined_cost` is offset c(s) + the least p2p sends of s, divisor MB. Stops at `deadline`
/// with the best bound proved so far. O(D² log D + 60 · S · (D² + flow)).
template <int I = 0>
[[nodiscard]] double ring_component_lower_bound(
    const stage_graph& g, const link_costs& L, std::span<const double> offset_ms, double divisor, double at_least = 0,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  if (offset_ms.size() != g.stages())
    throw std::invalid_argument("ring_component_lower_bound: one offset per stage is needed");
  if (!(divisor >= 1) || !std::isfinite(divisor))
    throw std::invalid_argument("ring_component_lower_bound: divisor must be a finite number >= 1");
  if (g.vertices() > L.devices() || L.devices() < 2) return at_least;
  const detail::basic_ring_component_test<I> test(g, L, offset_ms, divisor);
  double lo = std::max(at_least, test.compute_max());
  if (!test.has_rings() || test.holds(lo)) return lo;
  double hi = test.all_links();
  if (!test.holds(hi)) return lo;  // cannot happen when the vertices fit: every graph is complete
  return detail::bisect_events(test, lo, hi, deadline);  // fails at lo, holds at hi
}

/// The ring-component bound of `allreduce_cost`: offsets c(s), divisor 1.
template <int I = 0>
[[nodiscard]] double ring_component_lower_bound(
    const stage_graph& g, const link_costs& L, double at_least = 0,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  std::vector<double> offset(g.stages());
  for (std::size_t s = 0; s < g.stages(); ++s) offset[s] = g.replica_compute_ms(s);
  return ring_component_lower_bound(g, L, offset, 1.0, at_least, deadline);
}

}  // namespace devplace
