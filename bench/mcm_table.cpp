// The MCM search tables of docs/mcm.md (seed-mcm §4.5 B1, B2, B6): on every bundled graph, the
// best throughput found by Random (uniform + SAMPLE), SA (annealing + SAMPLE), RL-lite (tabular
// softmax + PPO, FIX) and the cross-entropy method at 100 / 500 / 2000 samples, as an improvement
// over the chain-DP baseline, mean +- sample standard deviation over MCM_SEEDS seeds (B1); the
// samples each needs to come within 30 / 20 / 10 / 5 % of the best value any method found on that
// graph (B2, per graph and for the geomean); then the agreement of the compute-only and ring-link
// evaluators on random valid samples (B6). Every (graph, policy, seed) run is one task; MCM_JOBS
// threads run them. CPU time is per thread (CLOCK_THREAD_CPUTIME_ID) and for the process.
// Prints Markdown. Knobs: MCM_CHIPS (8), MCM_SAMPLES (2000), MCM_SEEDS (5), MCM_JOBS (1),
// MCM_B6_SAMPLES (2000; 0 skips B6), MCM_CURVES (a path: the best-so-far curves as CSV, one row
// per sample where the best improved, plus the last sample).
//
//   MCM_JOBS=2 MCM_CURVES=curves.csv bench_mcm_table > table.md
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "devplace/mcm/search.hpp"

namespace mcm = devplace::mcm;

