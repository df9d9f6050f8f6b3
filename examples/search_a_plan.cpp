// The whole plan: for every (S stages, R replicas) with S x R <= D, partition (the Parmesan flow),
// map, simulate, and keep the highest simulated samples/s (docs/simulator.md, "(S, R) search").
// Whether data parallelism or a pipeline wins depends on the parameters to reduce.
//
//   ./build/examples/example_search_a_plan
#include <devplace/sim/plan_search.hpp>
#include <devplace/topology/generators.hpp>
#include <devplace/views/with_costs.hpp>
#if DEVPLACE_HEADER_ONLY
#include <devplace/sim/plan_search.ipp>  // search_plan's definition (compiled mode: devplace::core)
#endif

#include <iostream>
#include <vector>

template <class G>
void search(const char* what, const G& g) {
  // Four devices at 10 GB/s; 4 micro-batches of one sample; GPipe with recomputation (the
  // defaults), one thread.
  const auto r = devplace::search_plan(g, devplace::two_level(1, 4, 10.0, 10.0), {.threads = 1});
  const auto& best = r.candidates[r.best];
  std::cout << what << ": (S, R) = (" << best.stages << ", " << best.replicas << "), " << best.iteration_ms << " ms, "
            << best.samples_per_s << " samples/s\n";
}

int main() {
  // A chain of four operators: forward 1 ms, backward 2 ms; no bytes between them. With
  // recomputation a backward also reruns its forward: per operator F = 1, B = 3 ms.
  const std::vector<std::vector<int>> chain{{1}, {2}, {3}, {}};
  auto model = [&](double param_bytes) {
    return devplace::views::with_costs(
        chain, devplace::costs{.forward_ms = [](const auto&, std::size_t) { return 1.0; },
                               .backward_ms = [](const auto&, std::size_t) { return 2.0; },
                               .param_bytes = [=](const auto&, std::size_t) { return param_bytes; }});
  };

  // No parameters: the allreduce is free, so pure data parallelism has no bubble. (1, 4): every
  // device runs 4 micro-batches of the whole chain, 4 * (4 + 12) = 64 ms for 4 * 4 = 16 samples:
  // 250 samples/s. (2, 2): (MB + S - 1)(F + B) = 5 * 8 = 40 ms for 8 samples, 200/s; (4, 1):
  // 7 * 4 = 28 ms for 4 samples, 142.9/s.
  search("no parameters", model(0));
  // prints: no parameters: \(S, R\) = \(1, 4\), 64 ms, 250 samples/s

  // 1 GB of parameters per operator: any R > 1 must reduce gigabytes at 10 GB/s (hundreds of ms),
  // so the four-stage pipeline without replicas wins: 28 ms for 4 samples, 142.857 samples/s.
  search("1 GB of parameters per operator", model(1e9));
  // prints: 1 GB of parameters per operator: \(S, R\) = \(4, 1\), 28 ms, 142.857 samples/s
  return 0;
}
