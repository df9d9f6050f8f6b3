// Down-set (fronted subgraph) enumeration: down-sets per second on synthetic and real graphs.
#include <benchmark/benchmark.h>

#include "common.hpp"
#include "devplace/algorithm/downsets.hpp"

namespace {

void count_on(benchmark::State& state, const devplace::op_graph& g, std::uint64_t cap) {
  const devplace::downset_enumerator e(g);
  std::uint64_t total = 0;
  for (auto _ : state) {
    std::uint64_t count = 0;
    (void)e.for_each([&](const devplace::detail::dynamic_bitset&) {
      if (count == cap) return devplace::downset_action::stop;
      ++count;
      return devplace::downset_action::proceed;
    });
    total += count;
    benchmark::DoNotOptimize(count);
  }
  state.counters["downsets"] = double(total) / double(state.iterations());
  state.counters["downsets_per_s"] = benchmark::Counter(double(total), benchmark::Counter::kIsRate);
  state.counters["vertices"] = double(g.num_vertices());
}

void BM_count_ladder(benchmark::State& state) {
  const auto g = devplace::bench::residual_ladder(static_cast<std::size_t>(state.range(0)), 3);
  count_on(state, g, ~std::uint64_t{0});
}
BENCHMARK(BM_count_ladder)->Arg(4)->Arg(8)->Arg(10)->Unit(benchmark::kMillisecond);

void BM_count_real(benchmark::State& state, const char* name) {
  const auto g = devplace::bench::bundled(name);
  count_on(state, g, 20'000'000);  // Swin-L and GPT-2 have more: count the first 2e7
}
BENCHMARK_CAPTURE(BM_count_real, inception_v3, "inception_v3_mbs32")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_count_real, resnet152, "resnet152_mbs64")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_count_real, bert_large, "bert_large_mbs4")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_count_real, swin_large_first_2e7, "swin_large_mbs32")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
