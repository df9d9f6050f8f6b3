#pragma once
/// \file llm/execution.hpp
/// How an LLM is trained on the GPUs (`devplace.llm-execution/1`): tensor (tp), pipeline (pp),
/// data (dp) and context (cp) parallel degrees, virtual pipeline stages per GPU (vp, Megatron's
/// interleaved 1F1B), micro- and global batch, activation recomputation, sequence parallelism,
/// the sharded ("distributed") optimizer, overlap of the data-parallel gradient reduction with the
/// backward pass and of the tensor-parallel collectives with the GEMMs, and the datatype.
///
/// GPUs = tp · cp · dp · pp, ranked as Megatron ranks them: tp fastest, then cp, dp, pp, so a
/// tensor-parallel group is tp consecutive GPUs and a pipeline neighbour is tp · cp · dp away.
/// Micro-batches per iteration m = global_batch / (micro_batch · dp).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devplace/llm/model.hpp"
#include "devplace/llm/system.hpp"

namespace devplace::llm {

enum class recompute { none, selective, full };

[[nodiscard]] constexpr std::string_view to_string(recompute r) noexcept {
  switch (r) {
    case recompute::none: return "none";
    case recompute::selective: return "selective";
    case recompute::full: return "full";
  }
  return "?";
}

struct execution {
  std::int64_t tp = 1, pp = 1, dp = 1, cp = 1;
  std::int64_t vp = 1;                 ///< model chunks per GPU (interleaved 1F1B when > 1)
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1;
  llm::recompute recompute = llm::recompute::none;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  bool dp_overlap = false;
  bool tp_overlap = false;
  llm::dtype dtype = llm::dtype::bf16;
  /// Optional uneven split: layers of each pipeline stage (pp entries summing to L); empty means
  /// L / pp each.
  std::vector<std::int64_t> layers_per_stage;

  [[nodiscard]] constexpr std::int64_t gpus() const noexcept { return tp * pp * dp * cp; }
  [[nodiscard]] constexpr std::int64_t micro_batches() const noexcept { return global_batch / (micro_batch * dp); }
};

/// Throws std::invalid_argument naming the field unless `e` can run `m`: degrees ≥ 1, the global
/// batch a multiple of micro_batch · dp, heads and kv_heads divisible by tp (or kv_heads < tp
/// with tp a multiple: the heads are replicated), the sequence by cp, with vp > 1 a pipeline
/// (pp > 1) and micro-batches in multiples of pp, the layers split into
/// pp · vp chunks (or `layers_per_stage` with pp entries, each a multiple of vp), fp8 on a GPU
/// whose matrix units have it.
inline void check_execution(const execution& e, const model& m) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("llm execution: " + what); };
  auto pos = [&](std::int64_t x, const char* f) {
    if (x < 1) fail(std::string(f) + " must be >= 1, got " + std::to_string(x));
  };
  pos(e.tp, "tp");
  pos(e.pp, "pp");
  pos(e.dp, "dp");
  pos(e.cp, "cp");
  pos(e.vp, "vp");
  pos(e.micro_batch, "micro_batch");
  pos(e.global_batch, "global_batch");
  if (e.global_batch % (e.micro_batch * e.dp) != 0)
    fail("global_batch " + std::to_string(e.global_batch) + " is not a multiple of micro_batch * dp = " +
         std::to_string(e.micro_batch * e.dp));
  if (m.heads % e.tp != 0) fail("tp " + std::to_string(e.tp) + " does not divide the heads " + std::to_string(m.heads));
  if (m.kv_heads % e.tp != 0 && e.tp % m.kv_heads != 0)
    fail("tp " + std::to_string(e.tp) + " and kv_heads " + std::to_string(m.kv_heads) + ": one must divide the other");
  if (m.ffn % e.tp != 0) fail("tp " + std::to_string(e.tp) + " does not divide ffn " + std::to_string(m.ffn));
  if (m.seq % e.cp != 0) fail("cp " + std::to_string(e.cp) + " does not divide seq " + std::to_string(m.seq));
  if (e.vp > 1 && e.pp == 1) fail("vp > 1 needs pp > 1 (interleaving splits a pipeline stage)");
  if (e.vp > 1 && e.micro_batches() % e.pp != 0)
    fail("vp > 1 needs the micro-batches (" + std::to_string(e.micro_batches()) + ") to be a multiple of pp " +
         std::to_string(e.pp) + " (the interleaved schedule runs them in groups of pp)");
  if (e.layers_per_stage.empty()) {
    if (m.layers % (e.pp * e.vp) != 0)
      fail("layers " + std::to_string(m.layers) + " do not split into pp * vp = " + std::to_string(e.pp * e.vp) +
           " equal chunks (give layers_per_stage)");
  } else {
    if (static_cast<std::int64_t>(e.layers_per_stage.size()) != e.pp)
      fail("layers_per_stage has " + std::to_string(e.layers_per_stage.size()) + " entries, pp is " + std::to_string(e.pp));
    std::int64_t sum = 0;
    for (auto l : e.layers_per_stage) {
      if (l < 0 || l % e.vp != 0) fail("layers_per_stage entries must be >= 0 and multiples of vp");
      sum += l;
    }
    if (sum != m.layers) fail("layers_per_stage sums to " + std::to_string(sum) + ", the model has " + std::to_string(m.layers));
  }
}

/// Layers of pipeline stage `i`.
[[nodiscard]] inline std::int64_t stage_layers(const execution& e, const model& m, std::int64_t i) {
  return e.layers_per_stage.empty() ? m.layers / e.pp : e.layers_per_stage[static_cast<std::size_t>(i)];
}

}  // namespace devplace::llm
