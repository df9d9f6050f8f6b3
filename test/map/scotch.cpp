// Scotch's static mapping as a baseline (map/scotch.hpp, only when CMake found Scotch): an
// injective mapping of the stage replicas, never better than the mapper's proved optimum under
// the same cost model (the brute-force optimum on small instances is the oracle).
#include <doctest/doctest.h>

#include "support/skip.hpp"

#if DEVPLACE_HAS_SCOTCH
#include <random>
#include <set>

#include "devplace/map/mapper.hpp"
#include "devplace/map/scotch.hpp"
#include "map/map_support.hpp"

using namespace devplace;

TEST_CASE("scotch_map: an injective mapping, at least the brute-force optimum of every model") {
  std::mt19937_64 rng(31);
  for (int it = 0; it < 40; ++it) {
    const std::size_t D = 3 + rng() % 6, R = 1 + rng() % 2, S = std::max<std::size_t>(1, (D - rng() % 2) / R);
    const auto g = test::random_stage_graph(rng, S, R);
    const auto topo = test::random_topology(rng, D, test::all_topo_kinds[it % 4]);
    const link_costs L(topo);
    const std::size_t MB = 1 + rng() % 4;
    const auto m = scotch_map(g, L, MB);
    REQUIRE(m.size() == S);
    std::set<std::size_t> used;
    for (const auto& row : m) {
      REQUIRE(row.size() == R);
      for (auto d : row) {
        CHECK(d < D);
        used.insert(d);
      }
    }
    CHECK(used.size() == S * R);
    const combined_cost model{.micro_batches = MB};
    CHECK(evaluate(g, L, m, model).objective_ms >= test::brute_force(g, L, model) * (1 - 1e-12));
  }
}

TEST_CASE("scotch_map: rejects more stage replicas than devices") {
  std::mt19937_64 rng(5);
  const auto g = test::random_stage_graph(rng, 3, 2);
  const link_costs L(test::random_topology(rng, 4, test::topo_kind::discrete));
  CHECK_THROWS_AS(static_cast<void>(scotch_map(g, L)), std::invalid_argument);
}
#else
TEST_CASE("scotch_map: Scotch not found by CMake") { devplace::test::skip("Scotch (libscotch-dev) is not installed"); }
#endif
