#pragma once
/// \file dfmodel/fusion.hpp
/// The intra-chip choice (seed-dfmodel.md §3.3): which kernels share a configuration, and the tile
/// count. Configurations run in order and tensors never flow backwards, so the configs are the
/// differences of a chain of down-sets ∅ = D_0 ⊆ D_1 ⊆ … ⊆ D_C = all kernels (configs may be
/// empty). Σ_c II_c is additive over the configs, hence a dynamic programme over (c, D_c) is exact:
///   best[c+1][D′] = min_{D ⊆ D′} best[c][D] + II(D′ \ D)   (the config must fit SRAM and DRAM)
/// with pinned kernels (`kernel::config` ≥ 0) forced into their config and, in a graph with
/// backward kernels and C < n, forward kernels in the first ⌈C/2⌉ configs and backward kernels in
/// the last ⌈C/2⌉ (the authors' split). Kernel-by-kernel mode puts kernel i in config i. Every
/// divisor of seq is tried as the tile count (or the one `tile_size` gives); ties keep the larger
/// count. `brute_force_mapping` enumerates every config vector (oracle for small graphs).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/dfmodel/intra_chip.hpp"

namespace devplace::dfmodel {

namespace detail {

/// Down-sets of the kernel graph as bit masks (∅ first), or an empty vector over the cap.
inline std::vector<std::uint64_t> downset_masks(const workload& w, std::uint64_t cap) {
  std::vector<std::vector<int>> g(w.kernels.size());
  for (const auto& t : w.tensors) g[t.src].push_back(static_cast<int>(t.dst));
  std::vector<std::uint64_t> out;
  const auto st = for_each_downset(g, [&](const std::vector<std::size_t>& vs) {
    if (out.size() >= cap) return downset_action::stop;
    std::uint64_t m = 0;
    for (std::size_t v : vs) m |= std::uint64_t{1} << v;
    out.push_back(m);
    return downset_action::proceed;
  });
  if (st != status::optimal || out.size() > cap) out.clear();
  return out;
}

/// Masks that D_c (the kernels of configs < c) must contain and must avoid, c = 0..C.
inline void chain_masks(const workload& w, std::size_t C, std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out) {
  const std::size_t n = w.kernels.size();
  in.assign(C + 1, 0);
  out.assign(C + 1, 0);
  bool has_bwd = false, has_fwd = false;
  for (const auto& k : w.kernels) (k.backward ? has_bwd : has_fwd) = true;
  const bool split = has_bwd && has_fwd && C != n;
  const std::size_t fwd_last = C % 2 == 0 ? C / 2 - 1 : C / 2, bwd_first = C / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    const auto& k = w.kernels[i];
    for (std::size_t c = 0; c <= C; ++c) {
      if (k.config >= 0) {
        if (c > static_cast<std::size_t>(k.config)) in[c] |= bit; else out[c] |= bit;
      }
      if (split && !k.backward && c > fwd_last) in[c] |= bit;
      if (split && k.backward && c <= bwd_first) out[c] |= bit;
    }
  }
}

/// Exact fusion for one tile count; `r.status` infeasible when nothing fits.
inline mapping_result best_fusion(const chip_context& ctx, const std::vector<std::uint64_t>& downs, std::size_t C) {
  const auto& w = *ctx.w;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::uint64_t> must_in, must_out;
  chain_masks(w, C, must_in, must_out);
  const std::size_t N = downs.size();
  std::vector<std::vector<double>> best(C + 1, std::vector<double>(N, inf));
  std::vector<std::vector<std::size_t>> from(C + 1, std::vector<std::size_t>(N, 0));
  std::unordered_map<std::uint64_t, double> memo;
  auto ii = [&](std::uint64_t S) {
    auto it = memo.find(S);
    if (it != memo.end()) return it->second;
    const auto f = config_cost(ctx, S);
    return memo[S] = f.fits ? f.ii_ns : inf;
  };
  auto ok = [&](std::size_t c, std::uint64_t D) { return (D & must_in[c]) == must_in[c] && (D & must_out[c]) == 0; };
  best[0][0] = 0;  // downs[0] = ∅
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t a = 0; a < N; ++a) {
      if (best[c][a] == inf) continue;
      for (std::size_t b = 0; b < N; ++b) {
        if ((downs[a] & ~downs[b]) != 0 || !ok(c + 1, downs[b])) continue;
        const double v = best[c][a] + ii(downs[b] & ~downs[a]);
        if (v < best[c + 1][b]) best[c + 1][b] = v, from[c + 1][b] = a;
      }
    }
  const std::uint64_t all = w.kernels.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << w.kernels.size()) - 1;
  std::size_t last = N;
  for (std::size_t b = 0; b < N; ++b)
    if (downs[b] == all) last = b;
  mapping_result r;
  if (last == N || best[C][last] == inf) return r;
  r.config_of.assign(w.kernels.size(), 0);
  std::vector<std::uint64_t> chain(C + 1);
  for (std::size_t c = C, b = last; c > 0; --c) chain[c] = downs[b], b = from[c][b];
  for (std::size_t c = 0; c < C; ++c) {
    const std::uint64_t S = chain[c + 1] & ~chain[c];
    for (std::size_t i = 0; i < w.kernels.size(); ++i)
      if (S >> i & 1u) r.config_of[i] = static_cast<int>(c);
    r.configs.push_back(config_cost(ctx, S));
  }
  finish(ctx, r);
  r.status = status::optimal;
  return r;
}

