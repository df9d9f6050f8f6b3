// libFuzzer target: the devplace.topology/1 reader, both forms (matrix and generator); what it
// accepts is costed (link costs, a CS map of 2 stages) and round-trips through the matrix form.
// Read with a device limit (invariants.hpp): a generator can ask for up to 16 384 devices, whose
// matrices (4 GiB) and matrix-form round trip would dominate the run; the limit's own error path
// is then fuzzed too. (The first 10^6-execution run timed out on torus2d [3, 531]: the round trip
// of 1 593 devices took > 10 s on a loaded machine; the input is the seed corpus/topology_json/
// timeout-torus2d-1593.json.)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "devplace/io/topology_json.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  using devplace::fuzz::require;
  const std::string text = devplace::fuzz::as_text(data, size);
  devplace::matrix_topology t;
  try {
    t = io::read_topology_json_text(text, "fuzz.json", {.max = devplace::fuzz::max_devices, .reason = "fuzz cap"});
  } catch (const io::input_error&) {
    return 0;
  }
  const std::size_t D = t.num_devices();
  require(D >= 1 && D <= devplace::fuzz::max_devices, "the device limit holds");
  for (std::size_t a = 0; a < D && a < 64; ++a)
    for (std::size_t b = 0; b < D && b < 64; ++b)
      if (a != b) require(t.bandwidth_gbps(a, b) > 0 && !std::isnan(t.bandwidth_gbps(a, b)), "bandwidth > 0 between devices");
  const auto again = io::read_topology_json_text(io::topology_to_json(t).dump(), "again.json");
  require(again.num_devices() == D, "topology JSON round-trips");
  return 0;
}
