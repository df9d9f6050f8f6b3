// Extreme inputs (issue 18): huge graphs and topologies, zero costs, parallel edges, self-loops,
// NaN / Inf / negative / huge numbers, non-UTF-8 names. Each gives a clear error or a correct
// answer (oracles: the closed forms of chains and of the generators), in seconds, also under ASan.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/algorithm/longest_path.hpp"
#include "devplace/algorithm/sources_sinks.hpp"
#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/io/graph_json.hpp"
#include "devplace/io/pipedream.hpp"
#include "devplace/io/topology_json.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif

using namespace devplace;

namespace {

/// A chain 0 -> 1 -> ... -> n-1 of operators of `ms` forward and backward, edges of `bytes`.
op_graph chain(std::size_t n, double ms, double bytes) {
  op_graph_builder b;
  for (std::size_t v = 0; v < n; ++v) b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = ms, .bwd_ms = ms});
  for (std::size_t v = 0; v + 1 < n; ++v) b.add_edge(v, v + 1, bytes);
  return std::move(b).build();
}

/// The devplace.graph/1 text of a chain of n operators (every operator 1 ms + 1 ms).
std::string chain_text(std::size_t n) {
  std::string t = R"({"format": "devplace.graph/1", "nodes": [)";
  for (std::size_t v = 0; v < n; ++v)
    t += (v ? ", " : "") + std::string(R"({"id": )") + std::to_string(v) + R"(, "fwd_ms": 1, "bwd_ms": 1})";
  t += R"(], "edges": [)";
  for (std::size_t v = 0; v + 1 < n; ++v)
    t += (v ? ", " : "") + std::string(R"({"src": )") + std::to_string(v) + R"(, "dst": )" + std::to_string(v + 1) +
         R"(, "bytes": 0})";
  return t + "]}";
}

std::string extreme_graph_error_of(const std::string& text) {
  try {
    (void)io::read_graph_json_text(text, "g.json");
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "";
}

const std::string two_nodes = R"({"format": "devplace.graph/1", "nodes": [{"id": 0, "fwd_ms": 1, "bwd_ms": 1}, )";

}  // namespace

TEST_CASE("a 10^6-long chain: order, longest path, sources and sinks without recursion") {
  const std::size_t n = 1'000'000;
  const op_graph g = chain(n, 1.0, 8.0);
  const auto topo = topological_sort(g);
  REQUIRE(topo);
  bool identity = topo.order.size() == n;
  for (std::size_t p = 0; identity && p < n; ++p) identity = topo.order[p] == p;
  CHECK(identity);  // a chain has exactly one topological order
  const auto lp = longest_path(g, unit_cost{});
  CHECK(lp.path.size() == n);
  CHECK(lp.length == doctest::Approx(static_cast<double>(n)));
  CHECK(sources(g) == std::vector<std::size_t>{0});
  CHECK(sinks(g) == std::vector<std::size_t>{n - 1});
  // The down-set enumerator would need 2 n^2 bits (250 GB): a work-limit status, at once.
  CHECK(downset_enumerator::memory_bytes(n) == 16ull * n * ((n + 63) / 64));
  const auto ds = count_downsets(g, {.max_memory_bytes = 1ull << 30});
  CHECK(ds.status == status::work_limit);
  CHECK(ds.count == 0);
}

TEST_CASE("10^5 operators through the JSON reader, split evenly by topo_dp") {
  const std::size_t n = 100'000;
  const op_graph g = io::read_graph_json_text(chain_text(n), "chain.json");
  REQUIRE(g.num_vertices() == n);
  CHECK(g.num_edges() == n - 1);
  // Oracle: n equal operators of 2 ms and free edges split into 4 stages of n/4 operators.
  const auto r = topo_dp(g, {.stages = 4});
  REQUIRE(r.has_solution());
  CHECK(r.objective_ms == doctest::Approx(2.0 * n / 4));
}

