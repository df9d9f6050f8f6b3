#include "devplace/io/nvidia_smi.hpp"
#include "devplace/io/cluster_json.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/cluster_json.ipp"  // the cluster reader's definitions (compiled mode: devplace::core)
#endif

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

using namespace devplace;
namespace fs = std::filesystem;

namespace {
const fs::path dir = fs::path(DEVPLACE_SOURCE_DIR) / "test/io/data/nvidia_smi";

std::string smi_error_of(const std::string& text) {
  try {
    (void)io::read_nvidia_smi_topo_text(text, "topo.txt");
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "";
}
std::string cluster_error_of(const std::string& text) {
  try {
    (void)io::read_cluster_json_text(text, "c.json", dir);
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "";
}
const std::string legend = "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n";
}  // namespace

TEST_CASE("nvidia-smi topo -m: DGX-1 (V100), hybrid cube-mesh with NV1 / NV2, 4 NICs, colour escapes") {
  const auto t = io::read_nvidia_smi_topo(dir / "dgx1_v100.txt");
  REQUIRE(t.num_devices() == 8);
  CHECK(t.name() == "dgx1_v100");
  CHECK(t.device_names()[3] == "GPU3");
  CHECK(t.bandwidth_gbps(0, 1) == 25.0);   // NV1
  CHECK(t.bandwidth_gbps(0, 3) == 50.0);   // NV2
  CHECK(t.bandwidth_gbps(0, 5) == doctest::Approx(0.64 * 15.75));  // SYS
  // the same NVLink wiring as the dgx1 generator (SCCL's matrix), up to the GPU labels: 16 linked
  // pairs, 8 of them double, six NVLinks per V100
  const auto g = dgx1();
  int pairs = 0, doubles = 0, gen_pairs = 0, gen_doubles = 0;
  for (std::size_t a = 0; a < 8; ++a) {
    double links = 0;
    for (std::size_t b = 0; b < 8; ++b) {
      if (a == b) continue;
      CAPTURE(a);
      CAPTURE(b);
      CHECK(t.bandwidth_gbps(a, b) == t.bandwidth_gbps(b, a));
      if (t.bandwidth_gbps(a, b) >= 25.0) links += t.bandwidth_gbps(a, b) / 25.0;
      if (a < b) {
        pairs += t.bandwidth_gbps(a, b) >= 25.0;
        doubles += t.bandwidth_gbps(a, b) == 50.0;
        gen_pairs += g.bandwidth_gbps(a, b) > 20.0;
        gen_doubles += g.bandwidth_gbps(a, b) == 43.2;
      }
    }
    CHECK(links == 6);
  }
  CHECK(pairs == 16);
  CHECK(doubles == 8);
  CHECK(gen_pairs == pairs);
  CHECK(gen_doubles == doubles);
}

TEST_CASE("nvidia-smi topo -m: DGX A100, NV12 between every pair, 10 NICs, NUMA affinity column") {
  io::nvidia_smi_options o;
  o.memory_bytes = 80.0 * (1ull << 30);
  const auto t = io::read_nvidia_smi_topo(dir / "dgx_a100.txt", o);
  REQUIRE(t.num_devices() == 8);
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = 0; b < 8; ++b)
      if (a != b) CHECK(t.bandwidth_gbps(a, b) == 300.0);  // 12 x 25 GB/s
  CHECK(t.device_memory_bytes(7) == 80.0 * (1ull << 30));
}

TEST_CASE("nvidia-smi topo -m: PCIe box, every PCIe kind, NIC legend, GPU NUMA ID column") {
  io::nvidia_smi_options o;
  o.pcie_gbps = 31.5;  // Gen4 x16
  o.latency_us = 2;
  const auto t = io::read_nvidia_smi_topo(dir / "pcie_8gpu.txt", o);
  REQUIRE(t.num_devices() == 8);
  CHECK(t.bandwidth_gbps(0, 1) == 31.5);                          // PIX
  CHECK(t.bandwidth_gbps(0, 2) == 31.5);                          // PXB
  CHECK(t.bandwidth_gbps(6, 7) == doctest::Approx(0.8 * 31.5));   // PHB
  CHECK(t.bandwidth_gbps(4, 6) == doctest::Approx(0.8 * 31.5));   // NODE
  CHECK(t.bandwidth_gbps(3, 4) == doctest::Approx(0.64 * 31.5));  // SYS
  CHECK(t.latency_us(0, 1) == 2);
  CHECK(t.latency_us(1, 1) == 0);
}

TEST_CASE("nvidia-smi topo -m: the link table") {
  CHECK(io::nvlink_count("NV18") == 18);
  CHECK(io::nvlink_count("NV") == 0);
  CHECK(io::nvlink_count("NV1x") == 0);
  CHECK(io::nvlink_count("PIX") == 0);
  CHECK(*io::nvidia_smi_link_gbps("NV18", {}) == 450.0);  // H100 SXM: 18 links
  CHECK(*io::nvidia_smi_link_gbps("SOC", {}) == *io::nvidia_smi_link_gbps("SYS", {}));
  CHECK(!io::nvidia_smi_link_gbps("X", {}));
  CHECK(!io::nvidia_smi_link_gbps("NVX", {}));
}

TEST_CASE("nvidia-smi topo -m: errors name the line and the reason") {
  CHECK(smi_error_of("") == "topo.txt: line 1: no header line starting with GPU0 (expected the output of `nvidia-smi topo -m`)");
  CHECK(smi_error_of("hello\nworld\n") ==
        "topo.txt: line 1: no header line starting with GPU0 (expected the output of `nvidia-smi topo -m`)");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV2\t0-9\nGPU1\tNV2\t X \t0-9\nGPU2\tSYS\tSYS\t0-9\n") ==
        "topo.txt: line 4: row 'GPU2' is not one of the header's columns (2 columns: GPU0 .. GPU1)");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV2\t0-9\nGPU1\tNVX\t X \t0-9\n") ==
        "topo.txt: line 3: GPU1, column GPU0: unknown link kind 'NVX' (expected NV#, PIX, PXB, PHB, NODE or SYS)");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV2\t0-9\nGPU1\tNV1\t X \t0-9\n") ==
        "topo.txt: line 3: GPU1 -> GPU0 is NV1 but GPU0 -> GPU1 is NV2");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV2\t0-9\nGPU1\tNV2\n") ==
        "topo.txt: line 3: GPU1: expected 2 link entries, got 1");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\tPIX\tNV2\t0-9\nGPU1\tNV2\t X \t0-9\n") ==
        "topo.txt: line 2: GPU0, column GPU0: expected X on the diagonal, got 'PIX'");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV2\t0-9\n" + legend) ==
        "topo.txt: line 3: no row for GPU1 in the table that starts on line 1");
  CHECK(smi_error_of("\tGPU0\tGPU2\tCPU Affinity\n") ==
        "topo.txt: line 1: GPU columns must be GPU0, GPU1, ... in order; column 2 is GPU2");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV2\t0-9\nGPU0\t X \tNV2\t0-9\n") ==
        "topo.txt: line 3: GPU0: a second row for this GPU (the first is on line 2)");
  CHECK(smi_error_of("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV2\t0-9\nGPU1\tNV2\t X \t0-9\n" + legend).empty());
  try {
    (void)io::read_nvidia_smi_topo(dir / "no-such-file.txt");
    FAIL("no error");
  } catch (const io::input_error& e) {
    CHECK(std::string(e.what()).find("no-such-file.txt: /: cannot open the file") != std::string::npos);
  }
}

