#pragma once
/// \file peers/detail/tarnawski_model.hpp
/// The model that the max-load DP of Tarnawski et al. 2020 (peers/tarnawski.hpp) runs on: the
/// contracted instance by position of its forward supernodes (CPU and accelerator latencies,
/// sizes, the tails whose outgoing bytes a block pays), the incremental block accumulator and
/// the boundary test, and its construction from an `io::tarnawski_instance`.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/detail/bitset.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#include "devplace/transform/class_contraction.hpp"

namespace devplace::peers::detail {

using bitset = devplace::detail::dynamic_bitset;

using bitset = devplace::detail::dynamic_bitset;

struct tw_tail {
  std::size_t pos;  ///< position of the tail's supernode
  bitset heads;     ///< positions of its heads' supernodes, its own excluded
  double cost;
};

struct tw_model {
  std::size_t f = 0;
  std::vector<double> cpu, fpga, size;  ///< per position (forward supernode + backward sibling)
  std::vector<char> supported;
  std::vector<tw_tail> tails;
  std::vector<std::vector<std::uint32_t>> touched;  ///< per position: tails whose status it can change
  std::vector<std::vector<std::uint32_t>> touch;    ///< per position: 2·tail + (1 if it is the tail's own position)
  std::vector<std::uint32_t> heads;                 ///< per tail: its number of head positions
  std::vector<std::uint64_t> zobrist;
  double cap = 0;
};

/// Whether tail t is on the boundary of X = F ∖ J, before and after position q joins F.
template <int = 0>
std::pair<bool, bool> tw_boundary(const tw_tail& t, const bitset& F, const bitset& J, std::size_t q) {
  const std::size_t words = F.num_words(), qw = q / 64;
  const std::uint64_t qb = std::uint64_t{1} << (q % 64);
  bool out0 = false, in0 = false, out1 = false, in1 = false;
  const auto* h = t.heads.words();
  for (std::size_t k = 0; k < words; ++k) {
    if (!h[k]) continue;
    const std::uint64_t x0 = F.words()[k] & ~J.words()[k], x1 = k == qw ? x0 | qb : x0;
    out0 |= (h[k] & ~x0) != 0;
    in0 |= (h[k] & x0) != 0;
    out1 |= (h[k] & ~x1) != 0;
    in1 |= (h[k] & x1) != 0;
  }
  const bool own0 = F.test(t.pos) && !J.test(t.pos), own1 = own0 || t.pos == q;
  return {own0 ? out0 : in0, own1 ? out1 : in1};
}

struct tw_acc {
  const tw_model* m = nullptr;
  const bitset* base = nullptr;
  double cpu = 0, fpga = 0, size = 0, comm = 0;
  bool unsupported = false;
  std::uint64_t key = 0;
  template <int = 0>
  void add(std::size_t q, const bitset& before) {
    cpu += m->cpu[q];
    fpga += m->fpga[q];
    size += m->size[q];
    unsupported = unsupported || !m->supported[q];
    key ^= m->zobrist[q];
    for (auto ti : m->touched[q]) {
      const auto& t = m->tails[ti];
      const auto [b0, b1] = tw_boundary(t, before, *base, q);
      if (b0 != b1) comm += b1 ? t.cost : -t.cost;
    }
  }
  [[nodiscard]] double acc_load() const { return (unsupported || size > m->cap ? 1e30 : fpga) + comm; }
};

/// The loads of X = I ∖ J summed directly (used to report the split).
template <int = 0>
std::pair<double, double> tw_block_loads(const tw_model& m, const bitset& I, const bitset& J) {
  tw_acc a{&m, &J};
  bitset F = J;
  bitset X = I;
  X.subtract(J);
  X.for_each([&](std::size_t q) {
    a.add(q, F);
    F.set(q);
  });
  return {a.cpu, a.acc_load()};
}

inline std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}


/// Classes of the instance: `colorClass` values densely renumbered, a fresh class per node without one.
template <int = 0>
transform::class_graph tw_class_graph(const io::tarnawski_instance& in) {
  transform::class_graph g;
  std::unordered_map<std::int64_t, std::size_t> dense;
  std::size_t next = 0;
  for (const auto& n : in.nodes) {
    if (n.color_class) {
      const auto [it, fresh] = dense.emplace(*n.color_class, next);
      if (fresh) ++next;
      g.cls.push_back(it->second);
    } else {
      g.cls.push_back(next++);
    }
    g.backward.push_back(n.backward);
    g.latency.push_back({n.cpu_latency, n.fpga_latency});
  }
  for (const auto& e : in.edges) g.edges.emplace_back(e.from, e.to);
  return g;
}

template <int = 0>
tw_model tw_build_model(const io::tarnawski_instance& in, const transform::class_contraction& c,
                               const downset_enumerator& e) {
  tw_model m;
  m.f = c.num_forward;
  m.cap = in.max_size_per_fpga;
  m.cpu.assign(m.f, 0.0);
  m.fpga.assign(m.f, 0.0);
  m.size.assign(m.f, 0.0);
  m.supported.assign(m.f, 1);
  std::vector<std::size_t> pos(in.nodes.size());
  for (std::size_t v = 0; v < in.nodes.size(); ++v) {
    const std::size_t p = pos[v] = e.position_of(c.supernode_of[v]);
    m.cpu[p] += in.nodes[v].cpu_latency;
    m.fpga[p] += in.nodes[v].fpga_latency;
    m.size[p] += in.nodes[v].size;
    if (!in.nodes[v].supported_on_fpga) m.supported[p] = 0;
  }
  std::vector<long> tail_of(in.nodes.size(), -1);
  for (const auto& ed : in.edges) {
    const std::size_t pu = pos[ed.from], pw = pos[ed.to];
    if (pu == pw || in.output_cost[ed.from] == 0) continue;
    if (tail_of[ed.from] < 0) {
      tail_of[ed.from] = static_cast<long>(m.tails.size());
      m.tails.push_back({pu, bitset(m.f), in.output_cost[ed.from]});
    }
    m.tails[static_cast<std::size_t>(tail_of[ed.from])].heads.set(pw);
  }
  m.touched.assign(m.f, {});
  m.touch.assign(m.f, {});
  for (std::size_t t = 0; t < m.tails.size(); ++t) {
    const auto t32 = static_cast<std::uint32_t>(t);
    m.touched[m.tails[t].pos].push_back(t32);
    m.touch[m.tails[t].pos].push_back(2 * t32 + 1);
    m.tails[t].heads.for_each([&](std::size_t p) {
      m.touched[p].push_back(t32);
      m.touch[p].push_back(2 * t32);
    });
    m.heads.push_back(static_cast<std::uint32_t>(m.tails[t].heads.count()));
  }
  std::uint64_t seed = 0x5eedf00dull;
  for (std::size_t p = 0; p < m.f; ++p) m.zobrist.push_back(splitmix64(seed));
  return m;
}

}  // namespace devplace::peers::detail
