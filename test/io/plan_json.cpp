#include "devplace/io/plan_json.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "devplace/io/graph_json.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#endif

using namespace devplace;
namespace fs = std::filesystem;

namespace {
op_graph chain3() {
  return io::read_graph_json_text(
      R"({"format": "devplace.graph/1", "nodes": [{"id": 0, "fwd_ms": 1, "bwd_ms": 1}, {"id": 1, "fwd_ms": 1, "bwd_ms": 1}, {"id": 2, "fwd_ms": 1, "bwd_ms": 1}],
          "edges": [{"src": 0, "dst": 1, "bytes": 1}, {"src": 1, "dst": 2, "bytes": 1}]})",
      "chain.json");
}
std::string plan_error_of(const std::string& text, const op_graph* g = nullptr) {
  try {
    (void)io::read_plan_json_text(text, "p.json", g);
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "";
}
const std::string plan_head = R"({"format": "devplace.plan/1", "stages": 2, "replicas": 2, )";
}  // namespace

TEST_CASE("plan JSON round-trips every part") {
  plan p;
  p.graph = "chain";
  p.topology = "dgx1";
  p.stages = 2;
  p.replicas = 2;
  p.micro_batches = 4;
  p.stage_of = {0, 0, 1};
  p.device_of = {{0, 1}, {2, 3}};
  p.partition = partition_summary{.objective_ms = 2.5, .stage_time_ms = {2.5, 1.0}, .stage_memory_bytes = {1, 2},
                                  .method = "dp", .optimal = true, .status = "optimal", .time_s = 0.1,
                                  .steps = {{"cluster", 1.0, 32, 0.0, 0.001, "feasible"}, {"dp", 1.0, 32, 2.5, 0.01, "optimal"}}};
  p.mapping = mapping_summary{.objective_ms = 3, .lower_bound_ms = 2.9, .cost = "p2p", .method = "binary_search_backtracking",
                              .optimal = true, .nodes_explored = 42, .status = "optimal", .time_s = 0.01};
  p.simulation = simulation_summary{.schedule = "gpipe", .iteration_ms = 10, .samples_per_s = 100, .bubble_fraction = 0.2};
  const fs::path dir = fs::temp_directory_path() / "devplace_test_plan_rt";
  fs::create_directories(dir);
  io::write_plan_json(p, dir / "p.json");
  const op_graph g = chain3();
  const plan q = io::read_plan_json(dir / "p.json", &g);
  CHECK(q.graph == "chain");
  CHECK(q.stage_of == p.stage_of);
  CHECK(q.device_of == p.device_of);
  CHECK(q.micro_batches == 4);
  REQUIRE(q.partition);
  CHECK(q.partition->stage_time_ms == p.partition->stage_time_ms);
  CHECK(q.partition->optimal);
  REQUIRE(q.partition->steps.size() == 2);
  CHECK(q.partition->steps[1].name == "dp");
  CHECK(q.partition->steps[1].clusters == 32);
  CHECK(q.partition->steps[1].objective_ms == 2.5);
  REQUIRE(q.mapping);
  CHECK(q.mapping->nodes_explored == 42);
  CHECK(q.mapping->lower_bound_ms == 2.9);
  REQUIRE(q.simulation);
  CHECK(q.simulation->bubble_fraction == 0.2);
  fs::remove_all(dir);
}

TEST_CASE("plan JSON: rejected inputs name the pointer and the reason") {
  const op_graph g = chain3();
  CHECK(plan_error_of(R"({"format": "devplace.plan/1", "replicas": 1, "stage_of": []})") == "p.json: /stages: missing required field");
  CHECK(plan_error_of(plan_head + R"("stage_of": [0, 2, 1]})") == "p.json: /stage_of/1: stage 2 out of range (stages = 2)");
  CHECK(plan_error_of(plan_head + R"("stage_of": [0, 1]})", &g) ==
        "p.json: /stage_of: expected 3 entries (one per operator of the graph), got 2");
  CHECK(plan_error_of(plan_head + R"("stage_of": [0, 1, 0]})", &g) == "p.json: /stage_of/2: edge 1 -> 2 runs from stage 1 back to stage 0");
  CHECK(plan_error_of(plan_head + R"("stage_of": [0, 0, 1], "device_of": [[0, 1]]})") ==
        "p.json: /device_of: expected 2 rows (one per stage), got 1");
  CHECK(plan_error_of(plan_head + R"("stage_of": [0, 0, 1], "device_of": [[0, 1], [2]]})") ==
        "p.json: /device_of/1: expected 2 device ids (one per replica), got 1");
  CHECK(plan_error_of(plan_head + R"("stage_of": [0, 0, 1], "device_of": [[0, 1], [1, 2]]})") ==
        "p.json: /device_of/1/0: device 1 is used twice");
  CHECK(plan_error_of(R"({"format": "devplace.plan/1", "stages": 0, "replicas": 1, "stage_of": []})") ==
        "p.json: /stages: expected an integer >= 1");
}

