// The device mapper on the topologies of the Parmesan experiments (Tables III/VI): 2d/3d mesh and
// torus, random_blk_1/2 and uniform_dist with 64 devices for (S, R) in {(4,16), (8,8), (16,4)}, and
// 4x DGX-1 (32 devices) for (8,4), (16,2); both cost models. The stage graphs come from the real
// BERT-Large graph (examples/data), cut into S stages by the fixed-order DP (partition/topo_dp.hpp).
//
// Per case: time to a proved optimum (or the timeout), nodes explored, objective, proved lower bound,
// and the speedup of the objective over CS map and over the better of CS / p2p map. A markdown table
// is printed at the end (docs/mapping.md). Environment: DEVPLACE_BENCH_MAP_TIMEOUT (seconds per
// case, default 10), DEVPLACE_BENCH_MAP_THREADS (default 2).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "devplace/topology/generators.hpp"

using namespace devplace;

namespace {

matrix_topology make_topology(const std::string& name) {
  if (name == "mesh2d") return mesh2d(8, 8);
  if (name == "torus2d") return torus2d(8, 8);
  if (name == "mesh3d") return mesh3d(4, 4, 4);
  if (name == "torus3d") return torus3d(4, 4, 4);
  if (name == "random_blk_1") return random_blk_1(64, 1);
  if (name == "random_blk_2") return random_blk_2(64, 1);
  if (name == "uniform_dist") return uniform_dist(64, 1);
  return dgx1_cluster(4);
}

struct row {
  std::string topology;
  std::size_t S, R;
  std::string cost, status;
  double time_s, objective, lower_bound, speedup_cs, speedup_best;
  std::uint64_t nodes;
};
std::vector<row> rows;

void BM_map(benchmark::State& state, std::string topo_name, std::size_t S, std::size_t R, cost_choice cost) {
  const auto topo = make_topology(topo_name);
  const link_costs L(topo);
  const auto& g = bench::bert_large_stages(S, R);
  const mapper_options o{.cost = cost,
                         .threads = static_cast<unsigned>(bench::env_or("DEVPLACE_BENCH_MAP_THREADS", 2)),
                         .timeout_s = bench::env_or("DEVPLACE_BENCH_MAP_TIMEOUT", 10)};
  mapping_result r;
  for (auto _ : state) {
    r = map_devices(g, L, o);
    benchmark::DoNotOptimize(r.nodes_explored);
  }
  const double cs = evaluate(g, L, cs_map(g), cost).objective_ms;
  const double p2p = evaluate(g, L, p2p_map(g), cost).objective_ms;
  state.counters["optimal"] = r.optimal ? 1 : 0;
  state.counters["nodes"] = static_cast<double>(r.nodes_explored);
  state.counters["objective_ms"] = r.objective_ms;
  state.counters["lower_bound_ms"] = r.lower_bound_ms;
  state.counters["speedup_cs"] = cs / r.objective_ms;
  state.counters["speedup_best"] = std::min(cs, p2p) / r.objective_ms;
  rows.push_back({topo_name, S, R, r.cost, std::string(to_string(r.status)), r.time_s, r.objective_ms,
                  r.lower_bound_ms, cs / r.objective_ms, std::min(cs, p2p) / r.objective_ms, r.nodes_explored});
}

void register_all() {
  const char* sixty_four[] = {"mesh2d", "torus2d", "mesh3d", "torus3d", "random_blk_1", "random_blk_2", "uniform_dist"};
  const std::pair<std::size_t, std::size_t> sr64[] = {{4, 16}, {8, 8}, {16, 4}}, sr32[] = {{8, 4}, {16, 2}};
  auto add = [](const std::string& t, std::size_t S, std::size_t R) {
    for (auto c : {cost_choice::p2p, cost_choice::allreduce}) {
      const std::string name = "map/" + t + "/S" + std::to_string(S) + "R" + std::to_string(R) + "/" +
                               std::string(to_string(c));
      benchmark::RegisterBenchmark(name.c_str(), BM_map, t, S, R, c)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  };
  for (auto t : sixty_four)
    for (auto [S, R] : sr64) add(t, S, R);
  for (auto [S, R] : sr32) add("dgx1x4", S, R);
}

void print_table() {
  std::printf("\n| topology | (S, R) | cost | status | time s | nodes | objective ms | lower bound ms | vs CS | vs best of CS/p2p |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | (%zu, %zu) | %s | %s | %.3f | %llu | %.3f | %.3f | %.2fx | %.2fx |\n", r.topology.c_str(), r.S,
                r.R, r.cost.c_str(), r.status.c_str(), r.time_s, static_cast<unsigned long long>(r.nodes), r.objective,
                r.lower_bound, r.speedup_cs, r.speedup_best);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_table();
  return 0;
}
