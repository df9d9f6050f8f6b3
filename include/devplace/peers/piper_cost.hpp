#pragma once
/// \file peers/piper_cost.hpp
/// Piper's cost model (Tarnawski, Narayanan, Phanishayee, NeurIPS 2021; msr-fiddle/piper
/// `algo.cpp`; shared/spec/peers-models.md §2.2): the time per sample of one stage with t-way
/// tensor and d-way data parallelism, its greedy two-option choice (recomputation or not) under
/// the per-device memory cap, the evaluation of a whole split (upstream `getTPSForResult`) and
/// the "equi" baseline (`runPipeDream2BWPlannerNonTransformer`). The DP over successor-closed
/// sets is in peers/piper.hpp; docs/peers/piper.md describes both.
///
/// For node v of stage X with option o (units as in the file: the drivers' ResNet/GNMT mix ms of
/// compute with seconds of communication; reproduced as is):
///   edgeBytes_o(v, X) = Σ_{(u,v), u∉X} 2(c(u,v) + sfw_o[u]) + Σ_{(v,w), w∉X} 2(c(v,w) + sbw_o[w])
///   τ_o(v, X, d)      = (edgeBytes_o / d + 4(d−1)·w_o / d / N) / BW + p_o / d
///   stage TPS         = Σ_{v∈X} τ,   memory = Σ_{v∈X} (a_o·y + b_o) ≤ M,   y = ⌈suffix Σd / d⌉
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/io/piper.hpp"

namespace devplace::peers {

/// Upstream's infinity (`INFTY`): a stage or split that does not fit has this TPS.
inline constexpr double piper_infinity = 1e30;

/// The parameters the upstream drivers set: K devices, M bytes per device, BW bytes/s, and the
/// instance's N = `mbsInBatch`. `runResnet()`/`runGNMT()` use M = GiB·2³⁰, BW = 25·2³⁰.
struct piper_params {
  std::size_t devices = 0;     ///< K
  double memory_bytes = 0;     ///< M
  double bandwidth = 0;        ///< BW, bytes/s
  std::size_t microbatches = 0;  ///< N (d must divide it)
};

/// What a caller may override; unset fields keep the instance's header values.
struct piper_overrides {
  std::optional<std::size_t> devices;
  std::optional<double> memory_bytes, bandwidth;
};

template <int = 0>
[[nodiscard]] piper_params piper_resolve(const io::piper_instance& in, const piper_overrides& o) {
  piper_params p{o.devices.value_or(in.max_devices), o.memory_bytes.value_or(in.max_memory_per_device),
                 o.bandwidth.value_or(in.bandwidth), in.mbs_in_batch};
  DEVPLACE_EXPECTS(p.devices >= 1 && p.devices <= 10000, "piper: the number of devices must be in [1, 10000]");
  DEVPLACE_EXPECTS(p.memory_bytes > 1e-9, "piper: the memory per device must be > 1e-9 bytes");
  DEVPLACE_EXPECTS(p.bandwidth > 1e-9, "piper: the bandwidth must be > 1e-9 bytes/s");
  DEVPLACE_EXPECTS(p.microbatches >= 1, "piper: mbsInBatch must be >= 1");
  return p;
}

/// One stage of a split: nodes (renumbered ids), degrees, and the option index of each node in
/// `tmpcs.at(t)` (parallel to `nodes`).
struct piper_stage {
  std::vector<std::size_t> nodes;
  std::size_t t = 1, d = 1;
  std::vector<std::size_t> option;
};

/// One node's options for a stage at a fixed (X, t, d): at most two (the reader enforces it).
struct piper_item {
  std::uint8_t count = 0;
  double tau[2] = {0, 0};  ///< τ per option
  double a[2] = {0, 0}, b[2] = {0, 0};
};

namespace detail {

/// Per-sample data-parallel resync bytes, upstream `getDataParallelResyncCost`.
[[nodiscard]] inline double piper_resync_bytes(double parameter_bytes, std::size_t d, std::size_t n) {
  return 4.0 * static_cast<double>(d - 1) * parameter_bytes / static_cast<double>(d) / static_cast<double>(n);
}

/// Bytes of the cut edges of node v under option o when the stage is `in_stage` (by node).
template <class InStage>
[[nodiscard]] double piper_edge_bytes(const io::piper_instance& in, std::size_t v, const io::piper_option& o,
                                      const InStage& in_stage) {
  double bytes = 0.0;
  for (std::size_t k = 0; k < in.in_edges[v].size(); ++k) {
    const std::size_t e = in.in_edges[v][k];
    if (!in_stage(in.edges[e].first)) bytes += 2 * (in.edge_bytes[e] + o.sync_fw[k]);
  }
  for (std::size_t k = 0; k < in.out_edges[v].size(); ++k) {
    const std::size_t e = in.out_edges[v][k];
    if (!in_stage(in.edges[e].second)) bytes += 2 * (in.edge_bytes[e] + o.sync_bw[k]);
  }
  return bytes;
}

template <int = 0>
[[nodiscard]] double piper_tau(double edge_bytes, const io::piper_option& o, std::size_t d, const piper_params& p) {
  const double comm = edge_bytes / static_cast<double>(d) + piper_resync_bytes(o.parameter_size, d, p.microbatches);
  return comm / p.bandwidth + o.time_per_sample / static_cast<double>(d);
}

/// The fastest option of each item: the first with minimal τ.
template <int = 0>
void piper_fastest(std::span<const piper_item> items, std::vector<std::uint8_t>& fast) {
  fast.assign(items.size(), 0);
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].count > 1 && items[i].tau[0] > items[i].tau[1]) fast[i] = 1;
}

