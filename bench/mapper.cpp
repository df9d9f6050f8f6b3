// The device mapper on the topologies of the Parmesan experiments (Tables III/VI): 2d/3d mesh and
// torus, random_blk_1/2 and uniform_dist with 64 devices for (S, R) in {(4,16), (8,8), (16,4)}, and
// 4x DGX-1 (32 devices) for (8,4), (16,2); both cost models. The stage graphs come from the real
// BERT-Large graph (examples/data), cut into S stages by the fixed-order DP (partition/topo_dp.hpp).
//
// Per case: time to a proved optimum (or the timeout), nodes explored, objective, proved lower bound,
// and the speedup of the objective over CS map and over the better of CS / p2p map. A markdown table
// is printed at the end (docs/mapping.md). Environment: DEVPLACE_BENCH_MAP_TIMEOUT (seconds per
// case, default 10), DEVPLACE_BENCH_MAP_THREADS (default 2).
//
// A second table compares, per case, the simulated samples/s (GPipe, MB 4, micro-batch size 4,
// recomputation; sim/pipeline_simulator.hpp) and the combined objective of: the mapper under the
// combined model, Parmesan's ensemble (the p2p and allreduce optima, the better simulated kept),
// Scotch's static mapping (when CMake found Scotch: map/scotch.hpp), the CS map and the p2p map.
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
#include "devplace/sim/pipeline_simulator.hpp"
#if DEVPLACE_HAS_SCOTCH
#include <chrono>

#include "devplace/map/scotch.hpp"
#endif
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
  device_mapping device_of;
};
std::vector<row> rows;
constexpr std::size_t sim_micro_batches = 4;

void BM_map(benchmark::State& state, std::string topo_name, std::size_t S, std::size_t R, cost_choice cost) {
  const auto topo = make_topology(topo_name);
  const link_costs L(topo);
  const auto& g = bench::bert_large_stages(S, R);
  const mapper_options o{.cost = cost,
                         .threads = static_cast<unsigned>(bench::env_or("DEVPLACE_BENCH_MAP_THREADS", 2)),
                         .timeout_s = bench::env_or("DEVPLACE_BENCH_MAP_TIMEOUT", 10),
                         .micro_batches = sim_micro_batches};
  mapping_result r;
  for (auto _ : state) {
    r = map_devices(g, L, o);
    benchmark::DoNotOptimize(r.nodes_explored);
  }
  const double cs = evaluate(g, L, cs_map(g), cost, sim_micro_batches).objective_ms;
  const double p2p = evaluate(g, L, p2p_map(g), cost, sim_micro_batches).objective_ms;
  state.counters["optimal"] = r.optimal ? 1 : 0;
  state.counters["nodes"] = static_cast<double>(r.nodes_explored);
  state.counters["objective_ms"] = r.objective_ms;
  state.counters["lower_bound_ms"] = r.lower_bound_ms;
  state.counters["speedup_cs"] = cs / r.objective_ms;
  state.counters["speedup_best"] = std::min(cs, p2p) / r.objective_ms;
  rows.push_back({topo_name, S, R, r.cost, std::string(to_string(r.status)), r.time_s, r.objective_ms,
                  r.lower_bound_ms, cs / r.objective_ms, std::min(cs, p2p) / r.objective_ms, r.nodes_explored, r.device_of});
}

void register_all() {
  const char* sixty_four[] = {"mesh2d", "torus2d", "mesh3d", "torus3d", "random_blk_1", "random_blk_2", "uniform_dist"};
  const std::pair<std::size_t, std::size_t> sr64[] = {{4, 16}, {8, 8}, {16, 4}}, sr32[] = {{8, 4}, {16, 2}};
  auto add = [](const std::string& t, std::size_t S, std::size_t R) {
    for (auto c : {cost_choice::p2p, cost_choice::allreduce, cost_choice::combined}) {
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

/// Simulated samples/s of BERT-Large cut into S stages (the fixed-order DP) on `m`.
double simulated_samples_per_s(const matrix_topology& topo, std::size_t S, std::size_t R, const device_mapping& m) {
  const auto p = topo_dp(bench::bert_large(), {.stages = S, .cost = {.replicas = R}});
  const auto model = make_pipeline_model(bench::bert_large(), p.stage_of, S, std::vector<std::vector<std::size_t>>(m.begin(), m.end()));
  return simulate(model, topo, {.micro_batches = sim_micro_batches, .micro_batch_size = 4, .recompute = true}).samples_per_s;
}

const row* find_row(const std::string& topo, std::size_t S, std::size_t R, const std::string& cost) {
  for (const auto& r : rows)
    if (r.topology == topo && r.S == S && r.R == R && r.cost == cost) return &r;
  return nullptr;
}

void print_quality_table() {
  std::printf("\n| topology | (S, R) | combined optimal | combined | ensemble | Scotch | Scotch ms | CS | p2p map | combined objective: mapper / ensemble / Scotch / CS |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    if (r.cost != "combined") continue;
    const auto* p2p = find_row(r.topology, r.S, r.R, "p2p");
    const auto* ar = find_row(r.topology, r.S, r.R, "allreduce");
    if (!p2p || !ar) continue;
    const auto topo = make_topology(r.topology);
    const link_costs L(topo);
    const auto& g = bench::bert_large_stages(r.S, r.R);
    auto sps = [&](const device_mapping& m) { return simulated_samples_per_s(topo, r.S, r.R, m); };
    auto obj = [&](const device_mapping& m) { return evaluate(g, L, m, combined_cost{.micro_batches = sim_micro_batches}).objective_ms; };
    const double s_p2p = sps(p2p->device_of), s_ar = sps(ar->device_of);
    const device_mapping& ens = s_p2p >= s_ar ? p2p->device_of : ar->device_of;
    double scotch = 0, scotch_obj = 0, scotch_ms = 0;
#if DEVPLACE_HAS_SCOTCH
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const auto sm = scotch_map(g, L, sim_micro_batches);
      scotch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      scotch = sps(sm);
      scotch_obj = obj(sm);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s (%zu, %zu): %s\n", r.topology.c_str(), r.S, r.R, e.what());
    }
#endif
    std::printf("| %s | (%zu, %zu) | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f / %.3f / %.3f / %.3f |\n", r.topology.c_str(), r.S,
                r.R, r.status.c_str(), sps(r.device_of), std::max(s_p2p, s_ar), scotch, scotch_ms, sps(cs_map(g)),
                sps(p2p_map(g)), r.objective, obj(ens), scotch_obj, obj(cs_map(g)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_table();
  print_quality_table();
  return 0;
}
