#pragma once
/// \file dfmodel/intra_chip.hpp
/// DFModel's intra-chip pass (seed-dfmodel.md §3.3, §3.4.3, §3.5): the kernels of one chip are
/// fused into C configurations that run one after the other (kernel i in config c; a tensor never
/// flows to an earlier config). Per configuration c, per sample and layer, in ns:
///   compute  roofline: Σ_{i∈c} FLOP′_i · T / (u · GFLOPS)          (compute_util u > 0)
///            systolic: max_{i∈c} cycles_i(lanes_i, stages_i) · T / f  (u = 0; tiles Σ lanes·stages
///            ≤ cores, the allocation that minimises the slowest kernel)
///   memory   Σ_{tensors with one end in c} bytes′ · T · tf / DRAM_BW   (staged through DRAM)
///   network  Σ_{K-sharded i∈c} bytes′ · ρ_AR · T + Σ_{tensors leaving c} bytes′ · ρ_conv · T
///            + Σ_{i∈c, gradient} bytes′ / n_mb · ρ_ARP
///   II_c     max(compute, memory, network)   (sum when overlap is off)
/// with T = num_tile tiles of the streamed dimension, primes = per tile after TP sharding, and tf
/// the weight tiling (1 in dataflow mode; in kernel-by-kernel mode the smallest that fits SRAM).
/// SRAM per config: 2·bytes′ per DRAM-staged tensor + depth·bytes′ per fused tensor + weights/tf.
/// DRAM: all weights · layers-per-stage + the largest config's staged activations · micro-batch.
/// Step (R19): Σ_c II_c · (1 + (PP−1)/(n_mb·max(lps−1,1))) · lps · global_batch / DP + p2p.
/// `optimise_mapping` (dfmodel/fusion.hpp) chooses the fusion and the tile count.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "devplace/dfmodel/sharding.hpp"
#include "devplace/dfmodel/system.hpp"
#include "devplace/dfmodel/workload.hpp"
#include "devplace/status.hpp"

