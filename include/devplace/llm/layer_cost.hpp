#pragma once
/// \file llm/layer_cost.hpp
/// Time of the pieces of an LLM training step on one GPU, for one micro-batch: a GEMM, a
/// memory-bound kernel, a collective of a parallel group, and a whole transformer layer's
/// forward, backward and recomputation with its tensor- and context-parallel communication.
///
/// A layer on a GPU (tokens T = b s / cp, a_t = heads / tp, k_t kv heads per rank, f_t = ffn / tp):
///
///   GEMMs     QKV  T × (a_t + 2 k_t) d × h     projection  T × h × a_t d
///             MLP  T × n_in f_t × h and T × h × f_t        (backward: dgrad and wgrad of each)
///   attention b a_t batches of (s/cp) × s × d (scores) and (s/cp) × d × s (context), the full
///             square as Megatron computes it; backward two GEMMs of each. With fused (flash)
///             attention: half the square (causal), 2.5 × that backward, at the fused kernels'
///             achievable fractions
///   memory    LayerNorms, bias-dropout-residual, the MLP activation, scale-mask-softmax and
///             attention dropout: bytes read and written per element (see `layer_cost` below)
///   TP        all-reduce of T h activations twice forward and twice backward; with sequence
///             parallelism all-gather + reduce-scatter instead, and the all-gathers of the layer
///             input again in the backward pass unless full recomputation regathered them
///   CP        ring exchange of the local K and V (cp − 1 steps forward, twice that backward),
///             hidden behind the attention computation as far as it lasts
///
/// Every communication time is `ring_collective_ms` (cost/collective.hpp) on the innermost tier
/// holding the group.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "devplace/cost/collective.hpp"
#include "devplace/llm/execution.hpp"
#include "devplace/llm/memory.hpp"
#include "devplace/llm/model.hpp"
#include "devplace/llm/system.hpp"

