// Piper's input reader (io/piper.hpp): the shipped instances and bad inputs.
#include "devplace/io/piper.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/piper.ipp"  // the Piper reader's definitions (compiled mode: devplace::core)
#endif

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

TEST_CASE("Piper reader: the shipped ResNet instance keeps every field the model uses") {
  const fs::path f = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "piper" / "inputs" / "resnet.json";
  if (!devplace::test::require_path(f)) return;
  const auto in = io::read_piper(f);
  CHECK(in.mbs_in_batch == 7680);
  CHECK(in.max_devices == 10);
  double vanilla = 0;
  for (const auto& n : in.nodes) {
    REQUIRE(n.tmpcs.contains(1));
    const auto& o = n.tmpcs.at(1);
    REQUIRE(!o.empty());
    CHECK(o.front().id == "vanilla");
    vanilla += o.front().time_per_sample;
  }
  CHECK(vanilla == doctest::Approx(462.381).epsilon(1e-6));  // PipeDream's fw+bw ms per minibatch (spec §2.5)
  const auto& first = in.nodes.front().tmpcs.at(1).front();
  CHECK(first.memory_a == 205520896.0);
  CHECK(first.sync_fw.size() == in.in_edges[0].size());
  CHECK(first.sync_bw.size() == in.out_edges[0].size());
}

TEST_CASE("Piper reader: bad inputs name the JSON pointer") {
  auto bad = [](const std::string& text) {
    try {
      (void)io::piper_from_json(nlohmann::json::parse(text), "p.json");
    } catch (const io::input_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = R"({"maxMemoryPerDevice": 1e9, "maxDevices": 8, "bandwidth": 1e9, "mbsInBatch": 4, )";
  auto opt = [](const std::string& fw, const std::string& bw) {
    return R"({"id": "vanilla", "timePerSample": 1, "parameterSize": 1, "memoryUsageA": 1, "memoryUsageB": 1, "syncTimeFw": )" +
           fw + R"(, "syncTimeBw": )" + bw + "}";
  };
  const std::string edges = R"("edges": [{"sourceId": 0, "destId": 1, "communicationCost": 5}]})";
  const std::string good0 = R"({"id": 0, "TMPCs": {"1": [)" + opt("{}", R"({"1": 0})") + "]}}";
  CHECK(bad(head + R"("nodes": [)" + good0 + R"(, {"id": 1, "TMPCs": {"1": [)" + opt(R"({"0": 0})", "{}") + "]}}], " + edges) ==
        "no error");
  CHECK(bad(R"({"maxDevices": 8, "bandwidth": 1e9, "mbsInBatch": 4, "nodes": [], "edges": []})") ==
        "p.json: /maxMemoryPerDevice: missing required field");
  CHECK(bad(head + R"("nodes": [)" + good0 + R"(, {"id": 1, "TMPCs": {"x": []}}], )" + edges) ==
        "p.json: /nodes/1/TMPCs/x: expected a tensor-parallel degree (an integer) as the key");
  CHECK(bad(head + R"("nodes": [)" + good0 + R"(, {"id": 1, "TMPCs": {"1": [)" + opt(R"({"7": 0})", "{}") + "]}}], " + edges) ==
        "p.json: /nodes/1/TMPCs/1/0/syncTimeFw/7: node 7 is not an in-neighbour");
  CHECK(bad(head + R"("nodes": [)" + good0 + R"(, {"id": 1, "TMPCs": {"1": [)" + opt("{}", "{}") + "]}}], " + edges) ==
        "p.json: /nodes/1/TMPCs/1/0/syncTimeFw: expected one entry per in-neighbour (1), got 0");
  CHECK(bad(head + R"("nodes": [)" + good0 + R"(, {"id": 1, "TMPCs": {}}], "edges": [{"sourceId": 0, "destId": 1}]})") ==
        "p.json: /edges/0/communicationCost: missing required field");
}
