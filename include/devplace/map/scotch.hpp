#pragma once
/// \file map/scotch.hpp
/// An optional peer for the device mapper: Scotch's static mapping (SCOTCH_graphMap) of the stage
/// replica graph G' onto the topology (target `devplace::scotch`, defined when CMake finds Scotch;
/// no core header includes this one).
///
///   source graph  the S·R stage replicas; replica r of stages s, s' joined with weight
///                 MB · M(s, s') (activations and gradients of an iteration), ring neighbours
///                 s_q, s_{q+1 mod R} with the ring bytes 2(R−1)/R · P(s); with per-stage
///                 replica counts every overlapping replica pair, weight MB · exchange_bytes
///   target        a decomposition-defined architecture (SCOTCH_archBuild) of the complete graph
///                 of the devices, edge a–b weighted by the mean ms per byte of its two directions
///                 (scaled to integers), so Scotch's distances are the cheapest routes
/// Scotch balances load but may put two replicas on one device; each replica found on a taken
/// device is moved to the free device of the smallest link cost to its placed neighbours
/// (replicas in vertex order). The result is an injective mapping, evaluated like any other.
/// Scotch runs in the caller's thread only (a one-thread context: see the comment in `scotch_map`).
#include <cstdint>
#include <cstdio>
#include <scotch.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

namespace detail {

/// A CSR graph for SCOTCH_graphBuild, from an undirected weighted edge list.
struct scotch_csr {
  std::vector<SCOTCH_Num> vert, edge, weight;
  scotch_csr(std::size_t n, const std::vector<std::pair<std::size_t, std::size_t>>& edges, const std::vector<double>& w) {
    std::vector<std::vector<std::pair<std::size_t, double>>> adj(n);
    for (std::size_t k = 0; k < edges.size(); ++k) {
      adj[edges[k].first].emplace_back(edges[k].second, w[k]);
      adj[edges[k].second].emplace_back(edges[k].first, w[k]);
    }
    edge.reserve(2 * edges.size() + 1);  // never a null array, even without edges
    weight.reserve(2 * edges.size() + 1);
    double top = 0;
    for (double x : w) top = std::max(top, x);
    // integer weights up to `scale`, their sum within Scotch's 32-bit range
    const double scale = std::clamp(1e9 / (2.0 * double(edges.size()) + 1.0), 1.0, 1e6);
    vert.push_back(0);
    for (const auto& row : adj) {
      for (auto [u, x] : row) {
        edge.push_back(static_cast<SCOTCH_Num>(u));
        weight.push_back(static_cast<SCOTCH_Num>(std::max(1.0, std::round(top > 0 ? scale * x / top : 1.0))));
      }
      vert.push_back(static_cast<SCOTCH_Num>(edge.size()));
    }
  }
  void build(SCOTCH_Graph* g) const {
    const auto n = static_cast<SCOTCH_Num>(vert.size() - 1);
    if (SCOTCH_graphBuild(g, 0, n, vert.data(), nullptr, nullptr, nullptr, static_cast<SCOTCH_Num>(edge.size()), edge.data(),
                          weight.data()) != 0 ||
        SCOTCH_graphCheck(g) != 0)
      throw std::runtime_error("scotch_map: SCOTCH_graphBuild failed");
  }
};

/// Moves every replica found on a taken device to the free device of the smallest link cost to
/// its already placed neighbours in G' (p2p partners and ring neighbours).
inline void make_injective(const stage_graph& g, const link_costs& L, std::vector<std::size_t>& dev) {
  const std::size_t D = L.devices();
  std::vector<char> used(D, 0);
  std::vector<std::size_t> moved;
  for (std::size_t v = 0; v < dev.size(); ++v)
    if (used[dev[v]]) moved.push_back(v);
    else used[dev[v]] = 1;
  for (auto v : moved) dev[v] = unplaced;
  for (auto v : moved) {
    const std::size_t s = g.stage_of_vertex(v), r = g.replica_of_vertex(v), R = g.replicas(s);
    std::vector<std::size_t> partners;
    for (auto t : g.neighbours(s)) {
      const auto [lo, hi] = g.peers(s, r, t);
      for (std::size_t j = lo; j < hi; ++j) partners.push_back(g.vertex(t, j));
    }
    if (R > 1) partners.push_back(g.vertex(s, (r + 1) % R)), partners.push_back(g.vertex(s, (r + R - 1) % R));
    std::size_t best = unplaced;
    double best_cost = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < D; ++d) {
      if (used[d]) continue;
      double c = 0;
      for (auto u : partners)
        if (dev[u] != unplaced && dev[u] != d) c += L.ms_per_byte(d, dev[u]) + L.ms_per_byte(dev[u], d);
      if (c < best_cost) best_cost = c, best = d;
    }
    dev[v] = best;
    used[best] = 1;
  }
}

}  // namespace detail

