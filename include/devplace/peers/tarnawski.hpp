#pragma once
/// \file peers/tarnawski.hpp
/// The throughput (max-load) model of Tarnawski et al. 2020 ("Efficient Algorithms for Device
/// Placement of DNN Graph Operators", NeurIPS; msr-fiddle/dnn-partitioning
/// `throughput-dp/dp.cpp`), reproduced on its own inputs: the same `maxLoad`, ideal count and
/// ideal-pair count for the same JSON. docs/peers/tarnawski.md describes the model.
///
///   auto in = io::read_tarnawski_instance("OperatorGraphs/bert_l-3_inference.json");
///   auto r = peers::tarnawski_max_load(in);   // r.max_load == 27.9185676799125, r.ideals == 1428
///
/// Preprocessing: `transform::contract_classes` (colour classes, orphaned backward classes,
/// forward SCC fusion, trivial-node merge). Search space: the down-sets ("ideals") of the forward
/// supernodes; a *block* is I ∖ J for ideals J ⊆ I, with the backward nodes of its classes.
///   load_CPU(X) = Σ cpuLatency
///   load_ACC(X) = (Σ fpgaLatency, or 1e30 if a node is unsupported or Σ size > maxSizePerFPGA)
///                 + Σ cost(u) over original nodes u with an edge u → w crossing X (each u once)
///   dp[c][f][I] = min(dp[c−1][f][I], dp[c][f−1][I],
///                     min_{J ⊊ I} max(dp[c−1][f][J], load_CPU(I∖J)), max(dp[c][f−1][J], load_ACC(I∖J)))
/// and the answer is dp[C][F][all]: every device gets one contiguous block, devices may idle.
///
/// Implementation: the ideals are enumerated once, sorted by size and linked downwards (I → I ∖ {m}
/// for each maximal m, found through a 64-bit key). dp[I] is pulled from every J ⊊ I by a
/// depth-first walk down these links (each J once, by stamps) that grows the block I ∖ J one
/// supernode at a time, keeping its sums and, per tail, whether its own position and how many of
/// its heads are in the block (the boundary cost in O(tails touched) per step). A walk stops below
/// J when the block's CPU load and accelerator compute (both only grow) are above the bound or no
/// better than every state they could improve. The DP runs with a bound U: blocks and candidates
/// above U are left out, and so are the states (c, f) of an ideal whose work does not fit
/// fractionally on c CPUs and f accelerators, or whose rest does not fit on the others; U starts
/// just above a lower bound and is raised until the DP finds a chain within it, the last resort
/// being the optimum over one topological order's prefixes, so the result is always exact. The
/// ideals of one size are independent and run on the executor (`threads`; the same result for
/// any number). The ideal pairs are counted by inclusion–exclusion over the maximal elements,
/// never enumerated. Memory: O(ideals · (C+1)(F+1)) plus the ideals' bitsets and links.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/executor.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#include "devplace/status.hpp"
#include "devplace/transform/class_contraction.hpp"

