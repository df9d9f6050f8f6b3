#pragma once
/// \file llm/memory.hpp
/// Memory per GPU of an LLM execution, stage by stage: weights, gradients, optimizer states and
/// activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
/// Models", §4, generalised to GQA, any MLP width and SwiGLU).
///
/// **States.** Mixed precision as Megatron-LM keeps it: 2-byte weights, 4-byte (fp32) gradient
/// accumulators, and Adam's fp32 master weights, first and second moments (12 bytes), divided
/// over the dp · cp ranks with the distributed optimizer: 6 + 12 / (dp · cp) bytes per parameter.
///
/// **Activations of one layer, one micro-batch** (b samples of s / cp tokens, tp ranks; "sbh" =
/// b · s / cp · h elements; a_t = heads / tp, k_t = kv heads per rank, f_t = ffn / tp):
///
///   kept whole on every tp rank unless sequence parallel (then / tp):
///     2 sbh LayerNorm-1 input + 2 sbh QKV input + 1 sbh attention dropout mask
///     + 2 sbh LayerNorm-2 input + 2 sbh MLP input + 1 sbh MLP dropout mask          = 10 sbh
///   sharded by tp:  2 b s' (a_t d) Q + 4 b s' (k_t d) K, V + 2 b s' (a_t d) projection input
///     + 4 b s' f_t (GeLU in and out; SwiGLU: 6 b s' f_t)                          (MHA, f = 4h: 24 sbh / tp)
///   attention core: 5 b a_t s' s  (softmax output 2, dropout mask 1, dropout output 2)
///
/// With MHA and f = 4h this is Korthikanti's s b h (10 + 24/t + 5 a s / (h t)), and with sequence
/// parallelism s b h / t (34 + 5 a s / h). Selective recomputation drops the attention core; full
/// recomputation keeps only the layer input (2 sbh, / tp with sequence parallelism). Fused
/// (flash) attention never stores the core: 4 bytes of softmax statistics per query and head.
///
/// **Micro-batches in flight** on stage i of p: 1F1B keeps min(m, p − i) micro-batches of its
/// layers; interleaved 1F1B (v chunks) keeps min(m v, 2 (p − i − 1) + (v − 1) p + 1) chunks of
/// L_i / v layers: the first stage L_i p (1 + (p − 1) / (p v)), Korthikanti's factor.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "devplace/llm/execution.hpp"
#include "devplace/llm/model.hpp"

