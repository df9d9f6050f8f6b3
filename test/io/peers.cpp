// Readers of other projects' published inputs. Those files are not ours to commit: the tests
// read them from the shared data folder beside the checkout when it exists and skip otherwise.
#include "devplace/io/pipedream.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/io/tarnawski.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "devplace/algorithm/topological_sort.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif
#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

namespace {
const fs::path peers = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers";
bool have(const fs::path& p) { return devplace::test::require_path(p); }
double sum_fwd(const op_graph& g) {
  double s = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) s += g.forward_ms(v);
  return s;
}
double sum_bwd(const op_graph& g) {
  double s = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) s += g.backward_ms(v);
  return s;
}
}  // namespace

TEST_CASE("PipeDream graph.txt: sizes and totals of published profiles") {
  const fs::path base = peers / "pipedream" / "profiler" / "image_classification" / "profiles";
  if (!have(base)) return;
  const op_graph r50 = io::read_graph(base / "resnet50" / "graph.txt");  // format by content
  CHECK(r50.num_vertices() == 177);
  CHECK(r50.num_edges() == 193);
  CHECK(sum_fwd(r50) == doctest::Approx(201.45).epsilon(1e-6));
  CHECK(sum_bwd(r50) == doctest::Approx(260.931).epsilon(1e-6));
  CHECK(topological_sort(r50).status == status::optimal);
  // Every edge carries its source's activation size.
  for (std::size_t u = 0; u < r50.num_vertices(); ++u)
    for (auto v : r50.out_edges(u)) CHECK(r50.edge_bytes(u, v) == r50.op(u).out_bytes);
  struct expect { const char* model; std::size_t nodes, edges; };
  for (auto [model, nodes, edges] : {expect{"alexnet", 23, 23}, expect{"vgg16", 41, 41}, expect{"resnet18", 71, 79},
                                      expect{"densenet121", 429, 487}, expect{"nasnetalarge", 1251, 1468}}) {
    const op_graph g = io::read_pipedream(base / model / "graph.txt");
    CAPTURE(model);
    CHECK(g.num_vertices() == nodes);
    CHECK(g.num_edges() == edges);
  }
  const fs::path gnmt = peers / "pipedream" / "profiler" / "translation" / "profiles" / "gnmt_large" / "graph.txt";
  const op_graph g = io::read_pipedream(gnmt);  // activation_size lists are summed
  CHECK(g.num_vertices() == 96);
  CHECK(g.num_edges() == 122);
  CHECK(sum_fwd(g) == doctest::Approx(182.563).epsilon(1e-6));
  CHECK(sum_bwd(g) == doctest::Approx(337.89).epsilon(1e-6));
}

TEST_CASE("PipeDream graph.txt: malformed lines are reported with their line number") {
  auto error_of = [](const std::string& text) {
    try {
      (void)io::read_pipedream_text(text, "graph.txt");
    } catch (const io::input_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string n1 = "node1 -- Conv -- forward_compute_time=1, backward_compute_time=2, activation_size=8, parameter_size=0\n";
  const std::string n2 = "node2 -- ReLU -- forward_compute_time=1, backward_compute_time=2, activation_size=8, parameter_size=0\n";
  CHECK(io::read_pipedream_text(n1 + n2 + "\tnode1 -- node2\n", "graph.txt").num_edges() == 1);
  CHECK(error_of(n1 + "node2 -- ReLU\n") ==
        "graph.txt: line 2: expected a node 'ID -- DESCRIPTION -- METRICS[ -- stage_id=S]' (2 fields separated by ' -- ')");
  CHECK(error_of(n1 + "node2 -- ReLU -- forward_compute_time=x, backward_compute_time=2, activation_size=8, parameter_size=0\n") ==
        "graph.txt: line 2: forward_compute_time: expected a finite number >= 0, got 'x'");
  CHECK(error_of(n1 + "node2 -- ReLU -- forward_compute_time=1, activation_size=8, parameter_size=0\n") ==
        "graph.txt: line 2: missing backward_compute_time");
  CHECK(error_of(n1 + n2 + "\tnode1 -- node9\n") == "graph.txt: line 3: edge to unknown node 'node9'");
  CHECK(error_of(n1 + n2 + "\tnode1 -- node2\n\tnode2 -- node1\n").find("graph.txt: edges: the graph has a cycle") == 0);
}

TEST_CASE("Tarnawski et al. 2020 JSON graphs") {
  const fs::path base = peers / "dnn-partitioning" / "throughput-inputs";
  if (!have(base)) return;
  const op_graph bert = io::read_graph(base / "OperatorGraphs" / "bert_l-3_inference.json");
  CHECK(bert.num_vertices() == 235);
  CHECK(bert.num_edges() == 250);
  CHECK(topological_sort(bert).status == status::optimal);
  {  // colorClass and isBackwardNode are kept: 224 of the 235 nodes carry one of 117 classes
    std::set<std::int64_t> groups;
    std::size_t grouped = 0, backward = 0;
    for (const auto& a : bert.ops()) {
      if (a.group >= 0) { groups.insert(a.group); ++grouped; }
      backward += a.backward;
    }
    CHECK(groups.size() == 117);
    CHECK(grouped == 224);
    CHECK(backward == 0);
    const op_graph train = io::read_graph(base / "OperatorGraphs" / "bert_l-3_training.json");
    backward = 0;
    for (const auto& a : train.ops()) backward += a.backward;
    CHECK(backward == 365);
  }
  // The layer graphs are PipeDream profiles: the fpgaLatency sum equals PipeDream's forward sum.
  const op_graph r50 = io::read_tarnawski(base / "LayerGraphs" / "resnet50_inference.json");
  CHECK(r50.num_vertices() == 177);
  CHECK(r50.num_edges() == 193);
  CHECK(sum_fwd(r50) == doctest::Approx(201.45).epsilon(1e-6));
  const op_graph inc = io::read_tarnawski(base / "LayerGraphs" / "inceptionv3_inference.json");
  CHECK(inc.num_vertices() == 326);
  CHECK(sum_fwd(inc) == doctest::Approx(310.969).epsilon(1e-6));
  // Every file of the collection loads and is acyclic.
  for (const auto& dir : {base / "OperatorGraphs", base / "LayerGraphs"})
    for (const auto& e : fs::directory_iterator(dir)) {
      CAPTURE(e.path().string());
      const op_graph g = io::read_graph(e.path(), "tarnawski");
      CHECK(g.num_vertices() > 0);
    }
}
