// Scaling of the Parmesan flow and of the (S, R) plan search with graph size (docs/partition.md,
// "Scaling"): BERT-Large (examples/data/bert_large_mbs4.json, 591 operators) chained end to end
// (the last operator of copy k feeds the first of copy k+1) 2, 17 and 170 times: ~1k, 10k and
// 100k operators.
//   * flow: `parmesan_partition`, S = 16, R = 2, K = 32 (the default), MB = 4;
//   * plan: `search_plan` with `exact_product` on 4x DGX-1 (`dgx1_cluster`, shape 4: 32 devices).
// Counters: `ops`, `cpu_s` (CPU time of every thread: the flow runs its alphas in parallel and
// the machine may be shared; split into `user_s` and `sys_s`, the kernel's page faults), `peak_MB` (the process's peak resident memory during the run,
// VmHWM after resetting it through /proc/self/clear_refs) and `objective_ms` / `samples_per_s`.
//
//   bench_scale [--benchmark_filter=flow]        DEVPLACE_SCALE_MAX_OPS=20000 skips larger graphs
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdio>
#include <fstream>

#include "common.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif

namespace {

/// Resets the peak resident memory (VmHWM) of the process; false when the kernel refuses.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  return static_cast<bool>(f);
}

/// CPU seconds of the whole process (every thread) so far, in user space and in the kernel: on a
/// shared machine, less noisy than wall time. The kernel part is almost all page faults on memory
/// touched for the first time, which grows with the memory used, not with the algorithm's work.
struct cpu_split {
  double user = 0, sys = 0;
  double total() const { return user + sys; }
};
cpu_split cpu_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {double(u.ru_utime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec),
          double(u.ru_stime.tv_sec) + 1e-6 * double(u.ru_stime.tv_usec)};
}
/// Per run (the average over the benchmark's iterations).
void set_cpu_counters(benchmark::State& state, const cpu_split& before) {
  const cpu_split after = cpu_now();
  const auto avg = benchmark::Counter::kAvgIterations;
  state.counters["cpu_s"] = benchmark::Counter(after.total() - before.total(), avg);
  state.counters["user_s"] = benchmark::Counter(after.user - before.user, avg);
  state.counters["sys_s"] = benchmark::Counter(after.sys - before.sys, avg);
}

const devplace::op_graph& chained(std::size_t copies) {
  static std::map<std::size_t, devplace::op_graph> cache;
  auto it = cache.find(copies);
  if (it == cache.end()) it = cache.emplace(copies, devplace::bench::repeat_chain(devplace::bench::bert_large(), copies)).first;
  return it->second;
}

bool skip(benchmark::State& state, const devplace::op_graph& g) {
  if (double(g.num_vertices()) <= devplace::bench::env_or("DEVPLACE_SCALE_MAX_OPS", 1e18)) return false;
  state.SkipWithError("skipped: more operators than DEVPLACE_SCALE_MAX_OPS");
  return true;
}

void BM_flow(benchmark::State& state) {
  const auto& g = chained(static_cast<std::size_t>(state.range(0)));
  if (skip(state, g)) return;
  const devplace::parmesan_options o{.partition = {.stages = 16, .cost = {.replicas = 2, .micro_batches = 4}}};
  double obj = 0;
  reset_peak_rss();
  const cpu_split cpu0 = cpu_now();
  for (auto _ : state) {
    const auto r = devplace::parmesan_partition(g, o);
    obj = r.objective_ms;
  }
  set_cpu_counters(state, cpu0);
  state.counters["ops"] = double(g.num_vertices());
  state.counters["peak_MB"] = devplace::bench::peak_rss_bytes() / 1e6;
  state.counters["objective_ms"] = benchmark::Counter(obj);
  std::fprintf(stderr, "flow, %zu operators: objective %.6f ms\n", g.num_vertices(), obj);
}

void BM_plan(benchmark::State& state) {
  const auto& g = chained(static_cast<std::size_t>(state.range(0)));
  if (skip(state, g)) return;
  const auto t = devplace::generate_topology({.generator = "dgx1_cluster", .shape = {4}});
  double sps = 0;
  reset_peak_rss();
  const cpu_split cpu0 = cpu_now();
  for (auto _ : state) {
    const auto r = devplace::search_plan(g, t, {.exact_product = true});
    sps = r.status == devplace::status::feasible ? r.candidates[r.best].samples_per_s : 0.0;
  }
  set_cpu_counters(state, cpu0);
  state.counters["ops"] = double(g.num_vertices());
  state.counters["peak_MB"] = devplace::bench::peak_rss_bytes() / 1e6;
  state.counters["samples_per_s"] = sps;
}

}  // namespace

// The flow repeats small graphs (CPU time is counted in scheduler ticks) so that each size runs
// about a second in all; the counters are per run.
BENCHMARK(BM_flow)->Arg(2)->Iterations(60)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_flow)->Arg(17)->Iterations(12)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_flow)->Arg(170)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_plan)->Arg(2)->Arg(17)->Arg(170)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
