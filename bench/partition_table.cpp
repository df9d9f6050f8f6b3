// The partitioning comparison table of docs/partition-results.md: on every bundled real graph,
// for S in {4, 8, 16} and R in {1, 2, 4}, the Parmesan flow (cluster + DP + refine) against the
// lower bound max(Σc/S, max c)/R, the fixed-order DP and the even compute split, plus the gain
// of refinement over cluster + DP alone. Prints a Markdown table.
//
//   bench_partition_table [K=32] > docs/partition-results.md
#include <chrono>
#include <cstdio>
#include <string>

#include "common.hpp"
#include "devplace/partition/even_split.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/partition/topo_dp.hpp"

int main(int argc, char** argv) {
  const std::size_t K = argc > 1 ? std::stoul(argv[1]) : 32;
  const char* models[] = {"resnet152_mbs64", "bert_large_mbs4", "swin_large_mbs32", "gpt2_medium_mbs8", "inception_v3_mbs32"};
  std::printf("| model | S | R | lower bound ms | Parmesan flow ms | cluster+DP ms (best alpha) | refine gain | fixed-order DP ms | even split ms | flow / bound | flow time s | kept |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const char* m : models) {
    const devplace::op_graph g = devplace::bench::bundled(m);
    double total = 0, heaviest = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      total += g.compute_ms(v);
      heaviest = std::max(heaviest, g.compute_ms(v));
    }
    for (std::size_t S : {4, 8, 16})
      for (std::size_t R : {1, 2, 4}) {
        const devplace::partition_options po{.stages = S, .cost = {.replicas = R, .micro_batches = 4}};
        const double bound = std::max(total / double(S), heaviest) / double(R);
        const auto flow = devplace::parmesan_partition(g, {.partition = po, .clusters = K});
        const auto fixed = devplace::topo_dp(g, po);
        auto even = devplace::even_split(g, {.stages = S});
        const double even_ms = devplace::evaluate_partition(g, even.stage_of, S, po.cost).objective_ms;
        double best_dp = 0, best_refined = 0;
        bool any = false;
        for (const auto& st : flow.steps)
          if (!st.stage_of.empty() && (!any || st.objective_ms < best_refined)) {
            any = true;
            best_dp = st.dp_objective_ms;
            best_refined = st.objective_ms;
          }
        std::printf("| %s | %zu | %zu | %.3f | %.3f | %.3f | %.3fx | %.3f | %.3f | %.3f | %.3f | %s |\n", g.name().c_str(), S, R,
                    bound, flow.objective_ms, best_dp, any ? best_dp / best_refined : 0.0, fixed.objective_ms, even_ms,
                    flow.objective_ms / bound, flow.time_s, flow.from_reference ? "reference" : "alpha");
      }
  }
  return 0;
}
