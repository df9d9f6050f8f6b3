// Files: read a profiled operator graph (devplace.graph/1), inspect it, write it back, and see
// what a bad document gives: an io::input_error naming the file, the field and the reason
// (docs/formats.md).
//
//   ./build/examples/example_read_write_json [graph.json]
#include <devplace/io/graph_json.hpp>

#include <filesystem>
#include <iostream>
#include <random>
#include <string>

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : std::string(DEVPLACE_EXAMPLES_DIR) + "/data/inception_v3_mbs32.json";
  try {
    const devplace::op_graph g = devplace::io::read_graph_json(file);
    double compute = 0, params = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      compute += devplace::compute_ms(g, v);  // fwd_ms + bwd_ms
      params += devplace::param_bytes(g, v);
    }
    // The bundled Inception-v3 file, summed over its "nodes" by a separate script: 314 nodes,
    // 348 edges, 80.047 ms of forward + backward, 95,338,272 parameter bytes.
    std::cout << g.name() << ": " << g.num_vertices() << " operators, " << g.num_edges() << " edges, " << compute
              << " ms of compute, " << params << " parameter bytes\n";
    // prints: inception_v3_mbs32: 314 operators, 348 edges, 80.047[0-9]* ms of compute, 9.53383e\+07 parameter bytes

    // Write it (through a temporary file renamed over the target) and read it back: the same graph.
    const auto copy = std::filesystem::temp_directory_path() /
                      ("devplace_example_graph_" + std::to_string(std::random_device{}()) + ".json");
    devplace::io::write_graph_json(g, copy);
    const devplace::op_graph back = devplace::io::read_graph_json(copy);
    std::filesystem::remove(copy);
    bool same = back.num_vertices() == g.num_vertices() && back.num_edges() == g.num_edges();
    for (std::size_t v = 0; same && v < g.num_vertices(); ++v)
      same = back.forward_ms(v) == g.forward_ms(v) && back.backward_ms(v) == g.backward_ms(v);
    std::cout << "read back: " << (same ? "the same graph" : "DIFFERENT") << '\n';
    // prints: read back: the same graph
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }

  // A document with a negative time: the error says where (a JSON pointer) and why.
  const std::string bad = R"({"format": "devplace.graph/1",
    "nodes": [{"id": 0, "fwd_ms": 1, "bwd_ms": 2}, {"id": 1, "fwd_ms": -1, "bwd_ms": 2}],
    "edges": [{"src": 0, "dst": 1, "bytes": 100}]})";
  try {
    (void)devplace::io::read_graph_json_text(bad, "bad.json");
  } catch (const devplace::io::input_error& e) {
    std::cout << "error: " << e.what() << '\n';
    std::cout << "file " << e.file() << ", field " << e.location() << '\n';
  }
  // prints: error: bad.json: /nodes/1/fwd_ms: 
  // prints: file bad.json, field /nodes/1/fwd_ms
  return 0;
}
