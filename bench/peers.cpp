// The peers' own models on every shipped input (../shared/data/peers): wall time per run and the
// state counts. Peak memory per input is best measured one process per input:
//   /usr/bin/time -f "%e s %M KB" build/devplace peer tarnawski --graph F
// (docs/peers/README.md has the table). Inputs missing -> no benchmark registered.
//   bench_peers --benchmark_filter=tarnawski/LayerGraphs/gnmt
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common.hpp"
#include "devplace/io/pipedream.hpp"
#include "devplace/io/piper.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#include "devplace/peers/pipedream.hpp"
#include "devplace/peers/piper.hpp"
#include "devplace/peers/tarnawski.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/piper.ipp"  // the Piper reader's definitions (compiled mode: devplace::core)
#include "devplace/io/tarnawski_instance.ipp"  // the Tarnawski instance reader's definitions (compiled mode: devplace::core)
#endif

namespace fs = std::filesystem;
using namespace devplace;

namespace {

const fs::path peers_dir = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers";

void register_tarnawski() {
  const fs::path base = peers_dir / "dnn-partitioning" / "throughput-inputs";
  if (!fs::exists(base)) return;
  std::vector<fs::path> files;
  for (const auto& kind : {"LayerGraphs", "OperatorGraphs"})
    for (const auto& f : fs::directory_iterator(base / kind)) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string name = "tarnawski/" + f.parent_path().filename().string() + "/" + f.stem().string();
    benchmark::RegisterBenchmark(name.c_str(), [f](benchmark::State& st) {
      const auto in = io::read_tarnawski_instance(f);
      peers::tarnawski_result r;
      for (auto _ : st) r = peers::tarnawski_max_load(in);
      st.counters["ideals"] = static_cast<double>(r.ideals);
      st.counters["pairs"] = static_cast<double>(r.ideal_pairs);
      st.counters["peak_rss_MB"] = bench::peak_rss_bytes() / 1e6;
    })->Unit(benchmark::kMillisecond)->Iterations(1);
  }
}

void register_pipedream() {
  const fs::path base = peers_dir / "pipedream" / "profiler";
  if (!fs::exists(base)) return;
  struct run { const char* model; const char* flags; std::vector<peers::pipedream_level> levels; bool straight; };
  const std::vector<run> runs = {
      {"vgg16", "-n 16", {{16, 1e9}}, false},
      {"resnet50", "-n 16", {{16, 1e9}}, false},
      {"resnet50", "-n 8 --straight", {{8, 1e9}}, true},
      {"resnet50", "-n 8 4", {{8, 10.1e9}, {4, 1.4e9}}, false},
      {"gnmt", "-n 8 4", {{8, 10.1e9}, {4, 1.4e9}}, false},
      {"alexnet", "-n 4 4", {{4, 11e9}, {4, 1.1e9}}, false},
  };
  for (const auto& r : runs) {
    const std::string m = r.model;
    const fs::path f = base / (m == "gnmt" ? "translation" : "image_classification") / "profiles" / m / "graph.txt";
    const std::string name = "pipedream/" + m + "/" + r.flags;
    const auto levels = r.levels;
    const bool straight = r.straight;
    benchmark::RegisterBenchmark(name.c_str(), [f, levels, straight](benchmark::State& st) {
      const op_graph g = io::read_pipedream(f);
      peers::pipedream_result res;
      for (auto _ : st) res = peers::pipedream_optimize(g, {.levels = levels, .straight = straight});
      st.counters["states"] = static_cast<double>(res.states);
    })->Unit(benchmark::kMillisecond);
  }
}

// Piper at (k, M GiB) pairs of the drivers (BW = 25·2³⁰ B/s): ResNet and BERT rows of the
// spec's wall-time list, GNMT at the 13 pairs of upstream's runGNMT() (200–480 s per pair there)
// and at (8, 4), (16, 8).
void register_piper() {
  const fs::path base = peers_dir / "piper" / "inputs";
  if (!fs::exists(base)) return;
  struct run { const char* model; std::size_t k; double gib; };
  std::vector<run> runs = {{"resnet", 8, 4}, {"resnet", 16, 2}, {"resnet", 128, 2}, {"resnet", 128, 16},
                           {"bert32a100", 8, 8}, {"bert32a100", 128, 1}};
  for (const auto& [k, gib] : std::vector<std::pair<std::size_t, double>>{
           {2, 2.5}, {2, 3.5}, {4, 1.2}, {4, 2.5}, {8, 0.6}, {8, 1.2}, {8, 2.4}, {16, 0.3}, {16, 0.6}, {16, 1.2},
           {32, 0.3}, {32, 0.8}, {64, 0.3}, {8, 4}, {16, 8}})
    runs.push_back({"gnmt", k, gib});
  for (const auto& r : runs) {
    const fs::path f = base / (std::string(r.model) + ".json");
    const std::string name = "piper/" + std::string(r.model) + "/k" + std::to_string(r.k) + "/M" + std::to_string(r.gib).substr(0, std::to_string(r.gib).find('.') + 2);
    benchmark::RegisterBenchmark(name.c_str(), [f, r](benchmark::State& st) {
      const auto in = io::read_piper(f);
      peers::piper_options o;
      o.devices = r.k;
      o.memory_bytes = r.gib * (1 << 30);
      o.bandwidth = 25.0 * (1 << 30);
      peers::piper_result res;
      for (auto _ : st) res = peers::piper_plan(in, o);
      st.counters["sets"] = static_cast<double>(res.sets);
      st.counters["pairs"] = static_cast<double>(res.set_pairs);
      if (std::string(r.model) != "gnmt") st.counters["tps"] = res.tps;  // GNMT reference values are held out
      st.counters["peak_rss_MB"] = bench::peak_rss_bytes() / 1e6;
    })->Unit(benchmark::kMillisecond)->Iterations(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_tarnawski();
  register_pipedream();
  register_piper();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
