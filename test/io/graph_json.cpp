#include "devplace/io/graph_json.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "devplace/io/read_graph.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif

using namespace devplace;
namespace fs = std::filesystem;

namespace {

const std::string examples = std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/";

// The message of the input_error that reading `text` raises, or "" if it reads.
std::string graph_error_of(const std::string& text) {
  try {
    (void)io::read_graph_json_text(text, "g.json");
  } catch (const io::input_error& e) {
    CHECK(std::string(e.what()) == e.file() + ": " + e.location() + ": " + e.reason());
    return e.what();
  }
  return "";
}

std::string doc(const std::string& nodes, const std::string& edges, const std::string& extra = "") {
  return R"({"format": "devplace.graph/1", )" + extra + R"("nodes": )" + nodes + R"(, "edges": )" + edges + "}";
}
const std::string two = R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2}, {"id": 2, "fwd_ms": 0.5, "bwd_ms": 0}])";

}  // namespace

TEST_CASE("the bundled real graphs read with the documented sizes") {
  struct expect { const char* file; std::size_t ops, edges; };
  for (auto [file, ops, edges] : {expect{"bert_large_mbs4.json", 591, 707}, expect{"resnet152_mbs64.json", 515, 564},
                                   expect{"swin_large_mbs32.json", 1338, 1479}, expect{"gpt2_medium_mbs8.json", 914, 1086},
                                   expect{"inception_v3_mbs32.json", 314, 348}}) {
    const op_graph g = io::read_graph(examples + file);
    CAPTURE(file);
    CHECK(g.num_vertices() == ops);
    CHECK(g.num_edges() == edges);
    CHECK(!g.name().empty());
  }
}

TEST_CASE("graph JSON round-trips through write and read") {
  const op_graph g = io::read_graph_json(examples + "inception_v3_mbs32.json");
  const fs::path dir = fs::temp_directory_path() / "devplace_test_graph_rt";
  fs::create_directories(dir);
  io::write_graph_json(g, dir / "copy.json");
  const op_graph h = io::read_graph_json(dir / "copy.json");
  REQUIRE(h.num_vertices() == g.num_vertices());
  CHECK(h.structure() == g.structure());
  CHECK(h.name() == g.name());
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    CHECK(h.op(v).id == g.op(v).id);
    CHECK(h.op(v).name == g.op(v).name);
    CHECK(h.forward_ms(v) == g.forward_ms(v));
    CHECK(h.backward_ms(v) == g.backward_ms(v));
    CHECK(h.memory_bytes(v) == g.memory_bytes(v));
    CHECK(h.param_bytes(v) == g.param_bytes(v));
  }
  for (csr_dag::edge_type e = 0; e < g.num_edges(); ++e) CHECK(h.edge_bytes_of(e) == g.edge_bytes_of(e));
  fs::remove_all(dir);
}

TEST_CASE("graph JSON: sparse ids, file order kept, parallel edges merged") {
  const auto g = io::read_graph_json_text(
      doc(R"([{"id": 30, "fwd_ms": 1, "bwd_ms": 1}, {"id": 10, "fwd_ms": 1, "bwd_ms": 1}])",
          R"([{"src": 30, "dst": 10, "bytes": 5}, {"src": 30, "dst": 10, "bytes": 7}])"),
      "g.json");
  CHECK(g.op(0).id == 30);
  CHECK(g.num_edges() == 1);
  CHECK(g.edge_bytes(0, 1) == 12.0);
}

