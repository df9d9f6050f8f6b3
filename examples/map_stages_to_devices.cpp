// Device mapping: place S stages x R replicas on distinct devices so that the slowest stage
// replica is fastest (Parmesan phase 2, docs/mapping.md). The best placement depends on the cost
// model: pipelines that talk a lot want their stages close (p2p); stages with many parameters
// want their replicas close, for the gradient allreduce.
//
//   ./build/examples/example_map_stages_to_devices
#include <devplace/map/mapper.hpp>
#include <devplace/topology/generators.hpp>

#include <iostream>

int main() {
  // Two nodes of two devices: 11 GB/s inside a node, 1.1 GB/s between (devices 0,1 | 2,3).
  const auto topology = devplace::two_level(2, 2, 11.0, 1.1);
  // Two stages, two replicas each: 1 ms of compute per stage, 100 MB between the stages of one
  // pipeline, 110 MB of parameters per stage. Built directly here; make_stage_graph(g, stage_of,
  // S, R) builds it from a graph and a partition.
  const devplace::stage_graph sg(2, {1.0, 1.0}, {110e6, 110e6}, {{0, 100e6}, {100e6, 0}});

  // Two fixed layouts: CS puts the replicas of a stage side by side (stage 0 on 0,1, stage 1 on
  // 2,3); p2p puts each pipeline side by side (0,1 and 2,3 hold one pipeline each).
  const auto cs = devplace::cs_map(sg), p2p = devplace::p2p_map(sg);

  // p2p model: stage time = compute + the message to its neighbour.
  //   pipeline in a node: 1 + 100e6 B / 11 GB/s = 1 + 9.0909 = 10.0909 ms; across: 1 + 90.909 ms.
  // allreduce model: compute + the ring allreduce, 2(R-1)/R * P = 110 MB over the ring's link:
  //   replicas in a node: 1 + 110 / 11 = 11 ms; across: 1 + 110 / 1.1 = 101 ms.
  // So under p2p the two replicas of stage 0 end up in different nodes (each pipeline in one
  // node), under allreduce in the same node.
  for (auto model : {devplace::cost_choice::p2p, devplace::cost_choice::allreduce}) {
    const auto r = devplace::map_devices(sg, topology, {.cost = model, .threads = 1});
    std::cout << r.cost << ": CS map " << devplace::evaluate(sg, topology, cs, model).objective_ms << " ms, p2p map "
              << devplace::evaluate(sg, topology, p2p, model).objective_ms << " ms, mapper " << r.objective_ms << " ms ("
              << devplace::to_string(r.status) << "), stage 0 on devices " << r.device_of[0][0] << ','
              << r.device_of[0][1] << '\n';
  }
  // prints: p2p: CS map 91.909[0-9]* ms, p2p map 10.0909[0-9]* ms, mapper 10.0909[0-9]* ms \(optimal\), stage 0 on devices ([01],[23]|[23],[01])
  // prints: allreduce: CS map 11 ms, p2p map 101 ms, mapper 11 ms \(optimal\), stage 0 on devices (0,1|1,0|2,3|3,2)
  return 0;
}
