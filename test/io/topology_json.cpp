#include "devplace/io/topology_json.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif

using namespace devplace;
namespace fs = std::filesystem;

namespace {
std::string topology_error_of(const std::string& text) {
  try {
    (void)io::read_topology_json_text(text, "t.json");
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "";
}
const std::string topology_head = R"({"format": "devplace.topology/1", )";
const std::string devs2 = R"("devices": [{"id": 0, "memory_bytes": 100}, {"id": 1, "memory_bytes": 200}], )";
}  // namespace

TEST_CASE("topology JSON: matrix form") {
  const auto t = io::read_topology_json_text(
      topology_head + R"("name": "pair", )" + devs2 + R"("bandwidth_gbps": [[0, 43.2], [21.4, 0]], "latency_us": [[0, 5], [5, 0]]})",
      "t.json");
  CHECK(t.name() == "pair");
  CHECK(t.num_devices() == 2);
  CHECK(t.bandwidth_gbps(0, 1) == 43.2);
  CHECK(t.bandwidth_gbps(1, 0) == 21.4);
  CHECK(t.latency_us(1, 0) == 5.0);
  CHECK(t.device_memory_bytes(1) == 200.0);
}

TEST_CASE("topology JSON: generator form expands, and round-trips through the matrix form") {
  const auto t = io::read_topology_json_text(
      topology_head + R"("generator": "torus2d", "shape": [8, 8], "memory_bytes": 34359738368, "seed": 7})", "t.json");
  CHECK(t.num_devices() == 64);
  CHECK(t.bandwidth_gbps(0, 1) == 78.1);
  const fs::path dir = fs::temp_directory_path() / "devplace_test_topo_rt";
  fs::create_directories(dir);
  io::write_topology_json(t, dir / "t.json");
  const auto u = io::read_topology_json(dir / "t.json");
  CHECK(u.bandwidth_matrix() == t.bandwidth_matrix());
  CHECK(u.latency_matrix() == t.latency_matrix());
  CHECK(u.memory() == t.memory());
  CHECK(u.device_names() == t.device_names());
  CHECK(u.name() == "torus2d");
  fs::remove_all(dir);
  const auto r = io::read_topology_json_text(topology_head + R"("generator": "uniform_dist", "devices": 16, "seed": 3})", "t.json");
  CHECK(r.bandwidth_matrix() == generate_topology({.generator = "uniform_dist", .devices = 16, .seed = 3}).bandwidth_matrix());
}

TEST_CASE("topology JSON: every rejected input names file, pointer and reason") {
  CHECK(topology_error_of(R"({"format": "devplace.topo/1"})") ==
        "t.json: /format: unknown format 'devplace.topo/1' (expected 'devplace.topology/1')");
  CHECK(topology_error_of(topology_head + R"("generator": "hypercube"})").find("t.json: /generator: unknown generator 'hypercube'") == 0);
  CHECK(topology_error_of(topology_head + R"("generator": "mesh2d", "shape": [8]})").find("t.json: /shape: mesh2d needs shape [x, y]") == 0);
  CHECK(topology_error_of(topology_head + R"("generator": "mesh2d", "shape": [8, -1]})") ==
        "t.json: /shape/1: expected an integer >= 0, got -1");
  CHECK(topology_error_of(topology_head + R"("generator": "uniform_dist", "devices": 4})") == "t.json: /seed: uniform_dist needs seed");
  CHECK(topology_error_of(topology_head + R"("generator": "dgx1", "memory_bytes": 0})") == "t.json: /memory_bytes: expected a number > 0, got 0");
  CHECK(topology_error_of(topology_head + R"("bandwidth_gbps": [[0]]})") == "t.json: /devices: missing required field");
  CHECK(topology_error_of(topology_head + devs2 + R"("latency_us": []})") == "t.json: /bandwidth_gbps: missing required field");
  CHECK(topology_error_of(topology_head + devs2 + R"("bandwidth_gbps": [[0, 1]]})") ==
        "t.json: /bandwidth_gbps: expected 2 rows (one per device), got 1");
  CHECK(topology_error_of(topology_head + devs2 + R"("bandwidth_gbps": [[0, 1], [1, 0, 3]]})") ==
        "t.json: /bandwidth_gbps/1: expected 2 entries (the matrix must be square), got 3");
  CHECK(topology_error_of(topology_head + devs2 + R"("bandwidth_gbps": [[0, 0], [1, 0]]})") ==
        "t.json: /bandwidth_gbps/0/1: expected a number > 0, got 0");
  CHECK(topology_error_of(topology_head + devs2 + R"("bandwidth_gbps": [[0, -2], [1, 0]]})") ==
        "t.json: /bandwidth_gbps/0/1: expected a number > 0, got -2");
  CHECK(topology_error_of(topology_head + devs2 + R"("bandwidth_gbps": [[0, "x"], [1, 0]]})") ==
        "t.json: /bandwidth_gbps/0/1: expected a number, got a string");
  CHECK(topology_error_of(topology_head + devs2 + R"("bandwidth_gbps": [[0, 1], [1, 0]], "latency_us": [[0, -1], [1, 0]]})") ==
        "t.json: /latency_us/0/1: expected a number >= 0, got -1");
  CHECK(topology_error_of(topology_head + R"("devices": [{"id": 1, "memory_bytes": 1}], "bandwidth_gbps": [[0]]})") ==
        "t.json: /devices/0/id: expected id 0 (ids are 0..D-1 in order), got 1");
  CHECK(topology_error_of(topology_head + R"("devices": [{"id": 0, "memory_bytes": -5}], "bandwidth_gbps": [[0]]})") ==
        "t.json: /devices/0/memory_bytes: expected a number > 0, got -5");
  CHECK(topology_error_of(topology_head + R"("units": {"bandwidth": "Gbit/s"}, "generator": "dgx1"})") ==
        "t.json: /units/bandwidth: unit 'Gbit/s' is not supported (version 1 uses 'GB/s')");
}

TEST_CASE("topology JSON: shared NICs in the generator and the matrix form") {
  const auto t = io::read_topology_json_text(topology_head + R"("generator": "dgx1_cluster", "shape": [2], "nic_gbps": 12.5})", "t.json");
  REQUIRE(t.has_nodes());
  CHECK(t.node_of(7) == 0);
  CHECK(t.node_of(8) == 1);
  CHECK(t.nic_count(1) == 1);
  CHECK(t.nic_bandwidth_gbps(0) == 12.5);
  const auto u = io::read_topology_json_text(topology_head + R"("generator": "two_level", "shape": [3, 2], "nic_gbps": 1, "nics_per_node": 4})", "t.json");
  CHECK(u.node_of(5) == 2);
  CHECK(u.nic_count(2) == 4);
  const auto m = io::read_topology_json_text(topology_head + devs2 + R"("bandwidth_gbps": [[0, 1], [1, 0]], "nic_gbps": 3, "devices_per_node": 1})", "t.json");
  CHECK(m.node_of(1) == 1);
  CHECK(m.nic_bandwidth_gbps(1) == 3.0);
  CHECK(!io::read_topology_json_text(topology_head + R"("generator": "dgx1"})", "t.json").has_nodes());
  CHECK(topology_error_of(topology_head + devs2 + R"("bandwidth_gbps": [[0, 1], [1, 0]], "nic_gbps": 3})") ==
        "t.json: /devices_per_node: missing required field (needed with nic_gbps for this topology)");
  CHECK(topology_error_of(topology_head + R"("generator": "dgx1", "nics_per_node": 2})") ==
        "t.json: /nics_per_node: needs nic_gbps, the bandwidth of each NIC");
}

TEST_CASE("topology JSON: node data written by the matrix form reads back, alike nodes and differing ones") {
  // Alike nodes of consecutive devices: the three numbers.
  const auto t = io::read_topology_json_text(topology_head + R"("generator": "two_level", "shape": [3, 2], "nic_gbps": 1.5, "nics_per_node": 4})", "t.json");
  const auto doc = io::topology_to_json(t);
  CHECK(doc.at("devices_per_node") == 2);
  CHECK(doc.at("nics_per_node") == 4);
  CHECK(doc.at("nic_gbps") == 1.5);
  const auto back = io::topology_from_json(doc, "back.json");
  REQUIRE(back.has_nodes());
  for (std::size_t d = 0; d < 6; ++d) CHECK(back.node_of(d) == d / 2);
  for (std::size_t n = 0; n < 3; ++n) {
    CHECK(back.nic_count(n) == 4);
    CHECK(back.nic_bandwidth_gbps(n) == 1.5);
  }
  // Nodes that differ (devices interleaved over two nodes, different NICs): per-device nodes and
  // one entry per node.
  matrix_topology u = t;
  u.set_nodes({0, 1, 0, 1, 1, 0}, {2, 3}, {10.0, 20.0});
  const auto udoc = io::topology_to_json(u);
  CHECK(udoc.at("devices").at(1).at("node") == 1);
  CHECK(!udoc.contains("devices_per_node"));
  const auto uback = io::topology_from_json(udoc, "back.json");
  for (std::size_t d = 0; d < 6; ++d) CHECK(uback.node_of(d) == u.node_of(d));
  CHECK(uback.nic_count(1) == 3);
  CHECK(uback.nic_bandwidth_gbps(0) == 10.0);
  CHECK(uback.nic_bandwidth_gbps(1) == 20.0);
  // Without node data nothing is written.
  CHECK(!io::topology_to_json(io::read_topology_json_text(topology_head + R"("generator": "dgx1"})", "t.json")).contains("nic_gbps"));
  // Bad node data names its field.
  const std::string two = R"("devices": [{"id": 0, "memory_bytes": 1, "node": 0}, {"id": 1, "memory_bytes": 1, "node": 1}], )"
                          R"("bandwidth_gbps": [[0, 1], [1, 0]], )";
  CHECK(topology_error_of(topology_head + two + R"("nic_gbps": [1]})") == "t.json: /nic_gbps: expected 2 entries (one per node), got 1");
  CHECK(topology_error_of(topology_head + two + R"("nic_gbps": [1, 0]})") == "t.json: /nic_gbps/1: expected a number > 0, got 0");
  CHECK(topology_error_of(topology_head + two + R"("nic_gbps": 1, "nics_per_node": [1, 0]})") ==
        "t.json: /nics_per_node/1: expected an integer in 1..4096, got 0");
  CHECK(topology_error_of(topology_head + two + R"("nic_gbps": 1, "devices_per_node": 1})") ==
        "t.json: /devices_per_node: not with the devices' node fields (give one or the other)");
  CHECK(topology_error_of(topology_head + two + "\"latency_us\": [[0, 0], [0, 0]]}") ==
        "t.json: /devices/0/node: needs nic_gbps, the bandwidth of each NIC");
  CHECK(topology_error_of(topology_head + R"("devices": [{"id": 0, "memory_bytes": 1, "node": 0}, {"id": 1, "memory_bytes": 1}], )"
                          R"("bandwidth_gbps": [[0, 1], [1, 0]], "nic_gbps": 1})") ==
        "t.json: /devices/1/node: missing (device 0 has a node: every device needs one)");
  CHECK(topology_error_of(topology_head + R"("devices": [{"id": 0, "memory_bytes": 1, "node": 5}, {"id": 1, "memory_bytes": 1, "node": 0}], )"
                          R"("bandwidth_gbps": [[0, 1], [1, 0]], "nic_gbps": 1})") ==
        "t.json: /devices/0/node: expected a node index below the device count 2");
}
