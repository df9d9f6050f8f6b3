#pragma once
/// \file dfmodel/sharding.hpp
/// DFModel stage 1a (seed-dfmodel.md §3.4.1): pick a tensor-parallel sharding scheme for every
/// kernel (the loop dimension split over the TP chips: outer, M, K, N or none) so that the bytes
/// communicated are fewest. Costs are generated from the kernels, none are entered by hand:
///   inherent  a K-sharded kernel all-reduces its output (outer·M·N·word bytes);
///   layout    the producer's scheme gives its output a layout (RR replicated, RS columns
///             sharded, SR rows sharded), the consumer's scheme requires one; RR → any is a local
///             slice (free), sharded → RR an all-gather, RS ↔ SR an all-to-all, each of the
///             whole tensor.
/// Solvers: `shard_exhaustive` (exact depth-first branch and bound, kernels in topological order)
/// and `make_sharding_problem` + ilp::solve_dfmodel_inter_chip (the existing MILP builder with one
/// stage, no compute, the bytes as costs); `shard_brute_force` is the plain enumeration oracle.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/dfmodel/concepts.hpp"
#include "devplace/dfmodel/workload.hpp"
#include "devplace/ilp/builders/dfmodel.hpp"
#include "devplace/status.hpp"

namespace devplace::dfmodel {

enum class layout { rr, rs, sr };

[[nodiscard]] inline std::string_view to_string(loop_dim d) noexcept {
  switch (d) {
    case loop_dim::outer: return "OUTER";
    case loop_dim::m: return "M";
    case loop_dim::k: return "K";
    case loop_dim::n: return "N";
    case loop_dim::none: return "NO";
  }
  return "?";
}

/// The schemes kernel `k` may use (§3.4.1): a dimension of size 1 and the tiled dimension cannot be
/// sharded, kernels with a weight must be sharded, and outer > 1 forces the outer scheme. Order:
/// none first, then M, K, N: the searches keep the first of equally cheap schemes, so a kernel
/// stays unsharded unless sharding saves bytes (what the authors' runs of Table VI chose).
[[nodiscard]] inline std::vector<loop_dim> allowed_schemes_free(const kernel& k) {
  if (k.outer > 1) {
    if (k.tiling == loop_dim::outer) throw std::invalid_argument("dfmodel: kernel " + k.name + " tiles its outer dimension");
    return {loop_dim::outer};
  }
  std::vector<loop_dim> s;
  if (!k.has_weight()) s.push_back(loop_dim::none);
  const std::pair<loop_dim, std::int64_t> dims[] = {{loop_dim::m, k.m}, {loop_dim::k, k.k}, {loop_dim::n, k.n}};
  for (auto [d, size] : dims)
    if (size > 1 && d != k.tiling) s.push_back(d);
  if (s.empty()) throw std::invalid_argument("dfmodel: kernel " + k.name + " has no sharding scheme");
  return s;
}

/// `allowed_schemes_free`, or only the pinned `kernel::scheme` (which must be one of them).
[[nodiscard]] inline std::vector<loop_dim> allowed_schemes(const kernel& k) {
  auto s = allowed_schemes_free(k);
  if (!k.scheme) return s;
  const auto pinned = static_cast<loop_dim>(*k.scheme);
  if (*k.scheme < 0 || *k.scheme > 4 || std::find(s.begin(), s.end(), pinned) == s.end())
    throw std::invalid_argument("dfmodel: kernel " + k.name + " cannot use the pinned sharding scheme");
  return {pinned};
}

/// Layout of the output of a kernel sharded by `s`.
[[nodiscard]] inline layout produced_layout(loop_dim s) noexcept {
  return s == loop_dim::outer || s == loop_dim::m ? layout::sr : s == loop_dim::n ? layout::rs : layout::rr;
}

/// Layout kernel `k` sharded by `s` needs on its input `port`.
[[nodiscard]] inline layout required_layout(const kernel& k, loop_dim s, int port) noexcept {
  using L = layout;
  // columns: OUTER, M, K, N, NO
  static constexpr std::array<L, 5> update{L::sr, L::sr, L::rs, L::sr, L::rr}, simd{L::sr, L::sr, L::rr, L::rs, L::rr},
      first{L::sr, L::rr, L::sr, L::rs, L::rr}, second{L::sr, L::sr, L::rs, L::rr, L::rr};
  const auto i = static_cast<std::size_t>(s);
  if (k.tiling == loop_dim::k && k.kind == kernel_kind::systolic) return update[i];
  if (k.kind == kernel_kind::simd) return simd[i];
  if (k.op == kernel_op::gemm_two_inputs && port == 1) return second[i];
  return first[i];
}

/// The collective a layout change needs (none, all-gather or all-to-all).
enum class conversion { none, all_gather, all_to_all };
[[nodiscard]] inline conversion convert(layout from, layout to) noexcept {
  if (from == to || from == layout::rr) return conversion::none;
  return to == layout::rr ? conversion::all_gather : conversion::all_to_all;
}

/// Full output bytes of a kernel (outer·M·N·word).
[[nodiscard]] inline double output_bytes(const kernel& k, double word) {
  return static_cast<double>(k.outer) * static_cast<double>(k.m) * static_cast<double>(k.n) * word;
}

struct sharding {
  std::vector<loop_dim> scheme;            ///< per kernel
  std::vector<conversion> edge;            ///< per tensor
  double bytes = 0;                        ///< objective: inherent + layout bytes
  devplace::status status = status::infeasible;
};

/// Cost (bytes) of kernel `i` with scheme `s` alone, and of tensor `j` between two schemes.
[[nodiscard]] inline double scheme_bytes(const workload& w, std::size_t i, loop_dim s) {
  return s == loop_dim::k ? output_bytes(w.kernels[i], w.llm.word_bytes) : 0.0;
}
[[nodiscard]] inline double tensor_bytes(const workload& w, std::size_t j, loop_dim s_src, loop_dim s_dst) {
  const auto& t = w.tensors[j];
  const auto c = convert(produced_layout(s_src), required_layout(w.kernels[t.dst], s_dst, t.port));
  return c == conversion::none ? 0.0 : output_bytes(w.kernels[t.src], w.llm.word_bytes);
}

/// The figures of a complete choice of schemes (one per kernel).
[[nodiscard]] inline sharding evaluate_sharding(const workload& w, const std::vector<loop_dim>& scheme) {
  if (scheme.size() != w.kernels.size()) throw std::invalid_argument("dfmodel sharding: one scheme per kernel");
  sharding r;
  r.scheme = scheme;
  r.status = status::feasible;
  for (std::size_t i = 0; i < scheme.size(); ++i) r.bytes += scheme_bytes(w, i, scheme[i]);
  for (std::size_t j = 0; j < w.tensors.size(); ++j) {
    const auto& t = w.tensors[j];
    r.edge.push_back(convert(produced_layout(scheme[t.src]), required_layout(w.kernels[t.dst], scheme[t.dst], t.port)));
    r.bytes += tensor_bytes(w, j, scheme[t.src], scheme[t.dst]);
  }
  return r;
}

struct sharding_options {
  std::uint64_t max_nodes = 50'000'000;    ///< search nodes before giving up (status work_limit)
};

/// Exact: depth-first over kernels in order, adding a tensor's cost when its consumer is chosen,
/// pruning on the best total so far (all costs are >= 0). Ties keep the first scheme in
/// `allowed_schemes` order.
[[nodiscard]] inline sharding shard_exhaustive(const workload& w, const sharding_options& opt = {}) {
  check_workload(w);
  const std::size_t n = w.kernels.size();
  std::vector<std::vector<loop_dim>> allowed(n);
  for (std::size_t i = 0; i < n; ++i) allowed[i] = allowed_schemes(w.kernels[i]);
  std::vector<std::vector<std::size_t>> in(n);
  for (std::size_t j = 0; j < w.tensors.size(); ++j) in[w.tensors[j].dst].push_back(j);
  std::vector<loop_dim> cur(n), best;
  double best_cost = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> choice(n, 0);
  std::vector<double> acc(n + 1, 0.0);
  std::uint64_t nodes = 0;
  std::size_t i = 0;
  bool stopped = false;
  while (true) {  // iterative depth-first search
    if (i == n) {
      if (acc[n] < best_cost) best_cost = acc[n], best = cur;
      --i;
      ++choice[i];
      continue;
    }
    if (choice[i] >= allowed[i].size()) {
      if (i == 0) break;
      choice[i] = 0;
      --i;
      ++choice[i];
      continue;
    }
    if (++nodes > opt.max_nodes) {
      stopped = true;
      break;
    }
    cur[i] = allowed[i][choice[i]];
    double c = acc[i] + scheme_bytes(w, i, cur[i]);
    for (std::size_t j : in[i]) c += tensor_bytes(w, j, cur[w.tensors[j].src], cur[i]);
    if (c >= best_cost) {
      ++choice[i];
      continue;
    }
    acc[i + 1] = c;
    ++i;
  }
  if (best.empty()) return {};
  sharding r = evaluate_sharding(w, best);
  r.status = stopped ? status::work_limit : status::optimal;
  return r;
}

/// `evaluate_sharding` and `shard_exhaustive` on any `workload_graph` (dfmodel/concepts.hpp): the
/// same on `to_workload(g)`; schemes per vertex id.
template <workload_graph G>
[[nodiscard]] sharding evaluate_sharding(const G& g, const std::vector<loop_dim>& scheme) {
  return evaluate_sharding(to_workload(g), scheme);
}
template <workload_graph G>
[[nodiscard]] sharding shard_exhaustive(const G& g, const sharding_options& opt = {}) {
  return shard_exhaustive(to_workload(g), opt);
}

/// Oracle: every combination of allowed schemes (product must be <= `max_combinations`).
[[nodiscard]] inline sharding shard_brute_force(const workload& w, std::uint64_t max_combinations = 1u << 22) {
  check_workload(w);
  const std::size_t n = w.kernels.size();
  std::vector<std::vector<loop_dim>> allowed(n);
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < n; ++i) {
    allowed[i] = allowed_schemes(w.kernels[i]);
    total *= allowed[i].size();
    if (total > max_combinations) throw std::invalid_argument("shard_brute_force: too many combinations");
  }
  sharding best;
  best.bytes = std::numeric_limits<double>::infinity();
  std::vector<loop_dim> s(n);
  for (std::uint64_t code = 0; code < total; ++code) {
    std::uint64_t c = code;
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = allowed[i][c % allowed[i].size()];
      c /= allowed[i].size();
    }
    auto r = evaluate_sharding(w, s);
    if (r.bytes < best.bytes) best = std::move(r);
  }
  best.status = status::optimal;
  return best;
}

