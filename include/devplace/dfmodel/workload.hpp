#pragma once
/// \file dfmodel/workload.hpp
/// DFModel workloads (seed-dfmodel.md §1.1): a dataflow graph of compute kernels joined by tensors
/// (one producer, one consumer; an output read by k kernels is k tensors). A GEMM computes
/// Out[M×N] = W[M×K]·X[K×N] `outer` times (outer is folded into M); N is the streamed (token)
/// dimension. `gpt3_layer` generates the forward layer used by the paper's Table VI.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace devplace::dfmodel {

enum class kernel_kind { systolic, simd };
/// What the kernel reads: a weight and one activation, two activations, or element-wise inputs.
enum class kernel_op { gemm_weight, gemm_two_inputs, elementwise, elementwise_two_inputs };
/// A loop dimension (sharding schemes and tiling are named by it); `none` = unsharded / untiled.
enum class loop_dim { outer, m, k, n, none };

struct kernel {
  std::string name;
  kernel_kind kind = kernel_kind::simd;
  kernel_op op = kernel_op::elementwise;
  std::int64_t outer = 1, m = 1, k = 1, n = 1;
  loop_dim tiling = loop_dim::n;      ///< the tiled (streamed) dimension
  bool backward = false;
  int config = -1;                    ///< pinned configuration (>= 0) or free (-1)
  /// Gradient all-reduce over DP of this kernel's output once per step (weight-update GEMMs).
  bool periodic_all_reduce = false;
  /// Pinned sharding scheme (`loop_dim` as an int: 0 outer, 1 M, 2 K, 3 N, 4 none), or free.
  std::optional<int> scheme;

  [[nodiscard]] bool has_weight() const noexcept { return op == kernel_op::gemm_weight; }
  /// FLOP of one full instance (no sharding): 2·M·K·N·outer for systolic kernels, M·N·outer for SIMD.
  [[nodiscard]] double flop() const noexcept {
    const double mn = static_cast<double>(outer) * static_cast<double>(m) * static_cast<double>(n);
    return kind == kernel_kind::systolic ? 2.0 * mn * static_cast<double>(k) : mn;
  }
};

struct tensor {
  std::size_t src = 0, dst = 0;       ///< producer and consumer kernel indices
  int port = 0;                       ///< which input of the consumer: 0 = first, 1 = second
};

/// The LLM figures of the step-time formula.
struct llm_params {
  std::int64_t hidden = 12288, heads = 96, head_dim = 128, seq = 2048, layers = 96;
  std::int64_t global_batch = 2304, micro_batch = 1;
  double word_bytes = 2;
};

struct workload {
  std::string name;
  std::vector<kernel> kernels;
  std::vector<tensor> tensors;
  llm_params llm;
};

/// Throws std::invalid_argument unless sizes are >= 1, tensors name existing kernels with
/// src < dst (kernels listed in a topological order), and ports are 0 or 1.
inline void check_workload(const workload& w) {
  auto bad = [&](const std::string& s) { throw std::invalid_argument("dfmodel workload: " + s); };
  if (w.kernels.empty()) bad("no kernels");
  if (w.kernels.size() > 64) bad("at most 64 kernels per graph");
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const auto& k = w.kernels[i];
    if (k.outer < 1 || k.m < 1 || k.k < 1 || k.n < 1) bad("kernel " + k.name + ": sizes must be >= 1");
    if (k.config < -1) bad("kernel " + k.name + ": config must be -1 (free) or >= 0");
  }
  for (std::size_t j = 0; j < w.tensors.size(); ++j) {
    const auto& t = w.tensors[j];
    if (t.src >= w.kernels.size() || t.dst >= w.kernels.size())
      bad("tensor " + std::to_string(j) + " names a kernel that is not there");
    if (t.src >= t.dst) bad("tensor " + std::to_string(j) + ": kernels must be listed in topological order (src < dst)");
    if (t.port != 0 && t.port != 1) bad("tensor " + std::to_string(j) + ": port must be 0 or 1");
  }
  const auto& l = w.llm;
  if (l.seq < 1 || l.layers < 1 || l.global_batch < 1 || l.micro_batch < 1 || !(l.word_bytes > 0))
    bad("llm: seq, layers, batches >= 1 and word_bytes > 0");
}

