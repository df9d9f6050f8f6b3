#pragma once
/// \file sweep/llm_space.hpp
/// The `llm` generator: LLM system studies (docs/llm.md, docs/sweep.md). Every point is the
/// proved-best execution (`llm::search_executions`) of one model on one system with one GPU count
/// and global batch:
///
///   "space": {"systems": ["dgx_a100_80g.json", ...],   devplace.llm-system/1 or Calculon's files
///             "models": ["gpt3_175b.json", ...],       devplace.llm-model/1 or Calculon's files
///             "gpus": [64, 1024],
///             "global_batch": [1536],
///             "dtype": "bf16",                         optional: fp16, bf16 (default) or fp8
///             "max_cp": 1}                             optional: the largest context-parallel degree
///
/// Point order: system, model, gpus, global_batch (the last fastest). A point whose datatype the
/// GPU lacks, or where nothing fits, is a result with status `infeasible`.
///
/// Declared here, defined in llm_space.ipp, which this header does not include (it reads LLM
/// systems and models and runs the execution search): header-only, a file that calls
/// `prepare_llm_space` includes `devplace/sweep/llm_space.ipp` too (or
/// `devplace/sweep/registry.ipp`, or `devplace/sweep.hpp`); compiled mode (`devplace::core`, see
/// config.hpp) needs nothing more.
#include "devplace/config.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

namespace detail {
/// The definition of `prepare_llm_space` below, in sweep/llm_space.ipp; where that file is not
/// included (header-only mode) and `devplace::core` not linked, a call does not compile: this type
/// is incomplete.
template <int>
struct prepare_llm_space_defined_in_sweep_llm_space_ipp;
}  // namespace detail

/// The `llm` generator's `prepare`. Throws io::input_error naming the space file, the field and
/// the reason. Called as `prepare_llm_space(f, ctx)`: the template parameter is never given.
template <int N = 0>
[[nodiscard]] point_space prepare_llm_space(const space_file& f, const prepare_context& ctx = {}) {
  return detail::prepare_llm_space_defined_in_sweep_llm_space_ipp<N>::run(f, ctx);
}

}  // namespace devplace::sweep

#if !DEVPLACE_HEADER_ONLY
namespace devplace::sweep {
extern template point_space prepare_llm_space<0>(const space_file&, const prepare_context&);
}  // namespace devplace::sweep
#endif
