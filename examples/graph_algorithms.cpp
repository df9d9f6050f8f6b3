// The DAG algorithms on a plain std::vector<std::vector<int>>: critical path, width (largest
// set of operators that may run at once), reachability and convexity of a vertex set.
//
//   ./build/examples/example_graph_algorithms
#include <devplace/algorithm/convexity.hpp>
#include <devplace/algorithm/longest_path.hpp>
#include <devplace/algorithm/reachability.hpp>
#include <devplace/algorithm/width.hpp>

#include <iostream>
#include <vector>

int main() {
  // A residual block: 0 feeds a two-layer branch (1 -> 2) and a skip (3); both join in 4, then 5.
  //
  //        +-> 1 -> 2 --+
  //   0 ---+            +--> 4 -> 5
  //        +-> 3 -------+
  const std::vector<std::vector<int>> g{{1, 3}, {2}, {4}, {4}, {5}, {}};
  const std::vector<double> ms{1.0, 4.0, 4.0, 0.5, 1.0, 2.0};  // time of each operator

  // Heaviest path with the times as vertex weights. By hand: 0-1-2-4-5 = 1+4+4+1+2 = 12,
  // 0-3-4-5 = 1+0.5+1+2 = 4.5.
  const auto crit = devplace::longest_path(g, devplace::by_vertex(ms));
  std::cout << "critical path " << crit.length << " ms:";
  for (auto v : crit.path) std::cout << ' ' << v;
  std::cout << '\n';
  // prints: critical path 12 ms: 0 1 2 4 5

  // Longest chain in operators (unit cost): 5.
  std::cout << "longest chain " << devplace::longest_path(g, devplace::unit_cost{}).length << " operators\n";
  // prints: longest chain 5 operators

  // Width: the largest antichain. {1, 3} and {2, 3} are antichains of 2; no three operators are
  // pairwise unordered (every one but 3 lies on the chain 0-1-2-4-5).
  std::cout << "width " << devplace::dag_width(g) << '\n';
  // prints: width 2

  const devplace::reachability_index reach(g);
  std::cout << "1 reaches 5: " << reach.reaches(1, 5) << ", 1 and 3 comparable: " << reach.comparable(1, 3) << '\n';
  // prints: 1 reaches 5: 1, 1 and 3 comparable: 0

  // A stage {0, 1, 4} is not convex: the path 0 -> 3 -> 4 leaves it and comes back.
  // {1, 2} is: nothing leaves it and re-enters.
  std::cout << "{0,1,4} convex: " << devplace::is_convex(g, std::vector<char>{1, 1, 0, 0, 1, 0})
            << ", {1,2} convex: " << devplace::is_convex(g, std::vector<char>{0, 1, 1, 0, 0, 0}) << '\n';
  // prints: \{0,1,4\} convex: 0, \{1,2\} convex: 1
  return 0;
}
