#include "devplace/map/local_search.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"

using namespace devplace;
using devplace::test::random_stage_graph;
using devplace::test::random_topology;

namespace {

// The key the local search lowers, computed independently: (objective, vertices at it) of a full
// evaluation.
template <class Model>
std::pair<double, std::size_t> full_key(const stage_graph& g, const link_costs& L, const Model& model,
                                        const std::vector<std::size_t>& dev) {
  const auto e = evaluate_flat(g, L, model, std::span<const std::size_t>(dev));
  const auto n = static_cast<std::size_t>(std::count(e.vertex_time_ms.begin(), e.vertex_time_ms.end(), e.objective_ms));
  return {e.objective_ms, n};
}

bool lex_less(std::pair<double, std::size_t> a, std::pair<double, std::size_t> b) {
  return a.first < b.first || (a.first == b.first && a.second < b.second);
}

// Brute-force scan: the best key over every single move to a free device and every swap.
template <class Model>
std::pair<double, std::size_t> best_neighbour(const stage_graph& g, const link_costs& L, const Model& model,
                                              std::vector<std::size_t> dev) {
  std::pair<double, std::size_t> best{std::numeric_limits<double>::infinity(), 0};
  const std::size_t V = g.vertices(), D = L.devices();
  std::vector<char> used(D, 0);
  for (auto d : dev) used[d] = 1;
  for (std::size_t v = 0; v < V; ++v) {
    const std::size_t old = dev[v];
    for (std::size_t d = 0; d < D; ++d) {
      if (used[d]) continue;
      dev[v] = d;
      const auto k = full_key(g, L, model, dev);
      if (lex_less(k, best)) best = k;
      dev[v] = old;
    }
    for (std::size_t w = v + 1; w < V; ++w) {
      std::swap(dev[v], dev[w]);
      const auto k = full_key(g, L, model, dev);
      if (lex_less(k, best)) best = k;
      std::swap(dev[v], dev[w]);
    }
  }
  return best;
}

// A user model (not p2p): a stage replica waits for its slowest neighbour message and pays the
// largest link to any replica of its own stage, no compute share.
struct user_max_cost {
  std::string_view name() const { return "max-link"; }
  std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const {
    auto a = p2p_cost{}.dependencies(g, v), b = allreduce_cost{}.dependencies(g, v);
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    const std::size_t s = g.stage_of_vertex(v), r = g.replica_of_vertex(v);
    double t = 0;
    for (auto u : g.neighbours(s)) {
      const auto [lo, hi] = g.peers(s, r, u);
      for (std::size_t j = lo; j < hi; ++j) t = std::max(t, L.transfer_ms(dev[v], dev[g.vertex(u, j)], g.exchange_bytes(s, r, u, j)));
    }
    if (g.allreduce_bytes(s) > 0)  // its declared dependencies: no ring partners without bytes
      for (std::size_t q = 0; q < g.replicas(s); ++q)
        if (q != r) t = std::max(t, L.transfer_ms(dev[v], dev[g.vertex(s, q)], g.allreduce_bytes(s)));
    return t;
  }
  double bound(const stage_graph&, const link_costs&, std::span<const std::size_t>, std::size_t) const { return 0; }
};
static_assert(mapping_cost_model<user_max_cost>);

template <class Model>
void check_round(std::mt19937_64& rng, const stage_graph& g, const link_costs& L, const Model& model) {
  const std::size_t D = L.devices();
  const auto start = flatten(g, random_map(g, D, rng()));
  const auto before = full_key(g, L, model, start);
  const auto r = improve_mapping_flat(g, L, model, std::span<const std::size_t>(start));
  INFO("model=" << model.name() << " D=" << D << " S=" << g.stages() << " V=" << g.vertices());
  // valid: one device per replica of every stage, injective, on the topology
  REQUIRE(r.device_of.size() == g.stages());
  for (std::size_t s = 0; s < g.stages(); ++s) CHECK(r.device_of[s].size() == g.replicas(s));
  CHECK(flatten(g, r.device_of) == r.dev);
  std::set<std::size_t> used(r.dev.begin(), r.dev.end());
  CHECK(used.size() == g.vertices());
  CHECK(*used.rbegin() < D);
  // the reported key is the mapping's, and never worse than the input's
  const auto after = full_key(g, L, model, r.dev);
  CHECK(r.objective_ms == after.first);
  CHECK(r.at_objective == after.second);
  CHECK(r.initial_objective_ms == before.first);
  CHECK_FALSE(lex_less(before, after));
  CHECK(r.objective_ms <= before.first);
  if (r.moves + r.swaps > 0) CHECK(lex_less(after, before));
  // a local optimum: no single move or swap lowers the key (independent scan)
  CHECK(r.local_optimum);
  CHECK_FALSE(lex_less(best_neighbour(g, L, model, r.dev), after));
}

// Per-stage replica counts (R_s), as the general DP gives.
stage_graph random_counts_graph(std::mt19937_64& rng, std::size_t D) {
  const std::size_t S = 1 + rng() % 3;
  std::vector<std::size_t> reps(S);
  std::size_t left = D;
  for (std::size_t s = 0; s < S; ++s) {
    const std::size_t room = left - (S - s - 1);
    reps[s] = 1 + rng() % std::min<std::size_t>(room, 3);
    left -= reps[s];
  }
  std::vector<double> c(S), p(S);
  std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
  for (std::size_t s = 0; s < S; ++s) c[s] = double(rng() % 6), p[s] = double(rng() % 8) * 5e5;
  for (std::size_t s = 0; s + 1 < S; ++s) m[s][s + 1] = m[s + 1][s] = double(1 + rng() % 9) * 1e6;
  return stage_graph(reps, c, p, m);
}

}  // namespace

