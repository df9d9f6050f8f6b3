// libFuzzer target: the PipeDream graph.txt reader, then info and a small partition.
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/pipedream.hpp"
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  devplace::op_graph g;
  try {
    g = devplace::io::read_pipedream_text(text, "graph.txt");
  } catch (const devplace::io::input_error&) {
    return 0;
  }
  devplace::fuzz::graph_invariants(g);
  return 0;
}
