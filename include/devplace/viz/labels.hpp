#pragma once
/// \file viz/labels.hpp
/// `device_labels`: what the pictures and the trace call each device and the node it sits in.
///
/// A topology's device names of the form "NODE/DEVICE" (the generators' "node0/gpu3", a
/// `devplace.cluster/1` file's, `nvidia-smi topo -m`'s) group the devices by node in order of
/// first appearance; names without '/' put every device in one node named after the topology;
/// without names, device d is "dev d".
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/topology/matrix_topology.hpp"

namespace devplace::viz {

struct device_labels {
  std::vector<std::string> name;        ///< per device: the full name ("node0/gpu3")
  std::vector<std::string> short_name;  ///< per device: the name inside its node ("gpu3")
  std::vector<std::size_t> node_of;     ///< per device: its node's index
  std::vector<std::string> nodes;       ///< per node: its name ("node0")

  [[nodiscard]] std::size_t num_devices() const noexcept { return name.size(); }
};

/// The labels of `devices` devices named `names` (empty: "dev d"; else one name per device);
/// `topology_name` names the one node of names without '/'. Throws std::invalid_argument when
/// `names` is neither empty nor of size `devices`.
[[nodiscard]] inline device_labels make_device_labels(std::size_t devices, const std::vector<std::string>& names = {},
                                                      const std::string& topology_name = "devices") {
  if (!names.empty() && names.size() != devices)
    throw std::invalid_argument("make_device_labels: " + std::to_string(names.size()) + " names for " +
                                std::to_string(devices) + " devices");
  device_labels l;
  for (std::size_t d = 0; d < devices; ++d) {
    const std::string full = names.empty() || names[d].empty() ? "dev " + std::to_string(d) : names[d];
    const std::size_t slash = full.find('/');
    const std::string node = slash == std::string::npos ? (topology_name.empty() ? "devices" : topology_name) : full.substr(0, slash);
    std::size_t k = 0;
    while (k < l.nodes.size() && l.nodes[k] != node) ++k;
    if (k == l.nodes.size()) l.nodes.push_back(node);
    l.name.push_back(full);
    l.short_name.push_back(slash == std::string::npos ? full : full.substr(slash + 1));
    l.node_of.push_back(k);
  }
  return l;
}

/// The labels of a topology's devices.
[[nodiscard]] inline device_labels make_device_labels(const matrix_topology& t) {
  return make_device_labels(t.num_devices(), t.device_names(), t.name());
}

}  // namespace devplace::viz
