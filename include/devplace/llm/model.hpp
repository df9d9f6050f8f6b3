#pragma once
/// \file llm/model.hpp
/// A decoder-only transformer as the LLM evaluation sees it (`devplace.llm-model/1`): L layers of
/// attention (a query heads, k key/value heads of dimension d: MHA k = a, GQA 1 < k < a, MQA
/// k = 1) and an MLP of width f (GeLU / squared ReLU: two matrices; SwiGLU: three), with
/// LayerNorm, a token embedding of V × h (tied or not to the LM head), sequence length s.
///
/// Parameter counts (a d = heads · head_dim, k d = kv_heads · head_dim):
///
///   attention   h (a d + 2 k d) + (a d + 2 k d)   QKV weight and bias
///             + a d h + h                         output projection and bias
///   MLP         n_in h f + n_in f + f h + h       n_in = 2 for SwiGLU, else 1
///   norms       4 h                               two LayerNorms (weight, bias)
///   embedding   V h (+ V h for an untied LM head), + h for the final LayerNorm
///
/// With a d = h, f = 4h and MHA a layer has 12 h² + 13 h parameters (Narayanan et al. 2021).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace devplace::llm {

enum class ffn_kind { gelu, swiglu, squared_relu };

[[nodiscard]] constexpr std::string_view to_string(ffn_kind k) noexcept {
  switch (k) {
    case ffn_kind::gelu: return "gelu";
    case ffn_kind::swiglu: return "swiglu";
    case ffn_kind::squared_relu: return "squared_relu";
  }
  return "?";
}

struct model {
  std::string name;
  std::int64_t hidden = 0;         ///< h
  std::int64_t ffn = 0;            ///< f, the MLP's inner width
  llm::ffn_kind ffn_kind = llm::ffn_kind::gelu;
  std::int64_t layers = 0;         ///< L
  std::int64_t heads = 0;          ///< a, query heads
  std::int64_t kv_heads = 0;       ///< k, key/value heads (a: MHA, 1: MQA)
  std::int64_t head_dim = 0;       ///< d
  std::int64_t seq = 0;            ///< s, tokens per sample
  std::int64_t vocab = 51200;      ///< V
  bool tied_embeddings = true;     ///< the LM head reuses the embedding matrix
};

/// Matrices the MLP's input side has: 2 for SwiGLU (gate and up), else 1.
[[nodiscard]] constexpr std::int64_t mlp_in_matrices(ffn_kind k) noexcept { return k == ffn_kind::swiglu ? 2 : 1; }

/// Throws std::invalid_argument naming the field unless every size is positive and the heads
/// divide: kv_heads ≤ heads and heads % kv_heads == 0.
inline void check_model(const model& m) {
  auto pos = [](std::int64_t x, const char* field) {
    if (x <= 0) throw std::invalid_argument(std::string("llm model: ") + field + " must be > 0, got " + std::to_string(x));
  };
  pos(m.hidden, "hidden");
  pos(m.ffn, "ffn");
  pos(m.layers, "layers");
  pos(m.heads, "heads");
  pos(m.kv_heads, "kv_heads");
  pos(m.head_dim, "head_dim");
  pos(m.seq, "seq");
  pos(m.vocab, "vocab");
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    throw std::invalid_argument("llm model: kv_heads must divide heads, got heads " + std::to_string(m.heads) +
                                ", kv_heads " + std::to_string(m.kv_heads));
}

/// Width of the query projection, a d.
[[nodiscard]] constexpr double q_width(const model& m) noexcept { return double(m.heads) * double(m.head_dim); }
/// Width of the key (or value) projection, k d.
[[nodiscard]] constexpr double kv_width(const model& m) noexcept { return double(m.kv_heads) * double(m.head_dim); }

/// Parameters of one transformer layer, split into the part tensor parallelism shards (weights
/// of the column- and row-parallel linears, the column-parallel biases) and the part every
/// tensor-parallel rank keeps whole (row-parallel biases, LayerNorms).
struct layer_params {
  double sharded = 0, replicated = 0;
  [[nodiscard]] constexpr double total() const noexcept { return sharded + replicated; }
  /// Per tensor-parallel rank.
  [[nodiscard]] constexpr double per_rank(std::int64_t tp) const noexcept { return sharded / double(tp) + replicated; }
};

[[nodiscard]] constexpr layer_params params_per_layer(const model& m) noexcept {
  const double h = double(m.hidden), f = double(m.ffn), qkv = q_width(m) + 2 * kv_width(m);
  const double nin = double(mlp_in_matrices(m.ffn_kind));
  layer_params p;
  p.sharded = h * qkv + qkv            // QKV weight + bias (column-parallel)
              + q_width(m) * h         // output projection (row-parallel)
              + nin * h * f + nin * f  // MLP input side + bias (column-parallel)
              + f * h;                 // MLP output (row-parallel)
  p.replicated = h + h + 4 * h;        // two row-parallel biases, two LayerNorms
  return p;
}

/// Parameters of the token embedding (V h, sharded over the vocabulary by tensor parallelism).
[[nodiscard]] constexpr double embedding_params(const model& m) noexcept { return double(m.vocab) * double(m.hidden); }

/// All parameters: layers, embedding, an untied LM head, the final LayerNorm.
[[nodiscard]] constexpr double total_params(const model& m) noexcept {
  return double(m.layers) * params_per_layer(m).total() + embedding_params(m) * (m.tied_embeddings ? 1 : 2) +
         2 * double(m.hidden);
}

}  // namespace devplace::llm
