// The pipeline simulator: simulations per second on 4x DGX-1 (32 devices).
#include <benchmark/benchmark.h>

#include <string>

#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/generators.hpp"

namespace {

devplace::pipeline_model chain_model(std::size_t S, std::size_t R) {
  devplace::pipeline_model m;
  m.stages = S;
  m.replicas = R;
  for (std::size_t s = 0; s < S; ++s) {
    m.forward_ms.push_back(3.0 + double(s % 3));
    m.backward_ms.push_back(6.0 + double(s % 2));
    m.param_bytes.push_back(50e6);
  }
  m.message_bytes.assign(S, std::vector<double>(S, -1.0));
  for (std::size_t s = 0; s + 1 < S; ++s) m.message_bytes[s][s + 1] = 64e6;
  for (std::size_t s = 0; s < S; ++s) {
    m.device_of.emplace_back();
    for (std::size_t r = 0; r < R; ++r) m.device_of.back().push_back(s * R + r);
  }
  return m;
}

void BM_simulate(benchmark::State& state) {
  const auto S = static_cast<std::size_t>(state.range(0)), R = static_cast<std::size_t>(state.range(1)),
             MB = static_cast<std::size_t>(state.range(2));
  const auto topo = devplace::dgx1_cluster(4);
  const auto m = chain_model(S, R);
  const devplace::simulation_options o{.micro_batches = MB, .schedule = state.range(3) ? devplace::pipeline_schedule::one_f_one_b
                                                                                     : devplace::pipeline_schedule::gpipe};
  double iteration = 0;
  for (auto _ : state) {
    const auto r = devplace::simulate(m, topo, o);
    iteration = r.iteration_ms;
    benchmark::DoNotOptimize(r.timeline.data());  // (DoNotOptimize on a double garbles it in this library version)
  }
  state.counters["sims_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel("iteration " + std::to_string(iteration) + " ms");
}
BENCHMARK(BM_simulate)->Args({4, 8, 4, 0})->Args({8, 4, 8, 0})->Args({16, 2, 16, 0})->Args({16, 2, 16, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
