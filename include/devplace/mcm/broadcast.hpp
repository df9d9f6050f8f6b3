#pragma once
/// \file mcm/broadcast.hpp
/// The broadcast-mask transform of MCM partitioning (seed-mcm §1.3.3, §6 A4). A node computed
/// once and consumed far apart (BERT's attention mask feeds every layer) pins, by eq. 4, all that
/// lies between two of its consumers onto two chips. `replicate_cones` clones such a node together
/// with its exclusive ancestor cone (the ancestors all of whose successors stay inside the cone),
/// once per consumer, so that each consumer has its own copy and the graph becomes partitionable.
///
/// A root r qualifies when: fan-out >= `min_fanout`; its cone (r and its exclusive ancestors, at
/// most `max_cone` nodes) carries no parameters (cloning weights would duplicate SRAM use); and the
/// cone's forward time is at most `max_compute_share` of the graph's. Roots are taken in
/// topological order; a node already in a replicated cone is not a root. Inputs of the cone from
/// outside are wired to every copy. The first consumer keeps the original nodes (and their ids);
/// copies get fresh ids above the largest one and the name suffix "#k".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/dag/properties.hpp"

namespace devplace::mcm {

struct replicate_options {
  std::size_t min_fanout = 2;
  std::size_t max_cone = 16;
  double max_compute_share = 0.01;
};

struct replicate_result {
  op_graph graph;
  std::vector<std::size_t> origin;  ///< for each vertex of `graph`, the vertex of the input it copies
  std::size_t roots = 0;            ///< replicated broadcast nodes
  std::size_t added = 0;            ///< vertices added
};

namespace detail {

/// The exclusive ancestor cone of r (r first), or empty when it breaks a limit.
template <int = 0>
std::vector<std::size_t> exclusive_cone(const op_graph& g, std::size_t r, const replicate_options& o,
                                        double total, std::vector<char>& in_cone) {
  std::vector<std::size_t> cone{r};
  in_cone[r] = 1;
  bool ok = true;
  for (std::size_t h = 0; h < cone.size() && ok; ++h)
    for (auto p : g.in_edges(cone[h])) {
      if (in_cone[p]) continue;
      bool exclusive = true;
      for (auto s : g.out_edges(p)) exclusive &= in_cone[s] != 0;
      if (!exclusive) continue;
      in_cone[p] = 1;
      cone.push_back(p);
      if (cone.size() > o.max_cone) { ok = false; break; }
    }
  double t = 0, params = 0;
  for (auto v : cone) t += g.forward_ms(v), params += g.param_bytes(v);
  for (auto v : cone) in_cone[v] = 0;
  if (!ok || params > 0 || t > o.max_compute_share * total) cone.clear();
  return cone;
}

}  // namespace detail

/// Replicates the broadcast cones of `g` (any profiled_dag, copied into an op_graph).
template <profiled_dag G>
[[nodiscard]] replicate_result replicate_cones(const G& input, const replicate_options& o = {}) {
  const op_graph g = to_op_graph(input);
  const std::size_t n = g.num_vertices(), none = static_cast<std::size_t>(-1);
  double total = 0;
  std::int64_t next_id = 0;
  for (std::size_t v = 0; v < n; ++v) total += g.forward_ms(v), next_id = std::max(next_id, g.op(v).id + 1);
  std::vector<char> in_cone(n, 0), taken(n, 0);
  std::vector<std::vector<std::size_t>> cones;
  for (std::size_t r : topological_sort(g).order) {
    if (taken[r] || g.out_edges(r).size() < o.min_fanout) continue;
    auto cone = detail::exclusive_cone(g, r, o, total, in_cone);
    bool fresh = !cone.empty();
    for (auto v : cone) fresh &= !taken[v];
    if (!fresh) continue;
    for (auto v : cone) taken[v] = 1;
    cones.push_back(std::move(cone));
  }
  replicate_result res;
  op_graph_builder b;
  b.set_name(g.name());
  for (std::size_t v = 0; v < n; ++v) b.add_op(g.op(v)), res.origin.push_back(v);
  std::vector<std::int64_t> root_of(n, -1);
  for (std::size_t k = 0; k < cones.size(); ++k) root_of[cones[k].front()] = static_cast<std::int64_t>(k);
  for (std::size_t u = 0; u < n; ++u) {
    const auto succ = g.out_edges(u);
    if (root_of[u] < 0) {
      for (auto v : succ) b.add_edge(u, v, g.edge_bytes(u, v));
      continue;
    }
    const auto& cone = cones[static_cast<std::size_t>(root_of[u])];
    b.add_edge(u, succ[0], g.edge_bytes(u, succ[0]));
    for (std::size_t k = 1; k < succ.size(); ++k) {  // copy k of the cone feeds consumer k
      std::vector<std::size_t> copy(n, none);
      for (auto v : cone) {
        auto a = g.op(v);
        a.id = next_id++;
        a.name.append("#").append(std::to_string(k));  // not "#" + ..: a GCC 12 -Wrestrict false positive
        copy[v] = b.add_op(std::move(a));
        res.origin.push_back(v);
        ++res.added;
      }
      for (auto v : cone)
        for (auto p : g.in_edges(v)) b.add_edge(copy[p] != none ? copy[p] : p, copy[v], g.edge_bytes(p, v));
      b.add_edge(copy[u], succ[k], g.edge_bytes(u, succ[k]));
    }
    ++res.roots;
  }
  // Edges inside a cone (from a cone node that is not the root) are added by the plain branch.
  res.graph = std::move(b).build();
  return res;
}

}  // namespace devplace::mcm