TEST_CASE("graph JSON: every rejected input names file, pointer and reason") {
  CHECK(graph_error_of("{\"format\": \"devplace.graph/1\",\n \"nodes\": [,]}").find("g.json: line 2, column") == 0);
  CHECK(graph_error_of("[1, 2]").find("g.json: /: expected an object") == 0);
  CHECK(graph_error_of(R"({"format": "devplace.graph/2", "nodes": [], "edges": []})") ==
        "g.json: /format: unknown format 'devplace.graph/2' (expected 'devplace.graph/1')");
  CHECK(graph_error_of(R"({"nodes": [], "edges": []})") == "g.json: /format: missing required field");
  CHECK(graph_error_of(R"({"format": "devplace.graph/1", "nodes": [)").find("g.json: line 1, column 42: malformed JSON") == 0);
  CHECK(graph_error_of(R"({"format": "devplace.graph/1", "edges": []})") == "g.json: /nodes: missing required field");
  CHECK(graph_error_of(doc(R"([{"id": 1, "bwd_ms": 2}])", "[]")) == "g.json: /nodes/0/fwd_ms: missing required field");
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": "fast", "bwd_ms": 2}])", "[]")) ==
        "g.json: /nodes/0/fwd_ms: expected a number, got a string");
  CHECK(graph_error_of(doc(R"([{"id": "a", "fwd_ms": 1, "bwd_ms": 2}])", "[]")) ==
        "g.json: /nodes/0/id: expected an integer, got a string");
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": -1, "bwd_ms": 2}])", "[]")) ==
        "g.json: /nodes/0/fwd_ms: expected a number >= 0, got -1");
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2, "param_bytes": 1e999}])", "[]")) ==
        "g.json: line 1, column 93: expected a finite number: number overflow parsing '1e999'");
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": NaN, "bwd_ms": 2}])", "[]")).find("g.json: line 1, column") == 0);
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2}, {"id": 1, "fwd_ms": 1, "bwd_ms": 2}])", "[]")) ==
        "g.json: /nodes/1/id: duplicate node id 1 (first at /nodes/0)");
  CHECK(graph_error_of(doc(two, R"([{"src": 1, "dst": 9, "bytes": 1}])")) == "g.json: /edges/0/dst: no node has id 9");
  CHECK(graph_error_of(doc(two, R"([{"src": 7, "dst": 2, "bytes": 1}])")) == "g.json: /edges/0/src: no node has id 7");
  CHECK(graph_error_of(doc(two, R"([{"src": 1, "dst": 2}])")) == "g.json: /edges/0/bytes: missing required field");
  CHECK(graph_error_of(doc(two, R"([{"src": 1, "dst": 2, "bytes": -3}])")) ==
        "g.json: /edges/0/bytes: expected a number >= 0, got -3");
  CHECK(graph_error_of(doc(two, R"([{"src": 2, "dst": 2, "bytes": 1}])")) == "g.json: /edges/0: self-loop on node 2");
  CHECK(graph_error_of(doc(two, R"({"src": 1})")) == "g.json: /edges: expected an array, got an object");
  CHECK(graph_error_of(doc(two, "[]", R"("units": {"time": "s"}, )")) ==
        "g.json: /units/time: unit 's' is not supported (version 1 uses 'ms')");
  const std::string cyc = doc(
      R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 1}, {"id": 2, "fwd_ms": 1, "bwd_ms": 1}, {"id": 3, "fwd_ms": 1, "bwd_ms": 1}, {"id": 4, "fwd_ms": 1, "bwd_ms": 1}])",
      R"([{"src": 1, "dst": 2, "bytes": 1}, {"src": 2, "dst": 3, "bytes": 1}, {"src": 3, "dst": 4, "bytes": 1}, {"src": 4, "dst": 2, "bytes": 1}])");
  const std::string msg = graph_error_of(cyc);
  CHECK(msg.find("g.json: /edges: the graph has a cycle: ") == 0);
  CHECK(msg.find("2 ->") != std::string::npos);
  CHECK(msg.find("3 ->") != std::string::npos);
  CHECK(msg.find("4 ->") != std::string::npos);
  CHECK(msg.find(" 1 ") == std::string::npos);
}

TEST_CASE("reading a missing file and an unknown --format are clear errors") {
  CHECK_THROWS_WITH_AS((void)io::read_graph("/nonexistent/g.json"), "/nonexistent/g.json: /: cannot open the file",
                       io::input_error);
  CHECK_THROWS_WITH_AS((void)io::read_graph(examples + "bert_large_mbs4.json", "onnx"),
                       doctest::Contains("unknown format 'onnx'"), io::input_error);
}

