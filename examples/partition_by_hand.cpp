// Pipeline partitioning on a graph small enough to check by hand: the exact DP over all down-sets
// against the fixed-order DP, which only cuts one topological order (docs/partition.md).
//
//   ./build/examples/example_partition_by_hand
#include <devplace/partition/pipeline_dp.hpp>
#include <devplace/partition/topo_dp.hpp>
#include <devplace/views/with_costs.hpp>

#include <iostream>
#include <vector>

int main() {
  // A residual block: 0 -> 1 -> 2 -> 4 -> 5 with the skip 0 -> 3 -> 4. Compute time c(v) (forward
  // + backward) per operator; every edge carries 10 MB, which costs 1 ms at the default 10 GB/s
  // when the edge is cut.
  const std::vector<std::vector<int>> adjacency{{1, 3}, {2}, {4}, {4}, {5}, {}};
  const std::vector<double> c{1, 4, 4, 0.5, 1, 2};
  const auto g = devplace::views::with_costs(
      adjacency, devplace::costs{.forward_ms = [&](const auto&, std::size_t v) { return c[v]; },
                                 .edge_bytes = [](const auto&, std::size_t, std::size_t) { return 10e6; }});

  // A stage's time is (its compute + 1 ms per cut edge) / R; the objective is the slowest stage.
  // Two stages, one replica each. By hand, over the down-sets F (first stage) and V \ F:
  //   F = {0,1}     : 5 + 2 = 7   |  7.5 + 2 = 9.5   -> 9.5
  //   F = {0,1,2}   : 9 + 2 = 11  |  3.5 + 2 = 5.5   -> 11
  //   F = {0,1,3}   : 5.5 + 2 = 7.5 | 7 + 2 = 9      -> 9     (cuts 1->2 and 3->4)
  //   F = {0,3}, {0}, {0,1,2,3}, {0,..,4}: 13, 13.5, 11.5, 11.5
  // The optimum 9 puts the skip operator 3 before the branch's second half.
  const devplace::partition_options opt{.stages = 2};
  const auto exact = devplace::pipeline_dp(g, opt);
  std::cout << "exact DP: " << exact.objective_ms << " ms (" << devplace::to_string(exact.status) << "), stages:";
  for (auto s : exact.stage_of) std::cout << ' ' << s;
  std::cout << '\n';
  // prints: exact DP: 9 ms \(optimal\), stages: 0 0 1 0 1 1

  // The fixed-order DP cuts the order 0 1 2 3 4 5 into prefixes only, so {0,1,3} is out of its
  // reach: its best is F = {0,1} at 9.5 ms.
  const auto fixed = devplace::topo_dp(g, opt);
  std::cout << "fixed-order DP: " << fixed.objective_ms << " ms\n";
  // prints: fixed-order DP: 9.5 ms

  // Two replicas per stage halve every stage time: 4.5 ms.
  const auto replicated = devplace::pipeline_dp(g, {.stages = 2, .cost = {.replicas = 2}});
  std::cout << "R = 2: " << replicated.objective_ms << " ms\n";
  // prints: R = 2: 4.5 ms
  return exact.objective_ms <= fixed.objective_ms ? 0 : 1;
}
