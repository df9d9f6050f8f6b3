// The LLM evaluation against hand-computed timelines and Korthikanti's closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "devplace/cost/collective.hpp"
#include "devplace/llm/evaluate.hpp"

using namespace devplace;
using namespace devplace::llm;

namespace {

// A two-layer model small enough to add up by hand.
model tiny_model() {
  model m;
  m.name = "tiny";
  m.hidden = 64;
  m.ffn = 256;
  m.layers = 2;
  m.heads = 4;
  m.kv_heads = 4;
  m.head_dim = 16;
  m.seq = 32;
  m.vocab = 128;
  return m;
}

// 1 TFLOP/s matrix units at full efficiency (no waves, no pipeline fill), memory so fast that
// streaming costs nothing measurable, one 8-GPU tier of 100 GB/s without latency.
hardware ideal_system() {
  hardware s;
  s.name = "ideal";
  for (auto t : {dtype::fp16, dtype::bf16}) {
    s.gpu.matrix[static_cast<std::size_t>(t)].tflops = 1;
    s.gpu.vector[static_cast<std::size_t>(t)].tflops = 1e9;
  }
  s.gpu.hbm_gib = 80;
  s.gpu.hbm_gbps = 1e15;
  s.tiers = {{"node", 8, 100, 1.0, 0.0}, {"fabric", 1024, 10, 1.0, 0.0}};
  return s;
}

}  // namespace