TEST_CASE("local search: never worse than its input, valid, and at a local optimum no move or swap improves") {
  std::mt19937_64 rng(41);
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 2 + rng() % 8;  // 2..9
    std::size_t S, R;
    do S = 1 + rng() % D, R = 1 + rng() % D;
    while (S * R > D || S * R < 2);
    const auto g = random_stage_graph(rng, S, R);
    const link_costs L(random_topology(rng, D, test::all_topo_kinds[it % 4]));
    CAPTURE(it);
    switch (it % 4) {
      case 0: check_round(rng, g, L, p2p_cost{}); break;
      case 1: check_round(rng, g, L, allreduce_cost{}); break;
      case 2: check_round(rng, g, L, combined_cost{.micro_batches = 1 + rng() % 6}); break;
      default: check_round(rng, g, L, user_max_cost{}); break;
    }
  }
}

TEST_CASE("local search: per-stage replica counts and a user model") {
  std::mt19937_64 rng(43);
  for (int it = 0; it < 40; ++it) {
    const std::size_t D = 4 + rng() % 6;
    const auto g = random_counts_graph(rng, D);
    const link_costs L(random_topology(rng, D, test::all_topo_kinds[it % 4]));
    CAPTURE(it);
    if (it % 2) check_round(rng, g, L, combined_cost{.micro_batches = 2});
    else check_round(rng, g, L, user_max_cost{});
  }
}

TEST_CASE("local search: moves only, swaps only, and a spent time limit keep the input's key or lower") {
  std::mt19937_64 rng(47);
  const auto g = random_stage_graph(rng, 3, 2);
  const link_costs L(random_topology(rng, 9, test::topo_kind::continuous));
  const auto start = flatten(g, cs_map(g));
  const auto before = full_key(g, L, combined_cost{}, start);
  for (auto [mv, sw] : {std::pair{true, false}, std::pair{false, true}}) {
    const auto r = improve_mapping_flat(g, L, combined_cost{}, std::span<const std::size_t>(start), {.moves = mv, .swaps = sw});
    CHECK(r.objective_ms <= before.first);
    CHECK(r.local_optimum);
    if (!mv) CHECK(r.moves == 0);
    if (!sw) CHECK(r.swaps == 0);
    // with swaps only, the set of used devices is the input's
    if (!mv) CHECK(std::set<std::size_t>(r.dev.begin(), r.dev.end()) == std::set<std::size_t>(start.begin(), start.end()));
  }
  const auto z = improve_mapping_flat(g, L, combined_cost{}, std::span<const std::size_t>(start), {.timeout_s = 0});
  CHECK(z.dev == start);
  CHECK_FALSE(z.local_optimum);
  CHECK(z.objective_ms == before.first);
}