namespace devplace::llm {

/// Bytes of one GPU of one pipeline stage, by kind. The `layer_` parts are the transformer
/// layers' (what Korthikanti's Figure 1 reports); `embedding_` parts are the embedding, the final
/// LayerNorm and the LM head with their activations.
struct stage_memory {
  double layer_weights = 0, layer_gradients = 0, layer_optimizer = 0, layer_activations = 0;
  double embedding_weights = 0, embedding_gradients = 0, embedding_optimizer = 0, embedding_activations = 0;
  [[nodiscard]] double weights() const noexcept { return layer_weights + embedding_weights; }
  [[nodiscard]] double gradients() const noexcept { return layer_gradients + embedding_gradients; }
  [[nodiscard]] double optimizer() const noexcept { return layer_optimizer + embedding_optimizer; }
  [[nodiscard]] double activations() const noexcept { return layer_activations + embedding_activations; }
  [[nodiscard]] double layer_states() const noexcept { return layer_weights + layer_gradients + layer_optimizer; }
  [[nodiscard]] double total() const noexcept { return weights() + gradients() + optimizer() + activations(); }
};

/// Key/value heads one tensor-parallel rank holds: kv_heads / tp, or 1 when tp exceeds them.
[[nodiscard]] constexpr double kv_heads_per_rank(const model& m, std::int64_t tp) noexcept {
  return m.kv_heads >= tp ? double(m.kv_heads) / double(tp) : 1.0;
}

/// Activation bytes of one layer for one micro-batch on one GPU.
[[nodiscard]] inline double layer_activation_bytes(const model& m, const execution& e, bool fused_attention = false) {
  const double b = double(e.micro_batch), s = double(m.seq), sl = s / double(e.cp), h = double(m.hidden);
  const double t = double(e.tp), sbh = b * sl * h;
  const double unsharded = e.sequence_parallel ? 1.0 / t : 1.0;
  if (e.recompute == recompute::full) return 2 * sbh * unsharded;
  const double at = double(m.heads) / t, kt = kv_heads_per_rank(m, e.tp), d = double(m.head_dim);
  const double ft = double(m.ffn) / t;
  const double whole = 10 * sbh * unsharded;
  const double mlp_inner = (m.ffn_kind == ffn_kind::swiglu ? 6.0 : 4.0) * b * sl * ft;
  const double sharded = 2 * b * sl * at * d + 4 * b * sl * kt * d + 2 * b * sl * at * d + mlp_inner;
  // Fused attention keeps only the softmax statistics (4 bytes per query and head).
  const double core = fused_attention ? 4 * b * at * sl : e.recompute == recompute::selective ? 0.0 : 5 * b * at * sl * s;
  return whole + sharded + core;
}

/// Layer-activation sets (micro-batch × layer) stage `i` holds at its peak.
[[nodiscard]] inline double layers_in_flight(const model& m, const execution& e, std::int64_t i) {
  const double Li = double(stage_layers(e, m, i));
  const std::int64_t mb = e.micro_batches(), p = e.pp, v = e.vp;
  if (v == 1) return Li * double(std::min<std::int64_t>(mb, p - i));
  const std::int64_t chunks = std::min<std::int64_t>(mb * v, 2 * (p - i - 1) + (v - 1) * p + 1);
  return double(chunks) * Li / double(v);
}

/// Memory of one GPU of pipeline stage `i` (0 ≤ i < pp).
[[nodiscard]] inline stage_memory memory_of_stage(const model& m, const execution& e, std::int64_t i,
                                                 bool fused_attention = false) {
  stage_memory r;
  const double t = double(e.tp), shard = e.distributed_optimizer ? double(e.dp * e.cp) : 1.0;
  const double layer_p = double(stage_layers(e, m, i)) * params_per_layer(m).per_rank(e.tp);
  double emb_p = 0;
  const bool first = i == 0, last = i == e.pp - 1;
  if (first) emb_p += embedding_params(m) / t;
  if (last) {
    emb_p += 2 * double(m.hidden);                                       // final LayerNorm
    if (!m.tied_embeddings || e.pp > 1) emb_p += embedding_params(m) / t;  // LM head (or its tied copy)
  }
  r.layer_weights = 2 * layer_p;
  r.layer_gradients = 4 * layer_p;
  r.layer_optimizer = 12 * layer_p / shard;
  r.embedding_weights = 2 * emb_p;
  r.embedding_gradients = 4 * emb_p;
  r.embedding_optimizer = 12 * emb_p / shard;
  r.layer_activations = layer_activation_bytes(m, e, fused_attention) * layers_in_flight(m, e, i);
  const double b = double(e.micro_batch), sl = double(m.seq) / double(e.cp), h = double(m.hidden);
  const double sp = e.sequence_parallel ? 1.0 / t : 1.0;
  double extra = 0;
  const double in_flight_first = layers_in_flight(m, e, 0) / std::max(1.0, double(stage_layers(e, m, 0)));
  if (first) extra += b * sl * h * sp * in_flight_first;      // embedding dropout mask
  if (last) extra += 4 * b * sl * h * sp + 4 * b * sl * double(m.vocab) / t;  // final norm in/out, fp32 logits
  r.embedding_activations = extra;
  return r;
}

/// Every stage's memory, stage 0 first.
[[nodiscard]] inline std::vector<stage_memory> memory_per_stage(const model& m, const execution& e,
                                                              bool fused_attention = false) {
  std::vector<stage_memory> out;
  out.reserve(static_cast<std::size_t>(e.pp));
  for (std::int64_t i = 0; i < e.pp; ++i) out.push_back(memory_of_stage(m, e, i, fused_attention));
  return out;
}

}  // namespace devplace::llm
