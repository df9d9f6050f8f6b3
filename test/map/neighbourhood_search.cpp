#include "devplace/map/neighbourhood_search.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "map/map_support.hpp"

using namespace devplace;
using devplace::test::brute_force;
using devplace::test::random_stage_graph;
using devplace::test::random_topology;

namespace {

// The block times (max over a block's vertices) sorted from the largest, computed independently
// of the search: copies for p2p, stages for allreduce.
template <class Model>
std::vector<double> sorted_block_times(const stage_graph& g, const link_costs& L, const Model& model,
                                       const std::vector<std::size_t>& dev, bool copies) {
  const auto e = evaluate_flat(g, L, model, std::span<const std::size_t>(dev));
  std::vector<double> bt(copies ? g.replicas() : g.stages(), 0.0);
  for (std::size_t s = 0; s < g.stages(); ++s)
    for (std::size_t r = 0; r < g.replicas(); ++r) {
      const std::size_t b = copies ? r : s;
      bt[b] = std::max(bt[b], e.vertex_time_ms[g.vertex(s, r)]);
    }
  std::sort(bt.begin(), bt.end(), std::greater<>());
  return bt;
}

bool injective(const std::vector<std::size_t>& dev, std::size_t D) {
  std::vector<char> used(D, 0);
  for (auto d : dev) {
    if (d >= D || used[d]) return false;
    used[d] = 1;
  }
  return true;
}

}  // namespace

TEST_CASE("neighbourhood_blocks: copies under p2p, rings under allreduce, none where blocks interact") {
  std::mt19937_64 rng(3);
  const auto g = random_stage_graph(rng, 3, 2);
  const link_costs L(random_topology(rng, 6, test::topo_kind::continuous));
  CHECK(neighbourhood_blocks(p2p_cost{}, g, L) == block_kind::copies);
  CHECK(neighbourhood_blocks(allreduce_cost{}, g, L) == block_kind::rings);
  CHECK(neighbourhood_blocks(combined_cost{.micro_batches = 4}, g, L) == block_kind::none);
  const auto one = random_stage_graph(rng, 3, 1);  // one replica: p2p reads other stages, no copies to swap
  CHECK(neighbourhood_blocks(p2p_cost{}, one, L) == block_kind::none);
  const stage_graph uneven(std::vector<std::size_t>{1, 2}, {1.0, 2.0}, {1e6, 1e6}, {{0, 1e6}, {1e6, 0}});
  CHECK(neighbourhood_blocks(p2p_cost{}, uneven, L) == block_kind::none);
  CHECK_THROWS_AS((void)improve_by_blocks(g, L, p2p_cost{}, flatten(g, cs_map(g)), {.blocks = 1}), std::invalid_argument);
}

TEST_CASE("link_costs::subset keeps the links among the chosen devices, renumbered") {
  std::mt19937_64 rng(5);
  for (auto k : test::all_topo_kinds) {
    const link_costs L(random_topology(rng, 7, k));
    const std::vector<std::size_t> pick{5, 1, 3, 6};
    const auto s = L.subset(std::span<const std::size_t>(pick));
    REQUIRE(s.devices() == 4);
    for (std::size_t a = 0; a < 4; ++a) {
      for (std::size_t b = 0; b < 4; ++b) {
        if (a == b) continue;
        CHECK(s.ms_per_byte(a, b) == L.ms_per_byte(pick[a], pick[b]));
        CHECK(s.latency_ms(a, b) == L.latency_ms(pick[a], pick[b]));
      }
      const auto row = s.out_sorted_devices(a);  // the sorted rows are rebuilt for the subset
      REQUIRE(row.size() == 3);
      for (std::size_t i = 0; i + 1 < row.size(); ++i) CHECK(s.ms_per_byte(a, row[i]) <= s.ms_per_byte(a, row[i + 1]));
    }
    CHECK(s.symmetric() == (k != test::topo_kind::asymmetric));
  }
  const link_costs L(random_topology(rng, 4, test::topo_kind::discrete));
  const std::vector<std::size_t> twice{1, 1}, outside{0, 4};
  CHECK_THROWS_AS((void)L.subset(std::span<const std::size_t>(twice)), std::invalid_argument);
  CHECK_THROWS_AS((void)L.subset(std::span<const std::size_t>(outside)), std::invalid_argument);
}

// With every block freed at once and S·R = D, one step is the exact search of the whole
// problem: the result must be the brute-force optimum, from any start.
TEST_CASE("improve_by_blocks with every block freed reaches the brute-force optimum") {
  std::mt19937_64 rng(11);
  int runs = 0;
  for (int i = 0; i < 48; ++i) {
    const std::size_t S = 2 + rng() % 3, R = 2 + rng() % 2;
    if (S * R > 8) continue;
    const auto g = random_stage_graph(rng, S, R);
    const link_costs L(random_topology(rng, S * R, test::all_topo_kinds[i % 4]));
    const auto start = flatten(g, random_map(g, S * R, rng()));
    CAPTURE(i);
    {
      const auto r = improve_by_blocks(g, L, p2p_cost{}, start, {.blocks = R, .step_timeout_s = 60});
      CHECK(injective(r.dev, S * R));
      CHECK(r.objective_ms == doctest::Approx(brute_force(g, L, p2p_cost{})).epsilon(1e-9));
      CHECK(r.objective_ms == evaluate_flat(g, L, p2p_cost{}, std::span<const std::size_t>(r.dev)).objective_ms);
    }
    {
      const auto r = improve_by_blocks(g, L, allreduce_cost{}, start, {.blocks = S, .step_timeout_s = 60});
      CHECK(injective(r.dev, S * R));
      CHECK(r.objective_ms == doctest::Approx(brute_force(g, L, allreduce_cost{})).epsilon(1e-9));
    }
    ++runs;
  }
  CHECK(runs >= 20);
}

// Freeing fewer blocks than there are: never worse, and every accepted step lowers the sorted
// block times lexicographically (checked by an independent evaluation of start and result).
TEST_CASE("improve_by_blocks never raises the sorted block times, and finds improvements") {
  std::mt19937_64 rng(17);
  std::size_t improved = 0;
  for (int i = 0; i < 60; ++i) {
    const std::size_t S = 2 + rng() % 3, R = 3 + rng() % 3, D = S * R + rng() % 3;
    const auto g = random_stage_graph(rng, S, R);
    const link_costs L(random_topology(rng, D, test::all_topo_kinds[i % 4]));
    const auto start = flatten(g, random_map(g, D, rng()));
    const bool copies = i % 2 == 0;
    CAPTURE(i);
    auto check = [&](const auto& model) {
      const auto r = improve_by_blocks(g, L, model, start, {.blocks = 2, .step_timeout_s = 60, .seed = rng()});
      REQUIRE(injective(r.dev, D));
      const auto before = sorted_block_times(g, L, model, start, copies), after = sorted_block_times(g, L, model, r.dev, copies);
      CHECK(r.initial_objective_ms == before.front());
      CHECK(r.objective_ms == after.front());
      CHECK_FALSE(std::lexicographical_compare(before.begin(), before.end(), after.begin(), after.end()));
      if (r.accepted > 0) {
        CHECK(std::lexicographical_compare(after.begin(), after.end(), before.begin(), before.end()));
        ++improved;
      }
      if (D <= 8) CHECK(r.objective_ms >= brute_force(g, L, model) - 1e-9);
    };
    if (copies) check(p2p_cost{});
    else check(allreduce_cost{});
  }
  CHECK(improved >= 30);  // random starts are rarely block-optimal
}
