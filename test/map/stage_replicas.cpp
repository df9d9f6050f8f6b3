// Stage graphs whose stages have their own replica counts (Parmesan's general DP): the G'
// numbering, the data each pair of replicas exchanges, and the mapper against brute force.
#include "devplace/map/stage_graph.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "devplace/ilp/builders/mapping.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/mapper.hpp"
#include "map_support.hpp"

using namespace devplace;

namespace {

stage_graph sr_random_graph(std::mt19937_64& rng, const std::vector<std::size_t>& reps) {
  const std::size_t S = reps.size();
  std::vector<double> c(S), p(S);
  std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
  for (std::size_t s = 0; s < S; ++s) {
    c[s] = double(rng() % 6);
    p[s] = double(rng() % 8) * 5e5;
  }
  for (std::size_t a = 0; a < S; ++a)
    for (std::size_t b = a + 1; b < S; ++b)
      if (b == a + 1 ? rng() % 10 < 9 : rng() % 10 < 3) m[a][b] = m[b][a] = double(1 + rng() % 9) * 1e6;
  return stage_graph(reps, c, p, m);
}

// The best objective over every injective mapping of the G' vertices onto the D devices.
template <class C>
double sr_brute_force(const stage_graph& g, const link_costs& L, const C& model) {
  const std::size_t V = g.vertices(), D = L.devices();
  std::vector<std::size_t> dev(V);
  std::vector<char> used(D, 0);
  double best = std::numeric_limits<double>::infinity();
  auto rec = [&](auto&& self, std::size_t v) -> void {
    if (v == V) {
      best = std::min(best, evaluate_flat(g, L, model, std::span<const std::size_t>(dev)).objective_ms);
      return;
    }
    for (std::size_t d = 0; d < D; ++d)
      if (!used[d]) {
        used[d] = 1;
        dev[v] = d;
        self(self, v + 1);
        used[d] = 0;
      }
  };
  rec(rec, 0);
  return best;
}

}  // namespace

