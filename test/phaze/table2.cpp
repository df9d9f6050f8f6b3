// Table 2's shapes as sanity checks of the memory and flush model (seed-phaze.md §4.2, §4.7 item 2):
// Megatron GPT3-175B as a chain of 96 transformer layer slices at t = 4 with sizes from the
// Megatron formulas (fp16): weights 12 H² · 2 B / t per layer, activations s·b·H·(34 + 5 a s / H) B / t,
// s·b·H · 2 B between layers. The paper's plan {16, 16, 4} (recomputation, 64 GB) must fit, the
// same plan with stashing must not (the paper: GPT3 "only runs with recomputation"), and the DP's
// own plan must use p · d · t ≤ 1,024 devices and be at least as fast as {16, 16, 4}.
#include "devplace/phaze/placement.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>
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
                                  << "}, F " << best.time_per_batch_ms << " ms vs {16, 16, 4} " << rc.time_per_batch_ms
                                  << " ms, its largest stage " << std::max_element(rc.stages.begin(), rc.stages.end(), [](const auto& a, const auto& b) {
                                       return a.memory_bytes < b.memory_bytes;
                                     })->memory_bytes / GB
                                  << " GiB");
}

// The other rows of Table 2 (seed-phaze.md §4.2): every row's hyper-parameters (#L, #AH, H,
// sequence length), TMP width t, micro-batch b, policy and HBM as the paper lists them, each model
// a chain of #L transformer layers (embeddings and heads left out) with the same Megatron fp16
// sizes as above and latencies from the Megatron FLOP count (forward 24 b s H² + 4 b s² H per
// layer, divided by t; backward twice that) on TPUv4-like tensor FLOPs (2 · 131,072 MACs at
// 1.05 GHz). OPT's H is blank in Table 2; 1,024 is OPT-350M's published hidden size. The paper's
// plan, stages of ⌊L/p⌋ or ⌈L/p⌉ layers, must fit the paper's HBM under the paper's policy and use
// p · d · t devices (1,024; Llama2's {6, 164, 1} 984); the DP on the same chain (same t, b and
// policy) must find a plan on at most 1,024 devices that is at least as fast.
namespace {

struct table2_row {
  const char* model;
  double layers, heads, hidden, seq;
  std::size_t t, p, d, mbs;
  bool recompute;
  double hbm_gb;
  std::size_t devices;  // p · d · t, computed by hand from the row
};

workload_variant<op_graph> megatron_chain(const table2_row& r) {
  const double b = double(r.mbs), tw = double(r.t), s = r.seq, h = r.hidden;
  const double flops = (24 * b * s * h * h + 4 * b * s * s * h) / tw;
  const double fwd_ms = flops / (2 * 131072 * 1.05e9) * 1e3;
  const double weights = 12 * h * h * 2 / tw;
  const double acts = s * b * h * (34 + 5 * r.heads * s / h) / tw;
  const auto L = static_cast<std::size_t>(r.layers);
  op_graph_builder g;
  for (std::size_t l = 0; l < L; ++l)
    g.add_op({.id = std::int64_t(l), .fwd_ms = fwd_ms, .bwd_ms = 2 * fwd_ms, .fwd_mem_bytes = acts, .param_bytes = weights});
  for (std::size_t l = 0; l + 1 < L; ++l) g.add_edge(l, l + 1, s * b * h * 2);
  workload_variant<op_graph> w{.tensor_width = r.t, .micro_batch = r.mbs, .graph = std::move(g).build()};
  w.tensor_parallel.assign(L, r.t > 1);
  return w;
}

placement row_plan(const table2_row& r, bool recompute) {
  const auto L = static_cast<std::size_t>(r.layers);
  placement pl;
  pl.data_parallel = r.d;
  pl.recompute = recompute;
  for (std::size_t s = 0; s < r.p; ++s) {
    placed_stage st;
    for (std::size_t l = s * L / r.p; l < (s + 1) * L / r.p; ++l) st.layers.push_back(l);
    pl.stages.push_back(st);
  }
  return pl;
}

// Table 2's PHAZE rows other than Megatron GPT3 (tested above).
constexpr table2_row table2_rows[] = {
    {"OPT", 24, 16, 1024, 2048, 1, 1, 1024, 2, false, 64, 1024},
    {"BertLarge", 24, 16, 1024, 512, 1, 1, 1024, 4, false, 32, 1024},
    {"GPT2", 48, 25, 1600, 1024, 1, 1, 1024, 1, false, 64, 1024},
    {"Llama2-7B", 32, 32, 4096, 4096, 1, 6, 164, 1, true, 64, 984},
    {"Bert with TMP", 24, 16, 1024, 512, 4, 1, 256, 8, false, 32, 1024},
    {"Megatron 2.5B", 54, 20, 1920, 1024, 2, 2, 256, 2, false, 80, 1024},
    {"Megatron 8.3B", 72, 32, 3072, 1024, 4, 2, 128, 2, true, 64, 1024},
};

}  // namespace

TEST_CASE("phaze Table 2: every other row's plan fits its HBM and uses p d t devices") {
  for (const auto& r : table2_rows) {
    const std::string_view model = r.model;
    CAPTURE(model);
    const auto w = megatron_chain(r);
    const placement_options o{.devices = 1024, .global_batch = 4096, .device_memory_bytes = r.hbm_gb * GB,
                              .recompute = r.recompute ? recompute_policy::recompute_only : recompute_policy::stash_only};
    const auto plan = evaluate_placement(w, row_plan(r, r.recompute), o);
    REQUIRE(plan.status == status::feasible);
    CHECK(plan.pipeline_stages() * plan.data_parallel * plan.tensor_width == r.devices);
    CHECK(plan.devices_used == r.devices);
    CHECK(plan.data_parallel <= plan.micro_batches);  // d <= B = 4,096 / b
    double peak = 0;
    for (const auto& st : plan.stages) peak = std::max(peak, st.memory_bytes);
    CHECK(peak <= r.hbm_gb * GB);
    const auto best = place(std::span<const workload_variant<op_graph>>(&w, 1), o);
    REQUIRE(best.status == status::optimal);
    CHECK(best.devices_used <= 1024);
    CHECK(best.devices_used == best.pipeline_stages() * best.data_parallel * best.tensor_width);
    CHECK(best.time_per_batch_ms <= plan.time_per_batch_ms * (1 + 1e-12));
    MESSAGE(model << ": paper {" << r.p << ", " << r.d << ", " << r.t << "} peak " << peak / GB << " GiB of " << r.hbm_gb
                    << ", F " << plan.time_per_batch_ms << " ms; DP {" << best.pipeline_stages() << ", "
                    << best.data_parallel << ", " << best.tensor_width << "} F " << best.time_per_batch_ms << " ms");
  }
}

TEST_CASE("phaze Table 2: Llama2-7B {6, 164, 1} fits 64 GB with recomputation, not with stashing") {
  // Table 2 lists recomputation for this row; with stashing the first of six stages would hold
  // five more micro-batches of its 3.25 GB-per-layer activations (seq 4,096).
  const auto& r = table2_rows[3];
  REQUIRE(std::string_view(r.model) == "Llama2-7B");
  const auto w = megatron_chain(r);
  const placement_options o{.devices = 1024, .global_batch = 4096, .device_memory_bytes = 64 * GB};
  CHECK(evaluate_placement(w, row_plan(r, true), o).status == status::feasible);
  const auto stash = evaluate_placement(w, row_plan(r, false), o);
  CHECK(stash.status == status::infeasible);
  CHECK(stash.stages.front().memory_bytes > 64 * GB);
}
