#pragma once
// Helpers shared by the benchmark programs.
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <map>
#include <utility>
#include <random>
#include <string>

#include "devplace/dag/op_graph.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/partition/topo_dp.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif

namespace devplace::bench {

/// Peak resident memory of the process so far, in bytes (VmHWM), or 0 if unknown.
inline double peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      double kb = 0;
      in >> kb;
      return kb * 1024.0;
    }
    std::getline(in, key);
  }
  return 0;
}

inline op_graph bundled(const std::string& name) {
  return io::read_graph(std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/" + name + ".json");
}

/// The number in environment variable `name`, or `fallback` when it is unset or empty.
inline double env_or(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

/// BERT-Large (examples/data), read once.
inline const op_graph& bert_large() {
  static const op_graph g = bundled("bert_large_mbs4");
  return g;
}

/// The stage graph of BERT-Large cut into S stages by the fixed-order DP, R replicas (cached).
inline const stage_graph& bert_large_stages(std::size_t S, std::size_t R) {
  static std::map<std::pair<std::size_t, std::size_t>, stage_graph> cache;
  auto it = cache.find({S, R});
  if (it == cache.end()) {
    const auto p = topo_dp(bert_large(), {.stages = S, .cost = {.replicas = R}});
    it = cache.emplace(std::pair{S, R}, make_stage_graph(bert_large(), p.stage_of, S, R)).first;
  }
  return it->second;
}

/// `copies` copies of `g` chained end to end: the last vertex of copy k feeds the first vertex of
/// copy k+1 (an edge of the bytes of the first vertex's largest in-edge in `g`, or 1 MB). Dense ids
/// follow the copies; external ids are renumbered.
inline op_graph repeat_chain(const op_graph& g, std::size_t copies) {
  op_graph_builder b;
  const std::size_t n = g.num_vertices();
  const auto& s = g.structure();
  double link = 0;
  for (std::size_t v = 0; v < n; ++v)
    for (auto e : s.in_edge_ids(v)) link = std::max(link, g.edge_bytes_of(e));
  if (link == 0) link = 1e6;
  for (std::size_t c = 0; c < copies; ++c) {
    for (std::size_t v = 0; v < n; ++v) {
      op_attributes a = g.op(v);
      a.id = static_cast<std::int64_t>(c * n + v);
      b.add_op(std::move(a));
    }
    for (std::size_t u = 0; u < n; ++u) {
      const auto succ = s.out_edges(u);
      for (std::size_t k = 0; k < succ.size(); ++k)
        b.add_edge(c * n + u, c * n + succ[k], g.edge_bytes_of(static_cast<csr_dag::edge_type>(s.first_out_edge(u) + k)));
    }
    if (c > 0) b.add_edge(c * n - 1, c * n, link);
  }
  b.set_name(g.name() + "_x" + std::to_string(copies));
  return std::move(b).build();
}

/// A synthetic "ladder" of residual blocks: b blocks, each a fork into two branches of length k
/// that join; a shape whose down-set count grows as (k+1)^2 per block.
inline op_graph residual_ladder(std::size_t blocks, std::size_t k, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  op_graph_builder b;
  auto op = [&] {
    return b.add_op({.id = static_cast<std::int64_t>(b.num_ops()), .fwd_ms = 1.0 + double(rng() % 100) / 50.0,
                     .bwd_ms = 2.0, .fwd_mem_bytes = 1e6});
  };
  std::size_t prev = op();
  for (std::size_t i = 0; i < blocks; ++i) {
    std::size_t a = prev, c = prev;
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t x = op(), y = op();
      b.add_edge(a, x, 4e6);
      b.add_edge(c, y, 4e6);
      a = x;
      c = y;
    }
    const std::size_t join = op();
    b.add_edge(a, join, 4e6);
    b.add_edge(c, join, 4e6);
    prev = join;
  }
  return std::move(b).build();
}

}  // namespace devplace::bench