namespace devplace::dfmodel {

enum class execution { dataflow, kernel_by_kernel };

struct mapping_options {
  execution mode = execution::dataflow;
  std::size_t configs = 4;             ///< C in dataflow mode (kernel-by-kernel uses one per kernel)
  bool perfect_overlap = true;         ///< II = max of the three times; false: their sum
  double compute_util = 0.9;           ///< roofline efficiency u; 0 selects the systolic cycle model
  double all_reduce_factor = 2.0;      ///< 2: Table VI code version; 1: current authors' code (A7)
  std::int64_t tile_size = 0;          ///< tokens per tile; 0 = try every divisor of seq
  std::uint64_t max_downsets = 1'000'000;
};

struct config_figures {
  std::vector<std::size_t> kernels;
  double compute_ns = 0, memory_ns = 0, network_ns = 0, ii_ns = 0;
  double sram_bytes = 0, staged_bytes = 0;   ///< SRAM use; DRAM activation bytes of the config
  std::vector<std::size_t> tiles;            ///< systolic model: lanes·stages per kernel
  bool fits = true;                          ///< SRAM and DRAM capacity hold
};

struct mapping_result {
  devplace::status status = status::infeasible;
  std::size_t tp = 1, pp = 1, dp = 1;
  std::int64_t num_tile = 1;
  std::vector<int> config_of;                ///< per kernel
  std::vector<config_figures> configs;
  std::vector<double> per_config_ii_ns;
  double all_ii_ns = 0, pipeline_factor = 1, p2p_ns = 0, final_ns = 0, final_s = 0;
  double layers_per_stage = 1, micro_batches = 1;
  double flop = 0, util = 0, cost = 0, power = 0;
};

namespace detail {

/// Everything that is constant for one (workload, sharding, system, options, num_tile).
struct chip_context {
  const workload* w = nullptr;
  const system* sys = nullptr;
  mapping_options opt;
  std::int64_t num_tile = 1;
  double T = 1, tp = 1, dp = 1, pp = 1, num_mb = 1, lps = 1;
  std::vector<double> flop, weight, ar_bytes, arp_bytes, sib, conv_rho;
  std::vector<std::uint64_t> depth;
  std::vector<std::vector<std::pair<double, double>>> menu;  ///< systolic: (tiles, cycles) Pareto
  double rho_ar = 0, weights_total = 0;
};

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

inline std::vector<std::pair<double, double>> tile_menu(const kernel& k, std::int64_t sM, std::int64_t sK, std::int64_t sN,
                                                        const accelerator& acc) {
  const auto cores = static_cast<std::int64_t>(acc.cores);
  const auto W = static_cast<std::int64_t>(acc.systolic_width), H = static_cast<std::int64_t>(acc.systolic_height);
  std::vector<std::pair<double, double>> all;
  for (std::int64_t lane = 1; lane <= cores; ++lane) {
    const std::int64_t smax = k.kind == kernel_kind::simd ? 1 : cores / lane;
    for (std::int64_t st = 1; st <= smax; ++st) {
      const double cyc = k.kind == kernel_kind::simd
                             ? static_cast<double>(ceil_div(sM, lane * W) * sN)
                             : static_cast<double>(ceil_div(sM, lane * W) * ceil_div(sN, st * H) * sK);
      all.emplace_back(static_cast<double>(lane * st), cyc);
    }
  }
  std::sort(all.begin(), all.end());
  std::vector<std::pair<double, double>> pareto;
  for (const auto& p : all)
    if (pareto.empty() || p.second < pareto.back().second) pareto.push_back(p);
  return pareto;
}

inline chip_context make_context(const workload& w, const sharding& sh, const system& sys, const mapping_options& o,
                                 std::int64_t num_tile) {
  chip_context c;
  c.w = &w;
  c.sys = &sys;
  c.opt = o;
  c.num_tile = num_tile;
  c.T = static_cast<double>(num_tile);
  c.tp = static_cast<double>(degree(sys.net, parallelism::tp));
  c.pp = static_cast<double>(degree(sys.net, parallelism::pp));
  c.dp = static_cast<double>(degree(sys.net, parallelism::dp));
  const auto& L = w.llm;
  c.num_mb = static_cast<double>(L.global_batch) / (static_cast<double>(L.micro_batch) * c.dp);
  c.lps = std::ceil(static_cast<double>(L.layers) / c.pp);
  const auto tpi = static_cast<std::int64_t>(c.tp);
  const std::size_t n = w.kernels.size();
  std::vector<std::int64_t> sMv(n), sNv(n);
  c.rho_ar = rho(sys.net, parallelism::tp, collective::all_reduce, o.all_reduce_factor);
  const double rho_arp = rho(sys.net, parallelism::dp, collective::all_reduce_periodic, o.all_reduce_factor);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = w.kernels[i];
    const loop_dim s = sh.scheme[i];
    auto size = [&](loop_dim d, std::int64_t full) {
      std::int64_t x = full;
      if (s == d || (d == loop_dim::m && s == loop_dim::outer)) x = ceil_div(x, tpi);
      if (k.tiling == d) x = ceil_div(x, num_tile);
      return x;
    };
    const std::int64_t sM = size(loop_dim::m, k.outer * k.m), sK = size(loop_dim::k, k.k), sN = size(loop_dim::n, k.n);
    sMv[i] = sM;
    sNv[i] = sN;
    const double out = static_cast<double>(sM) * static_cast<double>(sN) * L.word_bytes;
    c.flop.push_back(k.kind == kernel_kind::systolic ? 2.0 * static_cast<double>(sM) * static_cast<double>(sK) * static_cast<double>(sN)
                                                     : static_cast<double>(sM) * static_cast<double>(sN));
    // weights are not tiled: shard M and K by the scheme only
    const double wM = static_cast<double>(s == loop_dim::m || s == loop_dim::outer ? ceil_div(k.outer * k.m, tpi) : k.outer * k.m);
    const double wK = static_cast<double>(s == loop_dim::k ? ceil_div(k.k, tpi) : k.k);
    c.weight.push_back(k.has_weight() ? wM * wK * L.word_bytes : 0.0);
    c.weights_total += c.weight.back();
    c.ar_bytes.push_back(s == loop_dim::k ? out : 0.0);
    c.arp_bytes.push_back(k.periodic_all_reduce ? out / c.num_mb * rho_arp : 0.0);
    if (o.compute_util == 0) c.menu.push_back(tile_menu(k, sM, sK, sN, sys.acc));
  }
  const auto lvl = kernel_levels(w);
  for (const auto& t : w.tensors) {
    c.sib.push_back(static_cast<double>(sMv[t.src]) * static_cast<double>(sNv[t.src]) * L.word_bytes);
    c.depth.push_back(lvl[t.dst] - lvl[t.src] + 1);
  }
  for (std::size_t j = 0; j < w.tensors.size(); ++j) {
    const auto cv = sh.edge.empty() ? conversion::none : sh.edge[j];
    c.conv_rho.push_back(cv == conversion::none ? 0.0
                         : cv == conversion::all_gather
                             ? rho(sys.net, parallelism::tp, collective::all_gather, o.all_reduce_factor)
                             : rho(sys.net, parallelism::tp, collective::all_to_all, o.all_reduce_factor));
  }
  return c;
}

/// Systolic model: the fewest cycles of the slowest kernel over tile allocations within `cores`.
inline double systolic_cycles(const chip_context& c, const std::vector<std::size_t>& ks, std::vector<std::size_t>& tiles) {
  std::vector<double> cand;
  for (std::size_t i : ks)
    for (const auto& p : c.menu[i]) cand.push_back(p.second);
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  auto need = [&](double T, std::vector<std::size_t>* out) {
    double sum = 0;
    for (std::size_t i : ks) {
      const auto& m = c.menu[i];
      auto it = std::find_if(m.begin(), m.end(), [&](const auto& p) { return p.second <= T; });
      if (it == m.end()) return std::numeric_limits<double>::infinity();
      sum += it->first;
      if (out) out->push_back(static_cast<std::size_t>(it->first));
    }
    return sum;
  };
  std::size_t lo = 0, hi = cand.size();  // first feasible candidate
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (need(cand[mid], nullptr) <= c.sys->acc.cores) hi = mid; else lo = mid + 1;
  }
  if (lo == cand.size()) return std::numeric_limits<double>::infinity();
  tiles.clear();
  need(cand[lo], &tiles);
  return cand[lo];
}

