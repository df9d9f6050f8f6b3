// A program that uses devplace as a consumer would: include the public headers and link the target.
#include <devplace/algorithm/topological_sort.hpp>
#include <devplace/dag/csr_dag.hpp>
#include <devplace/dag/op_graph.hpp>
#include <devplace/topology/matrix_topology.hpp>

#include <iostream>
#include <vector>

int main() {
  const std::vector<std::vector<int>> adj{{1, 2}, {3}, {3}, {}};
  const auto order = devplace::topological_sort(adj);
  const auto csr = devplace::to_csr_dag(adj);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(2, 2, 10.0);
  const devplace::matrix_topology topo(bw);
  const bool ok = order && order.order.size() == 4 && csr.num_edges() == 4 && topo.num_devices() == 2;
  std::cout << (ok ? "consumer ok" : "consumer FAILED") << '\n';
  return ok ? 0 : 1;
}