inline std::vector<std::int64_t> tile_counts(const workload& w, const mapping_options& o) {
  const std::int64_t seq = w.llm.seq;
  if (o.tile_size > 0) return {detail::ceil_div(seq, o.tile_size)};
  std::vector<std::int64_t> t;
  for (std::int64_t d = seq; d >= 1; --d)
    if (seq % d == 0) t.push_back(d);  // largest first: ties keep the larger count
  return t;
}

}  // namespace detail

/// The best mapping of `w` (sharded by `sh`) on one chip of `sys`: fusion and tile count.
/// status: optimal (proved over the fusions and tile counts tried), infeasible (nothing fits), or
/// work_limit (more down-sets than `max_downsets`). Throws std::invalid_argument on bad input.
[[nodiscard]] inline mapping_result optimise_mapping(const workload& w, const sharding& sh, const system& sys,
                                                     const mapping_options& o = {}) {
  detail::check_inputs(w, sh, sys, o);
  const std::size_t n = w.kernels.size();
  mapping_result best;
  if (o.mode == execution::kernel_by_kernel) {
    std::vector<int> cfg(n);
    for (std::size_t i = 0; i < n; ++i) cfg[i] = static_cast<int>(i);
    for (std::int64_t T : detail::tile_counts(w, o)) {
      auto r = evaluate_mapping(w, sh, sys, o, cfg, T);
      if (r.status == status::feasible && (best.status != status::optimal || r.final_ns < best.final_ns * (1 - 1e-12)))
        best = std::move(r), best.status = status::optimal;
    }
    return best;
  }
  const auto downs = detail::downset_masks(w, o.max_downsets);
  if (downs.empty()) {
    best.status = status::work_limit;
    return best;
  }
  for (std::int64_t T : detail::tile_counts(w, o)) {
    const auto ctx = detail::make_context(w, sh, sys, o, T);
    auto r = detail::best_fusion(ctx, downs, o.configs);
    if (r.status == status::optimal && (best.status != status::optimal || r.final_ns < best.final_ns * (1 - 1e-12)))
      best = std::move(r);
  }
  return best;
}

/// `optimise_mapping` on any `workload_graph` (dfmodel/concepts.hpp): the same on `to_workload(g)`.
template <workload_graph G>
[[nodiscard]] mapping_result optimise_mapping(const G& g, const sharding& sh, const system& sys, const mapping_options& o = {}) {
  return optimise_mapping(to_workload(g), sh, sys, o);
}

/// Oracle: every config vector in {0..C−1}^n (C^n ≤ `max_vectors`), the best feasible one for
/// tile count `num_tile`. Dataflow mode only.
[[nodiscard]] inline mapping_result brute_force_mapping(const workload& w, const sharding& sh, const system& sys,
                                                        const mapping_options& o, std::int64_t num_tile,
                                                        std::uint64_t max_vectors = 1u << 22) {
  const std::size_t n = w.kernels.size(), C = o.configs;
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < n; ++i)
    if ((total *= C) > max_vectors) throw std::invalid_argument("brute_force_mapping: too many vectors");
  std::vector<std::uint64_t> must_in, must_out;
  detail::chain_masks(w, C, must_in, must_out);
  mapping_result best;
  std::vector<int> cfg(n);
  for (std::uint64_t code = 0; code < total; ++code) {
    std::uint64_t x = code;
    for (std::size_t i = 0; i < n; ++i) cfg[i] = static_cast<int>(x % C), x /= C;
    bool split_ok = true;  // the forward/backward split, as masks on the prefix sets
    for (std::size_t c = 0; c <= C && split_ok; ++c) {
      std::uint64_t D = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (static_cast<std::size_t>(cfg[i]) < c) D |= std::uint64_t{1} << i;
      split_ok = (D & must_in[c]) == must_in[c] && (D & must_out[c]) == 0;
    }
    if (!split_ok) continue;
    auto r = evaluate_mapping(w, sh, sys, o, cfg, num_tile);
    if (r.status != status::feasible) continue;
    if (best.status != status::optimal || r.all_ii_ns < best.all_ii_ns) best = std::move(r), best.status = status::optimal;
  }
  return best;
}

}  // namespace devplace::dfmodel