TEST_CASE("stage_graph with per-stage replica counts: numbering, shares and exchanged bytes (hand-computed)") {
  const double M = 6e6, P = 3e6;
  const stage_graph g(std::vector<std::size_t>{2, 1, 3}, {4.0, 1.0, 6.0}, {P, P, P},
                      {{0, 0, M}, {0, 0, 0}, {M, 0, 0}});
  CHECK_FALSE(g.uniform_replicas());
  CHECK(g.replicas() == 3);  // R̂ = max R_s
  CHECK(g.replicas(0) == 2);
  CHECK(g.replicas(1) == 1);
  CHECK(g.vertices() == 6);
  CHECK(g.vertex(2, 1) == 4);
  CHECK(g.stage_of_vertex(4) == 2);
  CHECK(g.replica_of_vertex(4) == 1);
  CHECK(g.stage_of_vertex(2) == 1);
  // One replica of stage 0 does 3/2 micro-batches' worth, stage 1's single replica 3.
  CHECK(g.replica_compute_ms(0) == doctest::Approx(6.0));
  CHECK(g.replica_compute_ms(1) == doctest::Approx(3.0));
  CHECK(g.replica_compute_ms(2) == doctest::Approx(6.0));
  // Replica 1 of stage 0 holds [1/2, 1) of the round; stage 2's replicas [0, 1/3), [1/3, 2/3), [2/3, 1).
  CHECK(g.peers(0, 1, 2) == std::pair<std::size_t, std::size_t>{1, 3});
  CHECK(g.peers(0, 0, 2) == std::pair<std::size_t, std::size_t>{0, 2});
  CHECK(g.exchange_bytes(0, 1, 2, 0) == 0.0);
  CHECK(g.exchange_bytes(0, 1, 2, 1) == doctest::Approx(M * 3 / 6));  // [1/2, 2/3): 1/6 of 3 M
  CHECK(g.exchange_bytes(0, 1, 2, 2) == doctest::Approx(M * 3 * 2 / 6));
  CHECK(g.exchange_bytes(2, 1, 0, 1) == doctest::Approx(M * 3 / 6));  // symmetric
  // Every replica pair together moves the round's M · R̂.
  double total = 0;
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j) total += g.exchange_bytes(0, i, 2, j);
  CHECK(total == doctest::Approx(M * 3));
  CHECK(g.allreduce_bytes(0) == doctest::Approx(P));          // 2(2-1)/2 P
  CHECK(g.allreduce_bytes(1) == 0.0);
  CHECK(g.allreduce_bytes(2) == doctest::Approx(4.0 / 3.0 * P));
  // p2p time of replica 1 of stage 0 on 1 GB/s links: 6 ms + (3 MB + 6 MB) / 1 GB/s = 15 ms.
  const link_costs L(matrix_topology(Eigen::MatrixXd::Constant(6, 6, 1.0)));
  const std::vector<std::size_t> dev{0, 1, 2, 3, 4, 5};
  CHECK(p2p_cost{}.time(g, L, dev, 1) == doctest::Approx(15.0));
  CHECK(p2p_cost{}.dependencies(g, 1) == std::vector<std::size_t>{4, 5});
  // Equal counts given per stage are the scalar form.
  const stage_graph u(std::vector<std::size_t>{2, 2}, {1.0, 2.0}, {0, 0}, {{0, M}, {M, 0}});
  CHECK(u.uniform_replicas());
  CHECK(u.exchange_bytes(0, 1, 1, 1) == M);
  CHECK(u.exchange_bytes(0, 1, 1, 0) == 0.0);
  CHECK(u.replica_compute_ms(1) == 2.0);
  CHECK_THROWS_AS(stage_graph(std::vector<std::size_t>{2, 0}, {1.0, 1.0}, {0, 0}, {{0, 0}, {0, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(stage_graph(std::vector<std::size_t>{2}, {1.0, 1.0}, {0, 0}, {{0, 0}, {0, 0}}), std::invalid_argument);
  // The mapping MILP is written for equal counts: it says so instead of building a wrong model.
  CHECK_THROWS_WITH_AS(static_cast<void>(ilp::build_mapping_ilp(g, L)), doctest::Contains("different replica counts"),
                       std::invalid_argument);
  // The baselines lay out Σ R_s distinct devices.
  for (const auto& m : {cs_map(g), p2p_map(g)}) {
    const auto flat = flatten(g, m);
    std::vector<std::size_t> sorted = flat;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == dev);
    CHECK(unflatten(g, flat) == m);
  }
}

TEST_CASE("the mapper proves the brute-force optimum on stage graphs with per-stage replica counts") {
  std::mt19937_64 rng(1616);
  int compared = 0;
  for (int trial = 0; trial < 36; ++trial) {
    const std::size_t S = 2 + rng() % 2;
    std::vector<std::size_t> reps(S);
    std::size_t V = 0;
    do {
      V = 0;
      for (auto& r : reps) r = 1 + rng() % 3, V += r;
    } while (V > 6 || std::all_of(reps.begin(), reps.end(), [&](std::size_t r) { return r == reps[0]; }));
    const stage_graph g = sr_random_graph(rng, reps);
    const std::size_t D = V + rng() % 2;
    const auto topo = test::random_topology(rng, D, test::all_topo_kinds[trial % 4]);
    const link_costs L(topo);
    CAPTURE(trial);
    CAPTURE(S);
    CAPTURE(D);
    const std::size_t MB = 1 + rng() % 4;
    auto check = [&](const auto& model) {
      const auto r = map_devices(g, L, model, {.threads = 1});
      REQUIRE(r.optimal);
      CHECK(r.objective_ms == doctest::Approx(sr_brute_force(g, L, model)).epsilon(1e-9));
      const auto flat = flatten(g, r.device_of);
      CHECK(evaluate_flat(g, L, model, std::span<const std::size_t>(flat)).objective_ms ==
            doctest::Approx(r.objective_ms).epsilon(1e-12));
      CHECK(r.lower_bound_ms <= r.objective_ms * (1 + 1e-9));
    };
    check(p2p_cost{});
    check(allreduce_cost{});
    check(combined_cost{.micro_batches = MB});
    ++compared;
  }
  CHECK(compared == 36);
}
