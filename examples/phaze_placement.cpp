// PHAZE's placement DP (eq. 17/18): how many pipeline stages p and data-parallel copies d to give
// a layer graph on K accelerators, and where to cut it (docs/phaze.md). Here on a two-layer
// chain whose figures can be checked by hand.
//
//   ./build/examples/example_phaze_placement
#include <devplace/dag/csr_dag.hpp>
#include <devplace/phaze/placement.hpp>
#include <devplace/views/with_costs.hpp>

#include <iostream>
#include <vector>

template <class G>
void show(const char* what, const G& g, std::size_t devices) {
  // A mini-batch of 4 samples in micro-batches of 1 (B = 4), links at 1 GB/s.
  const auto p = devplace::phaze::place(g, {.devices = devices, .global_batch = 4, .bandwidth_gbps = 1});
  std::cout << what << ", K = " << devices << ": p = " << p.pipeline_stages() << ", d = " << p.data_parallel
            << ", F = " << p.time_per_batch_ms << " ms per mini-batch (" << devplace::to_string(p.status) << ")\n";
}

int main() {
  // Layers 0 -> 1: forward 1 / 2 ms, backward 2 / 4 ms; 1 MB between them (1 ms at 1 GB/s).
  const auto chain = devplace::to_csr_dag(std::vector<std::vector<int>>{{1}, {}});
  const std::vector<double> fwd{1, 2}, bwd{2, 4};
  auto layers = [&](double params_of_layer_0) {
    return devplace::views::with_costs(
        chain, devplace::costs{.forward_ms = [&](const auto&, std::size_t v) { return fwd[v]; },
                               .backward_ms = [&](const auto&, std::size_t v) { return bwd[v]; },
                               .param_bytes = [=](const auto&, std::size_t v) { return v == 0 ? params_of_layer_0 : 0.0; },
                               .edge_bytes = [](const auto&, std::size_t, std::size_t) { return 1e6; }});
  };

  // K = 1: one stage runs all four micro-batches, F = 4 * (1 + 2 + 2 + 4) = 36 ms.
  show("1 GB of weights", layers(1e9), 1);
  // prints: 1 GB of weights, K = 1: p = 1, d = 1, F = 36 ms

  // K = 2 with 1 GB of weights in layer 0: two data-parallel copies would resynchronise them,
  // c/2 * (d-1)/d * P / beta = 4/2 * 1/2 * 1e9 B / 1 GB/s = 1000 ms, so PHAZE pipelines. Stage 2
  // (layer 1) waits 1 ms for its input: fw ends at 3, bw 4 ms later at 7; stage 1 is lighter
  // (1 + 1 + 2 = 4). F = (B + p - 1) * max load = (4 + 1) * 7 = 35 ms.
  show("1 GB of weights", layers(1e9), 2);
  // prints: 1 GB of weights, K = 2: p = 2, d = 1, F = 35 ms

  // Without weights the copies resynchronise for free: d = 2, each copy runs 2 micro-batches of
  // the whole chain, F = 2 * 9 = 18 ms.
  show("no weights", layers(0), 2);
  // prints: no weights, K = 2: p = 1, d = 2, F = 18 ms
  return 0;
}