/// Scotch's static mapping of `g` onto the devices of `L` (see the file comment), made injective.
/// Throws std::invalid_argument when S·R > D, std::runtime_error when Scotch fails.
[[nodiscard]] inline device_mapping scotch_map(const stage_graph& g, const link_costs& L, std::size_t micro_batches = 1) {
  const std::size_t V = g.vertices(), D = L.devices(), S = g.stages();
  DEVPLACE_EXPECTS(V <= D, "scotch_map: more stage replicas than devices");
  DEVPLACE_EXPECTS(micro_batches >= 1, "scotch_map: micro_batches must be >= 1");
  std::vector<std::pair<std::size_t, std::size_t>> src_edges, dst_edges;
  std::vector<double> src_w, dst_w;
  for (std::size_t s = 0; s < S; ++s) {
    const std::size_t R = g.replicas(s);
    for (auto t : g.neighbours(s))
      if (s < t && g.message_bytes(s, t) > 0)
        for (std::size_t r = 0; r < R; ++r) {
          const auto [lo, hi] = g.peers(s, r, t);
          for (std::size_t j = lo; j < hi; ++j)
            src_edges.emplace_back(g.vertex(s, r), g.vertex(t, j)),
                src_w.push_back(double(micro_batches) * g.exchange_bytes(s, r, t, j));
        }
    if (R >= 2 && g.allreduce_bytes(s) > 0)
      for (std::size_t q = 0; q < (R == 2 ? 1 : R); ++q)
        src_edges.emplace_back(g.vertex(s, q), g.vertex(s, (q + 1) % R)), src_w.push_back(g.allreduce_bytes(s));
  }
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = a + 1; b < D; ++b)
      dst_edges.emplace_back(a, b), dst_w.push_back(0.5 * (L.ms_per_byte(a, b) + L.ms_per_byte(b, a)));
  const detail::scotch_csr src(V, src_edges, src_w), dst(D, dst_edges, dst_w);
  SCOTCH_Graph sg, tg, sg_bound, tg_bound;
  SCOTCH_Arch arch;
  SCOTCH_Strat arch_strat, map_strat;  // distinct: archBuild fills its own with a bipartitioning strategy
  // A context of one thread (the caller's), bound to both graphs: with the default context
  // libscotch 7.0 spawns worker threads per call, and its teardown can deadlock
  // (pthread_cond_destroy waiting on a worker still waiting on the same condition; seen within
  // ten calls on 256 devices).
  SCOTCH_Context ctx;
  SCOTCH_contextInit(&ctx);
  bool bound_s = false, bound_t = false;
  SCOTCH_graphInit(&sg);
  SCOTCH_graphInit(&tg);
  SCOTCH_archInit(&arch);
  SCOTCH_stratInit(&arch_strat);
  SCOTCH_stratInit(&map_strat);
  std::vector<SCOTCH_Num> part(V, 0);
  int rc = 0;
  try {
    src.build(&sg);
    dst.build(&tg);
    rc = SCOTCH_contextThreadSpawn(&ctx, 1, nullptr);
    if (rc == 0) rc = SCOTCH_contextBindGraph(&ctx, &sg, &sg_bound), bound_s = rc == 0;
    if (rc == 0) rc = SCOTCH_contextBindGraph(&ctx, &tg, &tg_bound), bound_t = rc == 0;
    std::vector<SCOTCH_Num> all(D);
    for (std::size_t d = 0; d < D; ++d) all[d] = static_cast<SCOTCH_Num>(d);
    if (rc == 0) rc = SCOTCH_archBuild(&arch, &tg_bound, static_cast<SCOTCH_Num>(D), all.data(), &arch_strat);
    if (rc == 0) rc = SCOTCH_graphMap(&sg_bound, &arch, &map_strat, part.data());
  } catch (...) {
    rc = 1;
  }
  SCOTCH_stratExit(&map_strat);
  SCOTCH_stratExit(&arch_strat);
  SCOTCH_archExit(&arch);
  if (bound_t) SCOTCH_graphExit(&tg_bound);
  if (bound_s) SCOTCH_graphExit(&sg_bound);
  SCOTCH_graphExit(&tg);
  SCOTCH_graphExit(&sg);
  SCOTCH_contextExit(&ctx);
  if (rc != 0) throw std::runtime_error("scotch_map: Scotch failed to map the stage graph");
  std::vector<std::size_t> dev(V);
  for (std::size_t v = 0; v < V; ++v) dev[v] = static_cast<std::size_t>(part[v]);
  detail::make_injective(g, L, dev);
  return unflatten(g, dev);
}

}  // namespace devplace
