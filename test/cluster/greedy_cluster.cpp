#include "devplace/cluster/greedy_cluster.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

using namespace devplace;

namespace {

// Random DAG with integer attributes (so every sum is exact in floating point).
op_graph random_graph(std::mt19937_64& rng, std::size_t n, int edge_pct) {
  op_graph_builder b;
  for (std::size_t v = 0; v < n; ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = double(rng() % 5), .bwd_ms = double(rng() % 7),
              .fwd_mem_bytes = double(rng() % 50), .bwd_mem_bytes = double(rng() % 50)});
  for (std::size_t u = 0; u < n; ++u)
    for (std::size_t v = u + 1; v < n; ++v)
      if (static_cast<int>(rng() % 100) < edge_pct) b.add_edge(u, v, double(1 + rng() % 9) * 1e6);
  return std::move(b).build();
}

// Oracle: the same greedy rule implemented naively. Clusters are sets of vertices named by their
// smallest member; every step rescans every pair of adjacent clusters, tests convexity by an
// explicit search for another path in the contracted graph, and takes the lexicographically
// smallest (cost, smaller name, larger name).
std::vector<std::size_t> naive_cluster(const op_graph& g, const greedy_cluster_options& opt) {
  const std::size_t n = g.num_vertices();
  std::vector<std::size_t> rep(n);
  for (std::size_t v = 0; v < n; ++v) rep[v] = v;
  const double to_ms = 1.0 / (opt.cost.bandwidth_gbps * 1e6);
  std::size_t k = n;
  while (k > opt.max_clusters) {
    std::map<std::pair<std::size_t, std::size_t>, double> bytes;  // directed cluster edges
    std::map<std::size_t, double> cu, mem;
    std::map<std::size_t, double> boundary;
    for (std::size_t v = 0; v < n; ++v) {
      cu[rep[v]] += g.compute_ms(v);
      mem[rep[v]] += g.memory_bytes(v);
    }
    for (std::size_t u = 0; u < n; ++u)
      for (auto w : g.out_edges(u))
        if (rep[u] != rep[w]) {
          bytes[{rep[u], rep[w]}] += g.edge_bytes(u, w);
          boundary[rep[u]] += g.edge_bytes(u, w);
          boundary[rep[w]] += g.edge_bytes(u, w);
        }
    auto between = [&](std::size_t a, std::size_t b) {
      double x = 0;
      if (auto it = bytes.find({a, b}); it != bytes.end()) x += it->second;
      if (auto it = bytes.find({b, a}); it != bytes.end()) x += it->second;
      return x;
    };
    auto other_path = [&](std::size_t a, std::size_t b) {  // path a ~> b of length >= 2
      std::set<std::size_t> seen;
      std::vector<std::size_t> stack;
      for (auto& [e, w] : bytes) if (e.first == a && e.second != b) stack.push_back(e.second);
      while (!stack.empty()) {
        auto x = stack.back();
        stack.pop_back();
        if (x == b) return true;
        if (!seen.insert(x).second) continue;
        for (auto& [e, w] : bytes) if (e.first == x) stack.push_back(e.second);
      }
      return false;
    };
    bool found = false;
    double best_cost = 0;
    std::size_t best_lo = 0, best_hi = 0;
    for (auto& [e, w] : bytes) {
      const auto [a, b] = e;
      const double cost = cu[a] + cu[b] - opt.alpha * between(a, b) * to_ms;
      const double memory = (mem[a] + mem[b] + boundary[a] + boundary[b] - 2.0 * between(a, b)) /
                            double(std::max<std::size_t>(opt.cost.micro_batches, 1));
      if (memory > opt.cost.device_memory_bytes || other_path(a, b)) continue;
      const std::size_t lo = std::min(a, b), hi = std::max(a, b);
      if (!found || std::tie(cost, lo, hi) < std::tie(best_cost, best_lo, best_hi)) {
        found = true;
        best_cost = cost;
        best_lo = lo;
        best_hi = hi;
      }
    }
    if (!found) break;
    for (auto& r : rep) if (r == best_hi) r = best_lo;
    --k;
  }
  return rep;
}