/// Topological level of every kernel (longest path from a source, in tensors), and the buffer
/// depth of every tensor, level(dst) − level(src) + 1 (the on-chip FIFO of a fused tensor).
[[nodiscard]] inline std::vector<std::size_t> kernel_levels(const workload& w) {
  std::vector<std::size_t> lvl(w.kernels.size(), 0);
  for (const auto& t : w.tensors) lvl[t.dst] = std::max(lvl[t.dst], lvl[t.src] + 1);  // src < dst
  return lvl;
}

/// One forward GPT layer as in the authors' generator (18 kernels, 21 tensors): Add_Prev_Layer,
/// LayerNorm_1, Q, K, V (outer = heads, M = head_dim, K = hidden), MHA_GEMM_1 (M = seq, K =
/// head_dim), SOFTMAX, DropOut_1, MHA_GEMM_2 (M = head_dim, K = seq), PROJ_GEMM, DropOut_2,
/// Add_1, LayerNorm_2, FFN0 (M = 4·hidden), GeLU, FFN1 (K = 4·hidden), DropOut_3, Add_2; N = seq,
/// tiled. All kernels free (config −1).
[[nodiscard]] inline workload gpt3_layer(const llm_params& p) {
  if (p.hidden < 1 || p.heads < 1 || p.head_dim < 1 || p.seq < 1) throw std::invalid_argument("gpt3_layer: sizes >= 1");
  workload w;
  w.name = "gpt_layer_fwd";
  w.llm = p;
  const auto H = p.hidden, S = p.seq, A = p.heads, D = p.head_dim;
  using K = kernel_kind;
  using O = kernel_op;
  auto add = [&](std::string name, K kind, O op, std::int64_t outer, std::int64_t m, std::int64_t k) {
    kernel x;
    x.name = std::move(name);
    x.kind = kind;
    x.op = op;
    x.outer = outer;
    x.m = m;
    x.k = k;
    x.n = S;
    w.kernels.push_back(x);
  };
  add("Add_Prev_Layer", K::simd, O::elementwise, 1, H, 1);
  add("LayerNorm_1", K::simd, O::elementwise, 1, H, 1);
  add("Q", K::systolic, O::gemm_weight, A, D, H);
  add("K", K::systolic, O::gemm_weight, A, D, H);
  add("V", K::systolic, O::gemm_weight, A, D, H);
  add("MHA_GEMM_1", K::systolic, O::gemm_two_inputs, A, S, D);
  add("SOFTMAX", K::simd, O::elementwise, A, S, 1);
  add("DropOut_1", K::simd, O::elementwise, A, S, 1);
  add("MHA_GEMM_2", K::systolic, O::gemm_two_inputs, A, D, S);
  add("PROJ_GEMM", K::systolic, O::gemm_weight, 1, H, H);
  add("DropOut_2", K::simd, O::elementwise, 1, H, 1);
  add("Add_1", K::simd, O::elementwise_two_inputs, 1, H, 1);
  add("LayerNorm_2", K::simd, O::elementwise, 1, H, 1);
  add("FFN0", K::systolic, O::gemm_weight, 1, 4 * H, H);
  add("GeLU", K::simd, O::elementwise, 1, 4 * H, 1);
  add("FFN1", K::systolic, O::gemm_weight, 1, H, 4 * H);
  add("DropOut_3", K::simd, O::elementwise, 1, H, 1);
  add("Add_2", K::simd, O::elementwise_two_inputs, 1, H, 1);
  // (src, dst, port), 1-based as in the authors' setup files.
  const int e[21][3] = {{1, 2, 0},  {2, 3, 0},   {2, 4, 0},   {2, 5, 0},   {3, 6, 0},   {4, 6, 1},   {6, 7, 0},
                        {7, 8, 0},  {5, 9, 0},   {8, 9, 1},   {9, 10, 0},  {10, 11, 0}, {11, 12, 0}, {1, 12, 1},
                        {12, 13, 0}, {13, 14, 0}, {14, 15, 0}, {15, 16, 0}, {16, 17, 0}, {17, 18, 0}, {12, 18, 1}};
  for (const auto& t : e)
    w.tensors.push_back({static_cast<std::size_t>(t[0] - 1), static_cast<std::size_t>(t[1] - 1), t[2]});
  return w;
}

}  // namespace devplace::dfmodel
