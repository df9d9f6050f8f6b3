#pragma once
/// \file llm/evaluate.hpp
/// One training iteration of an LLM execution on a GPU cluster: time with its breakdown,
/// throughput, FLOP/s and memory per GPU.
///
/// **Stages.** Stage i of p runs L_i layers and, on the first stage, the embedding (lookup and its
/// tensor-parallel reduction) and, on the last, the final LayerNorm, the LM head GEMMs and the
/// vocabulary-parallel cross-entropy. Per micro-batch it takes
///
///   t_i = L_i (fwd + bwd + recomputed + exposed TP + exposed CP) + embedding / head work,
///
/// where "recomputed" is the layer's forward with its TP collectives (full) or the attention core
/// (selective), exposed TP is the collectives' time, less the GEMMs they overlap with when
/// `tp_overlap`, and exposed CP is what the attention does not hide of the K/V exchange.
///
/// **Pipeline.** 1F1B and interleaved 1F1B (v chunks per GPU) over m micro-batches:
///
///   T_pipe = m · max_i t_i + (Σ_i t_i − max_i t_i) / v + (2 v m + 2 (p − 1)) · t_send
///
/// (uniform stages: (m + (p − 1) / v) t, Narayanan et al. 2021). The bubble is the second term;
/// t_send is one activation message (b s h / cp · 2 bytes, / tp as Megatron scatters it) to the
/// next stage, plus the all-gather that reassembles it when not sequence parallel. Two messages
/// per micro-batch chunk and the fill and drain sit on the critical path.
///
/// **Tail.** After its last backward pass stage i reduces its gradients over the dp · cp replicas
/// (all-reduce of 4-byte gradients; reduce-scatter + all-gather of the weights with the
/// distributed optimizer), the first and last stage all-reduce the tied embedding's gradient, and
/// the optimizer streams its states (`optimizer_bytes`). With `dp_overlap` the reduction hides
/// behind the stage's last backward pass but for its last bucket (one layer's gradients). Stage i
/// finishes its pipeline work i backward chunks before stage 0, so
///
///   T = T_pipe + max_i (dp_i + opt_i − i · t_bwd,chunk,i)^+ ... taken over the stages.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "devplace/llm/execution.hpp"
#include "devplace/llm/layer_cost.hpp"
#include "devplace/llm/memory.hpp"
#include "devplace/llm/model.hpp"
#include "devplace/llm/system.hpp"