/// The figures of the configuration holding the kernels of `mask`.
inline config_figures config_cost(const chip_context& c, std::uint64_t mask) {
  const auto& w = *c.w;
  const auto& sys = *c.sys;
  config_figures f;
  for (std::size_t i = 0; i < w.kernels.size(); ++i)
    if (mask >> i & 1u) f.kernels.push_back(i);
  if (f.kernels.empty()) return f;
  double flop = 0, weights = 0, net = 0, staged = 0, fused = 0, staged2 = 0;
  for (std::size_t i : f.kernels) {
    flop += c.flop[i];
    weights += c.weight[i];
    net += c.ar_bytes[i] * c.rho_ar * c.T + c.arp_bytes[i];
  }
  for (std::size_t j = 0; j < w.tensors.size(); ++j) {
    const bool a = mask >> w.tensors[j].src & 1u, b = mask >> w.tensors[j].dst & 1u;
    if (a != b) staged += c.sib[j], staged2 += 2 * c.sib[j];
    if (a && b) fused += c.sib[j] * static_cast<double>(c.depth[j]);
    if (a) net += c.sib[j] * c.conv_rho[j] * c.T;
  }
  double tf = 1;  // weight tiling: only kernel-by-kernel configs may stream their weights in chunks
  const double room = sys.acc.sram_bytes - staged2 - fused;
  if (c.opt.mode == execution::kernel_by_kernel && weights > room && room > 0) tf = std::ceil(weights / room);
  f.sram_bytes = staged2 + fused + weights / tf;
  f.staged_bytes = staged * c.T;
  f.fits = f.sram_bytes <= sys.acc.sram_bytes;
  if (sys.mem.dram_bytes > 0)
    f.fits = f.fits && c.weights_total * c.lps + f.staged_bytes * static_cast<double>(w.llm.micro_batch) <= sys.mem.dram_bytes;
  if (c.opt.compute_util > 0)
    f.compute_ns = flop * c.T / (c.opt.compute_util * sys.acc.gflops());
  else
    f.compute_ns = systolic_cycles(c, f.kernels, f.tiles) * c.T / sys.acc.freq_ghz;
  f.memory_ns = staged * c.T * tf / sys.mem.dram_gbps;
  f.network_ns = net;
  f.ii_ns = c.opt.perfect_overlap ? std::max({f.compute_ns, f.memory_ns, f.network_ns})
                                  : f.compute_ns + f.memory_ns + f.network_ns;
  if (!std::isfinite(f.ii_ns)) f.fits = false;
  return f;
}