namespace {

double mcmt_thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double mcmt_process_cpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/// Best-so-far improvement over the baseline after every sample.
template <class Policy>
std::vector<double> mcmt_run(const devplace::op_graph& g, const mcm::chip_topology& ring, Policy pol, std::size_t samples,
                             std::uint64_t seed) {
  const mcm::compute_evaluator eval(g, ring);
  const auto r = mcm::search(g, ring, pol, eval, {.samples = samples, .seed = seed});
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

/// Mean and sample standard deviation.
std::pair<double, double> mcmt_mean_sd(const std::vector<double>& x) {
  double m = 0, s = 0;
  for (double v : x) m += v / double(x.size());
  for (double v : x) s += (v - m) * (v - m);
  return {m, x.size() > 1 ? std::sqrt(s / double(x.size() - 1)) : 0.0};
}

/// "median (k/n)" of the first sample (1-based) at which a curve reaches `level`, over the seeds;
/// a seed that never reaches it counts as infinitely many samples (so the median is monotone in
/// the level); k = seeds that reach it.
std::string mcmt_reach(const std::vector<std::vector<double>>& curves, double level, std::size_t S) {
  constexpr double never = 1e300;
  std::vector<double> hit;
  std::size_t k = 0;
  for (const auto& c : curves) {
    std::size_t i = 0;
    while (i < c.size() && c[i] < level) ++i;
    hit.push_back(i < c.size() ? double(i + 1) : never);
    k += i < c.size();
  }
  std::sort(hit.begin(), hit.end());
  const std::size_t n = hit.size();
  const double med = n % 2 ? hit[n / 2] : 0.5 * (hit[n / 2 - 1] + hit[n / 2]);
  char buf[64];
  if (med >= never / 4)
    std::snprintf(buf, sizeof buf, "not in %zu (%zu/%zu)", S, k, n);
  else
    std::snprintf(buf, sizeof buf, "%.0f (%zu/%zu)", med, k, n);
  return buf;
}

}  // namespace

int main() {
  using devplace::bench::env_or;
  const auto C = static_cast<std::size_t>(env_or("MCM_CHIPS", 8));
  const auto S = static_cast<std::size_t>(env_or("MCM_SAMPLES", 2000));
  const auto seeds = static_cast<std::size_t>(env_or("MCM_SEEDS", 5));
  const auto jobs = std::max<std::size_t>(1, static_cast<std::size_t>(env_or("MCM_JOBS", 1)));
  const char* models[] = {"resnet152_mbs64", "bert_large_mbs4", "swin_large_mbs32", "gpt2_medium_mbs8", "inception_v3_mbs32"};
  const char* names[] = {"Random", "SA", "RL-lite (PPO, FIX)", "CE"};
  constexpr std::size_t M = std::size(models), P = std::size(names);
  const std::size_t at[] = {100, 500, 2000};
  const auto ring = mcm::one_way_ring(C);
  std::vector<devplace::op_graph> graphs;
  for (const char* m : models) graphs.push_back(devplace::bench::bundled(m));
  // curve[policy][model][seed]: best-so-far improvement after every sample
  std::vector<std::vector<std::vector<std::vector<double>>>> curve(
      P, std::vector<std::vector<std::vector<double>>>(M, std::vector<std::vector<double>>(seeds)));
  std::vector<double> cpu(M * seeds * P, 0.0);  // per task
  std::atomic<std::size_t> next{0};
  const std::size_t tasks = M * seeds * P;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = mcmt_process_cpu();
  auto worker = [&] {
    for (std::size_t t; (t = next.fetch_add(1)) < tasks;) {
      const std::size_t m = t / (seeds * P), s = t / P % seeds, p = t % P;
      const auto& g = graphs[m];
      const std::size_t N = g.num_vertices();
      const double c0 = mcmt_thread_cpu();
      auto& c = curve[p][m][s];
      if (p == 0) c = mcmt_run(g, ring, mcm::uniform_policy{}, S, s + 1);
      if (p == 1) c = mcmt_run(g, ring, mcm::annealing_policy(N, C, {.budget = S}), S, s + 1);
      if (p == 2) c = mcmt_run(g, ring, mcm::softmax_policy(N, C), S, s + 1);
      if (p == 3) c = mcmt_run(g, ring, mcm::cross_entropy_policy(N, C), S, s + 1);
      cpu[t] = mcmt_thread_cpu() - c0;
      std::fprintf(stderr, "%s %s seed %zu: %.3f\n", models[m], names[p], s + 1, c.back());
    }
  };
  {
    std::vector<std::thread> pool;
    for (std::size_t j = 0; j < jobs; ++j) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu_all = mcmt_process_cpu() - cpu0;
  if (const char* path = std::getenv("MCM_CURVES"); path && *path) {
    if (FILE* f = std::fopen(path, "w")) {
      std::fprintf(f, "graph,policy,seed,sample,best_improvement\n");
      for (std::size_t m = 0; m < M; ++m)
        for (std::size_t p = 0; p < P; ++p)
          for (std::size_t s = 0; s < seeds; ++s) {
            const auto& c = curve[p][m][s];
            for (std::size_t i = 0; i < c.size(); ++i)
              if (i == 0 || c[i] != c[i - 1] || i + 1 == c.size())
                std::fprintf(f, "%s,\"%s\",%zu,%zu,%.6f\n", models[m], names[p], s + 1, i + 1, c[i]);
          }
      std::fclose(f);
    }
  }
  std::printf("B1: C = %zu chips (one-way ring), compute-only evaluator; improvement = best T / T(chain DP), "
              "mean +- standard deviation over %zu seeds\n\n| graph | policy |", C, seeds);
  for (auto k : at) if (k <= S) std::printf(" %zu samples |", k);
  std::printf("\n|---|---|");
  for (auto k : at) if (k <= S) std::printf("---|");
  std::printf("\n");
  // geo[p][s][i]: geomean over graphs of seed s after sample i
  std::vector<std::vector<std::vector<double>>> geo(P, std::vector<std::vector<double>>(seeds, std::vector<double>(S, 0.0)));
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t p = 0; p < P; ++p) {
      std::printf("| %s | %s |", models[m], names[p]);
      for (auto k : at) {
        if (k > S) continue;
        std::vector<double> x;
        for (std::size_t s = 0; s < seeds; ++s) x.push_back(curve[p][m][s][k - 1]);
        const auto [mu, sd] = mcmt_mean_sd(x);
        std::printf(" %.3f ± %.3f |", mu, sd);
      }
      std::printf("\n");
      for (std::size_t s = 0; s < seeds; ++s)
        for (std::size_t i = 0; i < S; ++i) geo[p][s][i] += std::log(curve[p][m][s][i]) / double(M);
    }
  for (std::size_t p = 0; p < P; ++p) {
    std::printf("| **geomean** | %s |", names[p]);
    for (auto k : at) {
      if (k > S) continue;
      std::vector<double> x;
      for (std::size_t s = 0; s < seeds; ++s) x.push_back(std::exp(geo[p][s][k - 1]));
      const auto [mu, sd] = mcmt_mean_sd(x);
      std::printf(" **%.3f ± %.3f** |", mu, sd);
    }
    std::printf("\n");
  }
  std::printf("\nRL-lite over Random / SA / CE at %zu samples, geomean ratio per seed, mean ± sd:", S);
  for (std::size_t q : {0u, 1u, 3u}) {
    std::vector<double> x;
    for (std::size_t s = 0; s < seeds; ++s) x.push_back(100 * (std::exp(geo[2][s][S - 1] - geo[q][s][S - 1]) - 1));
    const auto [mu, sd] = mcmt_mean_sd(x);
    std::printf(" %+.1f%% ± %.1f%%%s", mu, sd, q == 3 ? "\n" : " /");
  }
  std::printf("\nCPU time (thread CPU, all graphs and seeds): ");
  for (std::size_t p = 0; p < P; ++p) {
    double t = 0;
    for (std::size_t k = p; k < cpu.size(); k += P) t += cpu[k];
    std::printf("%s %.0f s%s", names[p], t, p + 1 < P ? ", " : "");
  }
  std::printf("; process: %.0f s CPU (user + sys), %.0f s wall, %zu thread(s)\n", cpu_all, wall, jobs);
  // B2: levels relative to the best value any policy and seed reached on the graph
  std::vector<double> best(M, 0.0);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t p = 0; p < P; ++p)
      for (std::size_t s = 0; s < seeds; ++s) best[m] = std::max(best[m], curve[p][m][s].back());
  const double rel[] = {0.70, 0.80, 0.90, 0.95};  // the loosest within reach of every policy
  std::printf("\nB2: samples until the best-so-far is within 30 / 20 / 10 / 5 %% of the best improvement any policy and "
              "seed found on the graph (best*); median over the seeds, one that never reaches it counting as infinite "
              "(seeds reaching it / seeds); not in %zu = the median is not reached within %zu samples\n\n| graph (best*) | policy |", S, S);
  for (double r : rel) std::printf(" >= %.2f best* |", r);
  std::printf("\n|---|---|");
  for (std::size_t i = 0; i < std::size(rel); ++i) std::printf("---|");
  std::printf("\n");
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t p = 0; p < P; ++p) {
      std::printf("| %s (%.3f) | %s |", models[m], best[m], names[p]);
      for (double r : rel) std::printf(" %s |", mcmt_reach(curve[p][m], r * best[m], S).c_str());
      std::printf("\n");
    }
  // geomean over graphs of best-so-far / best*
  for (std::size_t p = 0; p < P; ++p) {
    std::vector<std::vector<double>> gc(seeds, std::vector<double>(S, 0.0));
    for (std::size_t s = 0; s < seeds; ++s)
      for (std::size_t i = 0; i < S; ++i) {
        double l = 0;
        for (std::size_t m = 0; m < M; ++m) l += std::log(curve[p][m][s][i] / best[m]) / double(M);
        gc[s][i] = std::exp(l);
      }
    std::printf("| **geomean of best-so-far / best*** | %s |", names[p]);
    for (double r : rel) std::printf(" **%s** |", mcmt_reach(gc, r, S).c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
  if (env_or("MCM_B6_SAMPLES", 2000) <= 0) return 0;
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
