// Time to a proved optimum of the device mapping (Parmesan phase 2): the backtracking mapper
// (`map_devices`, map/mapper.hpp) against the mapping MILP (`ilp::build_mapping_ilp`,
// ilp/builders/mapping.hpp) solved by CBC and by GLPK (ilp/backends/), on growing instances.
//
// Instances: BERT-Large (examples/data) cut into S stages by the fixed-order DP (topo_dp), R
// replicas, for (S, R) = (2,2), (3,2), (4,2), (4,3), (4,4), (6,4), (8,4), i.e. 4..32 stage
// replicas, on three families: DGX-1 (the smallest dgx1_cluster with >= S·R devices), a 2-d torus
// with exactly S·R devices, and uniform_dist(S·R, seed 1); both cost models (p2p, allreduce).
// Every method gets the same per-solve time limit; the mapper and CBC run with `threads` threads,
// GLPK is single-threaded. Within one (topology, cost) series a method that hit the time limit is
// not run on the larger instances (reported as skipped) unless --skip_after_timeout=0.
//
// Counters per benchmark: objective_ms, lower_bound_ms (proved), optimal (1 = proved), time_s
// (wall clock, model building included for the MILPs), devices, and for the MILPs the model size.
// A markdown table is printed at the end (docs/ilp-results.md).
//
// Correctness cross-check: when two methods both prove optimality on an instance, their
// objectives must agree within 1e-6 relative, or the program aborts. A proved lower bound above
// another method's feasible objective is reported as a warning.
//
// Knobs (command line, else environment, else default):
//   --time_limit=S          DEVPLACE_BENCH_ILP_TIMEOUT     per-solve limit in seconds (30)
//   --threads=N             DEVPLACE_BENCH_ILP_THREADS     mapper and CBC threads (2)
//   --max_devices=N         DEVPLACE_BENCH_ILP_MAX_DEVICES largest S·R (32)
//   --skip_after_timeout=0|1 DEVPLACE_BENCH_ILP_SKIP       skip larger sizes after a timeout (1)
// plus the usual --benchmark_* flags (e.g. --benchmark_filter=torus2d).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common.hpp"
#include "devplace/ilp/builders/mapping.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "devplace/topology/generators.hpp"
#ifdef DEVPLACE_HAS_CBC
#include "devplace/ilp/backends/cbc.hpp"
#endif
#ifdef DEVPLACE_HAS_GLPK
#include "devplace/ilp/backends/glpk.hpp"
#endif

using namespace devplace;

namespace {

struct settings {
  double time_limit_s = 30;
  unsigned threads = 2;
  std::size_t max_devices = 32;
  bool skip_after_timeout = true;
};
settings cfg;

/// Reads the knobs from the environment, then takes (and removes) ours from argv.
void parse_settings(int& argc, char** argv) {
  cfg.time_limit_s = bench::env_or("DEVPLACE_BENCH_ILP_TIMEOUT", cfg.time_limit_s);
  cfg.threads = static_cast<unsigned>(bench::env_or("DEVPLACE_BENCH_ILP_THREADS", cfg.threads));
  cfg.max_devices = static_cast<std::size_t>(bench::env_or("DEVPLACE_BENCH_ILP_MAX_DEVICES", static_cast<double>(cfg.max_devices)));
  cfg.skip_after_timeout = bench::env_or("DEVPLACE_BENCH_ILP_SKIP", 1) != 0;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> const char* {
      return a.substr(0, flag.size()) == flag ? argv[i] + flag.size() : nullptr;
    };
    if (const char* v = value("--time_limit=")) cfg.time_limit_s = std::atof(v);
    else if (const char* v2 = value("--threads=")) cfg.threads = static_cast<unsigned>(std::atoi(v2));
    else if (const char* v3 = value("--max_devices=")) cfg.max_devices = static_cast<std::size_t>(std::atoi(v3));
    else if (const char* v4 = value("--skip_after_timeout=")) cfg.skip_after_timeout = std::atoi(v4) != 0;
    else argv[out++] = argv[i];
  }
  argc = out;
  if (!(cfg.time_limit_s > 0)) cfg.time_limit_s = 30;
  if (cfg.threads == 0) cfg.threads = 1;
}