/// Stage 1a as the existing inter-chip MILP (ilp/builders/dfmodel.hpp) with one stage: kernel i's
/// schemes are `allowed_schemes` in order, scheme costs and transition costs are bytes, compute is
/// zero, so the optimum is the fewest bytes. Map `scheme_of[i]` back with `allowed_schemes`.
[[nodiscard]] inline ilp::dfmodel_inter_chip_problem make_sharding_problem(const workload& w) {
  check_workload(w);
  ilp::dfmodel_inter_chip_problem p;
  const std::size_t n = w.kernels.size();
  std::vector<std::vector<loop_dim>> allowed(n);
  for (std::size_t i = 0; i < n; ++i) {
    allowed[i] = allowed_schemes(w.kernels[i]);
    ilp::dfmodel_kernel k;
    k.flop = 0;
    k.scheme_cost.clear();
    for (loop_dim s : allowed[i]) k.scheme_cost.push_back(scheme_bytes(w, i, s));
    p.kernels.push_back(std::move(k));
  }
  for (std::size_t j = 0; j < w.tensors.size(); ++j) {
    const auto& t = w.tensors[j];
    ilp::dfmodel_tensor x;
    x.src = t.src;
    x.dst = t.dst;
    x.bytes = output_bytes(w.kernels[t.src], w.llm.word_bytes);
    x.transition_cost.assign(allowed[t.src].size(), std::vector<double>(allowed[t.dst].size(), 0.0));
    for (std::size_t a = 0; a < allowed[t.src].size(); ++a)
      for (std::size_t b = 0; b < allowed[t.dst].size(); ++b)
        x.transition_cost[a][b] = tensor_bytes(w, j, allowed[t.src][a], allowed[t.dst][b]);
    p.tensors.push_back(std::move(x));
  }
  p.stages = 1;
  return p;
}

/// The sharding of an inter-chip MILP answer (`scheme_of` indexes `allowed_schemes`).
[[nodiscard]] inline sharding sharding_from_ilp(const workload& w, const std::vector<std::size_t>& scheme_of) {
  if (scheme_of.size() != w.kernels.size()) throw std::invalid_argument("sharding_from_ilp: one scheme per kernel");
  std::vector<loop_dim> s(scheme_of.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto a = allowed_schemes(w.kernels[i]);
    if (scheme_of[i] >= a.size()) throw std::invalid_argument("sharding_from_ilp: scheme index out of range");
    s[i] = a[scheme_of[i]];
  }
  return evaluate_sharding(w, s);
}

}  // namespace devplace::dfmodel
