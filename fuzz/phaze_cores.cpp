// libFuzzer target: PHAZE's cores.json reader (phaze/cores_json.hpp), as a list of configurations
// and as one accelerator object. Every accepted configuration has power-of-two core counts and
// array sides, width_vc = width, a positive global buffer (and area, in the list form); the list
// gives an area table of its size.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/phaze/cores_json.hpp"
#include "invariants.hpp"

namespace {

bool power_of_two(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

void config_invariants(const devplace::phaze::core_config& c, bool with_area) {
  using devplace::fuzz::require;
  require(power_of_two(c.num_tc) && power_of_two(c.num_vc) && power_of_two(c.pe_x) && power_of_two(c.pe_y),
          "core counts and array sides are powers of two");
  require(c.glb_bytes > 0 && std::isfinite(c.glb_bytes), "the global buffer is > 0 and finite");
  if (with_area) require(c.area > 0 && std::isfinite(c.area), "the area is > 0 and finite");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  namespace ph = devplace::phaze;
  const std::string text = devplace::fuzz::as_text(data, size);
  try {
    const auto cs = ph::read_cores_json_text(text, "cores.json");
    for (const auto& c : cs) config_invariants(c, true);
    (void)ph::make_area_table(cs);
  } catch (const io::input_error&) {
  }
  try {
    config_invariants(ph::read_accelerator_json_text(text, "accelerator.json"), false);
  } catch (const io::input_error&) {
  }
  return 0;
}