template <int = 0>
[[nodiscard]] double piper_memory_of(std::span<const piper_item> items, std::span<const std::uint8_t> h, double y) {
  double m = 0.0;
  for (std::size_t i = 0; i < items.size(); ++i) m += items[i].a[h[i]] * y + items[i].b[h[i]];
  return m;
}

template <int = 0>
[[nodiscard]] double piper_tps_of(std::span<const piper_item> items, std::span<const std::uint8_t> h) {
  double s = 0.0;
  for (std::size_t i = 0; i < items.size(); ++i) s += items[i].tau[h[i]];
  return s;
}

/// Upstream's fast knapsack heuristic at one y whose all-fastest choice does not fit: starting
/// from `h` = fastest, apply the memory-saving swaps by increasing (Δτ / saving, node, option)
/// until the excess is below 1e-9. Returns false when even the lowest-memory choice does not fit.
using piper_swap = std::tuple<double, std::size_t, std::uint8_t>;
template <int = 0>
bool piper_shave(std::span<const piper_item> items, double cap, double y, std::vector<std::uint8_t>& h,
                        std::vector<piper_swap>& swaps) {
  double low = 0.0;
  for (const auto& it : items) {
    std::uint8_t l = 0;
    if (it.count > 1 && it.a[0] * y + it.b[0] > it.a[1] * y + it.b[1]) l = 1;
    low += it.a[l] * y + it.b[l];
  }
  if (low > cap) return false;
  double shave = piper_memory_of(items, h, y) - cap;
  swaps.clear();
  for (std::size_t i = 0; i < items.size(); ++i)
    for (std::uint8_t l = 0; l < items[i].count; ++l) {
      const double saving = (items[i].a[h[i]] * y + items[i].b[h[i]]) - (items[i].a[l] * y + items[i].b[l]);
      if (saving > 1e-9) swaps.emplace_back((items[i].tau[l] - items[i].tau[h[i]]) / saving, i, l);
    }
  // The swaps in increasing order, taken from a heap: usually a few are applied, not all sorted.
  std::make_heap(swaps.begin(), swaps.end(), std::greater<>{});
  for (auto end = swaps.end(); end != swaps.begin(); --end) {
    std::pop_heap(swaps.begin(), end, std::greater<>{});
    const auto& [ratio, i, l] = *(end - 1);
    shave -= (items[i].a[h[i]] * y + items[i].b[h[i]]) - (items[i].a[l] * y + items[i].b[l]);
    h[i] = l;
    if (shave < 1e-9) break;
  }
  return true;
}

}  // namespace detail