/// The topology of family `name` for V stage replicas.
matrix_topology make_topology(const std::string& name, std::size_t V) {
  if (name == "dgx1") return dgx1_cluster((V + 7) / 8);
  if (name == "torus2d") {
    std::size_t x = 1;
    for (std::size_t k = 1; k * k <= V; ++k)
      if (V % k == 0) x = k;
    return torus2d(x, V / x);
  }
  return uniform_dist(V, 1);
}

enum class method { mapper, cbc, glpk };
const char* method_name(method m) { return m == method::mapper ? "mapper" : m == method::cbc ? "cbc" : "glpk"; }

struct outcome {
  bool ran = false, optimal = false, has_objective = false;
  std::string status;
  double time_s = 0, objective_ms = 0, lower_bound_ms = 0;
};

struct instance_key {
  std::string topology, cost;
  std::size_t S, R;
  auto operator<=>(const instance_key&) const = default;
};

struct instance_row {
  std::size_t devices = 0;
  std::map<method, outcome> results;
};
std::map<instance_key, instance_row> table;
std::vector<instance_key> order;             // first-run order, for the table
std::set<std::tuple<std::string, std::string, method>> timed_out_series;  // (topology, cost, method)

[[noreturn]] void disagreement(const instance_key& k, method a, const outcome& ra, method b, const outcome& rb) {
  std::fflush(stdout);
  std::fprintf(stderr,
               "\nFATAL: %s and %s both proved optimality on %s/%s S=%zu R=%zu but disagree: %.12g ms vs %.12g ms\n",
               method_name(a), method_name(b), k.topology.c_str(), k.cost.c_str(), k.S, k.R, ra.objective_ms,
               rb.objective_ms);
  std::abort();
}

/// Cross-checks `r` against the methods already run on the same instance.
void cross_check(const instance_key& k, method m, const outcome& r) {
  for (const auto& [m2, r2] : table[k].results) {
    if (m2 == m || !r2.ran) continue;
    const auto close = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::max({1.0, std::abs(a), std::abs(b)}); };
    if (r.optimal && r2.optimal && !close(r.objective_ms, r2.objective_ms)) disagreement(k, m, r, m2, r2);
    // A proved bound must not exceed anybody's feasible objective.
    auto bound_above = [&](const outcome& lo, const outcome& hi) {
      return hi.has_objective && lo.lower_bound_ms > hi.objective_ms && !close(lo.lower_bound_ms, hi.objective_ms);
    };
    if (bound_above(r, r2) || bound_above(r2, r))
      std::fprintf(stderr, "WARNING: %s/%s S=%zu R=%zu: bounds and objectives of %s and %s are inconsistent\n",
                   k.topology.c_str(), k.cost.c_str(), k.S, k.R, method_name(m), method_name(m2));
  }
}

outcome from_result(const mapping_result& r, double wall_s) {
  outcome o;
  o.ran = true;
  o.optimal = r.optimal;
  o.has_objective = !r.device_of.empty();
  o.status = std::string(to_string(r.status));
  o.time_s = wall_s;
  o.objective_ms = r.objective_ms;
  o.lower_bound_ms = r.lower_bound_ms;
  return o;
}

