// libFuzzer target: the devplace.plan/1 reader, alone and checked against a 4-operator graph;
// an accepted plan round-trips, and one accepted against the graph is costed (stage times).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "devplace/io/graph_json.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/partition/stage_cost.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#endif
#include "invariants.hpp"

namespace {
const devplace::op_graph& residual4() {
  static const devplace::op_graph g = devplace::io::read_graph_json_text(
      R"({"format": "devplace.graph/1", "nodes": [{"id": 0, "fwd_ms": 1, "bwd_ms": 2, "param_bytes": 10},
          {"id": 1, "fwd_ms": 1, "bwd_ms": 2}, {"id": 2, "fwd_ms": 1, "bwd_ms": 2}, {"id": 3, "fwd_ms": 1, "bwd_ms": 2}],
          "edges": [{"src": 0, "dst": 1, "bytes": 5}, {"src": 1, "dst": 2, "bytes": 5}, {"src": 2, "dst": 3, "bytes": 5},
                    {"src": 0, "dst": 3, "bytes": 5}]})",
      "residual4.json");
  return g;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = devplace::io;
  using devplace::fuzz::require;
  const std::string text = devplace::fuzz::as_text(data, size);
  try {
    const auto p = io::read_plan_json_text(text, "fuzz.json");
    const auto again = io::read_plan_json_text(io::plan_to_json(p).dump(), "again.json");
    require(again.stage_of == p.stage_of && again.device_of == p.device_of && again.stages == p.stages &&
                again.stage_replicas == p.stage_replicas && again.replicas == p.replicas &&
                again.virtual_stages == p.virtual_stages,
            "plan JSON round-trips");
    const auto reps = devplace::replicas_per_stage(p);
    require(reps.size() == p.stages && *std::max_element(reps.begin(), reps.end()) == p.replicas,
            "per-stage replica counts: one per stage, the largest is replicas");
    if (!p.device_of.empty())
      for (std::size_t s = 0; s < p.stages; ++s) require(p.device_of[s].size() == reps[s], "device_of row s has R_s ids");
  } catch (const io::input_error&) {
  }
  try {
    const auto& g = residual4();
    const auto p = io::read_plan_json_text(text, "fuzz.json", &g);
    require(p.stage_of.size() == g.num_vertices(), "a plan checked against a graph covers it");
    for (auto s : p.stage_of) require(s < p.stages, "stage index < stages");
    const auto e = devplace::evaluate_partition(g, p.stage_of, devplace::replicas_per_stage(p), {.replicas = p.replicas});
    require(e.stage_time_ms.size() == p.stages, "one stage time per stage");
  } catch (const io::input_error&) {
  }
  return 0;
}