TEST_CASE("llm: a two-layer model on one GPU takes 3 x forward FLOPs / peak") {
  // Forward FLOPs by hand (s = 32 tokens, h = 64, f = 256, 4 heads of 16, V = 128):
  //   QKV 2*32*64*192 = 786,432; projection 2*32*64*64 = 262,144; MLP 2 * 2*32*64*256 = 2,097,152;
  //   attention 4*32*32*4*16 = 262,144  -> a layer 3,407,872, two layers 6,815,744
  //   LM head 2*32*64*128 = 524,288     -> forward 7,340,032; forward + backward 22,020,096
  // At 1 TFLOP/s: 22.020096 us.
  execution e;
  const auto r = evaluate(tiny_model(), ideal_system(), e);
  CHECK(forward_flops_per_sample(tiny_model()) == doctest::Approx(7340032.0));
  CHECK(r.iteration_s == doctest::Approx(22.020096e-6).epsilon(1e-6));
  CHECK(r.breakdown.compute_s == doctest::Approx(22.020096e-6).epsilon(1e-6));
  CHECK(r.breakdown.bubble_s == 0);
  CHECK(r.breakdown.tp_exposed_s == 0);
  CHECK(r.model_tflops_per_gpu == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(r.tokens_per_s_per_gpu == doctest::Approx(32 / 22.020096e-6).epsilon(1e-6));
}

TEST_CASE("llm: tensor parallelism halves the GEMMs and adds the all-reduces") {
  // tp = 2: every GEMM has half the FLOPs per GPU (11.010048 us). Communication on the 100 GB/s
  // tier: an all-reduce of the 32 x 64 x 2 = 4,096-byte activation over 2 GPUs is 2 steps of
  // 2,048 bytes = 40.96 ns. Per layer 2 forward + 2 backward = 4; two layers 8; the embedding's
  // reduction 1 and the LM head's input gradient 1: 10 x 40.96 = 409.6 ns. The cross-entropy's
  // three all-reduces of 32 fp32 values: 3 x 2 x T(64 B) = 3 x 1.28 ns = 3.84 ns.
  execution e;
  e.tp = 2;
  const auto r = evaluate(tiny_model(), ideal_system(), e);
  CHECK(r.breakdown.compute_s == doctest::Approx(11.010048e-6).epsilon(1e-6));
  CHECK(r.breakdown.tp_exposed_s == doctest::Approx(409.6e-9 + 3.84e-9).epsilon(1e-6));
  CHECK(r.iteration_s == doctest::Approx(11.010048e-6 + 413.44e-9).epsilon(1e-6));
}

TEST_CASE("llm: a two-stage pipeline of 4 micro-batches, hand-computed timeline") {
  // Stage 0: one layer, 3 x 3,407,872 FLOPs = 10.223616 us per micro-batch; stage 1: the layer and
  // the LM head, + 3 x 524,288 = 11.796480 us. 1F1B over m = 4: 4 x 11.79648 + 10.223616 =
  // 57.409536 us. Sends of 4,096 bytes at 100 GB/s (40.96 ns): 2 per micro-batch and 2 for fill
  // and drain, 10 in all = 409.6 ns. The tied embedding's gradient (128 x 64 x 4 bytes) is
  // all-reduced by the two stages: 2 steps of 16,384 bytes = 327.68 ns after the pipeline.
  execution e;
  e.pp = 2;
  e.global_batch = 4;
  const auto r = evaluate(tiny_model(), ideal_system(), e);
  REQUIRE(r.stage_s.size() == 2);
  CHECK(r.stage_s[0] == doctest::Approx(10.223616e-6).epsilon(1e-6));
  CHECK(r.stage_s[1] == doctest::Approx(11.796480e-6).epsilon(1e-6));
  CHECK(r.breakdown.bubble_s == doctest::Approx(10.223616e-6).epsilon(1e-6));
  CHECK(r.breakdown.pp_exposed_s == doctest::Approx(409.6e-9).epsilon(1e-6));
  CHECK(r.breakdown.dp_exposed_s == doctest::Approx(327.68e-9).epsilon(1e-6));
  CHECK(r.iteration_s == doctest::Approx(57.409536e-6 + 409.6e-9 + 327.68e-9).epsilon(1e-6));
}

TEST_CASE("llm: interleaving divides the bubble by the chunks per GPU") {
  // Four layers in 2 stages x 2 chunks: each stage carries 2 layers; uniform stages apart from the
  // head. Bubble = (sum - max) / v.
  model m = tiny_model();
  m.layers = 4;
  execution e;
  e.pp = 2;
  e.global_batch = 8;
  const auto plain = evaluate(m, ideal_system(), e);
  e.vp = 2;
  const auto inter = evaluate(m, ideal_system(), e);
  CHECK(inter.breakdown.bubble_s == doctest::Approx(plain.breakdown.bubble_s / 2).epsilon(1e-9));
  CHECK(inter.breakdown.compute_s == doctest::Approx(plain.breakdown.compute_s).epsilon(1e-9));
  CHECK(inter.breakdown.pp_exposed_s > plain.breakdown.pp_exposed_s);  // 2 v m + 2 (p - 1) sends
}

TEST_CASE("llm: ring collectives by hand") {
  // 8 GPUs, 800 MB at 100 GB/s: chunk 100 MB = 1 ms per step.
  CHECK(ring_collective_ms(collective_op::all_reduce, 800e6, 8, 100) == doctest::Approx(14.0));
  CHECK(ring_collective_ms(collective_op::reduce_scatter, 800e6, 8, 100) == doctest::Approx(7.0));
  CHECK(ring_collective_ms(collective_op::all_gather, 800e6, 8, 100, 10) == doctest::Approx(7.07));
  CHECK(ring_collective_ms(collective_op::point_to_point, 1e8, 8, 100) == doctest::Approx(1.0));
  CHECK(ring_collective_ms(collective_op::all_reduce, 1e9, 1, 100) == 0);
  // The mapper's ring allreduce is the same line.
  CHECK(ring_collective_ms(collective_op::all_reduce, 800e6, 8, 100) ==
        doctest::Approx(ring_allreduce_ms(transfer_time_ms(100e6, 100), 8)));
  CHECK_THROWS_AS((void)ring_collective_ms(collective_op::all_reduce, 1, 0, 100), std::invalid_argument);
  CHECK_THROWS_AS((void)ring_collective_ms(collective_op::all_reduce, 1, 2, 0), std::invalid_argument);
}

TEST_CASE("llm: activation memory equals Korthikanti's closed forms (seeded random MHA models)") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    model m;
    const std::int64_t heads = 1 << std::uniform_int_distribution<int>(2, 7)(rng);
    m.heads = m.kv_heads = heads;
    m.head_dim = 16 * std::uniform_int_distribution<int>(1, 8)(rng);
    m.hidden = m.heads * m.head_dim;
    m.ffn = 4 * m.hidden;
    m.layers = 4;
    m.seq = 128 * std::uniform_int_distribution<int>(1, 16)(rng);
    execution e;
    e.tp = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    if (e.tp > heads) e.tp = heads;
    e.micro_batch = std::uniform_int_distribution<int>(1, 4)(rng);
    const double s = double(m.seq), b = double(e.micro_batch), h = double(m.hidden), a = double(m.heads);
    const double t = double(e.tp), sbh = s * b * h;
    CAPTURE(trial);
    e.recompute = recompute::none;
    e.sequence_parallel = false;
    CHECK(layer_activation_bytes(m, e) == doctest::Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
    e.sequence_parallel = true;
    CHECK(layer_activation_bytes(m, e) == doctest::Approx(sbh / t * (34 + 5 * a * s / h)));
    e.recompute = recompute::selective;
    CHECK(layer_activation_bytes(m, e) == doctest::Approx(34 * sbh / t));
    e.sequence_parallel = false;
    CHECK(layer_activation_bytes(m, e) == doctest::Approx(sbh * (10 + 24 / t)));
    e.recompute = recompute::full;
    CHECK(layer_activation_bytes(m, e) == doctest::Approx(2 * sbh));
  }
}

