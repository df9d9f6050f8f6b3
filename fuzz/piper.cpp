// libFuzzer target: the Piper JSON reader (Tarnawski et al. 2021); the instance's shape is checked.
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/piper.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/piper.ipp"  // the Piper reader's definitions (compiled mode: devplace::core)
#endif
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  const std::string text = devplace::fuzz::as_text(data, size);
  try {
    const auto in = io::piper_from_json(io::detail::parse_json(text, "fuzz.json"), "fuzz.json");
    devplace::fuzz::require(in.in_edges.size() == in.nodes.size() && in.out_edges.size() == in.nodes.size(),
                            "edge lists for every node");
  } catch (const io::input_error&) {
  }
  return 0;
}