/// Upstream `solveKnapsack` with its fast heuristic (`KNAPSACK_FAST_HEURISTIC`), with reusable
/// scratch space. Items are in the stage's node order (ascending node id), ≤ 2 options each.
class piper_knapsack {
 public:
  /// `values[y]` for y = 1..max_y is the stage TPS of the chosen options, `piper_infinity`
  /// when the lowest-memory choice does not fit (then for every larger y too); `values[0]` is
  /// infinite. The all-fastest choice is used while it fits (memory only grows with y, so that
  /// is a prefix of y, found by bisection). O(n log max_y + n log n per y beyond that prefix).
  template <int = 0>
  void solve(std::span<const piper_item> items, double cap, std::size_t max_y, std::vector<double>& values) {
    values.assign(max_y + 1, piper_infinity);
    detail::piper_fastest(items, fast_);
    std::size_t lo = 0, hi = max_y;  // largest y in [0, max_y] where the fastest choice fits
    while (lo < hi) {
      const std::size_t mid = (lo + hi + 1) / 2;
      if (detail::piper_memory_of(items, fast_, static_cast<double>(mid)) <= cap) lo = mid; else hi = mid - 1;
    }
    if (lo > 0)
      std::fill(values.begin() + 1, values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, detail::piper_tps_of(items, fast_));
    for (std::size_t y = lo + 1; y <= max_y; ++y) {
      h_ = fast_;
      if (!detail::piper_shave(items, cap, static_cast<double>(y), h_, swaps_)) break;
      values[y] = detail::piper_tps_of(items, h_);
    }
  }

  /// The option indices the heuristic picks at one y (the witness of `values[y]`); empty when
  /// nothing fits.
  template <int = 0>
  [[nodiscard]] std::vector<std::uint8_t> choice(std::span<const piper_item> items, double cap, std::size_t y) {
    std::vector<std::uint8_t> h;
    detail::piper_fastest(items, h);
    if (detail::piper_memory_of(items, h, static_cast<double>(y)) <= cap) return h;
    if (!detail::piper_shave(items, cap, static_cast<double>(y), h, swaps_)) return {};
    return h;
  }

 private:
  std::vector<std::uint8_t> fast_, h_;
  std::vector<detail::piper_swap> swaps_;
};

/// The TPS of a split (stages in pipeline order, the first holding the sources), upstream
/// `getTPSForResult`: max over stages of (edgeBytes/d + Σ resync)/BW + Σp/d, `piper_infinity`
/// if a stage exceeds M with y = ⌈suffix Σd / d⌉. Throws `std::invalid_argument` for a
/// malformed split (a node missing or twice, an edge going backwards, too many devices).
template <int = 0>
[[nodiscard]] double piper_split_tps(const io::piper_instance& in, const piper_params& p,
                                            std::span<const piper_stage> stages) {
  DEVPLACE_EXPECTS(p.devices >= 1 && p.microbatches >= 1 && p.bandwidth > 0 && p.memory_bytes > 0,
                   "piper_split_tps: K, N, BW and M must be positive");
  if (stages.empty()) return piper_infinity;
  std::vector<long> stage_of(in.nodes.size(), -1);
  std::size_t devices = 0, sum_d = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& st = stages[i];
    DEVPLACE_EXPECTS(st.d >= 1 && p.microbatches % st.d == 0, "piper_split_tps: d must divide mbsInBatch");
    DEVPLACE_EXPECTS(st.option.size() == st.nodes.size(), "piper_split_tps: one option per node");
    for (auto v : st.nodes) {
      DEVPLACE_EXPECTS(v < in.nodes.size() && stage_of[v] < 0, "piper_split_tps: a node is unknown or in two stages");
      stage_of[v] = static_cast<long>(i);
    }
    devices += st.t * st.d;
    sum_d += st.d;
  }
  for (auto s : stage_of) DEVPLACE_EXPECTS(s >= 0, "piper_split_tps: a node is in no stage");
  for (const auto& [u, v] : in.edges) DEVPLACE_EXPECTS(stage_of[u] <= stage_of[v], "piper_split_tps: an edge goes backwards");
  DEVPLACE_EXPECTS(devices <= p.devices && sum_d <= p.microbatches, "piper_split_tps: too many devices");
  double worst = 0.0;
  std::size_t suffix = sum_d;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& st = stages[i];
    const double y = static_cast<double>((suffix + st.d - 1) / st.d);
    suffix -= st.d;
    double compute = 0, edge = 0, resync = 0, memory = 0;
    for (std::size_t k = 0; k < st.nodes.size(); ++k) {
      const std::size_t v = st.nodes[k];
      const auto& opts = in.nodes[v].tmpcs.at(static_cast<int>(st.t));
      DEVPLACE_EXPECTS(st.option[k] < opts.size(), "piper_split_tps: no such option");
      const auto& o = opts[st.option[k]];
      compute += o.time_per_sample;
      edge += detail::piper_edge_bytes(in, v, o, [&](std::size_t u) { return stage_of[u] == static_cast<long>(i); });
      resync += detail::piper_resync_bytes(o.parameter_size, st.d, p.microbatches);
      memory += o.memory_a * y + o.memory_b;
    }
    if (memory > p.memory_bytes) return piper_infinity;
    const double d = static_cast<double>(st.d);
    worst = std::max(worst, (edge / d + resync) / p.bandwidth + compute / d);
  }
  return worst;
}

