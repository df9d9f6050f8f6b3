// B4 of seed-mcm §4.5: one repair (SAMPLE with uniform P, FIX with a uniform random y) of an
// operator graph with about 2k operators onto C = 36 chips; target <= 1 s per repair and >= 99 %
// of repairs without the fallback. Counters: fallback share, restarts and backtracks per repair.
//
//   bench_mcm_repair [--benchmark_min_time=...]
// Graphs: bert_L-12_training (2012 operators, ../shared/data/peers/dnn-partitioning; skipped when
// absent), the bundled bert_large_mbs4 (591), and the same with its attention-mask cone replicated
// (752; mcm/broadcast.hpp).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common.hpp"
#include "devplace/io/tarnawski.hpp"
#include "devplace/mcm/broadcast.hpp"
#include "devplace/mcm/repair.hpp"

namespace {

devplace::op_graph load(int which) {
  if (which == 0)
    return devplace::io::read_tarnawski(std::string(DEVPLACE_SHARED_DIR) +
                                        "/data/peers/dnn-partitioning/throughput-inputs/OperatorGraphs/bert_L-12_training.json");
  const auto g = devplace::bench::bundled("bert_large_mbs4");
  if (which == 1) return g;
  return devplace::mcm::replicate_cones(g, {.min_fanout = 8}).graph;  // the attention-mask cone replicated
}

void repair(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  const bool fix = state.range(1) != 0;
  const std::size_t C = static_cast<std::size_t>(state.range(2));
  if (which == 0 && !std::filesystem::exists(std::string(DEVPLACE_SHARED_DIR) + "/data/peers/dnn-partitioning")) {
    state.SkipWithError("../shared/data/peers/dnn-partitioning is not there");
    return;
  }
  const auto g = load(which);
  devplace::mcm::constraint_engine e(g, C);
  devplace::mcm::random_engine rng(7);
  std::size_t n = 0, fallbacks = 0, restarts = 0, backtracks = 0;
  std::vector<int> y(g.num_vertices());
  for (auto _ : state) {
    devplace::mcm::repair_result r;
    if (fix) {
      for (auto& x : y) x = static_cast<int>(devplace::mcm::uniform_below(rng, C));
      r = devplace::mcm::repair_fix(e, y, rng);
    } else {
      r = devplace::mcm::repair_sample(e, Eigen::MatrixXd(), rng);
    }
    ++n, fallbacks += r.fallback, restarts += r.restarts, backtracks += r.backtracks;
    benchmark::DoNotOptimize(r.chip_of.data());
  }
  state.counters["N"] = static_cast<double>(g.num_vertices());
  state.counters["fallback_share"] = double(fallbacks) / double(n);
  state.counters["restarts"] = double(restarts) / double(n);
  state.counters["backtracks"] = double(backtracks) / double(n);
  const char* name[] = {"bert_L-12_training", "bert_large_mbs4", "bert_large_mbs4+replicated mask"};
  state.SetLabel(std::string(name[which]) + (fix ? " FIX" : " SAMPLE"));
}

}  // namespace

BENCHMARK(repair)->ArgsProduct({{0, 1, 2}, {0, 1}, {36}})->Unit(benchmark::kMillisecond)->Iterations(100);
BENCHMARK_MAIN();