namespace devplace::llm {

/// Seconds to stream `bytes` through HBM.
[[nodiscard]] inline double memory_seconds(const gpu& g, double bytes) {
  if (bytes <= 0) return 0.0;
  const double eff = g.hbm_efficiency.empty() ? g.hbm_achievable : g.hbm_efficiency.at(bytes / 1e6);
  return bytes / (g.hbm_gbps * 1e9 * eff);
}

/// The matrix rate used for `t`: fp8 GEMMs need an fp8 rate; the others fall back to bf16 / fp16.
[[nodiscard]] inline const unit_rate& matrix_rate(const gpu& g, dtype t) {
  const unit_rate& u = g.mat(t);
  if (u.tflops > 0) return u;
  if (t == dtype::bf16 && g.mat(dtype::fp16).tflops > 0) return g.mat(dtype::fp16);
  if (t == dtype::fp16 && g.mat(dtype::bf16).tflops > 0) return g.mat(dtype::bf16);
  throw std::invalid_argument("llm system: the GPU has no matrix rate for " + std::string(to_string(t)));
}

/// Efficiency of `batch` GEMMs with an M × N output and depth K, `flops` in all: the table's, or
/// the achievable fraction times the wave quantisation of the output tiles times the fill of the
/// K loop (⌈K / tile_k⌉ steps behind `stages` steps of pipeline prologue).
[[nodiscard]] inline double gemm_efficiency(const gpu& g, const unit_rate& u, double batch, double M, double N,
                                            double K, double flops) {
  if (!u.efficiency.empty()) return u.efficiency.at(flops / 1e9);
  double e = u.achievable;
  if (g.sms > 0) {
    const double tiles = batch * std::ceil(M / g.tile_m) * std::ceil(N / g.tile_n);
    const double waves = std::ceil(tiles / g.sms);
    e *= tiles / (waves * g.sms);
  }
  if (g.tile_k > 0) {
    const double steps = std::ceil(K / g.tile_k);
    e *= steps / (steps + g.stages);
  }
  return e;
}

/// Seconds of `batch` GEMMs (M × K) · (K × N) with inputs in `t`: the main loop (compute, or the
/// inputs streamed from HBM when that is slower), then the epilogue writing the output,
/// `out_bytes` per element (2; 8 for a gradient accumulated into fp32: read and written), which
/// a tile does after its main loop.
[[nodiscard]] inline double gemm_seconds(const gpu& g, dtype t, double batch, double M, double N, double K,
                                         double out_bytes = 2) {
  if (batch <= 0 || M <= 0 || N <= 0 || K <= 0) return 0.0;
  const unit_rate& u = matrix_rate(g, t);
  const double flops = 2 * batch * M * N * K;
  const double compute = flops / (u.tflops * 1e12 * gemm_efficiency(g, u, batch, M, N, K, flops));
  const double inputs = batch * (M * K + K * N) * bytes_of(t);
  return std::max(compute, memory_seconds(g, inputs)) + memory_seconds(g, batch * M * N * out_bytes);
}

/// Forward + backward (dgrad, wgrad) seconds of one GEMM shape.
struct gemm_pass {
  double fwd = 0, bwd = 0;
};
/// `weight`: the second operand is a weight whose gradient accumulates into the fp32 gradient
/// buffer (Megatron's fused accumulation), so the wgrad epilogue reads and writes 4 bytes.
[[nodiscard]] inline gemm_pass gemm_fwd_bwd(const gpu& g, dtype t, double batch, double M, double N, double K,
                                            bool weight = true) {
  return {gemm_seconds(g, t, batch, M, N, K),
          gemm_seconds(g, t, batch, M, K, N) + gemm_seconds(g, t, batch, K, N, M, weight ? 8.0 : 2.0)};
}

/// Seconds of an element-wise kernel: `flops` on the vector units at the rate of the 16-bit
/// activations (fp16 for fp16 training, else bf16) or `bytes` through HBM, whichever is slower.
[[nodiscard]] inline double vector_seconds(const gpu& g, dtype t, double flops, double bytes) {
  const dtype a = t == dtype::fp16 ? dtype::fp16 : dtype::bf16, other = a == dtype::fp16 ? dtype::bf16 : dtype::fp16;
  const unit_rate& u = g.vec(a).tflops > 0 ? g.vec(a) : g.vec(other);
  const double compute = u.tflops > 0 ? flops / (u.tflops * 1e12 * u.achievable) : 0.0;
  return std::max(compute, memory_seconds(g, bytes));
}

/// Seconds of collective `c` over a group of `members` GPUs spanning `span` consecutive ranks.
[[nodiscard]] inline double collective_seconds(const hardware& s, collective_op c, double bytes, std::int64_t members,
                                               std::int64_t span) {
  if (c != collective_op::point_to_point && members <= 1) return 0.0;
  const network_tier& n = tier_for_span(s, static_cast<std::size_t>(span));
  return ring_collective_ms(c, bytes, static_cast<std::size_t>(members), n.achieved_gbps(), n.latency_us) * 1e-3;
}

/// One transformer layer on one GPU for one micro-batch, seconds.
struct layer_cost {
  double gemm_fwd = 0, gemm_bwd = 0;        ///< linears
  double core_fwd = 0, core_bwd = 0;        ///< attention core: its GEMMs and element-wise kernels
  double elem_fwd = 0, elem_bwd = 0;        ///< the other element-wise kernels
  double tp_fwd = 0, tp_bwd = 0;            ///< tensor-parallel collectives (as issued)
  double cp_fwd = 0, cp_bwd = 0;            ///< context-parallel exchange (as issued)
  double flops_fwd = 0;                     ///< model FLOPs of the forward pass on this GPU
  double core_flops_fwd = 0;                ///< of which the attention core
  [[nodiscard]] double compute_fwd() const noexcept { return gemm_fwd + core_fwd + elem_fwd; }
  [[nodiscard]] double compute_bwd() const noexcept { return gemm_bwd + core_bwd + elem_bwd; }
};

[[nodiscard]] inline layer_cost cost_of_layer(const model& m, const hardware& sys, const execution& e) {
  const gpu& g = sys.gpu;
  const dtype t = e.dtype;
  const double b = double(e.micro_batch), s = double(m.seq), sl = s / double(e.cp), h = double(m.hidden);
  const double tp = double(e.tp), at = double(m.heads) / tp, kt = kv_heads_per_rank(m, e.tp);
  const double d = double(m.head_dim), ft = double(m.ffn) / tp, nin = double(mlp_in_matrices(m.ffn_kind));
  const double T = b * sl;
  layer_cost c;
  for (const auto& [N, K] : {std::pair{(at + 2 * kt) * d, h}, std::pair{h, at * d}, std::pair{nin * ft, h}, std::pair{h, ft}}) {
    const auto p = gemm_fwd_bwd(g, t, 1, T, N, K);
    c.gemm_fwd += p.fwd;
    c.gemm_bwd += p.bwd;
    c.flops_fwd += 2 * T * N * K;
  }
  // Attention core: scores (sl × s × d) and context (sl × d × s) per head, softmax and dropout.
  const double heads_b = b * at, E = heads_b * sl * s;
  c.core_flops_fwd = 4 * heads_b * sl * s * d;
  const dtype ta = t == dtype::fp8 ? dtype::bf16 : t;  // fp8 recipes keep the attention in 16 bits
  if (g.fused_attention) {
    // Causal blocks above the diagonal are skipped (half the work); the backward pass runs five
    // GEMMs to the forward's two (the scores recomputed).
    const double P = matrix_rate(g, ta).tflops * 1e12, work = c.core_flops_fwd / 2;
    c.core_fwd = work / (P * g.attention_fwd_achievable);
    c.core_bwd = 2.5 * work / (P * g.attention_bwd_achievable);
  } else {
    const auto scores = gemm_fwd_bwd(g, ta, heads_b, sl, s, d, false), context = gemm_fwd_bwd(g, ta, heads_b, sl, d, s, false);
    c.core_fwd = scores.fwd + context.fwd + vector_seconds(g, t, 8 * E, 9 * E);
    c.core_bwd = scores.bwd + context.bwd + vector_seconds(g, t, 8 * E, 11 * E);
  }
  c.flops_fwd += c.core_flops_fwd;
  // Other element-wise kernels; without sequence parallelism every tp rank runs them on all T tokens.
  const double Tx = e.sequence_parallel ? T / tp : T;
  const double act_in = m.ffn_kind == ffn_kind::swiglu ? 4.0 : 2.0;
  c.elem_fwd = vector_seconds(g, t, 16 * Tx * h, (4 + 7 + 4 + 7) * Tx * h) + vector_seconds(g, t, 16 * T * ft, (act_in + 2) * T * ft);
  c.elem_bwd = vector_seconds(g, t, 32 * Tx * h, (6 + 5 + 6 + 5) * Tx * h) +
               vector_seconds(g, t, 32 * T * ft, (act_in + 2 + act_in) * T * ft);
  // Tensor-parallel collectives on T h activations (2 bytes).
  const double act = T * h * 2;
  const std::int64_t tpn = e.tp;
  if (tpn > 1) {
    const double ar = collective_seconds(sys, collective_op::all_reduce, act, tpn, tpn);
    const double ag = collective_seconds(sys, collective_op::all_gather, act, tpn, tpn);
    const double rs = collective_seconds(sys, collective_op::reduce_scatter, act, tpn, tpn);
    if (e.sequence_parallel) {
      c.tp_fwd = 2 * ag + 2 * rs;
      c.tp_bwd = 2 * rs + 2 * ag + (e.recompute == recompute::full ? 0.0 : 2 * ag);
    } else {
      c.tp_fwd = 2 * ar;
      c.tp_bwd = 2 * ar;
    }
  }
  if (e.cp > 1) {
    const double kv = T * 2 * kt * d * 2;
    const double step = collective_seconds(sys, collective_op::point_to_point, kv, 2, e.tp * e.cp);
    c.cp_fwd = double(e.cp - 1) * step;
    c.cp_bwd = 2 * double(e.cp - 1) * step;
  }
  return c;
}

}  // namespace devplace::llm