TEST_CASE("a 10^4-device topology from a generator, a larger one is a clear error") {
  const auto t = io::read_topology_json_text(
      R"({"format": "devplace.topology/1", "generator": "two_level", "shape": [100, 100]})", "t.json");
  REQUIRE(t.num_devices() == 10'000);
  CHECK(t.bandwidth_gbps(0, 99) == doctest::Approx(11.0));    // same node: intra (the generator's default)
  CHECK(t.bandwidth_gbps(0, 100) == doctest::Approx(1.1));    // next node: inter
  CHECK(t.bandwidth_gbps(9999, 0) == doctest::Approx(1.1));
  for (const std::string shape : {"[200, 200]", "[4294967296, 4294967296]"}) {
    CAPTURE(shape);
    std::string what;
    try {
      (void)io::read_topology_json_text(
          R"({"format": "devplace.topology/1", "generator": "torus2d", "shape": )" + shape + "}", "t.json");
    } catch (const io::input_error& e) {
      what = e.what();
    }
    CHECK(what == "t.json: /shape: torus2d would have more than " + std::to_string(max_generated_devices) + " devices");
  }
}

TEST_CASE("a device limit rejects a topology before its matrices are built, naming the limit") {
  const device_limit lim{.max = 8, .reason = "the test's limit"};
  const auto err = [&](const std::string& text) {
    try {
      (void)io::read_topology_json_text(text, "t.json", lim);
    } catch (const io::input_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Generator forms: the product of the shape, the devices of a random generator.
  CHECK(err(R"({"format": "devplace.topology/1", "generator": "two_level", "shape": [3, 3]})") ==
        "t.json: /shape: two_level would have 9 devices, more than the limit of 8 (the test's limit)");
  CHECK(err(R"({"format": "devplace.topology/1", "generator": "uniform_dist", "devices": 9, "seed": 1})") ==
        "t.json: /devices: uniform_dist would have 9 devices, more than the limit of 8 (the test's limit)");
  CHECK(err(R"({"format": "devplace.topology/1", "generator": "torus2d", "shape": [4294967296, 4294967296]})") ==
        "t.json: /shape: torus2d would have more than the limit of 8 devices (the test's limit)");
  // dgx1_cluster has 8 devices per node.
  CHECK(err(R"({"format": "devplace.topology/1", "generator": "dgx1_cluster", "shape": [2]})") ==
        "t.json: /shape: dgx1_cluster would have 16 devices, more than the limit of 8 (the test's limit)");
  // At the limit: read.
  CHECK(err(R"({"format": "devplace.topology/1", "generator": "two_level", "shape": [2, 4]})").empty());
  CHECK(io::read_topology_json_text(R"({"format": "devplace.topology/1", "generator": "dgx1_cluster", "shape": [1]})",
                                    "t.json", lim).num_devices() == 8);
  // Matrix form: the device list, before the matrices are read.
  std::string devices;
  for (int k = 0; k < 9; ++k) devices += (k ? ", " : "") + std::string(R"({"id": )") + std::to_string(k) + R"(, "memory_bytes": 1})";
  CHECK(err(R"({"format": "devplace.topology/1", "devices": [)" + devices + R"(], "bandwidth_gbps": "not read"})") ==
        "t.json: /devices: 9 devices, more than the limit of 8 (the test's limit)");
}

TEST_CASE("fuzz finding: torus2d [3, 531] reads as 1593 devices, and a device limit rejects it at /shape") {
  // The topology_json fuzz target timed out on this input (fuzz/corpus/topology_json/
  // timeout-torus2d-1593.json): its harness round-tripped all 1593 devices through the matrix
  // form. The harness now reads with a 256-device limit.
  const std::string text = R"({"format": "devplace.topology/1", "generator": "torus2d", "shape": [3,531], "memory_bytes": 1000000000040})";
  const auto t = io::read_topology_json_text(text, "t.json");
  CHECK(t.num_devices() == 1593);
  CHECK(t.device_memory_bytes(0) == doctest::Approx(1000000000040.0));
  std::string what;
  try {
    (void)io::read_topology_json_text(text, "t.json", {.max = 256, .reason = "fuzz cap"});
  } catch (const io::input_error& e) {
    what = e.what();
  }
  CHECK(what == "t.json: /shape: torus2d would have 1593 devices, more than the limit of 256 (fuzz cap)");
}

TEST_CASE("the mapper rejects a topology above its device limit up front, one below it maps") {
  // 10^4 devices through the mapper's own limit: an error at /shape, before any matrix.
  std::string what;
  try {
    (void)io::read_topology_json_text(
        R"({"format": "devplace.topology/1", "generator": "two_level", "shape": [100, 100]})", "t.json",
        mapper_device_limit);
  } catch (const io::input_error& e) {
    what = e.what();
  }
  CHECK(what.find("t.json: /shape: two_level would have 10000 devices, more than the limit of " +
                  std::to_string(max_mapper_devices)) == 0);
  // The library entry point on a topology object: std::invalid_argument before the link tables.
  const auto big = two_level(max_mapper_devices / 64 + 1, 64);
  REQUIRE(big.num_devices() > max_mapper_devices);
  const auto g = chain(4, 1.0, 1e6);
  const auto sg = make_stage_graph(g, std::vector<std::size_t>{0, 0, 1, 1}, 2, 1);
  CHECK_THROWS_AS((void)map_devices(sg, big, {.timeout_s = 1}), std::invalid_argument);
  // Below the limit a mapping is found (two stages on one node: the intra-node link).
  const auto small = two_level(4, 4);
  const auto r = map_devices(sg, small, {.cost = cost_choice::p2p, .threads = 1, .timeout_s = 5});
  REQUIRE(r.has_solution());
  CHECK(r.optimal);
}

TEST_CASE("a zero-cost graph partitions with objective 0") {
  const op_graph g = chain(1000, 0.0, 0.0);
  const auto r = topo_dp(g, {.stages = 4});
  REQUIRE(r.has_solution());
  CHECK(r.objective_ms == 0.0);
  CHECK(longest_path(g, [](const op_graph& gg, auto v) { return gg.compute_ms(v); }).length == 0.0);
}

TEST_CASE("parallel edges add their bytes, a self-loop is named") {
  const op_graph g = io::read_graph_json_text(
      two_nodes + R"({"id": 1, "fwd_ms": 1, "bwd_ms": 1}],
         "edges": [{"src": 0, "dst": 1, "bytes": 1}, {"src": 0, "dst": 1, "bytes": 2}]})",
      "g.json");
  CHECK(g.num_edges() == 1);
  CHECK(edge_bytes(g, 0, 1) == 3.0);
  CHECK(extreme_graph_error_of(two_nodes + R"({"id": 1, "fwd_ms": 1, "bwd_ms": 1}], "edges": [{"src": 1, "dst": 1, "bytes": 1}]})") ==
        "g.json: /edges/0: self-loop on node 1");
}

TEST_CASE("NaN, Inf, negative and overflowing numbers are named, huge finite ones give finite answers") {
  CHECK(extreme_graph_error_of(two_nodes + R"({"id": 1, "fwd_ms": -1, "bwd_ms": 1}], "edges": []})") ==
        "g.json: /nodes/1/fwd_ms: expected a number >= 0, got -1");
  CHECK(extreme_graph_error_of(two_nodes + R"({"id": 1, "fwd_ms": NaN, "bwd_ms": 1}], "edges": []})").rfind("g.json: line 1, column ", 0) == 0);
  const std::string overflow = extreme_graph_error_of(two_nodes + R"({"id": 1, "fwd_ms": 1e999, "bwd_ms": 1}], "edges": []})");
  CHECK(overflow.rfind("g.json: ", 0) == 0);
  CHECK(overflow.find("expected a finite number") != std::string::npos);
  // Each value finite, their total not: every cost model would sum to infinity.
  CHECK(extreme_graph_error_of(two_nodes + R"({"id": 1, "fwd_ms": 1.5e308, "bwd_ms": 1.5e308}], "edges": []})") ==
        "g.json: /nodes: the total of fwd_ms + bwd_ms over the graph is not finite (values too large)");
  CHECK(extreme_graph_error_of(two_nodes + R"({"id": 1, "fwd_ms": 1, "bwd_ms": 1}],
        "edges": [{"src": 0, "dst": 1, "bytes": 1.7e308}, {"src": 0, "dst": 1, "bytes": 1.7e308}]})") ==
        "g.json: /edges: the total of edge bytes over the graph is not finite (values too large)");
  const op_graph g = io::read_graph_json_text(two_nodes + R"({"id": 1, "fwd_ms": 1e300, "bwd_ms": 1e300}], "edges": []})", "g.json");
  const auto r = topo_dp(g, {.stages = 1});
  REQUIRE(r.has_solution());
  CHECK(r.objective_ms == doctest::Approx(2e300));
}

TEST_CASE("non-UTF-8 names: a clear error in JSON, replaced bytes when written") {
  CHECK(extreme_graph_error_of(R"({"format": "devplace.graph/1", "name": "bad)" + std::string("\xff\xfe") +
                       R"(", "nodes": [], "edges": []})").rfind("g.json: line 1, column ", 0) == 0);
  // PipeDream's text format takes any bytes; writing such a graph replaces the invalid ones.
  const op_graph g = io::read_pipedream_text(
      "node1 -- Conv\xff -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=4.0, parameter_size=0.0\n",
      "graph.txt");
  REQUIRE(g.num_vertices() == 1);
  const auto path = std::filesystem::temp_directory_path() / "devplace-extreme-non-utf8.json";
  io::write_graph_json(g, path);
  const op_graph again = io::read_graph_json(path);
  CHECK(again.op(0).op.find("Conv\xef\xbf\xbd") != std::string::npos);  // U+FFFD
  std::filesystem::remove(path);
  CHECK(again.num_vertices() == 1);
}
