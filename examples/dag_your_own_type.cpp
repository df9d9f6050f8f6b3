// Your own graph type as a devplace `dag`: no adapter, no copy. The algorithms find
// `num_vertices` and `out_edges` as free functions next to the type (argument-dependent lookup);
// members or a `devplace::dag_traits` specialisation work the same way (docs/concepts.md).
//
//   ./build/examples/example_dag_your_own_type
#include <devplace/algorithm/sources_sinks.hpp>
#include <devplace/algorithm/topological_sort.hpp>
#include <devplace/dag/concepts.hpp>

#include <iostream>
#include <span>
#include <string>
#include <vector>

namespace kitchen {
// A recipe: steps, and for every step the steps that must wait for it.
struct recipe {
  std::vector<std::string> step;
  std::vector<std::vector<unsigned>> then;
};
// The two functions that make it a dag, found by ADL.
std::size_t num_vertices(const recipe& r) { return r.step.size(); }
std::span<const unsigned> out_edges(const recipe& r, std::size_t u) { return r.then[u]; }
}  // namespace kitchen

static_assert(devplace::dag<kitchen::recipe>);

int main() {
  const kitchen::recipe pasta{
      .step = {"boil water", "chop onion", "fry onion", "cook pasta", "make sauce", "serve"},
      .then = {{3}, {2}, {4}, {5}, {5}, {}}};

  // Kahn's algorithm, the smallest ready step first. By hand: ready {0, 1} -> 0; ready {1, 3} ->
  // 1; ready {2, 3} -> 2; ready {3, 4} -> 3; then 4, then 5.
  const auto sorted = devplace::topological_sort(pasta);
  std::cout << "order:";
  for (std::size_t v : sorted.order) std::cout << ' ' << v;
  std::cout << '\n';
  // prints: order: 0 1 2 3 4 5

  // Steps nothing waits for and steps that wait for nothing.
  std::cout << "first steps:";
  for (auto v : devplace::sources(pasta)) std::cout << " [" << pasta.step[v] << ']';
  std::cout << "\nlast step:";
  for (auto v : devplace::sinks(pasta)) std::cout << " [" << pasta.step[v] << ']';
  std::cout << '\n';
  // prints: first steps: \[boil water\] \[chop onion\]
  // prints: last step: \[serve\]

  // A cycle is reported as a status with the cycle itself, never as an exception.
  kitchen::recipe loop = pasta;
  loop.then[5].push_back(0);  // "serve" before "boil water": 0 -> 3 -> 5 -> 0
  const auto bad = devplace::topological_sort(loop);
  std::cout << "with a loop: " << devplace::to_string(bad.status) << ", cycle of " << bad.cycle.size() << " steps\n";
  // prints: with a loop: cycle_detected, cycle of 3 steps
  return sorted ? 0 : 1;
}
