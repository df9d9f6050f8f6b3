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
///
/// The pieces are in peers/detail/: the model (tarnawski_model.hpp), the ideal lattice
/// (tarnawski_lattice.hpp) and the DP with its bounds (tarnawski_dp.hpp).
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
#include "devplace/dag/edges.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#include "devplace/peers/detail/tarnawski_dp.hpp"
#include "devplace/peers/detail/tarnawski_lattice.hpp"
#include "devplace/peers/detail/tarnawski_model.hpp"
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

/// Runs the max-load DP of Tarnawski et al. 2020 on `in`. Throws `std::invalid_argument` when
/// the instance has no node or its contracted forward graph is cyclic.
template <int = 0>
[[nodiscard]] tarnawski_result tarnawski_max_load(const io::tarnawski_instance& in, const tarnawski_options& opt = {}) {
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

/// The devices and units with which `tarnawski_max_load` reads a profiled graph.
struct tarnawski_system {
  std::size_t fpgas = 1;   ///< accelerators (the model's FPGAs)
  std::size_t cpus = 0;
  double max_size_per_fpga = std::numeric_limits<double>::infinity();  ///< parameter bytes per accelerator
  double bandwidth_gbps = 10;  ///< an operator's output cost is its largest outgoing edge_bytes at this bandwidth
  double cpu_slowdown = 1;     ///< cpuLatency = cpu_slowdown · compute_ms
};

/// Tarnawski's instance of any `profiled_dag`: node v has fpgaLatency = compute_ms(g, v) and
/// cpuLatency = cpu_slowdown · compute_ms(g, v) (ms), size = param_bytes(g, v), runs anywhere, is a
/// forward node of a class of its own; its output cost is max_w edge_bytes(g, v, w) /
/// (bandwidth_gbps · 10⁶) ms (the model charges one cost per node, whatever its out-edges).
/// Throws std::invalid_argument on a bandwidth ≤ 0, a slowdown < 0 or a size limit ≤ 0.
template <profiled_dag G>
[[nodiscard]] io::tarnawski_instance make_tarnawski_instance(const G& g, const tarnawski_system& s) {
  if (!(s.bandwidth_gbps > 0) || !std::isfinite(s.bandwidth_gbps))
    throw std::invalid_argument("make_tarnawski_instance: bandwidth_gbps must be finite and > 0");
  if (!(s.cpu_slowdown >= 0) || !std::isfinite(s.cpu_slowdown))
    throw std::invalid_argument("make_tarnawski_instance: cpu_slowdown must be finite and >= 0");
  if (!(s.max_size_per_fpga > 0)) throw std::invalid_argument("make_tarnawski_instance: max_size_per_fpga must be > 0");
  io::tarnawski_instance in;
  in.max_fpgas = s.fpgas;
  in.max_cpus = s.cpus;
  in.max_size_per_fpga = s.max_size_per_fpga;
  const std::size_t n = devplace::num_vertices(g);
  in.output_cost.assign(n, 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    io::tarnawski_node t;
    t.id = static_cast<std::int64_t>(v);
    t.fpga_latency = devplace::compute_ms(g, v);
    t.cpu_latency = s.cpu_slowdown * t.fpga_latency;
    t.size = devplace::param_bytes(g, v);
    in.nodes.push_back(std::move(t));
  }
  for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) {
    in.edges.push_back({u, v});
    in.output_cost[u] = std::max(in.output_cost[u], bytes / (s.bandwidth_gbps * 1e6));
  });
  return in;
}

/// The max-load DP on any `profiled_dag` (a user type, `op_graph`, a view), read as
/// `make_tarnawski_instance` says. Device ids in the result are vertex ids.
template <profiled_dag G>
[[nodiscard]] tarnawski_result tarnawski_max_load(const G& g, const tarnawski_system& s, const tarnawski_options& opt = {}) {
  return tarnawski_max_load(make_tarnawski_instance(g, s), opt);
}

}  // namespace devplace::peers
