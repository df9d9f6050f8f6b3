#pragma once
// Archetype of `device_topology`: only num_devices and bandwidth_gbps (latency and memory come
// from the CPO defaults).
#include <cstddef>
#include <vector>

namespace devplace::archetypes {

struct minimal_topology {
  std::vector<std::vector<double>> bw;
  std::size_t num_devices() const { return bw.size(); }
  double bandwidth_gbps(std::size_t a, std::size_t b) const { return bw[a][b]; }
};

}  // namespace devplace::archetypes
