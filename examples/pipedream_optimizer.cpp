// PipeDream's optimizer (SOSP 2019) as the peers implement it, on a two-layer model whose answer
// can be worked out by hand: a pipeline of two stages, or both machines data parallel
// (docs/peers/pipedream.md).
//
//   ./build/examples/example_pipedream_optimizer
#include <devplace/dag/op_graph.hpp>
#include <devplace/peers/pipedream.hpp>

#include <iostream>

namespace peers = devplace::peers;

devplace::op_graph two_layers(double param_bytes) {
  // PipeDream's profiles give forward and backward ms per minibatch: layer 0 takes 40 ms in all,
  // layer 1 20 ms; no activation bytes, so only the weight synchronisation costs communication.
  devplace::op_graph_builder b;
  b.add_op({.id = 0, .name = "layer0", .fwd_ms = 10, .bwd_ms = 30, .param_bytes = param_bytes, .out_bytes = 0});
  b.add_op({.id = 1, .name = "layer1", .fwd_ms = 5, .bwd_ms = 15, .param_bytes = param_bytes, .out_bytes = 0});
  b.add_edge(0, 1, 0);
  return std::move(b).build();
}

void optimise(const char* what, const devplace::op_graph& g) {
  // Two machines at 10 GB/s (bandwidths in bytes/s, as upstream's -b).
  const auto r = peers::pipedream_optimize(g, {.levels = {{.machines = 2, .bandwidth = 10e9}}});
  std::cout << what << ": " << r.objective_s << " s per minibatch, " << r.stages.size() << " stage(s), "
            << r.states << " states\n";
}

int main() {
  // The objective is the slowest stage's time per minibatch, in seconds. Pipeline: layer 0 and
  // layer 1 on one machine each, max(0.04, 0.02) = 0.04 s. Data parallel: both layers on both
  // machines, (T + 4 (r - 1) P / (B r)) / r with T = 0.06 s, r = 2 and P the bytes of all weights.
  //   no weights:        (0.06 + 0) / 2 = 0.03 s             -> data parallel wins
  //   100 MB per layer:  (0.06 + 4 * 200e6 / (10e9 * 2)) / 2 = (0.06 + 0.04) / 2 = 0.05 s
  //                                                           -> the pipeline's 0.04 s wins
  optimise("no weights", two_layers(0));
  optimise("100 MB of weights per layer", two_layers(100e6));
  // prints: no weights: 0.03 s per minibatch, 1 stage\(s\), 2 states
  // prints: 100 MB of weights per layer: 0.04 s per minibatch, 2 stage\(s\), 2 states
  return 0;
}
