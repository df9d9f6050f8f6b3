// A consumer of devplace::scotch (find_package(devplace COMPONENTS scotch)): Scotch's static
// mapping of a 2-stage, 2-replica stage graph onto 4 devices must use every device once.
#include <devplace/map/baselines.hpp>
#include <devplace/map/scotch.hpp>
#include <devplace/topology/matrix_topology.hpp>

#include <iostream>
#include <set>
#include <vector>

int main() {
  const devplace::stage_graph g(2, {1.0, 1.0}, {1e6, 1e6}, {{0.0, 4e6}, {4e6, 0.0}});
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(4, 4, 10.0);
  bw(0, 1) = bw(1, 0) = bw(2, 3) = bw(3, 2) = 100.0;
  const devplace::matrix_topology topo(bw);
  const devplace::link_costs L(topo);
  const auto m = devplace::scotch_map(g, L);
  std::set<std::size_t> used;
  for (const auto& row : m)
    for (auto d : row) used.insert(d);
  const bool ok = m.size() == 2 && used.size() == 4 && *used.rbegin() == 3;
  std::cout << (ok ? "scotch consumer ok" : "scotch consumer FAILED") << '\n';
  return ok ? 0 : 1;
}
