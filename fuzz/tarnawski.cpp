// libFuzzer target: the Tarnawski et al. JSON readers (as a graph and as the peer's instance),
// then info, a small partition and the peer's max-load DP with a small ideal cap (invariants.hpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/tarnawski.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/tarnawski_instance.ipp"  // the Tarnawski instance reader's definitions (compiled mode: devplace::core)
#endif
#include "devplace/peers/tarnawski.hpp"
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  const std::string text = devplace::fuzz::as_text(data, size);
  nlohmann::json doc;
  try {
    doc = io::detail::parse_json(text, "fuzz.json");
  } catch (const io::input_error&) {
    return 0;
  }
  try {
    devplace::fuzz::graph_invariants(io::tarnawski_from_json(doc, "fuzz.json"));
  } catch (const io::input_error&) {
  }
  io::tarnawski_instance in;
  try {
    in = io::tarnawski_instance_from_json(doc, "fuzz.json");
  } catch (const io::input_error&) {
    return 0;
  }
  if (in.nodes.empty()) return 0;
  const auto r = devplace::peers::tarnawski_max_load(in, {.max_ideals = devplace::fuzz::max_ideals});
  devplace::fuzz::require(r.status != devplace::status::optimal || (r.max_load >= 0 && std::isfinite(r.max_load)),
                          "an optimal max-load is finite and >= 0");
  return 0;
}
