// Table 2's shapes as sanity checks of the memory and flush model (seed-phaze.md §4.2, §4.7 item 2):
// Megatron GPT3-175B as a chain of 96 transformer layer slices at t = 4 with sizes from the
// Megatron formulas (fp16): weights 12 H² · 2 B / t per layer, activations s·b·H·(34 + 5 a s / H) B / t,
// s·b·H · 2 B between layers. The paper's plan {16, 16, 4} (recomputation, 64 GB) must fit, the
// same plan with stashing must not (the paper: GPT3 "only runs with recomputation"), and the DP's
// own plan must use p · d · t ≤ 1,024 devices and be at least as fast as {16, 16, 4}.
#include "devplace/phaze/placement.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "devplace/dag/op_graph.hpp"

using namespace devplace;
using namespace devplace::phaze;

namespace {

constexpr double H = 12288, seq = 2048, heads = 96, t = 4, GB = double(1ull << 30);

workload_variant<op_graph> gpt3_chain() {
  op_graph_builder b;
  const double weights = 12 * H * H * 2 / t;
  const double acts = seq * H * (34 + 5 * heads * seq / H) / t;
  for (int l = 0; l < 96; ++l)
    b.add_op({.id = l, .fwd_ms = 10, .bwd_ms = 20, .fwd_mem_bytes = acts, .param_bytes = weights});
  for (std::size_t l = 0; l + 1 < 96; ++l) b.add_edge(l, l + 1, seq * H * 2);
  workload_variant<op_graph> w{.tensor_width = 4, .micro_batch = 1, .graph = std::move(b).build()};
  w.tensor_parallel.assign(96, true);
  return w;
}

placement uniform_plan(std::size_t p, std::size_t d, bool recompute) {
  placement pl;
  pl.data_parallel = d;
  pl.recompute = recompute;
  for (std::size_t s = 0; s < p; ++s) {
    placed_stage st;
    for (std::size_t l = s * 96 / p; l < (s + 1) * 96 / p; ++l) st.layers.push_back(l);
    pl.stages.push_back(st);
  }
  return pl;
}

}  // namespace

TEST_CASE("phaze Table 2: Megatron GPT3 {16, 16, 4} fits with recomputation at 64 GB, not with stashing") {
  const auto w = gpt3_chain();
  const placement_options o{.devices = 1024, .global_batch = 4096, .device_memory_bytes = 64 * GB};
  const auto rc = evaluate_placement(w, uniform_plan(16, 16, true), o);
  REQUIRE(rc.status == status::feasible);
  CHECK(rc.devices_used == 1024);  // p · d · t
  CHECK(rc.stages.front().memory_bytes <= 64 * GB);
  const auto stash = evaluate_placement(w, uniform_plan(16, 16, false), o);
  CHECK(stash.status == status::infeasible);
  // the DP over the same chain (recomputation only, to keep the test short): 97 down-sets
  const auto best = place(std::span<const workload_variant<op_graph>>(&w, 1),
                          {.devices = 1024, .global_batch = 4096, .device_memory_bytes = 64 * GB,
                           .recompute = recompute_policy::recompute_only});
  REQUIRE(best.status == status::optimal);
  CHECK(best.downsets == 97);
  CHECK(best.pipeline_stages() * best.data_parallel * best.tensor_width <= 1024);
  CHECK(best.devices_used == best.pipeline_stages() * best.data_parallel * 4);
  CHECK(best.time_per_batch_ms <= rc.time_per_batch_ms);
  MESSAGE("GPT3 chain, DP plan {" << best.pipeline_stages() << ", " << best.data_parallel << ", " << best.tensor_width
                                  << "}, F " << best.time_per_batch_ms << " ms vs {16, 16, 4} " << rc.time_per_batch_ms << " ms");
}