namespace devplace::peers {

struct tarnawski_options {
  std::optional<std::size_t> cpus;   ///< override the instance's maxCPUs
  std::optional<std::size_t> fpgas;  ///< override the instance's maxFPGAs
  std::uint64_t max_ideals = 5'000'000;  ///< stop (status work_limit) beyond this many ideals
  bool count_pairs = true;  ///< count the ideal pairs (by inclusion–exclusion over the lattice, without enumerating them)
  unsigned threads = 1;     ///< workers over the ideals of one size (executor.hpp; 0: one per hardware thread); same result for any
  transform::class_contraction_options contraction{};
};

/// One device of the split, in pipeline order.
struct tarnawski_device {
  bool cpu = false;                   ///< a CPU (else an accelerator)
  double load = 0;                    ///< its load in the instance's time unit
  std::vector<std::int64_t> nodes;    ///< input node ids, ascending
};

struct tarnawski_result {
  devplace::status status = status::infeasible;  ///< optimal, work_limit (ideal cap)
  double max_load = std::numeric_limits<double>::infinity();  ///< upstream `maxLoad`
  std::size_t supernodes = 0;      ///< forward supernodes after preprocessing
  std::uint64_t ideals = 0;        ///< ideals, ∅ included (upstream "N ideals")
  std::uint64_t ideal_pairs = 0;   ///< pairs J ⊆ I, J = I included (upstream "M ideal pairs"); 0 unless counted
  std::vector<tarnawski_device> devices;  ///< non-empty blocks only
  transform::class_contraction contraction;
  double time_s = 0;
};

namespace detail {

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
inline std::pair<bool, bool> tw_boundary(const tw_tail& t, const bitset& F, const bitset& J, std::size_t q) {
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
inline std::pair<double, double> tw_block_loads(const tw_model& m, const bitset& I, const bitset& J) {
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

}  // namespace detail

namespace detail {

/// Classes of the instance: `colorClass` values densely renumbered, a fresh class per node without one.
inline transform::class_graph tw_class_graph(const io::tarnawski_instance& in) {
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

inline tw_model tw_build_model(const io::tarnawski_instance& in, const transform::class_contraction& c,
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

/// Open-addressing index of the ideals by their 64-bit key; lookups verify the bitset.
struct tw_index {
  std::vector<std::uint64_t> keys;
  std::vector<std::int64_t> ids;
  std::uint64_t mask = 0;
  const std::vector<bitset>* ideals = nullptr;
  bool unique = false;  ///< all keys distinct: a key identifies the ideal (lookups are of ideals)
  void build(const std::vector<bitset>& is, const std::vector<std::uint64_t>& ks) {
    ideals = &is;
    std::size_t cap = 16;
    while (cap < 2 * is.size()) cap *= 2;
    mask = cap - 1;
    keys.assign(cap, 0);
    ids.assign(cap, -1);
    for (std::size_t i = 0; i < is.size(); ++i) {
      std::uint64_t h = ks[i] & mask;
      while (ids[h] >= 0) h = (h + 1) & mask;
      keys[h] = ks[i];
      ids[h] = static_cast<std::int64_t>(i);
    }
    std::vector<std::uint64_t> sorted = ks;
    std::sort(sorted.begin(), sorted.end());
    unique = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  }
  [[nodiscard]] std::size_t find(std::uint64_t key, const bitset& b) const {
    for (std::uint64_t h = key & mask;; h = (h + 1) & mask) {
      if (ids[h] < 0) throw std::logic_error("tarnawski: an ideal is missing from the index");
      if (keys[h] == key && (unique || (*ideals)[static_cast<std::size_t>(ids[h])] == b))
        return static_cast<std::size_t>(ids[h]);
    }
  }
};


/// An upper bound: the same DP restricted to the prefixes of one topological order (positions
/// 0..p−1 are a down-set for every p). O(f² · (C+1)(F+1)) block evaluations.
inline double tw_linear_bound(const tw_model& m, std::size_t C, std::size_t F) {
  const std::size_t L = (C + 1) * (F + 1), n = m.f;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> dp((n + 1) * L, inf);
  for (std::size_t x = 0; x < L; ++x) dp[x] = 0;
  for (std::size_t a = 0; a <= n; ++a) {
    double* da = &dp[a * L];
    for (std::size_t c = 0; c <= C; ++c)
      for (std::size_t f = 0; f <= F; ++f) {
        const std::size_t x = c * (F + 1) + f;
        if (c > 0) da[x] = std::min(da[x], da[x - (F + 1)]);
        if (f > 0) da[x] = std::min(da[x], da[x - 1]);
      }
    bitset base(n), cur(n);
    for (std::size_t p = 0; p < a; ++p) base.set(p);
    cur = base;
    tw_acc acc{&m, &base};
    for (std::size_t b = a + 1; b <= n; ++b) {
      acc.add(b - 1, cur);
      cur.set(b - 1);
      const double cpu = acc.cpu, accl = acc.acc_load();
      double* db = &dp[b * L];
      for (std::size_t c = 0; c <= C; ++c)
        for (std::size_t f = 0; f <= F; ++f) {
          const std::size_t x = c * (F + 1) + f;
          if (c > 0) db[x] = std::min(db[x], std::max(da[x - (F + 1)], cpu));
          if (f > 0) db[x] = std::min(db[x], std::max(da[x - 1], accl));
        }
    }
  }
  return dp[n * L + L - 1];
}

/// A lower bound on the max-load: the smallest T at which the work fits fractionally on C CPUs
/// and F accelerators of capacity T each (communication, which only adds, left out), and the
/// largest single supernode on its faster device.
inline double tw_lower_bound(const tw_model& m, std::size_t C, std::size_t F) {
  if (C + F == 0) return 0;
  std::vector<std::pair<double, double>> work;  // (cpu, accelerator) time per supernode
  double single = 0;
  for (std::size_t p = 0; p < m.f; ++p) {
    const double acc = F > 0 && m.supported[p] && m.size[p] <= m.cap ? m.fpga[p] : 1e300;
    const double cpu = C > 0 ? m.cpu[p] : 1e300;
    work.emplace_back(cpu, acc);
    single = std::max(single, std::min(cpu, acc));
  }
  // CPUs take the supernodes with the smallest cpu/acc ratio first (fractional knapsack).
  std::sort(work.begin(), work.end(), [](const auto& a, const auto& b) { return a.first * b.second < b.first * a.second; });
  auto fits = [&](double T) {
    double cpu_left = static_cast<double>(C) * T, acc_work = 0;
    for (const auto& [c, a] : work) {
      if (c <= cpu_left) { cpu_left -= c; continue; }
      const double part = c > 0 ? cpu_left / c : 1.0;
      cpu_left = 0;
      acc_work += (1 - part) * a;
    }
    return acc_work <= static_cast<double>(F) * T;
  };
  double lo = 0, hi = 1;
  while (!fits(hi) && hi < 1e300) hi *= 2;
  if (!(hi < 1e300)) return single;
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (lo + hi);
    (fits(mid) ? hi : lo) = mid;
  }
  return std::max(single, lo);
}

/// dp[I][c][f] with the choice that reached it.
struct tw_dp {
  std::size_t C = 0, F = 0, L = 1;
  std::vector<double> dp;
  std::vector<std::int32_t> from;  ///< J of the last block, or -1
  std::vector<std::uint8_t> how;   ///< 0 none, 1 CPU block, 2 ACC block, 3 one CPU less, 4 one ACC less
  [[nodiscard]] std::size_t at(std::size_t id, std::size_t c, std::size_t f) const { return id * L + c * (F + 1) + f; }
  [[nodiscard]] double value(std::size_t id) const { return dp[at(id, C, F)]; }
};

/// The ideal lattice downwards, over ideal ids (ideals sorted by size): for ideal i the links
/// `pos[k]`, `id[k]` for k in [off[i], off[i+1]) are its maximal positions m and the id of
/// I ∖ {m}. `layer[s]` is the first id of the ideals with s supernodes (`layer[f+1]` = N).
struct tw_lattice {
  std::vector<std::uint32_t> off, pos, id;
  std::vector<std::size_t> layer;
};

inline tw_lattice tw_build_lattice(const downset_enumerator& e, const tw_model& m, const std::vector<bitset>& ideals,
                                   const std::vector<std::uint64_t>& keys, const tw_index& index) {
  tw_lattice lat;
  lat.off.reserve(ideals.size() + 1);
  lat.layer.assign(m.f + 2, ideals.size());
  bitset below(m.f);
  for (std::size_t i = 0; i < ideals.size(); ++i) {
    lat.off.push_back(static_cast<std::uint32_t>(lat.pos.size()));
    const std::size_t s = ideals[i].count();
    lat.layer[s] = std::min(lat.layer[s], i);
    ideals[i].for_each([&](std::size_t p) {
      for (auto q : e.successors(p))
        if (ideals[i].test(q)) return;  // not maximal
      below = ideals[i];
      below.reset(p);
      lat.pos.push_back(static_cast<std::uint32_t>(p));
      lat.id.push_back(static_cast<std::uint32_t>(index.find(keys[i] ^ m.zobrist[p], below)));
    });
  }
  lat.off.push_back(static_cast<std::uint32_t>(lat.pos.size()));
  for (std::size_t s = m.f + 1; s-- > 0;) lat.layer[s] = std::min(lat.layer[s], lat.layer[s + 1]);
  return lat;
}

/// Upstream's "ideal pairs" (J ⊆ I, J = I included) without enumerating them: the ideals below I
/// are I itself and the union over I's maximal positions m of those below I ∖ {m}; by
/// inclusion–exclusion, below(I) = 1 + Σ_{∅≠S⊆max(I)} (−1)^{|S|+1} below(I ∖ S). Σ_I 2^{|max(I)|}
/// terms (at most the number of pairs).
inline std::uint64_t tw_count_pairs(const tw_lattice& lat) {
  const std::size_t n = lat.off.size() - 1;
  std::vector<std::int64_t> below(n, 1);
  auto link = [&](std::size_t id, std::uint32_t p) {
    for (std::size_t k = lat.off[id];; ++k)
      if (lat.pos[k] == p) return static_cast<std::size_t>(lat.id[k]);
  };
  std::uint64_t total = n ? 1 : 0;  // ∅ ⊆ ∅
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint32_t b = lat.off[i], k = lat.off[i + 1] - b;
    std::int64_t sum = 1;
    // Subsets S as an explicit stack: (id of I ∖ S, next index into the maximal positions, |S| odd).
    struct frame { std::size_t id; std::uint32_t next; bool odd; };
    std::vector<frame> st{{i, 0, false}};
    while (!st.empty()) {
      frame& fr = st.back();
      if (fr.next == k) { st.pop_back(); continue; }
      const std::uint32_t idx = fr.next++;
      const frame child{link(fr.id, lat.pos[b + idx]), idx + 1, !fr.odd};
      sum += child.odd ? below[child.id] : -below[child.id];
      st.push_back(child);
    }
    below[i] = sum;
    total += static_cast<std::uint64_t>(sum);
  }
  return total;
}

/// Which DP states (c, f) of each ideal can be on a chain of max-load ≤ T: the ideal's work fits
/// on c CPUs and f accelerators of capacity T, and the rest's on the other C − c and F − f, both
/// fractionally (each supernode split at will, CPUs taking the supernodes that save the most
/// accelerator time per CPU time; communication, which only adds, left out). A necessary
/// condition, tested with a relative slack of 1e-9: dropping the other states keeps every chain
/// of value ≤ T. Returns N·(C+1)(F+1) flags, or nothing (all allowed) when T is not finite.
inline std::vector<std::uint8_t> tw_allowed_states(const tw_model& m, const std::vector<bitset>& ideals, std::size_t C,
                                                   std::size_t F, double T) {
  if (!(T < 1e29)) return {};
  const std::size_t L = (C + 1) * (F + 1), n = m.f;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> acc(n);
  for (std::size_t p = 0; p < n; ++p) acc[p] = m.supported[p] && m.size[p] <= m.cap ? m.fpga[p] : inf;
  std::vector<std::size_t> order(n);
  for (std::size_t p = 0; p < n; ++p) order[p] = p;
  auto ratio = [&](std::size_t p) { return acc[p] > 0 ? m.cpu[p] / acc[p] : inf; };  // CPU time per accelerator time saved
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ratio(a) < ratio(b); });
  const double cap = T * (1 + 1e-9) + 1e-300;
  // rest[c]: the least accelerator work of a set when c CPUs of capacity T take what they can.
  std::vector<double> cpu_m, acc_m, suffix, rest_in(C + 1), rest_out(C + 1);
  auto rests = [&](const bitset& s, bool inside, std::vector<double>& rest) {
    cpu_m.clear();
    acc_m.clear();
    for (auto p : order)
      if (s.test(p) == inside) { cpu_m.push_back(m.cpu[p]); acc_m.push_back(acc[p]); }
    const std::size_t k = cpu_m.size();
    suffix.assign(k + 1, 0.0);
    for (std::size_t q = k; q-- > 0;) suffix[q] = suffix[q + 1] + acc_m[q];
    rest[0] = suffix[0];
    std::size_t q = 0;
    double used = 0;
    for (std::size_t c = 1; c <= C; ++c) {
      const double room = static_cast<double>(c) * cap;
      while (q < k && used + cpu_m[q] <= room) used += cpu_m[q++];
      if (q == k) { rest[c] = 0; continue; }
      if (acc_m[q] == inf) { rest[c] = inf; continue; }  // a supernode only a CPU can take, split
      const double taken = cpu_m[q] > 0 ? (room - used) / cpu_m[q] : 1.0;
      rest[c] = suffix[q + 1] + (1 - taken) * acc_m[q];
    }
  };
  std::vector<std::uint8_t> ok(ideals.size() * L, 0);
  for (std::size_t i = 0; i < ideals.size(); ++i) {
    rests(ideals[i], true, rest_in);
    rests(ideals[i], false, rest_out);
    for (std::size_t c = 0; c <= C; ++c)
      for (std::size_t f = 0; f <= F; ++f)
        ok[i * L + c * (F + 1) + f] = rest_in[c] <= static_cast<double>(f) * cap &&
                                      rest_out[C - c] <= static_cast<double>(F - f) * cap;
  }
  return ok;
}

/// Per-thread scratch of `tw_solve`: visit stamps per ideal, per-tail counters of the block.
struct tw_scratch {
  std::vector<std::uint32_t> stamp;
  std::vector<std::uint8_t> own;    ///< per tail: its own position is in the block
  std::vector<std::uint32_t> in;    ///< per tail: head positions in the block
  struct frame {
    std::uint32_t j, cursor, added;
    std::uint32_t unsupported;
    double cpu, fpga, size, comm;
  };
  std::vector<frame> stack;
  std::vector<std::uint32_t> cpu_states, acc_states;
};

/// dp[I] from every J ⊊ I (pull): a depth-first walk down the lattice from I (each J once, by
/// stamps) grows the block X = I ∖ J one supernode at a time, keeping its sums and, per tail,
/// whether its own position and how many of its heads are in X (so a supernode costs O(tails it
/// touches)). Only the allowed states of I are computed. The walk stops below J when X's CPU
/// load and accelerator compute (both only grow) are each above `ub` or no better than every
/// state of I they could improve. The result for I depends on I alone, not on the thread.
inline void tw_pull(const tw_model& m, const tw_lattice& lat, const std::uint8_t* allowed, std::size_t C, std::size_t F,
                    double ub, std::size_t i, tw_dp& r, tw_scratch& s) {
  const std::size_t L = r.L;
  double* di = &r.dp[i * L];
  s.cpu_states.clear();
  s.acc_states.clear();
  for (std::size_t c = 0; c <= C; ++c)
    for (std::size_t f = 0; f <= F; ++f) {
      const std::size_t x = c * (F + 1) + f;
      if (allowed && !allowed[x]) continue;
      if (c > 0) s.cpu_states.push_back(static_cast<std::uint32_t>(x));
      if (f > 0) s.acc_states.push_back(static_cast<std::uint32_t>(x));
    }
  constexpr double inf = std::numeric_limits<double>::infinity();
  double cpu_limit = s.cpu_states.empty() ? -inf : inf, acc_limit = s.acc_states.empty() ? -inf : inf;
  auto limits = [&] {  // a candidate must be below the worst state it could improve
    if (!s.cpu_states.empty()) { cpu_limit = 0; for (auto x : s.cpu_states) cpu_limit = std::max(cpu_limit, di[x]); }
    if (!s.acc_states.empty()) { acc_limit = 0; for (auto x : s.acc_states) acc_limit = std::max(acc_limit, di[x]); }
  };
  auto toggle = [&](std::uint32_t p, bool add, double& comm) {
    for (auto ref : m.touch[p]) {
      const std::uint32_t t = ref >> 1;
      const bool b0 = s.own[t] ? s.in[t] < m.heads[t] : s.in[t] > 0;
      if (ref & 1) s.own[t] = add;
      else s.in[t] += add ? 1u : ~0u;
      const bool b1 = s.own[t] ? s.in[t] < m.heads[t] : s.in[t] > 0;
      if (b0 != b1) comm += b1 ? m.tails[t].cost : -m.tails[t].cost;
    }
  };
  if (!s.cpu_states.empty() || !s.acc_states.empty()) {
    const auto tag = static_cast<std::uint32_t>(i + 1);
    s.stamp[i] = tag;
    s.stack.clear();
    s.stack.push_back({static_cast<std::uint32_t>(i), lat.off[i], ~0u, 0, 0, 0, 0, 0});
    while (!s.stack.empty()) {
      auto& top = s.stack.back();
      if (top.cursor == lat.off[top.j + 1]) {
        if (top.added != ~0u) { double dummy = 0; toggle(top.added, false, dummy); }
        s.stack.pop_back();
        continue;
      }
      const std::uint32_t k = top.cursor++;
      const std::uint32_t j = lat.id[k], p = lat.pos[k];
      if (s.stamp[j] == tag) continue;
      s.stamp[j] = tag;
      tw_scratch::frame fr{j, lat.off[j], p, top.unsupported + (m.supported[p] ? 0u : 1u),
                           top.cpu + m.cpu[p], top.fpga + m.fpga[p], top.size + m.size[p], top.comm};
      const double fpga_part = fr.unsupported || fr.size > m.cap ? 1e30 : fr.fpga;
      const bool cpu_ok = fr.cpu <= ub && fr.cpu < cpu_limit, fpga_ok = fpga_part <= ub && fpga_part < acc_limit;
      if (!cpu_ok && !fpga_ok) continue;  // nor anything below J
      toggle(p, true, fr.comm);
      const double acc = fpga_part + fr.comm;
      const double* dj = &r.dp[static_cast<std::size_t>(j) * L];
      bool improved = false;
      if (cpu_ok)
        for (auto x : s.cpu_states) {
          const double v = std::max(dj[x - (F + 1)], fr.cpu);
          if (v < di[x]) { di[x] = v; r.from[i * L + x] = static_cast<std::int32_t>(j); r.how[i * L + x] = 1; improved = true; }
        }
      if (acc <= ub && acc < acc_limit)
        for (auto x : s.acc_states) {
          const double v = std::max(dj[x - 1], acc);
          if (v < di[x]) { di[x] = v; r.from[i * L + x] = static_cast<std::int32_t>(j); r.how[i * L + x] = 2; improved = true; }
        }
      if (improved) limits();
      s.stack.push_back(fr);
    }
  }
  for (std::size_t c = 0; c <= C; ++c)  // fewer devices
    for (std::size_t f = 0; f <= F; ++f) {
      const std::size_t x = c * (F + 1) + f;
      if (allowed && !allowed[x]) continue;
      if (c > 0 && di[x - (F + 1)] < di[x]) { di[x] = di[x - (F + 1)]; r.how[i * L + x] = 3; r.from[i * L + x] = -1; }
      if (f > 0 && di[x - 1] < di[x]) { di[x] = di[x - 1]; r.how[i * L + x] = 4; r.from[i * L + x] = -1; }
    }
}

/// The DP with every block above `bound` left out, the ideals of one size at a time (they only
/// read smaller ones), on `threads` workers. Equal for every number of threads. The bound gets a
/// relative slack of 1e-9: a block's sums depend on the order they are added in (by ulps), and a
/// chain whose value is the bound (the linear bound's own chain) must survive.
inline tw_dp tw_solve(const tw_model& m, const tw_lattice& lat, const std::vector<std::uint8_t>& allowed,
                      std::size_t C, std::size_t F, double bound, unsigned threads) {
  const double ub = bound + 1e-9 * std::abs(bound);
  const std::size_t n = lat.off.size() - 1;
  tw_dp r{C, F, (C + 1) * (F + 1), {}, {}, {}};
  const std::size_t L = r.L;
  r.dp.assign(n * L, std::numeric_limits<double>::infinity());
  r.from.assign(n * L, -1);
  r.how.assign(n * L, 0);
  std::fill(r.dp.begin(), r.dp.begin() + static_cast<std::ptrdiff_t>(L), 0.0);  // id 0 = ∅
  const unsigned workers = resolve_threads(threads);
  std::vector<tw_scratch> scratch(workers);
  for (auto& s : scratch) {
    s.stamp.assign(n, 0);
    s.own.assign(m.tails.size(), 0);
    s.in.assign(m.tails.size(), 0);
  }
  auto one = [&](std::size_t i, tw_scratch& s) {
    tw_pull(m, lat, allowed.empty() ? nullptr : &allowed[i * L], C, F, ub, i, r, s);
  };
  std::optional<executor> pool;  // one pool for all layers (a layer is often a few ideals)
  if (workers > 1) pool.emplace(workers);
  for (std::size_t size = 1; size + 1 < lat.layer.size(); ++size) {
    const std::size_t lo = lat.layer[size], hi = lat.layer[size + 1];
    if (!pool || hi - lo < 2) {
      for (std::size_t i = lo; i < hi; ++i) one(i, scratch[0]);
      continue;
    }
    std::atomic<std::size_t> next{lo};
    for (std::size_t w = 0; w < std::min<std::size_t>(workers, hi - lo); ++w)
      pool->submit([&, w] {
        for (std::size_t i; !pool->stop_requested() && (i = next++) < hi;) one(i, scratch[w]);
      });
    pool->wait();
  }
  return r;
}

}  // namespace detail

/// Runs the max-load DP of Tarnawski et al. 2020 on `in`. Throws `std::invalid_argument` when
/// the instance has no node or its contracted forward graph is cyclic.
[[nodiscard]] inline tarnawski_result tarnawski_max_load(const io::tarnawski_instance& in, const tarnawski_options& opt = {}) {
  using bitset = detail::bitset;
  const auto t0 = std::chrono::steady_clock::now();
  if (in.nodes.empty()) throw std::invalid_argument("tarnawski_max_load: the instance has no node");
  tarnawski_result res;
  res.contraction = transform::contract_classes(detail::tw_class_graph(in), opt.contraction);
  const auto& con = res.contraction;
  res.supernodes = con.num_forward;
  const downset_enumerator e(con.successors);
  const detail::tw_model m = detail::tw_build_model(in, con, e);
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  // The ideals, by size (a linear extension of ⊆), with their keys.
  std::vector<bitset> ideals;
  const status st = e.for_each([&](const bitset& f) {
    if (ideals.size() == opt.max_ideals) return downset_action::stop;
    ideals.push_back(f);
    return downset_action::proceed;
  });
  res.ideals = ideals.size();
  if (st != status::optimal) {
    res.status = status::work_limit;
    res.time_s = elapsed();
    return res;
  }
  std::vector<std::size_t> count(ideals.size());
  for (std::size_t i = 0; i < ideals.size(); ++i) count[i] = ideals[i].count();
  std::vector<std::size_t> order(ideals.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return count[a] < count[b]; });
  {
    std::vector<bitset> sorted;
    sorted.reserve(ideals.size());
    for (auto i : order) sorted.push_back(std::move(ideals[i]));
    ideals = std::move(sorted);
  }
  std::vector<std::uint64_t> keys(ideals.size(), 0);
  for (std::size_t i = 0; i < ideals.size(); ++i) ideals[i].for_each([&](std::size_t p) { keys[i] ^= m.zobrist[p]; });
  detail::tw_index index;
  index.build(ideals, keys);

