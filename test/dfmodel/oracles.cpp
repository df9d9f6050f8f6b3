// Brute-force oracles for the two choices of the model: the sharding schemes (stage 1a) and the
// fusion into configurations (intra-chip), on small workloads; plus the free search on Table VI.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

#include "devplace/dfmodel/setup.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/dfmodel/setup.ipp"  // the setup reader's and result_json's definitions (compiled mode: devplace::core)
#endif
#if defined(DEVPLACE_HAS_GLPK)
#include "devplace/ilp/backends/glpk.hpp"
#endif

namespace df = devplace::dfmodel;

namespace {

/// A random small workload: a chain with random skip tensors, mixed kernel kinds and shapes.
df::workload random_workload(std::mt19937_64& rng, std::size_t n) {
  df::workload w;
  w.llm = {.hidden = 256, .heads = 4, .head_dim = 64, .seq = 64, .layers = 4, .global_batch = 8, .micro_batch = 1, .word_bytes = 2};
  std::uniform_int_distribution<int> pick(0, 3), size(1, 4);
  for (std::size_t i = 0; i < n; ++i) {
    df::kernel k;
    k.name = "k" + std::to_string(i);
    const int t = pick(rng);
    k.kind = t < 2 ? df::kernel_kind::systolic : df::kernel_kind::simd;
    k.op = t == 0 ? df::kernel_op::gemm_weight : t == 1 ? df::kernel_op::gemm_two_inputs : df::kernel_op::elementwise;
    k.outer = pick(rng) == 0 ? 4 : 1;
    k.m = 64 * size(rng);
    k.k = k.kind == df::kernel_kind::simd ? 1 : 64 * size(rng);
    k.n = 64;
    w.kernels.push_back(k);
  }
  for (std::size_t i = 1; i < n; ++i) {
    w.tensors.push_back({i - 1, i, 0});
    if (i >= 2 && pick(rng) == 0) w.tensors.push_back({i - 2, i, 1});
  }
  return w;
}

df::system small_system(std::size_t tp, double sram) {
  df::system s;
  s.acc = {.cores = 16, .systolic_width = 4, .systolic_height = 4, .freq_ghz = 1, .sram_bytes = sram};
  s.mem = {.dram_gbps = 10, .dram_bytes = 0};
  s.net = df::ring(tp, 5);
  return s;
}

}  // namespace

TEST_CASE("sharding: exhaustive search and the ILP builder agree with brute force on random workloads") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const auto w = random_workload(rng, 3 + trial % 6);
    const auto bf = df::shard_brute_force(w);
    const auto ex = df::shard_exhaustive(w);
    REQUIRE(ex.status == devplace::status::optimal);
    CHECK(ex.bytes == doctest::Approx(bf.bytes));
    CHECK(df::evaluate_sharding(w, ex.scheme).bytes == doctest::Approx(ex.bytes));
#if defined(DEVPLACE_HAS_GLPK)
    const auto p = df::make_sharding_problem(w);
    const auto r = devplace::ilp::solve_dfmodel_inter_chip(p, devplace::ilp::glpk_solver{});
    REQUIRE(r.status == devplace::status::optimal);
    CHECK(df::sharding_from_ilp(w, r.scheme_of).bytes == doctest::Approx(bf.bytes));
#endif
  }
}

TEST_CASE("sharding: the GPT layer gets the Megatron pattern, 100,663,296 bytes (two all-reduces)") {
  const auto w = df::gpt3_layer({});
  const auto s = df::shard_exhaustive(w);
  CHECK(s.bytes == 100663296.0);
  using L = df::loop_dim;
  const std::vector<L> want{L::none,  L::none,  L::outer, L::outer, L::outer, L::outer, L::outer, L::outer, L::outer,
                            L::k,     L::none,  L::none,  L::none,  L::m,     L::m,     L::k,     L::none,  L::none};
  CHECK(s.scheme == want);
  CHECK(df::shard_brute_force(w).bytes == 100663296.0);
  // a hand check of the layout rules: M-sharded FFN0 feeding an unsharded GeLU costs an all-gather
  auto x = want;
  x[14] = L::none;
  CHECK(df::evaluate_sharding(w, x).bytes == 100663296.0 + 49152.0 * 2048 * 2);
}

TEST_CASE("intra-chip: the fusion search equals brute force over every config vector") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    auto w = random_workload(rng, 3 + trial % 5);
    const std::size_t C = 2 + trial % 2;
    if (trial % 3 == 0) w.kernels[trial % w.kernels.size()].config = static_cast<int>(trial % C);
    const auto sh = df::shard_exhaustive(w);
    const double sram = trial % 2 ? 1e12 : 120000;  // small SRAM makes some fusions infeasible
    const auto sys = small_system(trial % 4 == 0 ? 1 : 2, sram);
    df::mapping_options o{.configs = C, .compute_util = trial % 5 == 0 ? 0.0 : 0.8, .tile_size = 8};
    const auto dp = df::optimise_mapping(w, sh, sys, o);
    const auto bf = df::brute_force_mapping(w, sh, sys, o, 8);
    CAPTURE(trial);
    REQUIRE((dp.status == devplace::status::optimal) == (bf.status == devplace::status::optimal));
    if (dp.status != devplace::status::optimal) continue;
    CHECK(dp.all_ii_ns == doctest::Approx(bf.all_ii_ns).epsilon(1e-12));
    const auto again = df::evaluate_mapping(w, sh, sys, o, dp.config_of, dp.num_tile);
    CHECK(again.status == devplace::status::feasible);
    CHECK(again.all_ii_ns == doctest::Approx(dp.all_ii_ns).epsilon(1e-12));
  }
}

