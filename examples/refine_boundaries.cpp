// Boundary refinement: after a partition, move single operators on a stage boundary into the
// neighbouring stage while that helps (Parmesan §6, docs/refinement.md). The result is never worse
// than the input under the partition objective (the slowest stage).
//
//   ./build/examples/example_refine_boundaries
#include <devplace/algorithm/reconverging.hpp>
#include <devplace/refine/boundary_refine.hpp>
#include <devplace/views/with_costs.hpp>

#include <iostream>
#include <vector>

int main() {
  // A chain of five operators, 2, 2, 1, 1, 2 ms, no bytes on the edges, cut badly into two
  // stages: {0,1,2,3} | {4}, stage times 6 and 2 ms.
  const std::vector<std::vector<int>> chain{{1}, {2}, {3}, {4}, {}};
  const std::vector<double> ms{2, 2, 1, 1, 2};
  const auto g = devplace::views::with_costs(chain, devplace::costs{.forward_ms = [&](const auto&, std::size_t v) { return ms[v]; }});
  const std::vector<std::size_t> start{0, 0, 0, 0, 1};

  // The objective policy takes the move that lowers the slowest stage most. By hand: move 3
  // (5 | 3 ms), then 2 (4 | 4 ms); moving 1 as well would give 2 | 6, so it stops after 2 moves.
  const auto r = devplace::boundary_refine(g, start, {.stages = 2, .policy = devplace::refine_policy::objective});
  std::cout << "objective policy: " << r.initial_objective_ms << " -> " << r.objective_ms << " ms in " << r.moves
            << " moves, stages:";
  for (auto s : r.stage_of) std::cout << ' ' << s;
  std::cout << '\n';
  // prints: objective policy: 6 -> 4 ms in 2 moves, stages: 0 0 1 1 1

  // The paper's policy first moves cuts towards reconverging operators (forks and joins), which
  // needs each operator's hop distance to the nearest one. A chain has none (every distance is
  // npos), so that gain is always 0 and the later ones decide (cut bytes: none here; then the
  // largest stage compute), which fall the same way, to 4 ms.
  const auto delta = devplace::distance_to_reconverging(chain);
  const auto p = devplace::boundary_refine(g, start, {.stages = 2}, delta);
  std::cout << "paper policy: " << p.initial_objective_ms << " -> " << p.objective_ms << " ms\n";
  // prints: paper policy: 6 -> 4 ms
  return 0;
}