TEST_CASE("llm: micro-batches in flight, 1F1B and interleaved (Korthikanti's factor)") {
  model m = tiny_model();
  m.layers = 48;
  execution e;
  e.pp = 8;
  e.global_batch = 64;
  // 1F1B: stage i keeps min(m, p - i) micro-batches of its 6 layers; the first stage L layers.
  CHECK(layers_in_flight(m, e, 0) == doctest::Approx(48));
  CHECK(layers_in_flight(m, e, 5) == doctest::Approx(6 * 3));
  e.vp = 3;  // first stage: L (1 + (p - 1) / (p v)) = 48 (1 + 7/24) = 62
  CHECK(layers_in_flight(m, e, 0) == doctest::Approx(62));
  e.global_batch = 2;  // fewer micro-batches than the pipeline holds
  e.vp = 1;
  CHECK(layers_in_flight(m, e, 0) == doctest::Approx(12));
}

TEST_CASE("llm: weights, gradients and optimizer states: 18 bytes per parameter, 6 + 12/d sharded") {
  model m = tiny_model();
  execution e;
  e.dp = 4;
  e.global_batch = 4;
  const double p = double(m.layers) * params_per_layer(m).total();
  auto s = memory_of_stage(m, e, 0);
  CHECK(s.layer_states() == doctest::Approx(18 * p));
  e.distributed_optimizer = true;
  s = memory_of_stage(m, e, 0);
  CHECK(s.layer_states() == doctest::Approx((6 + 12.0 / 4) * p));
  // A layer of MHA with f = 4h has 12 h^2 + 13 h parameters.
  CHECK(params_per_layer(m).total() == doctest::Approx(12.0 * 64 * 64 + 13 * 64));
}

TEST_CASE("llm: invalid executions are refused with the field named") {
  const model m = tiny_model();
  execution e;
  e.global_batch = 3;
  e.dp = 2;
  CHECK_THROWS_WITH_AS((void)evaluate(m, ideal_system(), e), doctest::Contains("global_batch"), std::invalid_argument);
  e = {};
  e.tp = 3;
  CHECK_THROWS_WITH_AS((void)evaluate(m, ideal_system(), e), doctest::Contains("tp 3"), std::invalid_argument);
  e = {};
  e.pp = 3;
  CHECK_THROWS_WITH_AS((void)evaluate(m, ideal_system(), e), doctest::Contains("layers"), std::invalid_argument);
  e = {};
  e.dtype = dtype::fp8;  // the ideal GPU has no fp8 rate
  CHECK_THROWS_WITH_AS((void)evaluate(m, ideal_system(), e), doctest::Contains("fp8"), std::invalid_argument);
  hardware bad = ideal_system();
  bad.tiers[1].size = 12;  // not a multiple of 8
  CHECK_THROWS_AS((void)evaluate(m, bad, execution{}), std::invalid_argument);
}

