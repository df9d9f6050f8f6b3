// The device mapper on the topologies of the Parmesan experiments (Tables III/VI): 2d/3d mesh and
// torus, random_blk_1/2 and uniform_dist with 64 devices for (S, R) in {(4,16), (8,8), (16,4)}, and
// 4x DGX-1 (32 devices) for (8,4), (16,2); both cost models. The stage graphs come from the real
// BERT-Large graph (examples/data), cut into S stages by the fixed-order DP (partition/topo_dp.hpp).
//
// Per case: time to a proved optimum (or the timeout), nodes explored, objective, proved lower bound,
// and the speedup of the objective over CS map and over the better of CS / p2p map. A markdown table
// is printed at the end (docs/mapping-results.md). Environment: DEVPLACE_BENCH_MAP_TIMEOUT (seconds per
// case, default 10), DEVPLACE_BENCH_MAP_THREADS (default 2).
//
// DEVPLACE_BENCH_MAP_SIZES (default "64") picks the device counts: 64 as above; 256 adds the
// 2d mesh/torus 16x16 and the three random families at 256 devices for (4,64), (8,32), (16,16);
// 512 the 3d mesh/torus 8x8x8 and the random families at 512 for (4,128), (8,64), (16,32)
// (Parmesan's Tables III/VI and thesis Tables 5.8/5.9 sizes), e.g. "256,512". Every row reports
// wall and CPU time (getrusage of the process: all mapper threads), and a summary line per size
// gives the share proved optimal and the largest certified gap, and one per target oracle the rows
// it answered in and its answers. DEVPLACE_BENCH_MAP_ORACLES (default "default") sets the
// portfolio (`parse_oracles`: a named portfolio or built-in oracle names, e.g.
// "group_cover,quotient_copy"), to measure what each oracle adds.
//
// A second table compares, per case, the simulated samples/s (GPipe, MB 4, micro-batch size 4,
// recomputation; sim/pipeline_simulator.hpp) and the combined objective of: the mapper under the
// combined model, Parmesan's ensemble (the p2p and allreduce optima, the better simulated kept),
// Scotch's static mapping (when CMake found Scotch: map/scotch.hpp), the CS map and the p2p map.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "devplace/sim/iteration_mapping.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#if DEVPLACE_HAS_SCOTCH
#include <chrono>

#include "devplace/map/scotch.hpp"
#endif
#include "devplace/topology/generators.hpp"

using namespace devplace;

