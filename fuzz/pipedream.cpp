// libFuzzer target: the PipeDream graph.txt reader, then info and a small partition.
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/pipedream.hpp"
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)devplace::fuzz::read_and_check_graph(
      data, size, [](const std::string& text) { return devplace::io::read_pipedream_text(text, "graph.txt"); });
  return 0;
}