namespace devplace::llm {

/// Where the iteration's time goes; the items add up to `iteration_s`.
struct time_breakdown {
  double compute_s = 0;      ///< GEMMs, attention and element-wise kernels of the slowest stage, recomputation included
  double tp_exposed_s = 0;   ///< tensor-parallel collectives not hidden
  double cp_exposed_s = 0;   ///< context-parallel exchange not hidden
  double pp_exposed_s = 0;   ///< pipeline sends on the critical path
  double bubble_s = 0;       ///< pipeline fill and drain
  double dp_exposed_s = 0;   ///< gradient reduction (and embedding sync) not hidden
  double optimizer_s = 0;    ///< the optimizer step
  double recompute_s = 0;    ///< of compute_s, the recomputation (not added again)
};

struct evaluation {
  double iteration_s = 0;
  time_breakdown breakdown;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;     ///< model FLOPs (3 × forward, no recomputation) per second per GPU
  double hardware_tflops_per_gpu = 0;  ///< FLOPs executed, recomputation included
  std::int64_t micro_batches = 0;
  std::int64_t gpus = 0;
  std::vector<stage_memory> memory;    ///< per pipeline stage, bytes per GPU
  stage_memory peak_memory;            ///< the stage with the largest total
  double memory_gib_per_gpu = 0;       ///< its total in GiB
  bool fits = false;                   ///< memory_gib_per_gpu ≤ the GPU's HBM
  std::vector<double> stage_s;         ///< t_i per micro-batch
};

/// Model FLOPs of one sample's forward pass: all layers' GEMMs and attention plus the LM head.
[[nodiscard]] inline double forward_flops_per_sample(const model& m) {
  const double s = double(m.seq), h = double(m.hidden), d = double(m.head_dim);
  const double qkv = q_width(m) + 2 * kv_width(m), f = double(m.ffn), nin = double(mlp_in_matrices(m.ffn_kind));
  const double layer = 2 * s * h * qkv + 2 * s * q_width(m) * h + 2 * s * h * nin * f + 2 * s * f * h +
                       4 * s * s * double(m.heads) * d;
  return double(m.layers) * layer + 2 * s * h * double(m.vocab);
}

/// Bytes the optimizer streams per local parameter, as Megatron-LM's mixed-precision optimizer
/// runs it: the gradient-norm read and the zeroing of the gradient (8) for every parameter, with
/// fp16 also the unscaling pass that checks for overflow (4); and for its shard Adam's read of the
/// gradient (4), read and write of the fp32 master weight and both moments (24), and the copy of
/// the master weight into the 2-byte model weight (read 4, write 2).
[[nodiscard]] inline double optimizer_bytes(double params, double shard, dtype t) {
  return params * (t == dtype::fp16 ? 12.0 : 8.0) + params / shard * 34.0;
}

namespace detail {

struct stage_work {
  double compute = 0, recompute = 0, tp = 0, cp = 0, bwd_compute = 0, params = 0;
  [[nodiscard]] double total() const noexcept { return compute + tp + cp; }
};

/// Embedding and LM head work per micro-batch, added to the first and last stage.
inline void add_ends(stage_work& w, const model& m, const hardware& sys, const execution& e, bool first, bool last) {
  const gpu& g = sys.gpu;
  const double T = double(e.micro_batch) * double(m.seq) / double(e.cp), h = double(m.hidden);
  const double tp = double(e.tp), Vt = double(m.vocab) / tp, act = T * h * 2;
  const double Tx = e.sequence_parallel ? T / tp : T;
  const auto coll = [&](collective_op c, double bytes) { return collective_seconds(sys, c, bytes, e.tp, e.tp); };
  const collective_op reduce = e.sequence_parallel ? collective_op::reduce_scatter : collective_op::all_reduce;
  if (first) {
    w.compute += vector_seconds(g, e.dtype, 0, 4 * T * h) + vector_seconds(g, e.dtype, 0, 10 * T * h);  // lookup; gradient scatter-add
    w.tp += coll(reduce, act) + (e.sequence_parallel ? coll(collective_op::all_gather, act) : 0.0);
  }
  if (last) {
    const auto head = gemm_fwd_bwd(g, e.dtype, 1, T, Vt, h);
    const double norm = vector_seconds(g, e.dtype, 16 * Tx * h, 4 * Tx * h) + vector_seconds(g, e.dtype, 32 * Tx * h, 6 * Tx * h);
    const double xent = vector_seconds(g, e.dtype, 10 * T * Vt, 10 * T * Vt) + vector_seconds(g, e.dtype, 4 * T * Vt, 6 * T * Vt);
    w.compute += head.fwd + head.bwd + norm + xent;
    w.bwd_compute += head.bwd;
    w.tp += 3 * coll(collective_op::all_reduce, T * 4);  // max, sum and target logit of the cross-entropy
    if (e.sequence_parallel) w.tp += coll(collective_op::all_gather, act) + coll(collective_op::reduce_scatter, act);
    else w.tp += coll(collective_op::all_reduce, act);  // the head's input gradient
  }
}

/// Work of one GPU of a stage of `layers` layers per micro-batch (with the embedding when
/// `first`, the LM head when `last`).
inline stage_work work_of(const model& m, const hardware& hw, const execution& e, const layer_cost& c,
                          double layers, bool first, bool last) {
  stage_work w;
  double rec = 0, rec_tp = 0;
  if (e.recompute == recompute::full) {
    rec = c.compute_fwd();
    rec_tp = c.tp_fwd;
  } else if (e.recompute == recompute::selective && !hw.gpu.fused_attention) {
    rec = c.core_fwd;  // fused attention stores nothing to recompute
  }
  double tp = c.tp_fwd + c.tp_bwd + rec_tp;
  if (e.tp_overlap) tp = std::max(0.0, tp - (c.gemm_fwd + c.gemm_bwd + (rec_tp > 0 ? c.gemm_fwd : 0.0)));
  const double cp = std::max(0.0, c.cp_fwd - c.core_fwd) + std::max(0.0, c.cp_bwd - c.core_bwd);
  w.compute = layers * (c.compute_fwd() + c.compute_bwd() + rec);
  w.recompute = layers * rec;
  w.bwd_compute = layers * (c.compute_bwd() + rec);
  w.tp = layers * tp;
  w.cp = layers * cp;
  add_ends(w, m, hw, e, first, last);
  return w;
}

inline stage_work work_of_stage(const model& m, const hardware& hw, const execution& e, const layer_cost& c,
                                std::int64_t i) {
  stage_work w = work_of(m, hw, e, c, double(stage_layers(e, m, i)), i == 0, i == e.pp - 1);
  const stage_memory mem = memory_of_stage(m, e, i, hw.gpu.fused_attention);
  w.params = (mem.layer_weights + mem.embedding_weights) / 2;
  return w;
}

/// One activation message between neighbouring stages, seconds.
inline double send_seconds(const model& m, const hardware& sys, const execution& e) {
  if (e.pp == 1) return 0.0;
  const double act = double(e.micro_batch) * double(m.seq) / double(e.cp) * double(m.hidden) * 2;
  const std::int64_t group = e.tp * e.cp * e.dp;
  const double msg = e.tp > 1 ? act / double(e.tp) : act;
  double t = collective_seconds(sys, collective_op::point_to_point, msg, 2, 2 * group);
  if (e.tp > 1 && !e.sequence_parallel) t += collective_seconds(sys, collective_op::all_gather, act, e.tp, e.tp);
  return t;
}

/// Gradient reduction of one stage's `params` over dp · cp, seconds as issued.
inline double dp_seconds(const hardware& sys, const execution& e, double params) {
  const std::int64_t n = e.dp * e.cp, span = e.tp * e.cp * e.dp;
  if (n <= 1) return 0.0;
  if (e.distributed_optimizer)
    return collective_seconds(sys, collective_op::reduce_scatter, params * 4, n, span) +
           collective_seconds(sys, collective_op::all_gather, params * 2, n, span);
  return collective_seconds(sys, collective_op::all_reduce, params * 4, n, span);
}

}  // namespace detail

/// Evaluates `e` of `m` on `sys`. Throws std::invalid_argument (naming the field) for an
/// execution that cannot run the model or a system that cannot be used; a plan that does not fit
/// in memory is evaluated all the same, with `fits` false.
[[nodiscard]] inline evaluation evaluate(const model& m, const hardware& sys, const execution& e) {
  check_model(m);
  check_system(sys);
  check_execution(e, m);
  evaluation r;
  r.micro_batches = e.micro_batches();
  r.gpus = e.gpus();
  const layer_cost c = cost_of_layer(m, sys, e);
  std::vector<detail::stage_work> w;
  for (std::int64_t i = 0; i < e.pp; ++i) w.push_back(detail::work_of_stage(m, sys, e, c, i));
  std::size_t imax = 0;
  double sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    r.stage_s.push_back(w[i].total());
    sum += w[i].total();
    if (w[i].total() > w[imax].total()) imax = i;
  }
  const double mb = double(r.micro_batches), v = double(e.vp), tmax = w[imax].total();
  auto& bd = r.breakdown;
  bd.compute_s = mb * w[imax].compute;
  bd.recompute_s = mb * w[imax].recompute;
  bd.tp_exposed_s = mb * w[imax].tp;
  bd.cp_exposed_s = mb * w[imax].cp;
  bd.bubble_s = (sum - tmax) / v;
  bd.pp_exposed_s = e.pp > 1 ? (2 * v * mb + 2 * double(e.pp - 1)) * detail::send_seconds(m, sys, e) : 0.0;
  // Tail: gradient reduction, embedding sync and optimizer, stage by stage.
  const double shard = e.distributed_optimizer ? double(e.dp * e.cp) : 1.0;
  double tail = 0, tail_dp = 0, tail_opt = 0;
  for (std::int64_t i = 0; i < e.pp; ++i) {
    const auto& wi = w[static_cast<std::size_t>(i)];
    double dp = detail::dp_seconds(sys, e, wi.params);
    if (e.dp_overlap && dp > 0) {
      const double last_bucket = detail::dp_seconds(sys, e, params_per_layer(m).per_rank(e.tp));
      dp = std::max(dp - wi.bwd_compute / v, std::min(dp, last_bucket));
    }
    if (m.tied_embeddings && e.pp > 1 && (i == 0 || i == e.pp - 1))
      dp += collective_seconds(sys, collective_op::all_reduce, embedding_params(m) / double(e.tp) * 4, 2,
                               2 * e.tp * e.cp * e.dp * (e.pp - 1));
    const double opt = memory_seconds(sys.gpu, optimizer_bytes(wi.params, shard, e.dtype));
    const double ahead = double(i) * wi.bwd_compute / v;
    const double end = dp + opt - ahead;
    if (i == 0 || end > tail) {
      tail = end;
      tail_dp = dp;
      tail_opt = opt;
    }
  }
  bd.dp_exposed_s = tail_dp;
  bd.optimizer_s = tail_opt;
  if (tail < tail_dp + tail_opt) {  // a later stage's tail ends inside stage 0's drain: count what shows
    const double shown = std::max(0.0, tail), scale = shown / (tail_dp + tail_opt);
    bd.dp_exposed_s = tail_dp * scale;
    bd.optimizer_s = tail_opt * scale;
  }
  r.iteration_s = bd.compute_s + bd.tp_exposed_s + bd.cp_exposed_s + bd.bubble_s + bd.pp_exposed_s + bd.dp_exposed_s +
                  bd.optimizer_s;
  const double tokens = double(e.global_batch) * double(m.seq);
  r.tokens_per_s_per_gpu = tokens / r.iteration_s / double(r.gpus);
  const double model_flops = 3 * forward_flops_per_sample(m) * double(e.global_batch);
  double extra = 0;  // recomputed FLOPs per sample
  if (e.recompute == recompute::full) extra = forward_flops_per_sample(m) - 2 * double(m.seq) * double(m.hidden) * double(m.vocab);
  else if (e.recompute == recompute::selective && !sys.gpu.fused_attention) extra = double(m.layers) * 4 * double(m.seq) * double(m.seq) * double(m.heads) * double(m.head_dim);
  r.model_tflops_per_gpu = model_flops / r.iteration_s / double(r.gpus) / 1e12;
  r.hardware_tflops_per_gpu = (model_flops + extra * double(e.global_batch)) / r.iteration_s / double(r.gpus) / 1e12;
  r.memory = memory_per_stage(m, e, sys.gpu.fused_attention);
  for (const auto& s : r.memory)
    if (s.total() > r.peak_memory.total()) r.peak_memory = s;
  r.memory_gib_per_gpu = r.peak_memory.total() / double(1ull << 30);
  r.fits = r.memory_gib_per_gpu <= sys.gpu.hbm_gib;
  return r;
}

}  // namespace devplace::llm