TEST_CASE("fuzz finding: a plan with 55,555,555,552 stages is an error, not a 444 GB allocation") {
  // fuzz_plan_json (fast build, 10^6-execution run): the reader accepted the stage count and
  // replicas_per_stage then allocated one entry per stage. S is now checked against stage_of,
  // and R against max_plan_replicas, before anything is sized by them.
  const std::string crash = R"({"format": "devplace.plan/1", "graph": "residual", "stages": 55555555552, "replicas": 1, "stage_of": [0, 0, 0, 1]})";
  CHECK(plan_error_of(crash) == "p.json: /stages: 55555555552 stages for 4 operators in stage_of (every stage holds at least one operator)");
  CHECK(plan_error_of(R"({"format": "devplace.plan/1", "stages": 2, "replicas": 1, "stage_of": [0]})") ==
        "p.json: /stages: 2 stages for 1 operators in stage_of (every stage holds at least one operator)");
  CHECK(plan_error_of(R"({"format": "devplace.plan/1", "stages": 1, "replicas": 1099511627776, "stage_of": [0]})") ==
        "p.json: /replicas: 1099511627776 replicas: more than 1048576");
  // The limits themselves are accepted.
  const auto p = io::read_plan_json_text(R"({"format": "devplace.plan/1", "stages": 2, "replicas": 1048576, "stage_of": [0, 1]})", "p.json");
  CHECK(p.stages == 2);
  CHECK(replicas_per_stage(p) == std::vector<std::size_t>{1048576, 1048576});
}

TEST_CASE("plan JSON: per-stage replica counts (a general-DP plan) round-trip and are checked") {
  plan p;
  p.graph = "chain";
  p.stages = 3;
  p.replicas = 3;
  p.stage_replicas = {3, 1, 2};
  p.micro_batches = 2;
  p.stage_of = {0, 1, 2};
  p.device_of = {{4, 0, 5}, {2}, {1, 3}};
  p.settings = plan_settings{.micro_batch_size = 2, .cost = "combined"};
  const fs::path dir = fs::temp_directory_path() / "devplace_test_plan_stage_replicas";
  fs::create_directories(dir);
  io::write_plan_json(p, dir / "p.json");
  const op_graph g = chain3();
  const plan q = io::read_plan_json(dir / "p.json", &g);
  CHECK(q.stages == 3);
  CHECK(q.replicas == 3);
  CHECK(q.stage_replicas == p.stage_replicas);
  CHECK(q.device_of == p.device_of);
  REQUIRE(q.settings);
  CHECK(q.settings->cost == "combined");
  CHECK(replicas_per_stage(q) == std::vector<std::size_t>{3, 1, 2});
  CHECK(devices_used(q) == 6);
  // Written again, the same document.
  CHECK(io::plan_to_json(q) == io::plan_to_json(p));
  fs::remove_all(dir);
  // Without stage_replicas every stage has `replicas`.
  plan e;
  e.stages = 2;
  e.replicas = 4;
  CHECK(replicas_per_stage(e) == std::vector<std::size_t>{4, 4});
  CHECK(devices_used(e) == 8);
  CHECK_FALSE(io::plan_to_json(e).contains("stage_replicas"));
}

TEST_CASE("plan JSON: bad per-stage replica counts name the pointer and the reason") {
  const std::string head3 = R"({"format": "devplace.plan/1", "stages": 3, "replicas": 3, "stage_of": [0, 1, 2], )";
  CHECK(plan_error_of(head3 + R"("stage_replicas": [3, 1]})") == "p.json: /stage_replicas: expected 3 entries (one per stage), got 2");
  CHECK(plan_error_of(head3 + R"("stage_replicas": [3, 0, 1]})") == "p.json: /stage_replicas/1: expected an integer >= 1");
  CHECK(plan_error_of(head3 + R"("stage_replicas": [3, -1, 1]})").starts_with("p.json: /stage_replicas/1: "));
  CHECK(plan_error_of(head3 + R"("stage_replicas": [3, 1.5, 1]})").starts_with("p.json: /stage_replicas/1: "));
  CHECK(plan_error_of(head3 + R"("stage_replicas": 3})").starts_with("p.json: /stage_replicas: "));
  CHECK(plan_error_of(head3 + R"("stage_replicas": [2, 1, 2]})") ==
        "p.json: /replicas: expected 2 (the largest of stage_replicas), got 3");
  CHECK(plan_error_of(head3 + R"("stage_replicas": [3, 1, 2], "device_of": [[0, 1, 2], [3, 4], [5, 6]]})") ==
        "p.json: /device_of/1: expected 1 device ids (one per replica of stage_replicas[1]), got 2");
  CHECK(plan_error_of(head3 + R"("stage_replicas": [3, 1, 2], "device_of": [[0, 1, 2], [3], [4, 0]]})") ==
        "p.json: /device_of/2/1: device 0 is used twice");
  // Without stage_replicas, unequal rows are still an error.
  CHECK(plan_error_of(head3 + R"("device_of": [[0, 1, 2], [3], [4, 5, 6]]})") ==
        "p.json: /device_of/1: expected 3 device ids (one per replica), got 1");
  CHECK(plan_error_of(head3 + R"("stage_replicas": [3, 1, 2], "device_of": [[0, 1, 2], [3], [4, 5]]})").empty());
  CHECK(plan_error_of(R"({"format": "devplace.plan/1", "stages": 1, "replicas": 1, "stage_of": [0], "settings": {"cost": "fast"}})") ==
        "p.json: /settings/cost: expected \"auto\", \"p2p\", \"allreduce\", \"combined\" or \"iteration\"");
}

