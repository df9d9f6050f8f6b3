// A user's program with its own graph and topology types: partition with `pipeline_dp`, map with
// `map_devices` (the cost model chosen by the library), simulate with `simulate`. Built against
// devplace::core (compiled mode) when the package provides it, header-only otherwise: the same
// source either way. The expected values are worked out by hand in the comments.
#include <devplace/map/mapper.hpp>
#include <devplace/map/stage_graph.hpp>
#include <devplace/partition/pipeline_dp.hpp>
#include <devplace/sim/pipeline_simulator.hpp>

#include <cmath>
#include <cstddef>
#include <iostream>
#include <vector>

namespace user {

// A chain of four layers, 1 + 2 ms each (forward + backward), 1 MB between neighbours.
struct chain {
  std::vector<std::vector<int>> succ{{1}, {2}, {3}, {}};
  [[nodiscard]] std::size_t num_vertices() const { return succ.size(); }
  [[nodiscard]] const std::vector<int>& out_edges(std::size_t u) const { return succ[u]; }
  [[nodiscard]] double forward_ms(std::size_t) const { return 1.0; }
  [[nodiscard]] double backward_ms(std::size_t) const { return 2.0; }
  [[nodiscard]] double memory_bytes(std::size_t) const { return 1e6; }
  [[nodiscard]] double param_bytes(std::size_t) const { return 0.0; }
  [[nodiscard]] double edge_bytes(std::size_t, std::size_t) const { return 1e6; }
};

// Two pairs of devices: 100 GB/s inside a pair, 1 GB/s across.
struct two_pairs {
  [[nodiscard]] std::size_t num_devices() const { return 4; }
  [[nodiscard]] double bandwidth_gbps(std::size_t a, std::size_t b) const { return a / 2 == b / 2 ? 100.0 : 1.0; }
};

}  // namespace user

int main() {
  const user::chain g;
  const user::two_pairs topo;
  // Two stages of two layers: 6 ms of compute each, the only cut in the middle.
  const auto part = devplace::pipeline_dp(g, {.stages = 2, .cost = {.replicas = 1, .micro_batches = 1}});
  const bool cut_ok = part.stage_of == std::vector<std::size_t>{0, 0, 1, 1};
  // Map the two stages, no replicas: the best mapping puts them on one pair (100 GB/s).
  const auto sg = devplace::make_stage_graph(g, part.stage_of, 2, 1);
  const auto m = devplace::map_devices(sg, topo, {.threads = 1, .timeout_s = 10});
  const bool map_ok = m.has_solution() && m.device_of.size() == 2 && m.device_of[0][0] / 2 == m.device_of[1][0] / 2;
  // One micro-batch through both stages: 2 + 2 ms forward, 4 + 4 ms backward, and the 1 MB
  // activation and its gradient at 100 GB/s (0.01 ms each way): 12.02 ms.
  const auto sim = devplace::simulate(
      devplace::make_pipeline_model(g, part.stage_of, 2, std::vector<std::vector<std::size_t>>(m.device_of.begin(), m.device_of.end())),
      topo, {.micro_batches = 1});
  const bool sim_ok = std::abs(sim.iteration_ms - 12.02) < 1e-6;
  const bool ok = cut_ok && map_ok && sim_ok;
  std::cout << (ok ? "user types ok" : "user types FAILED") << " (" << (DEVPLACE_HEADER_ONLY ? "header-only" : "compiled")
            << " mode; cut " << cut_ok << ", map " << map_ok << ", iteration " << sim.iteration_ms << " ms)\n";
  return ok ? 0 : 1;
}