TEST_CASE("local search: rejects a mapping that is not injective onto the devices") {
  std::mt19937_64 rng(53);
  const auto g = random_stage_graph(rng, 2, 2);
  const link_costs L(random_topology(rng, 5, test::topo_kind::discrete));
  const std::vector<std::size_t> twice{0, 0, 1, 2}, outside{0, 1, 2, 5};
  CHECK_THROWS_AS((void)improve_mapping_flat(g, L, p2p_cost{}, std::span<const std::size_t>(twice)), std::invalid_argument);
  CHECK_THROWS_AS((void)improve_mapping_flat(g, L, p2p_cost{}, std::span<const std::size_t>(outside)), std::invalid_argument);
  CHECK_THROWS_AS((void)improve_mapping(g, L, p2p_cost{}, device_mapping{{0, 1}}), std::invalid_argument);
}

namespace {

struct combined_instance {
  stage_graph g;
  link_costs L;
  combined_cost model;
  double optimum_ms;
};

// D devices, 2 <= S·R <= D, topology kind by `it`, the combined model over 1..4 micro-batches,
// and its brute-force optimum.
combined_instance random_combined_instance(std::mt19937_64& rng, std::size_t D, int it) {
  std::size_t S, R;
  do S = 1 + rng() % D, R = 1 + rng() % D;
  while (S * R > D || S * R < 2);
  auto g = random_stage_graph(rng, S, R);
  link_costs L(random_topology(rng, D, test::all_topo_kinds[it % 4]));
  const combined_cost model{.micro_batches = 1 + rng() % 4};
  const double opt = test::brute_force(g, L, model);
  return {std::move(g), std::move(L), model, opt};
}

}  // namespace

TEST_CASE("mapper: with local search the proved results still equal brute force, a user model too") {
  std::mt19937_64 rng(59);
  for (int it = 0; it < 40; ++it) {
    const auto [g, L, model, opt] = random_combined_instance(rng, 3 + rng() % 5, it);
    const auto r = map_devices(g, L, model, {.threads = 1 + unsigned(it % 2), .local_search = true});
    CAPTURE(it);
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(opt).epsilon(1e-9));
    const auto u = map_devices(g, L, user_max_cost{}, {.threads = 1});
    CHECK(u.objective_ms == doctest::Approx(test::brute_force(g, L, user_max_cost{})).epsilon(1e-9));
  }
  // 64 random devices, a limit too short to prove anything: a valid mapping, at most the best
  // baseline (computed here independently)
  const auto topo = uniform_dist(64, 5);
  const link_costs L(topo);
  const auto g = random_stage_graph(rng, 8, 8);
  const combined_cost model{.micro_batches = 4};
  double best = std::numeric_limits<double>::infinity();
  for (auto b : {baseline::cs, baseline::p2p, baseline::random}) best = std::min(best, evaluate(g, L, baseline_map(g, 64, b), model).objective_ms);
  const auto r = map_devices(g, L, model, {.threads = 2, .timeout_s = 0.05});
  CHECK(r.objective_ms <= best);
  CHECK(r.objective_ms == doctest::Approx(evaluate(g, L, r.device_of, model).objective_ms).epsilon(1e-12));
}

TEST_CASE("mapper: short time limits with two workers (descent target, final polish) keep every claim sound") {
  // The descent target starts at half a finite limit; limits from 20 us to 20 ms stop these
  // searches at every stage (set-up, bisection, descent, final polish). Whatever stops them:
  // a valid mapping, never below the optimum, a proved bound never above it, optimal only when
  // it equals brute force.
  std::mt19937_64 rng(61);
  int proved = 0, stopped = 0;
  for (int it = 0; it < 60; ++it) {
    const auto [g, L, model, opt] = random_combined_instance(rng, 5 + rng() % 4, it);
    const double limit = 2e-5 * double(1u << (it % 11));
    const auto r = map_devices(g, L, model, {.threads = 2, .timeout_s = limit});
    CAPTURE(it);
    CAPTURE(limit);
    std::set<std::size_t> used;
    for (const auto& row : r.device_of) used.insert(row.begin(), row.end());
    CHECK(used.size() == g.vertices());
    CHECK(r.objective_ms >= opt * (1 - 1e-12));
    CHECK(r.lower_bound_ms <= opt * (1 + 1e-12));
    CHECK(r.objective_ms == doctest::Approx(evaluate(g, L, r.device_of, model).objective_ms).epsilon(1e-12));
    if (r.status == status::optimal) {
      CHECK(r.objective_ms == doctest::Approx(opt).epsilon(1e-9));
      ++proved;
    } else {
      ++stopped;
    }
  }
  MESSAGE("proved " << proved << ", stopped " << stopped);
}