/// Step time, utilisation, cost and power of a result whose configs are filled.
inline void finish(const chip_context& c, mapping_result& r) {
  const auto& w = *c.w;
  const auto& L = w.llm;
  r.tp = static_cast<std::size_t>(c.tp);
  r.pp = static_cast<std::size_t>(c.pp);
  r.dp = static_cast<std::size_t>(c.dp);
  r.num_tile = c.num_tile;
  r.per_config_ii_ns.clear();
  r.all_ii_ns = 0;
  for (const auto& f : r.configs) r.per_config_ii_ns.push_back(f.ii_ns), r.all_ii_ns += f.ii_ns;
  r.layers_per_stage = c.lps;
  r.micro_batches = c.num_mb;
  const double ccc = c.lps >= 2 ? c.lps - 1 : 1;
  r.pipeline_factor = 1 + (c.pp - 1) / (c.num_mb * ccc);
  bool training = false;
  for (const auto& k : w.kernels) training = training || k.backward;
  const double inter = (training ? 2.0 : 1.0) * static_cast<double>(L.hidden * L.seq) * L.word_bytes;
  r.p2p_ns = c.pp > 1 ? rho(c.sys->net, parallelism::pp, collective::point_to_point) * inter * static_cast<double>(L.layers) : 0.0;
  r.final_ns = r.all_ii_ns * r.pipeline_factor * c.lps * static_cast<double>(L.global_batch) / c.dp + r.p2p_ns;
  r.final_s = r.final_ns / 1e9;
  r.flop = 0;
  for (const auto& k : w.kernels) r.flop += k.flop();
  r.flop *= static_cast<double>(L.layers) * static_cast<double>(L.global_batch);
  const double chips = static_cast<double>(num_chips(c.sys->net));
  r.util = r.flop / r.final_s / chips / (c.sys->acc.gflops() * 1e9);
  r.cost = system_cost(*c.sys);
  r.power = system_power(*c.sys);
}

inline void check_inputs(const workload& w, const sharding& sh, const system& sys, const mapping_options& o) {
  check_workload(w);
  check_system(sys);
  if (sh.scheme.size() != w.kernels.size()) throw std::invalid_argument("dfmodel: the sharding needs one scheme per kernel");
  if (!sh.edge.empty() && sh.edge.size() != w.tensors.size())
    throw std::invalid_argument("dfmodel: the sharding needs one conversion per tensor");
  if (!(o.compute_util >= 0 && o.compute_util <= 1)) throw std::invalid_argument("dfmodel: compute_util in [0, 1]");
  if (!(o.all_reduce_factor > 0)) throw std::invalid_argument("dfmodel: all_reduce_factor > 0");
  if (o.tile_size < 0) throw std::invalid_argument("dfmodel: tile_size >= 0");
  if (o.mode == execution::dataflow && o.configs == 0) throw std::invalid_argument("dfmodel: configs >= 1");
  if (w.llm.global_batch % (w.llm.micro_batch * static_cast<std::int64_t>(degree(sys.net, parallelism::dp))) != 0)
    throw std::invalid_argument("dfmodel: global_batch must be a multiple of micro_batch · DP");
}

}  // namespace detail

/// The figures of the mapping `config_of` (config per kernel, 0 ≤ c < C) with `num_tile` tiles.
/// `status` is feasible when the configs respect precedence and pins and fit SRAM/DRAM,
/// infeasible otherwise (the figures are still filled). Throws std::invalid_argument on bad input.
[[nodiscard]] inline mapping_result evaluate_mapping(const workload& w, const sharding& sh, const system& sys,
                                                     const mapping_options& o, const std::vector<int>& config_of,
                                                     std::int64_t num_tile) {
  detail::check_inputs(w, sh, sys, o);
  if (config_of.size() != w.kernels.size()) throw std::invalid_argument("dfmodel: one config per kernel");
  if (num_tile < 1) throw std::invalid_argument("dfmodel: num_tile >= 1");
  const auto c = detail::make_context(w, sh, sys, o, num_tile);
  mapping_result r;
  r.config_of = config_of;
  int C = 0;
  for (int x : config_of) {
    if (x < 0) throw std::invalid_argument("dfmodel: configs are >= 0");
    C = std::max(C, x + 1);
  }
  bool ok = true;
  for (const auto& t : w.tensors) ok = ok && config_of[t.src] <= config_of[t.dst];
  for (std::size_t i = 0; i < w.kernels.size(); ++i) ok = ok && (w.kernels[i].config < 0 || w.kernels[i].config == config_of[i]);
  for (int k = 0; k < C; ++k) {
    std::uint64_t mask = 0;
    for (std::size_t i = 0; i < config_of.size(); ++i)
      if (config_of[i] == k) mask |= std::uint64_t{1} << i;
    r.configs.push_back(detail::config_cost(c, mask));
    ok = ok && r.configs.back().fits;
  }
  detail::finish(c, r);
  r.status = ok ? status::feasible : status::infeasible;
  return r;
}

/// `evaluate_mapping` on any `workload_graph` (dfmodel/concepts.hpp): the same on `to_workload(g)`.
template <workload_graph G>
[[nodiscard]] mapping_result evaluate_mapping(const G& g, const sharding& sh, const system& sys, const mapping_options& o,
                                              const std::vector<int>& config_of, std::int64_t num_tile) {
  return evaluate_mapping(to_workload(g), sh, sys, o, config_of, num_tile);
}

}  // namespace devplace::dfmodel
