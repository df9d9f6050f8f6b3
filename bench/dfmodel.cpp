// DFModel: the whole evaluation per system (read the setup, shard, search the fusion over every
// tile count, step time, cost, power) for the four Table VI setups, and the parts on their own.
#include <benchmark/benchmark.h>

#include <string>

#include "devplace/dfmodel/setup.hpp"

namespace {

namespace df = devplace::dfmodel;

std::string table6(const char* name) { return std::string(DEVPLACE_SOURCE_DIR) + "/examples/dfmodel/table6/" + name + ".json"; }

void BM_table6_whole(benchmark::State& state, const char* name) {
  df::run_result r;
  for (auto _ : state) {
    const auto s = df::read_setup_json(table6(name));
    r = df::run_setup(s);
    benchmark::DoNotOptimize(r);
  }
  state.counters["final_s"] = r.mapping.final_s;
  state.counters["util"] = r.mapping.util;
}
BENCHMARK_CAPTURE(BM_table6_whole, kbk_8x1, "kbk_8x1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_table6_whole, existing_8x1, "existing_8x1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_table6_whole, dfmodel_8x1, "dfmodel_8x1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_table6_whole, dfmodel_4x2, "dfmodel_4x2")->Unit(benchmark::kMillisecond);

void BM_table6_all_four(benchmark::State& state) {
  const char* names[] = {"kbk_8x1", "existing_8x1", "dfmodel_8x1", "dfmodel_4x2"};
  for (auto _ : state)
    for (const char* n : names) benchmark::DoNotOptimize(df::run_setup(df::read_setup_json(table6(n))));
}
BENCHMARK(BM_table6_all_four)->Unit(benchmark::kMillisecond);

void BM_free_search_4x2(benchmark::State& state) {  // every kernel free: the full fusion search
  auto s = df::read_setup_json(table6("dfmodel_4x2"));
  for (auto& k : s.work.kernels) k.config = -1;
  df::run_result r;
  for (auto _ : state) r = df::run_setup(s), benchmark::DoNotOptimize(r);
  state.counters["final_s"] = r.mapping.final_s;
}
BENCHMARK(BM_free_search_4x2)->Unit(benchmark::kMillisecond);

void BM_sharding_gpt_layer(benchmark::State& state) {
  const auto w = df::gpt3_layer({});
  for (auto _ : state) benchmark::DoNotOptimize(df::shard_exhaustive(w));
}
BENCHMARK(BM_sharding_gpt_layer)->Unit(benchmark::kMicrosecond);

void BM_systolic_free_search(benchmark::State& state) {  // cycle model: tile allocation per config
  auto s = df::read_setup_json(table6("dfmodel_4x2"));
  for (auto& k : s.work.kernels) k.config = -1;
  s.mode.compute_util = 0;
  s.mode.tile_size = 1;
  df::run_result r;
  for (auto _ : state) r = df::run_setup(s), benchmark::DoNotOptimize(r);
  state.counters["final_s"] = r.mapping.final_s;
}
BENCHMARK(BM_systolic_free_search)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
