#pragma once
/// \file sweep/registry.hpp
/// The table of sweep generators, by the name a space file's `generator` field gives. Adding one:
/// declare `point_space prepare_<name>_space(const space_file&, const prepare_context&)` in
/// `sweep/<name>_space.hpp` and define it in `sweep/<name>_space.ipp`, as the generators below do
/// (points in a fixed order, `inputs` and `evaluate` pure functions of the index); include the
/// header here and the `.ipp` in sweep/registry.ipp and src/core_sweep.cpp, and add its row to
/// `generators()`.
///
/// The generators are declared here and defined in their `.ipp` files, which this header does not
/// include (they read graphs, setups and LLM systems and run the models): header-only, a file that
/// calls `prepare` or a generator's `prepare` includes `devplace/sweep/registry.ipp` (every
/// generator's definition) too, or `devplace/sweep.hpp`; compiled mode (`devplace::core`, see
/// config.hpp) needs nothing more. The functions below are templates with one defaulted parameter,
/// called as before (`generators()`, `prepare(f, ctx)`): the parameter is never given.
#include <span>
#include <string>
#include <string_view>

#include "devplace/sweep/dfmodel_space.hpp"
#include "devplace/sweep/llm_space.hpp"
#include "devplace/sweep/phaze_space.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

/// Every generator this build knows, in a fixed order.
template <int N = 0>
[[nodiscard]] std::span<const generator> generators() {
  static constexpr generator table[] = {
      {"phaze", "PHAZE accelerator configurations x graphs x device counts", &prepare_phaze_space<N>},
      {"dfmodel", "DFModel systems: setups x chips x link / DRAM bandwidth x SRAM", &prepare_dfmodel_space<N>},
      {"llm", "LLM systems x models x GPU counts x global batches: the proved-best execution of each", &prepare_llm_space<N>},
  };
  return table;
}

/// The generator called `name`, or nullptr.
template <int N = 0>
[[nodiscard]] const generator* find_generator(std::string_view name) {
  for (const auto& g : generators<N>())
    if (g.name == name) return &g;
  return nullptr;
}

/// Prepares the space of `f` with the generator it names, given `ctx`. Throws io::input_error (an
/// unknown generator is reported at `/generator` with the known names).
template <int N = 0>
[[nodiscard]] point_space prepare(const space_file& f, const prepare_context& ctx = {}) {
  const auto* g = find_generator<N>(f.generator);
  if (!g) {
    std::string all;
    for (const auto& x : generators<N>()) all += (all.empty() ? "" : ", ") + std::string(x.name);
    throw io::input_error(f.file, "/generator", "unknown generator '" + f.generator + "' (expected one of " + all + ")");
  }
  return g->prepare(f, ctx);
}

}  // namespace devplace::sweep
