// The table of docs/plan-results.md: on every bundled real model and 4x DGX-1 (32 devices), the
// plan chosen by the (S, R) search (partition, map, simulate), its simulated throughput, its ratio
// to the best plan that uses the CS map, and the search time. Prints a Markdown table.
//
//   bench_plan_table [plans] [pruning] [costs] [interleaving]     (no argument: all four tables)
//
// Then: the bound-pruned search against the exhaustive one (--no-prune) on BERT-48 (BERT-Large,
// 1,143 operators) on 4x DGX-1, every S x R <= 32 and S x R = 32, and the mapping cost models
// (auto, combined) compared by the simulated throughput of the chosen plan; and interleaved 1F1B
// (v in {2, 4}) against 1F1B, with one allreduce per stage and with 25 MiB gradient buckets, as
// `devplace plan --schedule interleaved --virtual-stages 2,4` runs it (the iteration mapping).
// DEVPLACE_BENCH_PLAN_THREADS (default 2), DEVPLACE_BENCH_PLAN_MAP_TIMEOUT (default 5 s).
#include <cstdio>
#include <set>
#include <string>

#include "common.hpp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif

namespace {

void pruning_table(const devplace::matrix_topology& topo, unsigned threads, double map_timeout) {
  const devplace::op_graph g = devplace::bench::bundled("bert_large_mbs4");
  std::printf("\n| %s on 4x DGX-1 | search | configurations | explored | pruned | infeasible | chosen (S, R) | samples/s | time s |\n",
              g.name().c_str());
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (bool exact : {false, true})
    for (bool prune : {true, false}) {
      const auto r = devplace::search_plan(g, topo, {.exact_product = exact, .micro_batches = 4, .micro_batch_size = 4,
                                                     .map_timeout_s = map_timeout, .threads = threads, .prune = prune});
      std::size_t n[3] = {0, 0, 0};
      for (const auto& c : r.candidates) ++n[static_cast<int>(c.outcome)];
      const auto& b = r.candidates[r.best];
      std::printf("| %s | %s | %zu | %zu | %zu | %zu | (%zu, %zu) | %.1f | %.2f |\n", exact ? "S x R = D" : "S x R <= D",
                  prune ? "pruned" : "exhaustive", r.candidates.size(), n[0], n[1], n[2], b.stages, b.replicas,
                  b.samples_per_s, r.time_s);
    }
}

void cost_model_table(const devplace::matrix_topology& topo, unsigned threads, double map_timeout) {
  struct model { const char* name; double micro_batch_size; };
  const model models[] = {{"resnet152_mbs64", 64}, {"bert_large_mbs4", 4}, {"swin_large_mbs32", 32},
                          {"gpt2_medium_mbs8", 8}, {"inception_v3_mbs32", 32}};
  std::printf("\n| model (S x R = 32, 4x DGX-1) | cost | chosen (S, R) | mapping optimal | samples/s | search s |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& m : models) {
    const devplace::op_graph g = devplace::bench::bundled(m.name);
    for (auto cost : {devplace::cost_choice::automatic, devplace::cost_choice::combined}) {
      const auto r = devplace::search_plan(g, topo, {.exact_product = true, .micro_batches = 4, .micro_batch_size = m.micro_batch_size,
                                                     .map_timeout_s = map_timeout, .threads = threads, .cost = cost});
      if (r.status != devplace::status::feasible) continue;
      const auto& b = r.candidates[r.best];
      std::printf("| %s | %s | (%zu, %zu) | %s | %.1f | %.2f |\n", g.name().c_str(), std::string(to_string(cost)).c_str(),
                  b.stages, b.replicas, b.mapping_optimal ? "yes" : "no", b.samples_per_s, r.time_s);
    }
  }
}

/// The plan `devplace plan --exact-product --threads 1 --schedule S [--virtual-stages 2,4]
/// --dp-bucket-mb B` chooses: its (S, R, v) and samples/s, as a table cell pair.
struct schedule_pick {
  std::string config;
  double samples_per_s = 0, time_s = 0;
};

schedule_pick pick(const devplace::op_graph& g, const devplace::matrix_topology& topo, bool interleaved, double bucket_bytes,
                   double map_timeout) {
  devplace::plan_search_options o{.exact_product = true, .micro_batches = 4, .map_timeout_s = map_timeout, .threads = 1};
  o.schedule = interleaved ? devplace::pipeline_schedule::interleaved : devplace::pipeline_schedule::one_f_one_b;
  o.virtual_stages = {2, 4};
  o.iteration_mapping = true;
  o.cost = devplace::cost_choice::combined;
  o.dp_bucket_bytes = bucket_bytes;
  const auto r = devplace::search_plan(g, topo, o);
  if (r.status != devplace::status::feasible) return {"none fits", 0, r.time_s};
  const auto& b = r.candidates[r.best];
  std::string c = "(" + std::to_string(b.stages) + ", " + std::to_string(b.replicas);
  if (interleaved && b.virtual_stages > 1) c += ", " + std::to_string(b.virtual_stages);
  return {c + ")", b.samples_per_s, r.time_s};
}

void interleaving_table(const devplace::matrix_topology& topo, double map_timeout) {
  const char* models[] = {"resnet152_mbs64", "bert_large_mbs4", "swin_large_mbs32", "gpt2_medium_mbs8", "inception_v3_mbs32"};
  std::printf("\n| model | 1F1B (S, R) | samples/s | interleaved (S, R, v) | samples/s | gain | 1F1B + buckets (S, R) | samples/s "
              "| interleaved + buckets (S, R, v) | samples/s | gain | search s (1F1B / interleaved) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const char* name : models) {
    const devplace::op_graph g = devplace::bench::bundled(name);
    std::printf("| %s", g.name().c_str());
    double search[2] = {0, 0};
    for (double bucket : {0.0, 25.0 * 1048576.0}) {
      const auto one = pick(g, topo, false, bucket, map_timeout), inter = pick(g, topo, true, bucket, map_timeout);
      std::printf(" | %s | %.1f | %s | %.1f | %.2fx", one.config.c_str(), one.samples_per_s, inter.config.c_str(),
                  inter.samples_per_s, one.samples_per_s > 0 ? inter.samples_per_s / one.samples_per_s : 0.0);
      if (bucket == 0) search[0] = one.time_s, search[1] = inter.time_s;
    }
    std::printf(" | %.1f / %.1f |\n", search[0], search[1]);
  }
}

void main_table(const devplace::matrix_topology& topo) {
  struct model { const char* name; double micro_batch_size; };
  const model models[] = {{"resnet152_mbs64", 64}, {"bert_large_mbs4", 4}, {"swin_large_mbs32", 32},
                          {"gpt2_medium_mbs8", 8}, {"inception_v3_mbs32", 32}};
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
}

}  // namespace

int main(int argc, char** argv) {
  const auto topo = devplace::dgx1_cluster(4);
  const auto threads = static_cast<unsigned>(devplace::bench::env_or("DEVPLACE_BENCH_PLAN_THREADS", 2));
  const double map_timeout = devplace::bench::env_or("DEVPLACE_BENCH_PLAN_MAP_TIMEOUT", 5);
  const std::set<std::string> known{"plans", "pruning", "costs", "interleaving"};
  std::set<std::string> want(argv + 1, argv + argc);
  for (const auto& w : want)
    if (!known.contains(w)) {
      std::fprintf(stderr, "bench_plan_table: unknown table '%s' (plans, pruning, costs, interleaving; none: all)\n", w.c_str());
      return 2;
    }
  if (want.empty()) want = known;
  if (want.contains("plans")) main_table(topo);
  if (want.contains("pruning")) pruning_table(topo, threads, map_timeout);
  if (want.contains("costs")) cost_model_table(topo, threads, map_timeout);
  if (want.contains("interleaving")) interleaving_table(topo, map_timeout);
  return 0;
}
