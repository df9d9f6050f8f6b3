// The device mapper's set-up before its search (issues 16 and 18): the link tables, the
// per-device bound table and assignment bound, the checking scheme, the replica and device
// symmetries (twins, automorphism orbits) and the ring-closure tables, at 256 to 2,048 devices.
//
// Per case (BERT-Large cut into S = 8 stages by the fixed-order DP, R = D / 8 replicas):
//   * link_ms / link_cpu_s: building the dense link tables (`link_costs`) from the topology;
//   * setup_ms / setup_cpu_s: `mapping_search`'s whole set-up with no deadline (what a search
//     would need before its first node);
//   * map_ms / map_cpu_s: `map_devices` under a time limit (DEVPLACE_BENCH_SETUP_TIMEOUT, default
//     1 s), set-up included, and its status; `within_limit` is 1 when it returned within 10 % of
//     the limit (+ 50 ms);
//   * peak_rss_mb: the process's peak resident memory after the case. It is the whole process's
//     peak, so run one case per process for a per-case figure (--benchmark_filter).
// DEVPLACE_BENCH_SETUP_SIZES (default "256,512") picks the device counts among 256, 512, 1024,
// 2048. The topologies: a torus (2-D at 256 and 1,024, 3-D at 512 and 2,048) and uniform_dist.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"

using namespace devplace;

namespace {

double setup_bench_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

matrix_topology setup_bench_topology(const std::string& family, std::size_t D) {
  if (family == "uniform_dist") return uniform_dist(D, 1);
  switch (D) {
    case 256: return torus2d(16, 16);
    case 512: return torus3d(8, 8, 8);
    case 1024: return torus2d(32, 32);
    default: return torus3d(16, 16, 8);
  }
}

template <class F>
std::pair<double, double> setup_bench_timed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = setup_bench_cpu_s();
  f();
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), setup_bench_cpu_s() - c0};
}

template <mapping_cost_model C>
void BM_setup(benchmark::State& state, std::string family, std::size_t D, C model) {
  const std::size_t S = 8, R = D / 8;
  const auto topo = setup_bench_topology(family, D);
  const auto& g = bench::bert_large_stages(S, R);
  const double limit = bench::env_or("DEVPLACE_BENCH_SETUP_TIMEOUT", 1);
  std::pair<double, double> link{}, setup{}, map{};
  mapping_result r;
  for (auto _ : state) {
    std::unique_ptr<link_costs> L;
    link = setup_bench_timed([&] { L = std::make_unique<link_costs>(topo); });
    setup = setup_bench_timed([&] {
      const mapping_search<C> search(g, *L, model, mapper_options{});
      benchmark::DoNotOptimize(search.initial_lower_bound());
    });
    map = setup_bench_timed([&] {
      try {
        r = map_devices(g, *L, model, mapper_options{.threads = 2, .timeout_s = limit});
      } catch (const std::invalid_argument& e) {  // a device limit
        state.SetLabel(e.what());
      }
    });
  }
  state.counters["link_ms"] = link.first;
  state.counters["link_cpu_s"] = link.second;
  state.counters["setup_ms"] = setup.first;
  state.counters["setup_cpu_s"] = setup.second;
  state.counters["map_ms"] = map.first;
  state.counters["map_cpu_s"] = map.second;
  state.counters["optimal"] = r.optimal ? 1 : 0;
  state.counters["within_limit"] = map.first <= 1100 * limit + 50 ? 1 : 0;
  state.counters["peak_rss_mb"] = bench::peak_rss_bytes() / 1e6;
  if (r.has_solution()) state.SetLabel(std::string(to_string(r.status)));
}

void register_setup_benches() {
  std::string sizes = "256,512";
  if (const char* e = std::getenv("DEVPLACE_BENCH_SETUP_SIZES"); e && *e) sizes = e;
  std::stringstream in(sizes);
  for (std::string size; std::getline(in, size, ',');) {
    const std::size_t D = std::stoul(size);
    for (const std::string family : {"torus", "uniform_dist"}) {
      const std::string base = "setup/" + family + "@" + size + "/S8R" + std::to_string(D / 8) + "/";
      benchmark::RegisterBenchmark((base + "p2p").c_str(), BM_setup<p2p_cost>, family, D, p2p_cost{})
          ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark((base + "allreduce").c_str(), BM_setup<allreduce_cost>, family, D, allreduce_cost{})
          ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_setup_benches();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