TEST_CASE("intra-chip: hand-computed II of a two-kernel config") {
  // GEMM (M=64, K=128, N=64, weight) -> SIMD (M=64): TP 1, 8 tiles of 8 tokens, word 2.
  df::workload w;
  w.llm = {.hidden = 64, .heads = 1, .head_dim = 64, .seq = 64, .layers = 2, .global_batch = 4, .micro_batch = 1, .word_bytes = 2};
  w.kernels.push_back({.name = "g", .kind = df::kernel_kind::systolic, .op = df::kernel_op::gemm_weight, .m = 64, .k = 128, .n = 64});
  w.kernels.push_back({.name = "s", .kind = df::kernel_kind::simd, .op = df::kernel_op::elementwise, .m = 64, .n = 64});
  w.tensors.push_back({0, 1, 0});
  auto sys = small_system(1, 1e9);
  const auto sh = df::shard_exhaustive(w);
  df::mapping_options o{.configs = 2, .compute_util = 0.5, .tile_size = 8};
  // fused: compute = (2·64·128·8 + 64·8)·8 / (0.5 · 2·4·4·16·1) = 131584·8/256 = 4112 ns; no DRAM tensor
  auto fused = df::evaluate_mapping(w, sh, sys, o, {0, 0}, 8);
  CHECK(fused.per_config_ii_ns.at(0) == doctest::Approx(4112.0));
  // split: the tensor (64·8·2 = 1024 B per tile) goes through DRAM: 1024·8/10 = 819.2 ns each side
  auto split = df::evaluate_mapping(w, sh, sys, o, {0, 1}, 8);
  CHECK(split.configs.at(1).memory_ns == doctest::Approx(819.2));
  CHECK(split.per_config_ii_ns.at(0) == doctest::Approx(4096.0));
  CHECK(split.per_config_ii_ns.at(1) == doctest::Approx(819.2));
  // step: Σ II · layers · global_batch / DP = 4112 · 2 · 4
  CHECK(fused.final_ns == doctest::Approx(4112.0 * 8));
  CHECK(df::optimise_mapping(w, sh, sys, o).all_ii_ns == doctest::Approx(4112.0));
  // a backward edge is infeasible
  CHECK(df::evaluate_mapping(w, sh, sys, o, {1, 0}, 8).status == devplace::status::infeasible);
}

TEST_CASE("Table VI 4x2 without pins: the exact search finds a faster fusion than the authors' time-limited run") {
  const auto file = std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples/dfmodel/table6/dfmodel_4x2.json";
  auto s = df::read_setup_json(file);
  for (auto& k : s.work.kernels) k.config = -1;
  const auto r = df::run_setup(s);
  REQUIRE(r.mapping.status == devplace::status::optimal);
  CHECK(r.mapping.final_s <= 800.9758461146134);
  // Σ II = 6,898,756.27 ns: config 0 empty, QKV + attention + projection in config 1 (four
  // 75.5 MB weights fit the 320 MiB SRAM at TP 4), then up to FFN0, then the FFN1 tail
  CHECK(r.mapping.all_ii_ns == doctest::Approx(6898756.266666667).epsilon(1e-9));
  CHECK(r.mapping.final_s == doctest::Approx(762.9472530431999).epsilon(1e-9));
  const std::vector<int> want{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  CHECK(r.mapping.config_of == want);
  const auto again = df::evaluate_mapping(s.work, r.shard, s.sys, s.mode, r.mapping.config_of, r.mapping.num_tile);
  CHECK(again.final_s == doctest::Approx(r.mapping.final_s).epsilon(1e-12));
}

TEST_CASE("TP / DP enumeration: free dimension sizes pick the best of every explicit network") {
  const auto file = std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples/dfmodel/table6/dfmodel_4x2.json";
  auto s = df::read_setup_json(file);
  for (auto& k : s.work.kernels) k.config = -1;
  s.sys.net.dims[0].size = 0;
  s.sys.net.dims[1].size = 0;
  s.chips = 8;
  const auto best = df::run_setup(s);
  REQUIRE(best.mapping.status == devplace::status::optimal);
  double oracle = 1e300;
  std::size_t oracle_tp = 0;
  for (std::size_t tp : {1, 2, 4, 8}) {
    auto e = s;
    e.sys.net = df::torus2d(tp, 8 / tp, 50, 50, df::parallelism::tp, df::parallelism::dp);
    const auto r = df::run_setup(e);
    if (r.mapping.status == devplace::status::optimal && r.mapping.final_s < oracle) oracle = r.mapping.final_s, oracle_tp = r.mapping.tp;
  }
  CHECK(best.mapping.final_s == doctest::Approx(oracle).epsilon(1e-12));
  CHECK(best.mapping.tp == oracle_tp);
  CHECK(df::num_chips(best.net) == 8);
}