TEST_CASE("a failed write leaves nothing behind and keeps the old file") {
  const op_graph g = io::read_graph_json(examples + "inception_v3_mbs32.json");
  CHECK_THROWS_AS(io::write_graph_json(g, "/nonexistent-dir/out.json"), io::output_error);
  const fs::path dir = fs::temp_directory_path() / "devplace_test_atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  io::write_graph_json(g, dir / "g.json");
  io::write_graph_json(g, dir / "g.json");  // replaces in place
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  CHECK(files == 1);
  // A directory where the file should go: the rename fails, the temporary is removed.
  fs::create_directories(dir / "blocked.json" / "x");
  CHECK_THROWS_AS(io::write_graph_json(g, dir / "blocked.json"), io::output_error);
  files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  CHECK(files == 2);
  fs::remove_all(dir);
}

TEST_CASE("graph JSON: the optional co-location group and backward flag are read, written back, and checked") {
  const auto g = io::read_graph_json_text(
      doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 0, "group": 4}, {"id": 2, "fwd_ms": 2, "bwd_ms": 0, "group": 4, "backward": true}, {"id": 3, "fwd_ms": 1, "bwd_ms": 1}])",
          R"([{"src": 1, "dst": 2, "bytes": 1}])"),
      "g.json");
  CHECK(g.op(0).group == 4);
  CHECK(!g.op(0).backward);
  CHECK(g.op(1).group == 4);
  CHECK(g.op(1).backward);
  CHECK(g.op(2).group == -1);  // absent
  const fs::path dir = fs::temp_directory_path() / "devplace_test_graph_group";
  fs::create_directories(dir);
  io::write_graph_json(g, dir / "groups.json");
  const op_graph h = io::read_graph_json(dir / "groups.json");
  for (std::size_t v = 0; v < 3; ++v) {
    CHECK(h.op(v).group == g.op(v).group);
    CHECK(h.op(v).backward == g.op(v).backward);
  }
  fs::remove_all(dir);
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2, "group": -3}])", "[]")) ==
        "g.json: /nodes/0/group: expected an integer >= 0, got -3");
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2, "backward": "yes"}])", "[]")) ==
        "g.json: /nodes/0/backward: expected a boolean or 0/1, got a string");
}

TEST_CASE("graph JSON: the optional layer id is read, written back, and checked") {
  const auto g = io::read_graph_json_text(
      doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2, "layer": 7}, {"id": 2, "fwd_ms": 0.5, "bwd_ms": 0, "layer": 0}, {"id": 3, "fwd_ms": 1, "bwd_ms": 1}])",
          R"([{"src": 1, "dst": 2, "bytes": 1}])"),
      "g.json");
  CHECK(g.op(0).layer == 7);
  CHECK(g.op(1).layer == 0);
  CHECK(g.op(2).layer == -1);  // absent
  const fs::path dir = fs::temp_directory_path() / "devplace_test_graph_layer";
  fs::create_directories(dir);
  io::write_graph_json(g, dir / "layers.json");
  const op_graph h = io::read_graph_json(dir / "layers.json");
  for (std::size_t v = 0; v < 3; ++v) CHECK(h.op(v).layer == g.op(v).layer);
  std::ifstream in(dir / "layers.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"layer\"") != std::string::npos);
  fs::remove_all(dir);
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2, "layer": -1}])", "[]")) ==
        "g.json: /nodes/0/layer: expected an integer >= 0, got -1");
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2, "layer": 1.5}])", "[]")) ==
        "g.json: /nodes/0/layer: expected an integer, got 1.5");
  CHECK(graph_error_of(doc(R"([{"id": 1, "fwd_ms": 1, "bwd_ms": 2, "layer": "enc.3"}])", "[]")) ==
        "g.json: /nodes/0/layer: expected an integer, got a string");
}