TEST_CASE("llm: fused attention, hand-computed") {
  // The tiny model's attention is 4*32*32*4*16 = 262,144 FLOPs forward per layer; fused, the
  // causal half 131,072 at 1 TFLOP/s x 0.5 = 0.262144 us forward and 2.5 x 131,072 at x 0.25 =
  // 1.31072 us backward, instead of 3 x 262,144 FLOPs = 0.786432 us unfused (memory is free).
  hardware hw = ideal_system();
  execution e;
  const double unfused = evaluate(tiny_model(), hw, e).iteration_s;
  hw.gpu.fused_attention = true;
  hw.gpu.attention_fwd_achievable = 0.5;
  hw.gpu.attention_bwd_achievable = 0.25;
  const auto fused = evaluate(tiny_model(), hw, e);
  CHECK(fused.iteration_s == doctest::Approx(unfused + 2 * (0.262144e-6 + 1.31072e-6 - 0.786432e-6)).epsilon(1e-6));
  // Nothing of the score matrix is stored: selective recomputation changes neither memory nor time.
  e.recompute = recompute::selective;
  const auto sel = evaluate(tiny_model(), hw, e);
  CHECK(sel.iteration_s == doctest::Approx(fused.iteration_s).epsilon(1e-12));
  CHECK(sel.memory[0].layer_activations == doctest::Approx(fused.memory[0].layer_activations));
  CHECK(fused.memory[0].layer_activations < evaluate(tiny_model(), ideal_system(), execution{}).memory[0].layer_activations);
}

TEST_CASE("llm: GEMM time by hand: main loop, epilogue, waves and the pipeline prologue") {
  gpu g;
  g.matrix[static_cast<std::size_t>(dtype::bf16)].tflops = 1;
  g.hbm_gbps = 1000;
  g.hbm_gib = 80;
  // 100 x 100 x 100: 2e6 FLOPs = 2 us; inputs 4e4 bytes stream in 0.04 us under it; the epilogue
  // writes 2e4 bytes after it: 0.02 us. Backward: dgrad the same, wgrad accumulating into fp32
  // (8 bytes per weight, 0.08 us).
  CHECK(gemm_seconds(g, dtype::bf16, 1, 100, 100, 100) == doctest::Approx(2.02e-6).epsilon(1e-9));
  const auto p = gemm_fwd_bwd(g, dtype::bf16, 1, 100, 100, 100);
  CHECK(p.fwd == doctest::Approx(2.02e-6).epsilon(1e-9));
  CHECK(p.bwd == doctest::Approx(2.02e-6 + 2.08e-6).epsilon(1e-9));
  CHECK(gemm_fwd_bwd(g, dtype::bf16, 1, 100, 100, 100, false).bwd == doctest::Approx(4.04e-6).epsilon(1e-9));
  // 4 SMs, 64 x 64 tiles, K steps of 32 behind 2 stages, half the peak achievable: 128 x 192 gives
  // 6 tiles in 2 waves (6/8), K = 64 two steps (2/4): e = 0.5 x 0.75 x 0.5 = 0.1875;
  // 2 x 128 x 192 x 64 = 3,145,728 FLOPs / 0.1875 TFLOP/s = 16.777216 us.
  g.sms = 4, g.tile_m = 64, g.tile_n = 64, g.tile_k = 32, g.stages = 2;
  g.matrix[static_cast<std::size_t>(dtype::bf16)].achievable = 0.5;
  g.hbm_gbps = 1e12;  // memory free
  CHECK(gemm_seconds(g, dtype::bf16, 1, 128, 192, 64) == doctest::Approx(16.777216e-6).epsilon(1e-9));
}
