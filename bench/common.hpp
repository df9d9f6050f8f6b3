#pragma once
// Helpers shared by the benchmark programs.
#include <fstream>
#include <random>
#include <string>

#include "devplace/dag/op_graph.hpp"
#include "devplace/io/read_graph.hpp"

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
