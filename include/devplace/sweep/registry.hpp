#pragma once
/// \file sweep/registry.hpp
/// The table of sweep generators, by the name a space file's `generator` field gives. Adding one:
/// write `sweep/<name>_space.hpp` with `point_space prepare_<name>_space(const space_file&, const
/// prepare_context&)`
/// (points in a fixed order, `inputs` and `evaluate` pure functions of the index), include it
/// here and add its row to `generators()`.
#include <span>
#include <string>
#include <string_view>

#include "devplace/sweep/dfmodel_space.hpp"
#include "devplace/sweep/llm_space.hpp"
#include "devplace/sweep/phaze_space.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

/// Every generator this build knows, in a fixed order.
[[nodiscard]] inline std::span<const generator> generators() {
  static constexpr generator table[] = {
      {"phaze", "PHAZE accelerator configurations x graphs x device counts", &prepare_phaze_space},
      {"dfmodel", "DFModel systems: setups x chips x link / DRAM bandwidth x SRAM", &prepare_dfmodel_space},
      {"llm", "LLM systems x models x GPU counts x global batches: the proved-best execution of each", &prepare_llm_space},
  };
  return table;
}

/// The generator called `name`, or nullptr.
[[nodiscard]] inline const generator* find_generator(std::string_view name) {
  for (const auto& g : generators())
    if (g.name == name) return &g;
  return nullptr;
}

/// Prepares the space of `f` with the generator it names, given `ctx`. Throws io::input_error (an
/// unknown generator is reported at `/generator` with the known names).
[[nodiscard]] inline point_space prepare(const space_file& f, const prepare_context& ctx = {}) {
  const auto* g = find_generator(f.generator);
  if (!g) {
    std::string all;
    for (const auto& x : generators()) all += (all.empty() ? "" : ", ") + std::string(x.name);
    throw io::input_error(f.file, "/generator", "unknown generator '" + f.generator + "' (expected one of " + all + ")");
  }
  return g->prepare(f, ctx);
}

}  // namespace devplace::sweep