TEST_CASE("plan JSON: an interleaved plan (virtual_stages) round-trips, and old plans read as v = 1") {
  plan p;
  p.graph = "chain";
  p.stages = 4;  // S = 2 ranks x v = 2 chunks
  p.virtual_stages = 2;
  p.replicas = 2;
  p.micro_batches = 4;
  p.stage_of = {0, 1, 2, 3};
  p.device_of = {{0, 3}, {1, 2}, {0, 3}, {1, 2}};
  p.settings = plan_settings{.schedule = "interleaved"};
  p.simulation = simulation_summary{.schedule = "interleaved", .iteration_ms = 10};
  const auto doc = io::plan_to_json(p);
  CHECK(doc.at("virtual_stages") == 2);
  const plan q = io::plan_from_json(doc, "p.json");
  CHECK(q.virtual_stages == 2);
  CHECK(q.stages == 4);
  CHECK(q.device_of == p.device_of);
  CHECK(pipeline_ranks(q) == 2);
  CHECK(devices_used(q) == 4);  // the later chunks reuse the ranks' devices
  CHECK(io::plan_to_json(q) == doc);
  // v = 1 is not written, and a plan without the field reads as v = 1.
  plan e = p;
  e.virtual_stages = 1;
  e.device_of = {{0, 3}, {1, 2}, {4, 7}, {5, 6}};
  e.settings->schedule = "1f1b";
  CHECK_FALSE(io::plan_to_json(e).contains("virtual_stages"));
  const plan f = io::plan_from_json(io::plan_to_json(e), "p.json");
  CHECK(f.virtual_stages == 1);
  CHECK(devices_used(f) == 8);
}

TEST_CASE("plan JSON: bad interleaved plans name the field") {
  const std::string head = R"({"format": "devplace.plan/1", "stages": 4, "replicas": 1, "micro_batches": 4, "stage_of": [0, 1, 2, 3], )";
  CHECK(plan_error_of(head + R"("virtual_stages": 0})") == "p.json: /virtual_stages: expected an integer >= 1");
  CHECK(plan_error_of(head + R"("virtual_stages": 3})").starts_with("p.json: /virtual_stages: 3 chunks per device do not divide the 4 stages"));
  CHECK(plan_error_of(head + R"("virtual_stages": "2"})").starts_with("p.json: /virtual_stages: "));
  CHECK(plan_error_of(head + R"("virtual_stages": 2, "device_of": [[0], [1], [1], [0]]})") ==
        "p.json: /device_of/2: expected the devices of row 0 (with virtual_stages = 2, chunk 2 runs on pipeline rank 0)");
  CHECK(plan_error_of(head + R"("virtual_stages": 2, "device_of": [[0], [0], [0], [0]]})") ==
        "p.json: /device_of/1/0: device 0 is used twice");
  CHECK(plan_error_of(head + R"("virtual_stages": 2, "device_of": [[0], [1], [0], [1]], "settings": {"schedule": "1f1b"}})") ==
        "p.json: /settings/schedule: expected \"interleaved\" (virtual_stages = 2 runs several chunks per device), got \"1f1b\"");
  CHECK(plan_error_of(R"({"format": "devplace.plan/1", "stages": 4, "replicas": 1, "micro_batches": 3, "stage_of": [0, 1, 2, 3], "virtual_stages": 2})")
            .starts_with("p.json: /micro_batches: expected a multiple of the 2 pipeline ranks"));
  const std::string general = R"({"format": "devplace.plan/1", "stages": 4, "replicas": 2, "micro_batches": 4, "stage_of": [0, 1, 2, 3], )";
  CHECK(plan_error_of(general + R"("stage_replicas": [2, 1, 1, 1], "virtual_stages": 2})") ==
        "p.json: /stage_replicas/2: expected 2 (chunk 2 runs on the devices of pipeline rank 0)");
  // The good one, and the schedule "interleaved" with v = 1 (1F1B).
  CHECK(plan_error_of(head + R"("virtual_stages": 2, "device_of": [[0], [1], [0], [1]], "settings": {"schedule": "interleaved"}})").empty());
  CHECK(plan_error_of(head + R"("device_of": [[0], [1], [2], [3]], "settings": {"schedule": "interleaved"}})").empty());
  CHECK(plan_error_of(head + R"("settings": {"schedule": "zigzag"}})") ==
        "p.json: /settings/schedule: expected \"gpipe\", \"1f1b\" or \"interleaved\"");
}
