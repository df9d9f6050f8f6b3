// Views: lazy, non-owning adaptors over any dag (docs/views.md). They compose, and every view of
// a dag is again a dag that the algorithms accept.
//
//   ./build/examples/example_views_compose
#include <devplace/algorithm/longest_path.hpp>
#include <devplace/dag/csr_dag.hpp>
#include <devplace/dag/properties.hpp>
#include <devplace/views/induced.hpp>
#include <devplace/views/quotient.hpp>
#include <devplace/views/reverse.hpp>
#include <devplace/views/with_costs.hpp>

#include <iostream>
#include <vector>

template <class G>
void print_edges(const char* what, const G& g) {
  std::cout << what << ':';
  for (std::size_t u = 0; u < devplace::num_vertices(g); ++u)
    for (auto v : devplace::out_edges(g, u)) std::cout << ' ' << u << "->" << v;
  std::cout << '\n';
}

int main() {
  // 0 -> 1 -> 2 -> 4 -> 5 and the skip 0 -> 3 -> 4.
  const std::vector<std::vector<int>> adjacency{{1, 3}, {2}, {4}, {4}, {5}, {}};
  // A vector of vectors lists successors only; `views::reverse` also needs predecessors, which the
  // compressed copy `csr_dag` has.
  const devplace::csr_dag g = devplace::to_csr_dag(adjacency);

  // The subgraph on {1, 2, 4}, renumbered 0, 1, 2 in base order: 1->2 becomes 0->1, 2->4 1->2.
  const auto sub = devplace::views::induced(g, std::vector<std::size_t>{1, 2, 4});
  print_edges("induced {1,2,4}", sub);
  // prints: induced \{1,2,4\}: 0->1 1->2
  // Turned around (views compose): 1->0 2->1.
  print_edges("reversed", devplace::views::reverse(sub));
  // prints: reversed: 1->0 2->1

  // Profiled attributes from callables: forward = 1 ms per operator, backward = 2 ms, 1 MB per edge.
  const auto pg = devplace::views::with_costs(
      g, devplace::costs{.forward_ms = [](const auto&, std::size_t) { return 1.0; },
                         .backward_ms = [](const auto&, std::size_t) { return 2.0; },
                         .edge_bytes = [](const auto&, std::size_t, std::size_t) { return 1e6; }});
  static_assert(devplace::profiled_dag<decltype(pg)>);
  // Critical path in compute time (forward + backward): 5 operators on 0-1-2-4-5, 5 * 3 = 15 ms.
  std::cout << "critical path " << devplace::longest_path(pg, devplace::compute_ms).length << " ms\n";
  // prints: critical path 15 ms

  // Contract {0}, {1,2,3}, {4,5}: 3 clusters, edges 0->1 and 1->2; times add up per cluster
  // (3 operators * 3 ms = 9 ms), and so do the bytes of merged edges (2->4 and 3->4: 2 MB).
  const std::vector<std::size_t> cluster_of{0, 1, 1, 1, 2, 2};
  const auto q = devplace::views::quotient(pg, cluster_of);
  print_edges("quotient", q);
  std::cout << "cluster 1: " << devplace::compute_ms(q, 1) << " ms, edge 1->2: " << devplace::edge_bytes(q, 1, 2) / 1e6
            << " MB, acyclic " << q.acyclic() << '\n';
  // prints: quotient: 0->1 1->2
  // prints: cluster 1: 9 ms, edge 1->2: 2 MB, acyclic 1
  return 0;
}
