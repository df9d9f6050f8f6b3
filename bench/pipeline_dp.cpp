// The exact DP over down-sets and the fixed-order DP: time, down-sets created, peak memory.
#include <benchmark/benchmark.h>

#include "common.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/topo_dp.hpp"

namespace {

template <class F>
void run(benchmark::State& state, const devplace::op_graph& g, F&& partition) {
  devplace::partition_result r;
  for (auto _ : state) {
    r = partition(g);
    benchmark::DoNotOptimize(r);
  }
  state.counters["objective_ms"] = r.objective_ms;
  state.counters["optimal"] = r.status == devplace::status::optimal ? 1 : 0;
  state.counters["downsets"] = double(r.downsets);
  state.counters["vertices"] = double(g.num_vertices());
  state.counters["peak_rss_MB"] = devplace::bench::peak_rss_bytes() / 1e6;
}

void BM_dp_ladder(benchmark::State& state) {
  const auto g = devplace::bench::residual_ladder(static_cast<std::size_t>(state.range(0)), 3);
  const std::size_t S = static_cast<std::size_t>(state.range(1));
  run(state, g, [&](const devplace::op_graph& x) { return devplace::pipeline_dp(x, {.stages = S}); });
}
BENCHMARK(BM_dp_ladder)->Args({8, 4})->Args({16, 4})->Args({32, 4})->Args({32, 8})->Args({64, 8})
    ->Unit(benchmark::kMillisecond);

void BM_dp_real(benchmark::State& state, const char* name, std::size_t S) {
  const auto g = devplace::bench::bundled(name);
  run(state, g, [&](const devplace::op_graph& x) { return devplace::pipeline_dp(x, {.stages = S}); });
}
BENCHMARK_CAPTURE(BM_dp_real, inception_v3_S4, "inception_v3_mbs32", 4)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_dp_real, inception_v3_S8, "inception_v3_mbs32", 8)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_dp_real, resnet152_S4, "resnet152_mbs64", 4)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_topo_dp_real(benchmark::State& state, const char* name, std::size_t S) {
  const auto g = devplace::bench::bundled(name);
  run(state, g, [&](const devplace::op_graph& x) { return devplace::topo_dp(x, {.stages = S}); });
}
BENCHMARK_CAPTURE(BM_topo_dp_real, inception_v3_S4, "inception_v3_mbs32", 4)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_topo_dp_real, swin_large_S8, "swin_large_mbs32", 8)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
