// libFuzzer target: the reader of `nvidia-smi topo -m` text (io/nvidia_smi.hpp). What it accepts
// has a bandwidth > 0 and not NaN between every two GPUs, symmetric (the reader rejects an
// asymmetric table), a zero diagonal, and replicates into two nodes of twice the devices.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/nvidia_smi.hpp"
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  using devplace::fuzz::require;
  devplace::matrix_topology t;
  try {
    t = io::read_nvidia_smi_topo_text(devplace::fuzz::as_text(data, size), "fuzz.topo.txt");
  } catch (const io::input_error&) {
    return 0;
  }
  const std::size_t D = t.num_devices();
  require(D >= 1, "an accepted table lists a GPU");
  for (std::size_t a = 0; a < D; ++a) {
    require(t.bandwidth_gbps(a, a) == 0, "no bandwidth from a GPU to itself");
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) {
        const double x = t.bandwidth_gbps(a, b);
        require(x > 0 && std::isfinite(x), "bandwidth > 0 and finite between GPUs");
        require(x == t.bandwidth_gbps(b, a), "the table is symmetric");
      }
  }
  const auto two = io::replicate_nodes(t, 2, 10.0);
  require(two.num_devices() == 2 * D, "two nodes have twice the devices");
  return 0;
}
