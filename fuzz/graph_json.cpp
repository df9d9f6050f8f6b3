// libFuzzer target: the devplace.graph/1 JSON reader, then info and a small partition.
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/graph_json.hpp"
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  devplace::op_graph g;
  try {
    g = devplace::io::read_graph_json_text(text, "fuzz.json");
  } catch (const devplace::io::input_error&) {
    return 0;
  }
  devplace::fuzz::graph_invariants(g);
  // What was read writes back and reads again to the same graph.
  const auto again = devplace::io::read_graph_json_text(devplace::io::graph_to_json(g).dump(), "again.json");
  devplace::fuzz::require(again.num_vertices() == g.num_vertices() && again.num_edges() == g.num_edges(),
                          "graph JSON round-trips");
  return 0;
}
