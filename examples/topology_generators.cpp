// Device topologies: a bandwidth matrix (GB/s) behind the `device_topology` concept. The
// generators build the ones of the Parmesan paper and DGX-1 boxes (docs/topology.md).
//
//   ./build/examples/example_topology_generators
#include <devplace/topology/generators.hpp>

#include <iostream>

int main() {
  // A 4 x 4 torus: devices row-major, bandwidth from the hop count (Table IX of the paper).
  // Device 0 is (0,0), 3 is (0,3): one hop round the wrap (78.1 GB/s); 2 is (0,2): two hops
  // either way (39.0); 10 is (2,2): 2 + 2 hops (14.6).
  const auto torus = devplace::torus2d(4, 4);
  std::cout << "torus2d 4x4: " << devplace::num_devices(torus) << " devices; 0-3 " << devplace::bandwidth_gbps(torus, 0, 3)
            << ", 0-2 " << devplace::bandwidth_gbps(torus, 0, 2) << ", 0-10 " << devplace::bandwidth_gbps(torus, 0, 10)
            << " GB/s\n";
  // prints: torus2d 4x4: 16 devices; 0-3 78.1, 0-2 39, 0-10 14.6 GB/s

  // The same grid without the wrap: 0 to 15 is 3 + 3 = 6 hops (7.81 GB/s).
  std::cout << "mesh2d 4x4: 0-15 " << devplace::bandwidth_gbps(devplace::mesh2d(4, 4), 0, 15) << " GB/s\n";
  // prints: mesh2d 4x4: 0-15 7.81 GB/s

  // Two DGX-1 boxes: GPUs 0 and 1 share two NVLinks (43.2 GB/s), 0 and 5 none (PCIe, 10.1);
  // device 8 is GPU 0 of the second box (1.4 GB/s between boxes).
  const auto two = devplace::dgx1_cluster(2);
  std::cout << "dgx1 x2: " << devplace::num_devices(two) << " devices; 0-1 " << devplace::bandwidth_gbps(two, 0, 1)
            << ", 0-5 " << devplace::bandwidth_gbps(two, 0, 5) << ", 0-8 " << devplace::bandwidth_gbps(two, 0, 8)
            << " GB/s\n";
  // prints: dgx1 x2: 16 devices; 0-1 43.2, 0-5 10.1, 0-8 1.4 GB/s

  // Transfer time = bytes / bandwidth + latency: 64 MB over 43.2 GB/s is 64e6 / 43.2e6 = 1.4815 ms.
  std::cout << "64 MB from GPU 0 to GPU 1: " << devplace::transfer_ms(two, 0, 1, 64e6) << " ms\n";
  // prints: 64 MB from GPU 0 to GPU 1: 1.4814[0-9]* ms

  // By name, as the CLI and the JSON files do; a bad parameter names its field.
  const auto random = devplace::generate_topology({.generator = "uniform_dist", .devices = 8, .seed = 7});
  std::cout << "uniform_dist: " << devplace::num_devices(random) << " devices, the same matrix for a seed on every platform\n";
  // prints: uniform_dist: 8 devices
  try {
    (void)devplace::generate_topology({.generator = "torus2d", .shape = {4, 0}});
  } catch (const devplace::spec_error& e) {
    std::cout << "bad spec: field '" << e.field() << "': " << e.what() << '\n';
  }
  // prints: bad spec: field 'shape'
  return 0;
}