TEST_CASE("cluster JSON: N nodes x a nvidia-smi node, a link kind or a bandwidth") {
  const auto t = io::read_cluster_json_text(
      R"({"format": "devplace.cluster/1", "name": "2x dgx1", "nodes": 2, "intra": {"nvidia_smi": "dgx1_v100.txt"},
          "inter_gbps": 12.5, "inter_latency_us": 5, "memory_bytes": 34359738368})",
      "c.json", dir);
  REQUIRE(t.num_devices() == 16);
  CHECK(t.name() == "2x dgx1");
  CHECK(t.device_names()[9] == "node1/GPU1");
  CHECK(t.bandwidth_gbps(8, 11) == 50.0);  // GPU0 -> GPU3 of node 1
  CHECK(t.bandwidth_gbps(0, 8) == 12.5);
  CHECK(t.latency_us(0, 8) == 5.0);
  CHECK(t.latency_us(0, 1) == 0.0);

  const auto u = io::read_cluster_json_text(
      R"({"format": "devplace.cluster/1", "nodes": 4, "devices_per_node": 8, "intra": {"link": "NV18"},
          "inter_gbps": 50})", "c.json");
  REQUIRE(u.num_devices() == 32);
  CHECK(u.bandwidth_gbps(0, 7) == 450.0);
  CHECK(u.bandwidth_gbps(7, 8) == 50.0);
  CHECK(u.device_names()[31] == "node3/gpu7");

  const auto v = io::read_cluster_json_text(
      R"({"format": "devplace.cluster/1", "nodes": 1, "devices_per_node": 2, "intra": {"gbps": 11}, "inter_gbps": 1})",
      "c.json");
  CHECK(v.num_devices() == 2);
  CHECK(v.bandwidth_gbps(1, 0) == 11.0);
}

