// PHAZE (docs/phaze.md): the placement DP's time and table memory on the five bundled graphs
// (examples/data: BERT-Large, GPT-2 medium, ResNet-152, Inception-v3, Swin-L; 24-layer layer
// graphs on the TPUv4-like accelerator, micro-batch 1, global batch 4,096, both activation
// policies) for 8, 16, ..., 1,024 devices; the architecture sweep's configurations per second over
// PHAZE's cores.json (BERT-Large, 256 devices, global batch 1,024) at 1 and 2 threads.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "common.hpp"
#include "devplace/phaze/cores_json.hpp"
#include "devplace/phaze/sweep.hpp"
#include "devplace/phaze/workload.hpp"

namespace {

using namespace devplace;

void BM_placement_dp(benchmark::State& state, const char* name) {
  const auto g = bench::bundled(name);
  const auto split = phaze::split_layers(g, 24);
  const auto lg = phaze::make_layer_graph(g, split, phaze::tpu_v4_like(), 1, g.micro_batch_size() > 0 ? g.micro_batch_size() : 1);
  const auto K = static_cast<std::size_t>(state.range(0));
  const phaze::placement_options o{.devices = K, .global_batch = 4096, .device_memory_bytes = 32.0 * (1ull << 30)};
  phaze::placement p;
  for (auto _ : state) {
    p = phaze::place(std::span<const phaze::workload_variant<op_graph>>(&lg.variant, 1), o);
    benchmark::DoNotOptimize(p);
  }
  const double S = double(std::min<std::size_t>(K, lg.variant.graph.num_vertices()));
  state.counters["downsets"] = double(p.downsets);
  state.counters["table_MB"] = double(p.downsets) * (S + 1) * double(K + 1) * 8 / 1e6;
  state.counters["stages"] = double(p.pipeline_stages());
  state.counters["d"] = double(p.data_parallel);
  state.counters["peak_rss_MB"] = bench::peak_rss_bytes() / 1e6;
}
BENCHMARK_CAPTURE(BM_placement_dp, bert_large, "bert_large_mbs4")->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_placement_dp, gpt2_medium, "gpt2_medium_mbs8")->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_placement_dp, resnet152, "resnet152_mbs64")->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_placement_dp, inception_v3, "inception_v3_mbs32")->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_placement_dp, swin_large, "swin_large_mbs32")->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kMillisecond);

void BM_sweep(benchmark::State& state) {
  const auto path = std::filesystem::path(DEVPLACE_SHARED_DIR) / "data/peers/phaze/Estimator/arch_configs/cores.json";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("../shared cores.json is not there");
    return;
  }
  const auto cores = phaze::read_cores_json(path);
  const auto g = bench::bundled("bert_large_mbs4");
  const auto split = phaze::split_layers(g, 24);
  phaze::architecture_options o;
  o.placement.devices = 256;
  o.placement.global_batch = 1024;
  const auto eval = [&](const phaze::core_config& c) { return phaze::evaluate_architecture(g, split, c, o).samples_per_s; };
  const std::size_t n = 16;
  for (auto _ : state) {
    auto r = phaze::sweep_architectures(std::span<const phaze::core_config>(cores), eval,
                                        {.hysteresis = 1000, .threads = static_cast<unsigned>(state.range(0)), .max_configurations = n});
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs_per_s"] = benchmark::Counter(double(n) * double(state.iterations()), benchmark::Counter::kIsRate);
}
// CPU time is the whole process's (the workers' included).
BENCHMARK(BM_sweep)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->MeasureProcessCPUTime()->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
