#pragma once
// Archetype of a `device_topology` with nodes: num_devices, bandwidth_gbps and the node points
// (node_of, nic_count, nic_bandwidth_gbps) as members; latency and memory from the CPO defaults.
#include <cstddef>
#include <vector>

namespace devplace::archetypes {

struct node_topology {
  std::vector<std::vector<double>> bw;
  std::vector<std::size_t> node;   ///< node of each device
  std::vector<std::size_t> nics;   ///< per node
  std::vector<double> nic_gbps;    ///< per node, per NIC
  std::size_t num_devices() const { return bw.size(); }
  double bandwidth_gbps(std::size_t a, std::size_t b) const { return bw[a][b]; }
  std::size_t node_of(std::size_t d) const { return node[d]; }
  std::size_t nic_count(std::size_t n) const { return nics[n]; }
  double nic_bandwidth_gbps(std::size_t n) const { return nic_gbps[n]; }
};

}  // namespace devplace::archetypes
