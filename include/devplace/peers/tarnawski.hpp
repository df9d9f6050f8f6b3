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
/// Implementation: the ideals are sorted by size; the DP pushes from each J to every I ⊋ J,
/// grown one supernode at a time by `downset_growth` with an accumulator that keeps the block's
/// sums and boundary cost up to date (O(deg · n/64) per pair); I's index is found through an
/// incremental 64-bit key. Blocks whose CPU load and accelerator compute both exceed a bound are
/// pruned with everything grown from them (both only grow); the bound starts just above a lower
/// bound and is raised until the DP finds a chain within it, the last resort being the optimum
/// over one topological order's prefixes, so the result is always exact. Memory:
/// O(ideals · (C+1)(F+1)) plus the ideals' bitsets; pairs are never stored.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "devplace/algorithm/downset_growth.hpp"
#include "devplace/algorithm/downsets.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#include "devplace/status.hpp"
#include "devplace/transform/class_contraction.hpp"

namespace devplace::peers {

struct tarnawski_options {
  std::optional<std::size_t> cpus;   ///< override the instance's maxCPUs
  std::optional<std::size_t> fpgas;  ///< override the instance's maxFPGAs
  std::uint64_t max_ideals = 5'000'000;  ///< stop (status work_limit) beyond this many ideals
  bool count_pairs = true;  ///< count the ideal pairs (one extra enumeration of all of them, no costs)
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
  for (std::size_t t = 0; t < m.tails.size(); ++t) {
    m.touched[m.tails[t].pos].push_back(static_cast<std::uint32_t>(t));
    m.tails[t].heads.for_each([&](std::size_t p) { m.touched[p].push_back(static_cast<std::uint32_t>(t)); });
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

/// Pushes from every ideal J (by size) to every I ⊋ J; candidates above `ub` are skipped and
/// blocks whose CPU load and accelerator compute both exceed `ub` are pruned with all they grow into.
inline tw_dp tw_solve(const tw_model& m, const downset_growth& grow, const std::vector<bitset>& ideals,
                      const std::vector<std::uint64_t>& keys, const tw_index& index, std::size_t C, std::size_t F,
                      double ub) {
  tw_dp r{C, F, (C + 1) * (F + 1), {}, {}, {}};
  const std::size_t L = r.L;
  r.dp.assign(ideals.size() * L, std::numeric_limits<double>::infinity());
  r.from.assign(ideals.size() * L, -1);
  r.how.assign(ideals.size() * L, 0);
  std::fill(r.dp.begin(), r.dp.begin() + static_cast<std::ptrdiff_t>(L), 0.0);  // ideals[0] = ∅
  for (std::size_t j = 0; j < ideals.size(); ++j) {
    for (std::size_t c = 0; c <= C; ++c)  // finalise J: fewer devices
      for (std::size_t f = 0; f <= F; ++f) {
        const std::size_t x = r.at(j, c, f);
        if (c > 0 && r.dp[r.at(j, c - 1, f)] < r.dp[x]) { r.dp[x] = r.dp[r.at(j, c - 1, f)]; r.how[x] = 3; r.from[x] = -1; }
        if (f > 0 && r.dp[r.at(j, c, f - 1)] < r.dp[x]) { r.dp[x] = r.dp[r.at(j, c, f - 1)]; r.how[x] = 4; r.from[x] = -1; }
      }
    if (j + 1 == ideals.size()) break;
    const double* dj = &r.dp[r.at(j, 0, 0)];
    if (*std::min_element(dj, dj + L) > ub) continue;  // nothing built on J stays within the bound
    tw_acc a0{&m, &ideals[j]};
    a0.key = keys[j];
    (void)grow.for_each_superset(ideals[j], a0, [&](const bitset& I, const tw_acc& a) {
      const double fpga_part = a.unsupported || a.size > m.cap ? 1e30 : a.fpga;  // both only grow
      if ((C == 0 || a.cpu > ub) && (F == 0 || fpga_part > ub)) return downset_action::prune;
      const double cpu = a.cpu, acc = a.acc_load();
      if (cpu > ub && acc > ub) return downset_action::proceed;  // no candidate within the bound
      const std::size_t i = index.find(a.key, I);
      double* di = &r.dp[r.at(i, 0, 0)];
      for (std::size_t c = 0; c <= C; ++c)
        for (std::size_t f = 0; f <= F; ++f) {
          const std::size_t x = c * (F + 1) + f;
          if (c > 0) {
            const double v = std::max(dj[x - (F + 1)], cpu);
            if (v < di[x]) { di[x] = v; r.from[i * L + x] = static_cast<std::int32_t>(j); r.how[i * L + x] = 1; }
          }
          if (f > 0) {
            const double v = std::max(dj[x - 1], acc);
            if (v < di[x]) { di[x] = v; r.from[i * L + x] = static_cast<std::int32_t>(j); r.how[i * L + x] = 2; }
          }
        }
      return downset_action::proceed;
    });
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

  const std::size_t C = opt.cpus.value_or(in.max_cpus), F = opt.fpgas.value_or(in.max_fpgas);
  const downset_growth grow(e);
  // Candidates above a bound cannot be on a chain of that value: the bound prunes blocks. A
  // guess below the optimum is detected (the DP finds nothing within it) and raised; the bound
  // of one topological order's prefixes always holds, so the last round is exact.
  const double ub = detail::tw_linear_bound(m, C, F), lb = detail::tw_lower_bound(m, C, F);
  detail::tw_dp dp;
  for (double guess = lb * 1.08;; guess *= 1.25) {
    const bool last = !(guess < ub) || !(lb > 0);
    dp = detail::tw_solve(m, grow, ideals, keys, index, C, F, last ? ub : guess);
    if (last || dp.value(ideals.size() - 1) <= guess) break;
  }
  std::uint64_t pairs = 0;
  if (opt.count_pairs) {  // upstream's "ideal pairs": J ⊆ I, J = I included
    for (std::size_t j = 0; j < ideals.size(); ++j)
      (void)e.for_each_superset(ideals[j], no_accumulator{}, [&](const bitset&, const no_accumulator&) {
        ++pairs;
        return downset_action::proceed;
      }, true);
    res.ideal_pairs = pairs;
  }
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