  const detail::tw_lattice lat = detail::tw_build_lattice(e, m, ideals, keys, index);

  const std::size_t C = opt.cpus.value_or(in.max_cpus), F = opt.fpgas.value_or(in.max_fpgas);
  // Candidates above a bound cannot be on a chain of that value: the bound prunes blocks and
  // DP states. A guess below the optimum is detected (the DP finds nothing within it) and
  // raised; the bound of one topological order's prefixes always holds, so the last round is exact.
  const double ub = detail::tw_linear_bound(m, C, F), lb = detail::tw_lower_bound(m, C, F);
  detail::tw_dp dp;
  for (double guess = lb * 1.08;; guess *= 1.25) {
    const bool last = !(guess < ub) || !(lb > 0);
    const double bound = last ? ub : guess;
    dp = detail::tw_solve(m, lat, detail::tw_allowed_states(m, ideals, C, F, bound), C, F, bound, opt.threads);
    if (last || dp.value(ideals.size() - 1) <= guess) break;
  }
  if (opt.count_pairs) res.ideal_pairs = detail::tw_count_pairs(lat);
  const std::size_t all = ideals.size() - 1;
  res.max_load = dp.value(all);
  res.status = res.max_load < std::numeric_limits<double>::infinity() ? status::optimal : status::infeasible;
  // The split, last block first while walking back.
  std::size_t i = all, c = C, f = F;
  while (res.status == status::optimal && i != 0) {
    const std::size_t x = dp.at(i, c, f);
    const auto how = dp.how[x];
    if (how == 3) { --c; continue; }
    if (how == 4) { --f; continue; }
    const auto j = static_cast<std::size_t>(dp.from[x]);
    const auto [cpu, acc] = detail::tw_block_loads(m, ideals[i], ideals[j]);
    tarnawski_device d{how == 1, how == 1 ? cpu : acc, {}};
    bitset X = ideals[i];
    X.subtract(ideals[j]);
    for (std::size_t v = 0; v < in.nodes.size(); ++v)
      if (X.test(e.position_of(con.supernode_of[v]))) d.nodes.push_back(in.nodes[v].id);
    std::sort(d.nodes.begin(), d.nodes.end());
    res.devices.push_back(std::move(d));
    if (how == 1) --c; else --f;
    i = j;
  }
  std::reverse(res.devices.begin(), res.devices.end());
  res.time_s = elapsed();
  return res;
}

}  // namespace devplace::peers