/// Upstream `getNodeIdsToposorted`: Kahn's algorithm with a LIFO stack, sources pushed in node
/// order, out-neighbours in edge-file order.
template <int = 0>
[[nodiscard]] std::vector<std::size_t> piper_lifo_topological_order(const io::piper_instance& in) {
  std::vector<std::size_t> indeg(in.nodes.size(), 0), stack, order;
  for (const auto& e : in.edges) ++indeg[e.second];
  for (std::size_t v = 0; v < in.nodes.size(); ++v)
    if (indeg[v] == 0) stack.push_back(v);
  while (!stack.empty()) {
    const std::size_t v = stack.back();
    stack.pop_back();
    order.push_back(v);
    for (auto e : in.out_edges[v])
      if (--indeg[in.edges[e].second] == 0) stack.push_back(in.edges[e].second);
  }
  return order;
}

struct piper_equi_result {
  double tps = piper_infinity;  ///< `piper_infinity` = OOM (no configuration fits)
  std::size_t stages = 0, d = 0;
  bool recomputation = false;   ///< "activation recomp" everywhere (else "vanilla")
  std::vector<piper_stage> split;
};

/// The "equi" baseline (`runPipeDream2BWPlannerNonTransformer`, no tensor parallelism): the
/// LIFO topological order cut into `stages` = 1..K groups of ⌊n/stages⌋ nodes (the last
/// n mod stages one larger), every stage with the same d (stages·d ≤ min(K, N), d | N), all
/// nodes "vanilla" or all "activation recomp"; the smallest `piper_split_tps` (first strict
/// minimum). A configuration whose option id is missing on some node counts as OOM (upstream
/// aborts). O(K · divisors · n · deg).
template <int = 0>
[[nodiscard]] piper_equi_result piper_equi(const io::piper_instance& in, const piper_params& p) {
  DEVPLACE_EXPECTS(p.devices >= 1 && p.microbatches >= 1 && p.bandwidth > 0 && p.memory_bytes > 0,
                   "piper_equi: K, N, BW and M must be positive");
  const auto order = piper_lifo_topological_order(in);
  const std::size_t n = order.size();
  piper_equi_result best;
  for (std::size_t stages = 1; stages <= p.devices; ++stages) {
    std::vector<piper_stage> split(stages);
    const std::size_t per = n / stages, larger = n % stages;
    std::size_t next = 0;
    for (std::size_t st = 0; st < stages; ++st)
      for (std::size_t i = 0; i < per + (st >= stages - larger ? 1 : 0); ++i) split[st].nodes.push_back(order[next++]);
    for (std::size_t d = 1; stages * d <= std::min(p.devices, p.microbatches); ++d) {
      if (p.microbatches % d != 0) continue;
      for (const bool recomp : {false, true}) {
        const std::string id = recomp ? "activation recomp" : "vanilla";
        bool available = true;
        for (auto& st : split) {
          st.t = 1;
          st.d = d;
          st.option.clear();
          for (auto v : st.nodes) {
            const auto it = in.nodes[v].tmpcs.find(1);
            std::size_t o = 0;
            while (it != in.nodes[v].tmpcs.end() && o < it->second.size() && it->second[o].id != id) ++o;
            available = available && it != in.nodes[v].tmpcs.end() && o < it->second.size();
            st.option.push_back(o);
          }
        }
        if (!available) continue;
        const double tps = piper_split_tps(in, p, split);
        if (tps < best.tps) best = {tps, stages, d, recomp, split};
      }
    }
  }
  return best;
}

}  // namespace devplace::peers