// Two clusterings are the same partition of the vertices.
bool same_partition(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
  std::map<std::size_t, std::size_t> ab, ba;
  for (std::size_t v = 0; v < a.size(); ++v) {
    if (ab.emplace(a[v], b[v]).first->second != b[v]) return false;
    if (ba.emplace(b[v], a[v]).first->second != a[v]) return false;
  }
  return true;
}

// The quotient is acyclic and cluster ids follow its edges (a topological numbering).
bool numbered_topologically(const op_graph& g, const std::vector<std::size_t>& c) {
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (auto w : g.out_edges(u))
      if (c[u] > c[w]) return false;
  return true;
}

}  // namespace

TEST_CASE("greedy_cluster equals a naive rescanning implementation at every K") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = 4 + rng() % 13;
    const op_graph g = random_graph(rng, n, 15 + static_cast<int>(rng() % 40));
    for (double alpha : {0.01, 1.0, 100.0}) {
      const double mem_limit = (trial % 3 == 0) ? 120.0 : std::numeric_limits<double>::infinity();
      for (std::size_t K = n; K >= 1; --K) {
        const greedy_cluster_options opt{.max_clusters = K, .alpha = alpha,
                                         .cost = {.micro_batches = 2, .device_memory_bytes = mem_limit, .bandwidth_gbps = 1.0}};
        const auto got = greedy_cluster(g, opt);
        const auto want = naive_cluster(g, opt);
        CAPTURE(trial);
        CAPTURE(K);
        CAPTURE(alpha);
        REQUIRE(got.cluster_of.size() == n);
        CHECK(same_partition(got.cluster_of, want));
        CHECK(numbered_topologically(g, got.cluster_of));
        std::set<std::size_t> ids(got.cluster_of.begin(), got.cluster_of.end());
        CHECK(ids.size() == got.num_clusters);
        CHECK(*ids.rbegin() == got.num_clusters - 1);
        const bool reached = got.num_clusters <= K;
        CHECK(reached == (got.status == status::feasible));
        CHECK(got.merges == n - got.num_clusters);
      }
    }
  }
}

TEST_CASE("greedy_cluster merges the light pair joined by the heavy edge first") {
  // a -> b (heavy), b -> c (light), all compute 1: cost(a,b) = 2 - 5, cost(b,c) = 2 - 1.
  op_graph_builder bld;
  for (int i = 0; i < 3; ++i) bld.add_op({.id = i, .fwd_ms = 1});
  bld.add_edge(0, 1, 5e6);
  bld.add_edge(1, 2, 1e6);
  const op_graph g = std::move(bld).build();
  const auto c = greedy_cluster(g, {.max_clusters = 2, .alpha = 1.0, .cost = {.bandwidth_gbps = 1.0}});
  CHECK(c.num_clusters == 2);
  CHECK(c.cluster_of == std::vector<std::size_t>{0, 0, 1});
  // With memory too small for any union, nothing merges and the status says K was not reached.
  const auto none = greedy_cluster(g, {.max_clusters = 1, .cost = {.device_memory_bytes = 1.0}});
  CHECK(none.num_clusters == 3);
  CHECK(none.status == status::infeasible);
}

TEST_CASE("greedy_cluster never contracts an edge that has a parallel path") {
  // 0 -> 1 -> 2 and 0 -> 2 (heaviest). Merging {0,2} first would create a cycle with 1.
  op_graph_builder bld;
  for (int i = 0; i < 3; ++i) bld.add_op({.id = i, .fwd_ms = 1});
  bld.add_edge(0, 1, 1e6);
  bld.add_edge(1, 2, 1e6);
  bld.add_edge(0, 2, 100e6);
  const op_graph g = std::move(bld).build();
  const auto c = greedy_cluster(g, {.max_clusters = 2, .alpha = 1.0, .cost = {.bandwidth_gbps = 1.0}});
  CHECK(c.num_clusters == 2);
  const bool separated_or_all = c.cluster_of[0] != c.cluster_of[2] || c.cluster_of[1] == c.cluster_of[0];
  CHECK(separated_or_all);
  CHECK(numbered_topologically(g, c.cluster_of));
}