namespace {

/// `name` is a generator, with "@256" / "@512" for the larger sizes (64 devices otherwise).
matrix_topology make_topology(const std::string& name) {
  const auto at = name.find('@');
  const std::string base = name.substr(0, at);
  const std::size_t D = at == std::string::npos ? 64 : std::stoul(name.substr(at + 1));
  if (base == "mesh2d") return D == 256 ? mesh2d(16, 16) : mesh2d(8, 8);
  if (base == "torus2d") return D == 256 ? torus2d(16, 16) : torus2d(8, 8);
  if (base == "mesh3d") return D == 512 ? mesh3d(8, 8, 8) : mesh3d(4, 4, 4);
  if (base == "torus3d") return D == 512 ? torus3d(8, 8, 8) : torus3d(4, 4, 4);
  if (base == "random_blk_1") return random_blk_1(D, 1);
  if (base == "random_blk_2") return random_blk_2(D, 1);
  if (base == "uniform_dist") return uniform_dist(D, 1);
  return dgx1_cluster(4);
}

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct row {
  std::string topology;
  std::size_t S, R;
  std::string cost, status;
  double time_s, cpu_s, objective, lower_bound, speedup_cs, speedup_best;
  std::uint64_t nodes;
  device_mapping device_of;
  std::vector<oracle_stats> oracles;
};
std::vector<row> rows;
constexpr std::size_t sim_micro_batches = 4;

void BM_map(benchmark::State& state, std::string topo_name, std::size_t S, std::size_t R, cost_choice cost) {
  const auto topo = make_topology(topo_name);
  const link_costs L(topo);
  const auto& g = bench::bert_large_stages(S, R);
  mapper_options o{.cost = cost,
                   .threads = static_cast<unsigned>(bench::env_or("DEVPLACE_BENCH_MAP_THREADS", 2)),
                   .timeout_s = bench::env_or("DEVPLACE_BENCH_MAP_TIMEOUT", 10),
                   .micro_batches = sim_micro_batches};
  if (const char* e = std::getenv("DEVPLACE_BENCH_MAP_ORACLES"); e && *e) o.oracles = parse_oracles(e);
  mapping_result r;
  double cpu = 0;
  for (auto _ : state) {
    const double c0 = process_cpu_s();
    r = map_devices(g, L, o);
    cpu = process_cpu_s() - c0;
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
  state.counters["cpu_s"] = cpu;
  rows.push_back({topo_name, S, R, r.cost, std::string(to_string(r.status)), r.time_s, cpu, r.objective_ms,
                  r.lower_bound_ms, cs / r.objective_ms, std::min(cs, p2p) / r.objective_ms, r.nodes_explored, r.device_of,
                  r.oracles});
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
  std::string sizes = "64";
  if (const char* e = std::getenv("DEVPLACE_BENCH_MAP_SIZES"); e && *e) sizes = e;
  std::stringstream in(sizes);
  for (std::string size; std::getline(in, size, ',');) {
    if (size == "64") {
      for (auto t : sixty_four)
        for (auto [S, R] : sr64) add(t, S, R);
      for (auto [S, R] : sr32) add("dgx1x4", S, R);
    } else if (size == "256" || size == "512") {
      const bool big = size == "512";
      const char* grids[] = {big ? "mesh3d" : "mesh2d", big ? "torus3d" : "torus2d", "random_blk_1", "random_blk_2",
                             "uniform_dist"};
      const std::pair<std::size_t, std::size_t> sr256[] = {{4, 64}, {8, 32}, {16, 16}}, sr512[] = {{4, 128}, {8, 64}, {16, 32}};
      for (auto t : grids)
        for (auto [S, R] : big ? sr512 : sr256) add(std::string(t) + "@" + size, S, R);
    }
  }
}

void print_table() {
  std::printf("\n| topology | (S, R) | cost | status | time s | CPU s | nodes | objective ms | lower bound ms | gap | vs CS | vs best of CS/p2p |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> proved;  // devices -> (proved, cases)
  std::map<std::size_t, std::size_t> within;                          // devices -> cases with gap <= 0.1 %
  std::map<std::size_t, double> worst;                                // devices -> largest gap
  for (const auto& r : rows) {
    const double gap = r.objective > 0 ? (r.objective - r.lower_bound) / r.objective : 0.0;
    std::printf("| %s | (%zu, %zu) | %s | %s | %.3f | %.3f | %llu | %.3f | %.3f | %.2f %% | %.2fx | %.2fx |\n",
                r.topology.c_str(), r.S, r.R, r.cost.c_str(), r.status.c_str(), r.time_s, r.cpu_s,
                static_cast<unsigned long long>(r.nodes), r.objective, r.lower_bound, 100 * gap, r.speedup_cs,
                r.speedup_best);
    const std::size_t D = r.topology == "dgx1x4" ? 64 : make_topology(r.topology).num_devices();
    auto& [p, n] = proved[D];
    ++n;
    if (r.status == "optimal") ++p;
    if (r.status == "optimal" || gap <= 1e-3) ++within[D];
    worst[D] = std::max(worst[D], gap);
  }
  for (const auto& [D, pn] : proved)
    std::printf("\n%zu-device table (dgx1x4 counted here): %zu of %zu proved optimal, %zu of %zu within 0.1 %%, largest gap %.2f %%\n",
                D, pn.first, pn.second, within[D], pn.second, 100 * worst[D]);
  // per oracle: the rows it answered a target in, its answers over all rows
  std::vector<std::pair<std::string, std::size_t>> in_rows;
  std::vector<oracle_stats> all;
  for (const auto& r : rows) {
    add_oracle_stats(all, r.oracles);
    for (const auto& x : r.oracles) {
      auto it = std::find_if(in_rows.begin(), in_rows.end(), [&](const auto& p) { return p.first == x.name; });
      if (it == in_rows.end()) it = in_rows.insert(in_rows.end(), {x.name, 0});
      it->second += x.answered() > 0;
    }
  }
  for (std::size_t i = 0; i < all.size(); ++i)
    std::printf("oracle %s: answered in %zu of %zu rows; asked %zu, found %zu, refuted %zu, unknown %zu\n", all[i].name.c_str(),
                in_rows[i].second, rows.size(), all[i].asked, all[i].found, all[i].refuted, all[i].unknown);
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
  std::printf("\n| topology | (S, R) | combined optimal | combined | iteration | ensemble | Scotch | Scotch ms | CS | p2p map | combined objective: mapper / ensemble / Scotch / CS |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
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
    // map_for_iteration (sim/iteration_mapping.hpp): the combined mapper, then local search on the
    // closed-form GPipe iteration, within the same time limit as the other rows.
    const auto part = topo_dp(bench::bert_large(), {.stages = r.S, .cost = {.replicas = r.R}});
    const auto it = map_for_iteration(g, L, stage_forward_ms(bench::bert_large(), part.stage_of, r.S),
                                      {.micro_batches = sim_micro_batches, .recompute = true},
                                      {.threads = static_cast<unsigned>(bench::env_or("DEVPLACE_BENCH_MAP_THREADS", 2)),
                                       .timeout_s = bench::env_or("DEVPLACE_BENCH_MAP_TIMEOUT", 10)});
    std::printf("| %s | (%zu, %zu) | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f / %.3f / %.3f / %.3f |\n", r.topology.c_str(), r.S,
                r.R, r.status.c_str(), sps(r.device_of), sps(it.device_of), std::max(s_p2p, s_ar), scotch, scotch_ms, sps(cs_map(g)),
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