void BM_case(benchmark::State& state, std::string topo_name, std::size_t S, std::size_t R, cost_choice cost, method m) {
  const instance_key key{topo_name, std::string(to_string(cost)), S, R};
  if (table.find(key) == table.end()) order.push_back(key);
  auto& row = table[key];
  const auto topo = make_topology(topo_name, S * R);
  const link_costs L(topo);
  const auto& g = bench::bert_large_stages(S, R);
  row.devices = L.devices();
  state.counters["devices"] = static_cast<double>(L.devices());

  const auto series = std::tuple{topo_name, key.cost, m};
  if (cfg.skip_after_timeout && timed_out_series.count(series)) {
    for (auto _ : state) state.SetIterationTime(0);
    state.counters["skipped"] = 1;
    state.SetLabel("skipped: timed out on a smaller instance");
    return;
  }

  outcome out;
  double vars = 0, rows = 0, solve_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    mapping_result r;
    if (m == method::mapper) {
      r = map_devices(g, L, {.cost = cost, .threads = cfg.threads, .timeout_s = cfg.time_limit_s});
    } else {
      const auto p = ilp::build_mapping_ilp(g, L, {.cost = cost});
      vars = static_cast<double>(p.model().num_vars());
      rows = static_cast<double>(p.model().num_rows());
      const ilp::solve_options so{.time_limit_s = cfg.time_limit_s, .threads = cfg.threads};
      ilp::solution sol;
#ifdef DEVPLACE_HAS_CBC
      if (m == method::cbc) sol = ilp::cbc_solver{}.solve(p.model(), so);
#endif
#ifdef DEVPLACE_HAS_GLPK
      if (m == method::glpk) sol = ilp::glpk_solver{}.solve(p.model(), so);
#endif
      solve_s = sol.time_s;
      r = p.decode(sol);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(wall);
    out = from_result(r, wall);
  }
  state.counters["objective_ms"] = out.objective_ms;
  state.counters["lower_bound_ms"] = out.lower_bound_ms;
  state.counters["optimal"] = out.optimal ? 1 : 0;
  state.counters["time_s"] = out.time_s;
  if (m != method::mapper) {
    state.counters["vars"] = vars;
    state.counters["rows"] = rows;
    state.counters["solve_s"] = solve_s;
  }
  state.SetLabel(out.status);
  cross_check(key, m, out);
  row.results[m] = out;
  if (!out.optimal) timed_out_series.insert(series);
}

void register_all() {
  const std::pair<std::size_t, std::size_t> sizes[] = {{2, 2}, {3, 2}, {4, 2}, {4, 3}, {4, 4}, {6, 4}, {8, 4}};
  std::vector<method> methods{method::mapper};
#ifdef DEVPLACE_HAS_CBC
  methods.push_back(method::cbc);
#endif
#ifdef DEVPLACE_HAS_GLPK
  methods.push_back(method::glpk);
#endif
  for (const char* t : {"dgx1", "torus2d", "uniform_dist"})
    for (auto c : {cost_choice::p2p, cost_choice::allreduce})
      for (auto [S, R] : sizes) {
        if (S * R > cfg.max_devices) continue;
        for (auto m : methods) {
          const std::string name = std::string("ilp_mapping/") + t + "/" + std::string(to_string(c)) + "/S" +
                                   std::to_string(S) + "R" + std::to_string(R) + "/" + method_name(m);
          benchmark::RegisterBenchmark(name.c_str(), BM_case, std::string(t), S, R, c, m)
              ->Iterations(1)
              ->Unit(benchmark::kMillisecond)
              ->UseManualTime();
        }
      }
}

std::string cell(const instance_row& row, method m) {
  const auto it = row.results.find(m);
  if (it == row.results.end()) return "skipped";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f / %s", it->second.time_s, it->second.optimal ? "yes" : "no");
  return buf;
}

void print_table() {
  std::printf("\nper-solve time limit %.0f s, %u threads (mapper, CBC; GLPK 1)\n", cfg.time_limit_s, cfg.threads);
  std::printf("\n| topology | cost | S | R | devices | mapper s / proved | CBC s / proved | GLPK s / proved | objective ms | lower bound ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& k : order) {
    const auto& row = table[k];
    double best = std::numeric_limits<double>::infinity(), bound = 0;
    bool proved = false;
    for (const auto& [m, r] : row.results) {
      if (r.has_objective) best = std::min(best, r.objective_ms);
      bound = std::max(bound, r.lower_bound_ms);
      proved = proved || r.optimal;
    }
    char obj[64];
    if (std::isfinite(best)) std::snprintf(obj, sizeof obj, proved ? "%.4f" : "%.4f (not proved)", best);
    else std::snprintf(obj, sizeof obj, "-");
    char lb[32] = "-";
    if (!row.results.empty()) std::snprintf(lb, sizeof lb, "%.4f", bound);
    std::printf("| %s | %s | %zu | %zu | %zu | %s | %s | %s | %s | %s |\n", k.topology.c_str(), k.cost.c_str(), k.S,
                k.R, row.devices, cell(row, method::mapper).c_str(), cell(row, method::cbc).c_str(),
                cell(row, method::glpk).c_str(), obj, lb);
  }
}

}  // namespace

int main(int argc, char** argv) {
  parse_settings(argc, argv);
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_table();
  return 0;
}
