// The MCM search tables of docs/mcm.md (seed-mcm §4.5 B1, B2, B6): on every bundled graph, the
// best throughput found by Random (uniform + SAMPLE), SA (annealing + SAMPLE), RL-lite (tabular
// softmax + PPO, FIX) and the cross-entropy method at 100 / 500 / 2000 samples, as an improvement
// over the chain-DP baseline, with the geomean and the samples each needs to reach a geomean
// level; then the agreement of the compute-only and ring-link evaluators on random valid samples.
// Prints Markdown. Knobs: MCM_CHIPS (8), MCM_SAMPLES (2000), MCM_SEEDS (1), MCM_B6_SAMPLES (2000).
//
//   bench_mcm_table > table.md
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common.hpp"
#include "devplace/mcm/search.hpp"

namespace mcm = devplace::mcm;

namespace {

/// Best-so-far improvement over the baseline after every sample.
template <class Policy>
std::vector<double> run(const devplace::op_graph& g, const mcm::chip_topology& ring, Policy pol, std::size_t samples,
                        std::uint64_t seed, double& seconds) {
  const mcm::compute_evaluator eval(g, ring);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = mcm::search(g, ring, pol, eval, {.samples = samples, .seed = seed});
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> c;
  for (const auto& p : r.curve) c.push_back(p.best_throughput / r.baseline_throughput);
  return c;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += a[i] / n, mb += b[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    sab += (a[i] - ma) * (b[i] - mb), saa += (a[i] - ma) * (a[i] - ma), sbb += (b[i] - mb) * (b[i] - mb);
  return sab / std::sqrt(saa * sbb);
}

}  // namespace

int main() {
  using devplace::bench::env_or;
  const auto C = static_cast<std::size_t>(env_or("MCM_CHIPS", 8));
  const auto S = static_cast<std::size_t>(env_or("MCM_SAMPLES", 2000));
  const auto seeds = static_cast<std::size_t>(env_or("MCM_SEEDS", 1));
  const char* models[] = {"resnet152_mbs64", "bert_large_mbs4", "swin_large_mbs32", "gpt2_medium_mbs8", "inception_v3_mbs32"};
  const char* names[] = {"Random", "SA", "RL-lite (PPO, FIX)", "CE"};
  const std::size_t at[] = {100, 500, 2000};
  const auto ring = mcm::one_way_ring(C);
  // curve[policy][model]: mean over seeds of the best-so-far improvement
  std::vector<std::vector<std::vector<double>>> curve(4, std::vector<std::vector<double>>(std::size(models)));
  std::vector<double> secs(4, 0.0);
  for (std::size_t m = 0; m < std::size(models); ++m) {
    const auto g = devplace::bench::bundled(models[m]);
    const std::size_t N = g.num_vertices();
    for (std::size_t s = 0; s < seeds; ++s)
      for (std::size_t p = 0; p < 4; ++p) {
        double t = 0;
        std::vector<double> c;
        if (p == 0) c = run(g, ring, mcm::uniform_policy{}, S, s + 1, t);
        if (p == 1) c = run(g, ring, mcm::annealing_policy(N, C, {.budget = S}), S, s + 1, t);
        if (p == 2) c = run(g, ring, mcm::softmax_policy(N, C), S, s + 1, t);
        if (p == 3) c = run(g, ring, mcm::cross_entropy_policy(N, C), S, s + 1, t);
        secs[p] += t;
        auto& acc = curve[p][m];
        acc.resize(c.size(), 0.0);
        for (std::size_t i = 0; i < c.size(); ++i) acc[i] += c[i] / double(seeds);
      }
    std::fprintf(stderr, "%s done\n", models[m]);
  }
  std::printf("C = %zu chips (one-way ring), compute-only evaluator, %zu seed(s); improvement = best T / T(chain DP)\n\n", C, seeds);
  std::printf("| graph | policy |");
  for (auto k : at) if (k <= S) std::printf(" %zu samples |", k);
  std::printf("\n|---|---|");
  for (auto k : at) if (k <= S) std::printf("---|");
  std::printf("\n");
  std::vector<std::vector<double>> geo(4, std::vector<double>(S, 0.0));
  for (std::size_t m = 0; m < std::size(models); ++m)
    for (std::size_t p = 0; p < 4; ++p) {
      std::printf("| %s | %s |", models[m], names[p]);
      for (auto k : at) if (k <= S) std::printf(" %.3f |", curve[p][m][k - 1]);
      std::printf("\n");
      for (std::size_t i = 0; i < S; ++i) geo[p][i] += std::log(curve[p][m][i]) / double(std::size(models));
    }
  for (std::size_t p = 0; p < 4; ++p) {
    std::printf("| **geomean** | %s |", names[p]);
    for (auto k : at) if (k <= S) std::printf(" **%.3f** |", std::exp(geo[p][k - 1]));
    std::printf("\n");
  }
  std::printf("\nRL-lite vs Random / SA / CE at %zu samples (geomean): %+.2f%% / %+.2f%% / %+.2f%%\n", S,
              100 * (std::exp(geo[2][S - 1] - geo[0][S - 1]) - 1), 100 * (std::exp(geo[2][S - 1] - geo[1][S - 1]) - 1),
              100 * (std::exp(geo[2][S - 1] - geo[3][S - 1]) - 1));
  std::printf("Search time per policy over all graphs and seeds: Random %.0f s, SA %.0f s, RL-lite %.0f s, CE %.0f s\n\n", secs[0],
              secs[1], secs[2], secs[3]);
  const double levels[] = {1.1, 1.25, 1.5, 1.75, 2.0};
  std::printf("Samples to reach a geomean improvement (B2; - = not within %zu samples):\n\n| policy |", S);
  for (double l : levels) std::printf(" >= %.2fx |", l);
  std::printf("\n|---|");
  for (std::size_t i = 0; i < std::size(levels); ++i) std::printf("---|");
  std::printf("\n");
  for (std::size_t p = 0; p < 4; ++p) {
    std::printf("| %s |", names[p]);
    for (double l : levels) {
      std::size_t k = 0;
      while (k < S && std::exp(geo[p][k]) < l) ++k;
      if (k < S) std::printf(" %zu |", k + 1); else std::printf(" - |");
    }
    std::printf("\n");
  }
  // B6: compute-only vs ring-link evaluator on random valid (SAMPLE) partitions
  const auto n6 = static_cast<std::size_t>(env_or("MCM_B6_SAMPLES", 2000));
  std::printf("\nB6: compute-only vs ring-link evaluator, %zu uniform SAMPLE partitions each, C = %zu, 20 GB/s links, 32 MiB SRAM\n\n", n6, C);
  std::printf("| graph | Pearson R (bottleneck) | ring > compute | fail H static | fail H liveness |\n|---|---|---|---|---|\n");
  for (const char* name : models) {
    const auto g = devplace::bench::bundled(name);
    mcm::constraint_engine e(g, C);
    mcm::random_engine rng(11);
    const mcm::compute_evaluator comp(g, ring);
    const mcm::ring_evaluator rg(g, ring);
    const mcm::compute_evaluator hs(g, ring, {.memory = mcm::memory_check::static_sum});
    const mcm::compute_evaluator hl(g, ring, {.memory = mcm::memory_check::liveness});
    std::vector<double> a, b;
    std::size_t link_bound = 0, fs = 0, fl = 0;
    for (std::size_t k = 0; k < n6; ++k) {
      const auto r = mcm::repair_sample(e, Eigen::MatrixXd(), rng);
      const auto x = comp(r.chip_of), y = rg(r.chip_of);
      a.push_back(x.bottleneck_ms), b.push_back(y.bottleneck_ms);
      link_bound += y.link_ms > y.compute_ms;
      fs += !hs(r.chip_of).valid, fl += !hl(r.chip_of).valid;
    }
    std::printf("| %s | %.3f | %.1f%% | %.1f%% | %.1f%% |\n", name, pearson(a, b), 100.0 * double(link_bound) / double(n6),
                100.0 * double(fs) / double(n6), 100.0 * double(fl) / double(n6));
  }
}
