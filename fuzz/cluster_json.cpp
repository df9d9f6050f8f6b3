// libFuzzer target: the `devplace.cluster/1` reader (io/cluster_json.hpp), read with a device
// limit (invariants.hpp) so that nodes x devices per node never builds a huge matrix; the limit's
// error path is fuzzed too. An input naming an `nvidia_smi` file is skipped: the harness reads no
// files (the text of such a file has its own target, nvidia_smi).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/cluster_json.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/cluster_json.ipp"  // the cluster reader's definitions (compiled mode: devplace::core)
#endif
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  using devplace::fuzz::require;
  const std::string text = devplace::fuzz::as_text(data, size);
  if (text.find("nvidia_smi") != std::string::npos) return 0;
  devplace::matrix_topology t;
  try {
    t = io::read_cluster_json_text(text, "fuzz.json", {}, {.max = devplace::fuzz::max_devices, .reason = "fuzz cap"});
  } catch (const io::input_error&) {
    return 0;
  }
  const std::size_t D = t.num_devices();
  require(D >= 1 && D <= devplace::fuzz::max_devices, "the device limit holds");
  for (std::size_t a = 0; a < D && a < 64; ++a)
    for (std::size_t b = 0; b < D && b < 64; ++b)
      if (a != b) {
        const double x = t.bandwidth_gbps(a, b);
        require(x > 0 && std::isfinite(x), "bandwidth > 0 and finite between devices");
        require(t.latency_us(a, b) >= 0, "latency >= 0");
      }
  return 0;
}
