// libFuzzer target: the devplace.graph/1 JSON reader, then info and a small partition.
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/graph_json.hpp"
#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  const auto g = devplace::fuzz::read_and_check_graph(
      data, size, [](const std::string& text) { return io::read_graph_json_text(text, "fuzz.json"); });
  if (!g) return 0;
  // What was read writes back and reads again to the same graph.
  const auto again = io::read_graph_json_text(io::graph_to_json(*g).dump(), "again.json");
  devplace::fuzz::require(again.num_vertices() == g->num_vertices() && again.num_edges() == g->num_edges(),
                          "graph JSON round-trips");
  return 0;
}
