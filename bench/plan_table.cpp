// The table of docs/plan-results.md: on every bundled real model and 4x DGX-1 (32 devices), the
// plan chosen by the (S, R) search (partition, map, simulate), its simulated throughput, its ratio
// to the best plan that uses the CS map, and the search time. Prints a Markdown table.
//
//   bench_plan_table > docs/plan-results.md
#include <cstdio>
#include <string>

#include "common.hpp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/topology/generators.hpp"

int main() {
  struct model { const char* name; double micro_batch_size; };
  const model models[] = {{"resnet152_mbs64", 64}, {"bert_large_mbs4", 4}, {"swin_large_mbs32", 32},
                          {"gpt2_medium_mbs8", 8}, {"inception_v3_mbs32", 32}};
  const auto topo = devplace::dgx1_cluster(4);
  std::printf("| model | chosen (S, R) | mapping cost | mapping optimal | iteration ms | samples/s | best CS-map plan (S, R) | its samples/s | ratio | search s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& m : models) {
    const devplace::op_graph g = devplace::bench::bundled(m.name);
    const auto r = devplace::search_plan(g, topo, {.exact_product = true, .micro_batches = 4, .micro_batch_size = m.micro_batch_size,
                                                   .map_timeout_s = 5});
    if (r.status != devplace::status::feasible) {
      std::printf("| %s | no configuration fits | | | | | | | | %.2f |\n", g.name().c_str(), r.time_s);
      continue;
    }
    const auto& best = r.candidates[r.best];
    std::size_t cs_best = r.best;
    for (std::size_t i = 0; i < r.candidates.size(); ++i)
      if (r.candidates[i].status == devplace::status::feasible &&
          r.candidates[i].cs_samples_per_s > r.candidates[cs_best].cs_samples_per_s)
        cs_best = i;
    const auto& cs = r.candidates[cs_best];
    std::printf("| %s | (%zu, %zu) | %s | %s | %.2f | %.1f | (%zu, %zu) | %.1f | %.2fx | %.2f |\n", g.name().c_str(),
                best.stages, best.replicas, best.cost.c_str(), best.mapping_optimal ? "yes" : "no", best.iteration_ms,
                best.samples_per_s, cs.stages, cs.replicas, cs.cs_samples_per_s, best.samples_per_s / cs.cs_samples_per_s,
                r.time_s);
  }
  return 0;
}
