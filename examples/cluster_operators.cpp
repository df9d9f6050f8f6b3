// Greedy operator clustering (Parmesan eq. 4): merge the adjacent pair of minimum
//   cost(u, v) = c(u) + c(v) - alpha * c_m(u, v)
// (compute of both minus alpha times the transfer time between them), keeping the clustered graph
// acyclic, until K clusters remain (docs/clustering.md).
//
//   ./build/examples/example_cluster_operators
#include <devplace/cluster/greedy_cluster.hpp>
#include <devplace/views/quotient.hpp>
#include <devplace/views/with_costs.hpp>

#include <iostream>
#include <vector>

template <class G>
void run(const char* what, const G& g, std::size_t k) {
  const auto c = devplace::greedy_cluster(g, {.max_clusters = k, .alpha = 1.0});
  std::cout << what << ", K = " << k << ": " << c.num_clusters << " clusters:";
  for (auto x : c.cluster_of) std::cout << ' ' << x;
  std::cout << " (" << devplace::to_string(c.status) << ")\n";
}

int main() {
  // A chain 0 -> 1 -> 2 -> 3, 1 ms of compute each, and 10, 40, 20 MB on its edges: 1, 4, 2 ms
  // at the default 10 GB/s. Pair costs: (0,1) 2 - 1 = 1, (1,2) 2 - 4 = -2, (2,3) 2 - 2 = 0.
  // First merge {1,2}; then (0,{1,2}) 1 + 2 - 1 = 2 against ({1,2},3) 2 + 1 - 2 = 1: merge {1,2,3}.
  const std::vector<std::vector<int>> chain{{1}, {2}, {3}, {}};
  const std::vector<double> mb{10, 40, 20};  // MB on edge u -> u+1
  const auto g = devplace::views::with_costs(
      chain, devplace::costs{.forward_ms = [](const auto&, std::size_t) { return 1.0; },
                             .edge_bytes = [&](const auto&, std::size_t u, std::size_t) { return mb[u] * 1e6; }});
  run("chain", g, 3);
  run("chain", g, 2);
  // prints: chain, K = 3: 3 clusters: 0 1 1 2 \(feasible\)
  // prints: chain, K = 2: 2 clusters: 0 1 1 1 \(feasible\)

  // A triangle 0 -> 1 -> 2 with a heavy shortcut 0 -> 2 (50 MB, 5 ms). The cheapest pair on
  // paper is (0,2): 2 - 5 = -3, but merging it would leave 1 both after and before the merged
  // cluster (a cycle), so it is not allowed. (0,1) and (1,2) tie at 2 - 1 = 1: the smaller
  // representative wins, {0,1}; then ({0,1},2) merges everything.
  const std::vector<std::vector<int>> triangle{{1, 2}, {2}, {}};
  const auto t = devplace::views::with_costs(
      triangle, devplace::costs{.forward_ms = [](const auto&, std::size_t) { return 1.0; },
                                .edge_bytes = [](const auto&, std::size_t u, std::size_t v) {
                                  return (u == 0 && v == 2) ? 50e6 : 10e6;
                                }});
  run("triangle", t, 2);
  // prints: triangle, K = 2: 2 clusters: 0 0 1 \(feasible\)

  // The clustered graph is a profiled dag again: times add up per cluster.
  const auto c = devplace::greedy_cluster(g, {.max_clusters = 2});
  const auto q = devplace::views::quotient(g, c.cluster_of);
  std::cout << "quotient: " << devplace::num_vertices(q) << " operators, the second one " << devplace::compute_ms(q, 1)
            << " ms\n";
  // prints: quotient: 2 operators, the second one 3 ms
  return 0;
}