TEST_CASE("cluster JSON: errors") {
  const std::string h = R"({"format": "devplace.cluster/1", )";
  CHECK(cluster_error_of(h + R"("nodes": 2, "intra": {"gbps": 11}, "inter_gbps": 1})") ==
        "c.json: /devices_per_node: missing required field (needed unless intra.nvidia_smi is given)");
  CHECK(cluster_error_of(h + R"("nodes": 0, "devices_per_node": 2, "intra": {"gbps": 11}, "inter_gbps": 1})") ==
        "c.json: /nodes: expected an integer >= 1, got 0");
  CHECK(cluster_error_of(h + R"("nodes": 2, "devices_per_node": 2, "intra": {"link": "NVL"}, "inter_gbps": 1})") ==
        "c.json: /intra/link: unknown link kind 'NVL' (expected NV#, PIX, PXB, PHB, NODE or SYS)");
  CHECK(cluster_error_of(h + R"("nodes": 2, "devices_per_node": 2, "intra": {"gbps": 11}})") ==
        "c.json: /inter_gbps: missing required field");
  CHECK(cluster_error_of(h + R"("nodes": 2, "devices_per_node": 4, "intra": {"nvidia_smi": "dgx_a100.txt"}, "inter_gbps": 1})")
            .find("/devices_per_node: is 4 but") != std::string::npos);
  CHECK(cluster_error_of(h + R"("nodes": 2, "devices_per_node": 2, "intra": {"bandwidth": 3}, "inter_gbps": 1})") ==
        "c.json: /intra: expected one of nvidia_smi, link, gbps, got 'bandwidth'");
  CHECK(cluster_error_of(R"({"format": "devplace.topology/1"})") ==
        "c.json: /format: unknown format 'devplace.topology/1' (expected 'devplace.cluster/1')");
}

TEST_CASE("cluster JSON: nodes x devices per node within the device limit, checked before any matrix is built") {
  const std::string h = R"({"format": "devplace.cluster/1", "inter_gbps": 1, )";
  // The default limit is the generators' (16 384 devices: 4 GiB of matrices).
  CHECK(cluster_error_of(h + R"("nodes": 4096, "devices_per_node": 8, "intra": {"gbps": 11}})") ==
        "c.json: /nodes: 32768 devices, more than the limit of 16384");
  CHECK(cluster_error_of(h + R"("nodes": 2048, "devices_per_node": 8, "intra": {"gbps": 11}})").empty());
  const devplace::device_limit sixteen{.max = 16, .reason = "a test's limit"};
  auto read = [&](const std::string& text) { return io::read_cluster_json_text(text, "c.json", dir, sixteen); };
  CHECK(read(h + R"("nodes": 4, "devices_per_node": 4, "intra": {"gbps": 11}})").num_devices() == 16);
  CHECK_THROWS_WITH_AS(read(h + R"("nodes": 5, "devices_per_node": 4, "intra": {"gbps": 11}})"),
                       "c.json: /nodes: 20 devices, more than the limit of 16 (a test's limit)", io::input_error);
  // A node read from nvidia-smi text (8 GPUs): 3 nodes are 24 devices.
  CHECK_THROWS_WITH_AS(read(h + R"("nodes": 3, "intra": {"nvidia_smi": "dgx_a100.txt"}})"),
                       "c.json: /nodes: 24 devices, more than the limit of 16 (a test's limit)", io::input_error);
  CHECK(read(h + R"("nodes": 2, "intra": {"nvidia_smi": "dgx_a100.txt"}})").num_devices() == 16);
}

TEST_CASE("cluster JSON: shared NICs per node, optional") {
  const std::string h = R"({"format": "devplace.cluster/1", "nodes": 3, "devices_per_node": 2, "intra": {"gbps": 11}, "inter_gbps": 5)";
  const auto plain = io::read_cluster_json_text(h + "}", "c.json");
  CHECK(!plain.has_nodes());
  CHECK(plain.node_of(5) == 5);
  CHECK(std::isinf(plain.nic_bandwidth_gbps(0)));
  const auto t = io::read_cluster_json_text(h + R"(, "nic_gbps": 12.5, "nics_per_node": 2})", "c.json");
  REQUIRE(t.has_nodes());
  CHECK(t.node_of(0) == 0);
  CHECK(t.node_of(1) == 0);
  CHECK(t.node_of(4) == 2);
  CHECK(t.nic_count(2) == 2);
  CHECK(t.nic_bandwidth_gbps(1) == 12.5);
  CHECK(t.bandwidth_gbps(0, 2) == 5.0);  // the links themselves are unchanged
  CHECK(io::read_cluster_json_text(h + R"(, "nic_gbps": 25})", "c.json").nic_count(0) == 1);
  CHECK(cluster_error_of(std::string(R"({"format": "devplace.cluster/1", "nodes": 2, "devices_per_node": 2, "intra": {"gbps": 11},)") +
                         R"( "inter_gbps": 1, "nics_per_node": 2})") == "c.json: /nics_per_node: needs nic_gbps, the bandwidth of each NIC");
  CHECK(cluster_error_of(std::string(R"({"format": "devplace.cluster/1", "nodes": 2, "devices_per_node": 2, "intra": {"gbps": 11},)") +
                         R"( "inter_gbps": 1, "nic_gbps": 0})") == "c.json: /nic_gbps: expected a number > 0, got 0");
}
