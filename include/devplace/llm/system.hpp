#pragma once
/// \file llm/system.hpp
/// A GPU cluster as the LLM evaluation sees it, `hardware` (file format `devplace.llm-system/1`): one kind of GPU and the
/// network tiers it sits in, innermost first.
///
/// **Matrix units.** A GEMM of M × K by K × N (2 M N K FLOPs) on a GPU of peak P takes
///
///   t = max( 2 M N K / (P · e(M, N, K)),  bytes(M, N, K) / (B_hbm · e_hbm) )
///
/// with e either looked up in a table by operation size (`efficiency` of [GFLOP, fraction] pairs,
/// the largest threshold not above the size wins: Calculon's files) or, without a table, the
/// achievable fraction of large GEMMs (`achievable`, a measured "maximum achievable matmul FLOPS")
/// times the wave quantisation of the output tiles: tiles = ⌈M / tile_m⌉ ⌈N / tile_n⌉ over `sms`
/// multiprocessors run in ⌈tiles / sms⌉ waves, the last one partly idle,
///
///   e(M, N, K) = achievable · tiles / (sms · ⌈tiles / sms⌉) · k / (k + stages),  k = ⌈K / tile_k⌉,
///
/// the last factor the main loop's pipeline prologue. The output is written after the main loop
/// (the epilogue), so its bytes add to t rather than overlapping it.
///
/// **Vector units and memory.** Element-wise work takes max(flops / (P_vec · e_vec),
/// bytes / (B_hbm · e_hbm)).
///
/// **Network tiers.** Tier i groups `size` GPUs (8 in a DGX node, then the whole fabric); each GPU
/// reaches the others of its tier at `bandwidth_gbps` (per direction) times `efficiency`, with
/// `latency_us` per collective step. A group of GPUs communicates on the innermost tier that holds
/// it (cost/collective.hpp gives the ring times).
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace devplace::llm {

enum class dtype { fp32, fp16, bf16, fp8 };
inline constexpr std::size_t num_dtypes = 4;

[[nodiscard]] constexpr std::string_view to_string(dtype t) noexcept {
  switch (t) {
    case dtype::fp32: return "fp32";
    case dtype::fp16: return "fp16";
    case dtype::bf16: return "bf16";
    case dtype::fp8: return "fp8";
  }
  return "?";
}
/// Bytes per element.
[[nodiscard]] constexpr double bytes_of(dtype t) noexcept {
  return t == dtype::fp32 ? 4.0 : t == dtype::fp8 ? 1.0 : 2.0;
}

/// A size-indexed efficiency table: pairs (threshold, fraction); `at(x)` is the fraction of the
/// largest threshold ≤ x (the smallest entry's below every threshold). Empty: none given.
struct efficiency_table {
  std::vector<std::pair<double, double>> rows;  ///< sorted by threshold, ascending
  [[nodiscard]] bool empty() const noexcept { return rows.empty(); }
  [[nodiscard]] double at(double x) const noexcept {
    if (rows.empty()) return 1.0;
    double e = rows.front().second;
    for (const auto& [threshold, fraction] : rows)
      if (x >= threshold) e = fraction;
    return e;
  }
};

/// One datatype's peak and efficiency on the matrix or the vector units.
struct unit_rate {
  double tflops = 0;             ///< peak, dense; 0 = not supported
  double achievable = 1;         ///< fraction of the peak reached by large operations
  efficiency_table efficiency;   ///< by operation size in GFLOP; when given it replaces the wave model
};

struct gpu {
  std::string name;
  std::array<unit_rate, num_dtypes> matrix{};  ///< indexed by dtype
  std::array<unit_rate, num_dtypes> vector{};
  int sms = 0;                   ///< multiprocessors, for wave quantisation (0: none)
  int tile_m = 256, tile_n = 128;
  int tile_k = 0;                ///< K step of the main loop (0: no pipeline-fill term)
  int stages = 0;                ///< main-loop steps in flight before the first result (prologue)
  /// The attention kernels of the software stack: unfused (score matrix in HBM, scale-mask-softmax
  /// and dropout kernels, Megatron-LM 2022) or fused (FlashAttention: causal blocks skipped, the
  /// scores never stored, the backward pass recomputing them), with the fused kernels' achievable
  /// fractions of the matrix peak forward and backward.
  bool fused_attention = false;
  double attention_fwd_achievable = 1, attention_bwd_achievable = 1;
  double hbm_gib = 0;
  double hbm_gbps = 0;
  double hbm_achievable = 1;     ///< fraction of the HBM bandwidth streaming kernels reach
  efficiency_table hbm_efficiency;  ///< by transfer size in MB; replaces hbm_achievable when given
  [[nodiscard]] const unit_rate& mat(dtype t) const noexcept { return matrix[static_cast<std::size_t>(t)]; }
  [[nodiscard]] const unit_rate& vec(dtype t) const noexcept { return vector[static_cast<std::size_t>(t)]; }
};

struct network_tier {
  std::string name;
  std::size_t size = 1;          ///< GPUs this tier groups (the last tier: the whole fabric)
  double bandwidth_gbps = 0;     ///< per GPU, per direction
  double efficiency = 1;         ///< achievable fraction (collective bus bandwidth / link bandwidth)
  double latency_us = 0;         ///< per collective step
  [[nodiscard]] double achieved_gbps() const noexcept { return bandwidth_gbps * efficiency; }
};

struct hardware {
  std::string name;
  llm::gpu gpu;
  std::vector<network_tier> tiers;  ///< innermost first; sizes strictly increase
};

/// Throws std::invalid_argument naming the field unless the system is usable: a HBM capacity and
/// bandwidth, efficiencies in (0, 1], at least one tier, tier sizes increasing and each dividing
/// the next.
inline void check_system(const hardware& s) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("llm system: " + what); };
  if (!(s.gpu.hbm_gib > 0)) fail("gpu hbm_gib must be > 0");
  if (!(s.gpu.hbm_gbps > 0)) fail("gpu hbm_gbps must be > 0");
  if (!(s.gpu.hbm_achievable > 0 && s.gpu.hbm_achievable <= 1)) fail("gpu hbm_achievable must be in (0, 1]");
  for (double a : {s.gpu.attention_fwd_achievable, s.gpu.attention_bwd_achievable})
    if (!(a > 0 && a <= 1)) fail("gpu attention achievable fractions must be in (0, 1]");
  if (s.gpu.sms < 0 || s.gpu.tile_m <= 0 || s.gpu.tile_n <= 0 || s.gpu.tile_k < 0 || s.gpu.stages < 0)
    fail("gpu sms, tile_k, stages >= 0 and tiles > 0");
  for (std::size_t t = 0; t < num_dtypes; ++t)
    for (const auto* u : {&s.gpu.matrix[t], &s.gpu.vector[t]}) {
      if (!(u->tflops >= 0)) fail("peak tflops must be >= 0");
      if (!(u->achievable > 0 && u->achievable <= 1)) fail("achievable fractions must be in (0, 1]");
    }
  if (s.tiers.empty()) fail("at least one network tier");
  for (std::size_t i = 0; i < s.tiers.size(); ++i) {
    const auto& n = s.tiers[i];
    const std::string at = "tier " + std::to_string(i) + ": ";
    if (n.size < 1) fail(at + "size must be >= 1");
    if (!(n.bandwidth_gbps > 0)) fail(at + "bandwidth must be > 0");
    if (!(n.efficiency > 0 && n.efficiency <= 1)) fail(at + "efficiency must be in (0, 1]");
    if (!(n.latency_us >= 0)) fail(at + "latency must be >= 0");
    if (i > 0 && (n.size <= s.tiers[i - 1].size || n.size % s.tiers[i - 1].size != 0))
      fail(at + "size must be a multiple of, and larger than, the tier inside it");
  }
}

/// The innermost tier that holds a group spanning `span` consecutive GPUs (the last tier when
/// none is large enough: the fabric is taken to reach every GPU).
[[nodiscard]] inline const network_tier& tier_for_span(const hardware& s, std::size_t span) {
  for (const auto& t : s.tiers)
    if (span <= t.size) return t;
  return s.tiers.back();
}

}  // namespace devplace::llm
