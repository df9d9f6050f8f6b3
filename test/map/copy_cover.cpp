// The copy-cover search of the mapper (map/detail/copy_cover.hpp): the exact cover / packing solver
// against an enumeration of row subsets, every target of mapping_search answered by it against the
// brute-force optimum (S·R = D and S·R < D, symmetric, asymmetric and latency links), the mapper's
// result against brute force, and a grid whose optimum is a tiling by T-shaped copies.
#include "devplace/map/detail/copy_cover.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

namespace copy_cover_test {

/// Whether some R of the rows are pairwise disjoint: every R-subset tried.
bool disjoint_rows_exist(const std::vector<std::vector<std::uint32_t>>& rows, std::size_t R, std::size_t columns) {
  const std::size_t n = rows.size();
  if (R == 0) return true;
  std::vector<std::size_t> pick;
  std::vector<char> used(columns, 0);
  // depth-first over increasing row indices
  auto rec = [&](auto&& self, std::size_t from) -> bool {
    if (pick.size() == R) return true;
    for (std::size_t i = from; i < n; ++i) {
      bool ok = true;
      for (auto c : rows[i]) ok = ok && !used[c];
      if (!ok) continue;
      for (auto c : rows[i]) used[c] = 1;
      pick.push_back(i);
      if (self(self, i + 1)) return true;
      pick.pop_back();
      for (auto c : rows[i]) used[c] = 0;
    }
    return false;
  };
  return rec(rec, 0);
}

/// S·R = D when `exact` (a cover of all devices), else any shape with S·R ≤ D, R ≥ 2.
std::pair<std::size_t, std::size_t> shape(std::mt19937_64& rng, std::size_t D, bool exact) {
  for (;;) {
    const std::size_t S = 1 + rng() % D;
    const std::size_t R = exact ? D / S : 2 + rng() % D;
    if (R >= 2 && S * R <= D && (!exact || S * R == D)) return {S, R};
  }
}

}  // namespace copy_cover_test

TEST_CASE("copy cover: the packing solver finds R disjoint rows exactly when an enumeration of row subsets does") {
  std::mt19937_64 rng(61);
  std::size_t found = 0, none = 0;
  for (int it = 0; it < 2000; ++it) {
    const std::size_t C = 2 + rng() % 9, width = 1 + rng() % 3;
    if (width > C) continue;
    const std::size_t R = 1 + rng() % (C / width);
    const std::size_t n = rng() % 14;
    std::vector<std::vector<std::uint32_t>> rows;
    std::vector<std::uint32_t> flat;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::uint32_t> cols(C);
      for (std::size_t c = 0; c < C; ++c) cols[c] = static_cast<std::uint32_t>(c);
      std::shuffle(cols.begin(), cols.end(), rng);
      cols.resize(width);
      rows.push_back(cols);
      flat.insert(flat.end(), cols.begin(), cols.end());
    }
    detail::exact_cover_packing x(C, width, std::span<const std::uint32_t>(flat));
    const auto o = x.solve(R, 0);
    const bool expected = copy_cover_test::disjoint_rows_exist(rows, R, C);
    CAPTURE(it);
    REQUIRE(o != detail::exact_cover_packing::outcome::stopped);
    CHECK((o == detail::exact_cover_packing::outcome::found) == expected);
    if (o == detail::exact_cover_packing::outcome::found) {
      ++found;
      REQUIRE(x.solution().size() == R);
      std::vector<char> used(C, 0);
      for (auto r : x.solution()) {
        REQUIRE(r < n);
        for (auto c : rows[r]) {
          CHECK_FALSE(used[c]);
          used[c] = 1;
        }
      }
    } else {
      ++none;
    }
  }
  CHECK(found > 200);
  CHECK(none > 200);
}

TEST_CASE("copy cover: a node budget stops the packing solver without an answer") {
  // Two disjoint K5 (columns 0..4 and 5..9), their edges as rows: no 5 disjoint edges (odd
  // components), which takes more than 3 nodes to prove; 4 disjoint edges exist.
  std::vector<std::uint32_t> flat;
  for (std::uint32_t base : {0u, 5u})
    for (std::uint32_t a = 0; a < 5; ++a)
      for (std::uint32_t b = a + 1; b < 5; ++b) flat.push_back(base + a), flat.push_back(base + b);
  detail::exact_cover_packing x(10, 2, std::span<const std::uint32_t>(flat));
  CHECK(x.solve(5, 3) == detail::exact_cover_packing::outcome::stopped);
  CHECK(x.solve(5, 0) == detail::exact_cover_packing::outcome::none);
  CHECK(x.nodes() > 3);
  CHECK(x.solve(4, 0) == detail::exact_cover_packing::outcome::found);
}

TEST_CASE("copy cover: it applies to p2p with equal replica counts only") {
  std::mt19937_64 rng(62);
  const auto g = test::random_stage_graph(rng, 3, 2);
  const link_costs L(mesh2d(2, 4));
  std::vector<std::vector<std::size_t>> p2p_deps, ar_deps;
  for (std::size_t v = 0; v < g.vertices(); ++v) {
    p2p_deps.push_back(p2p_cost{}.dependencies(g, v));
    ar_deps.push_back(allreduce_cost{}.dependencies(g, v));
  }
  CHECK(detail::copy_cover_applies(p2p_cost{}, g, L, p2p_deps));
  CHECK_FALSE(detail::copy_cover_applies(allreduce_cost{}, g, L, ar_deps));
  // a model that declared the copies symmetry but read another copy would not be exact
  CHECK_FALSE(detail::copy_cover_applies(p2p_cost{}, g, L, ar_deps));
}

TEST_CASE("mapping_search: the copy cover answers every target exactly against brute force") {
  // restarts off: the copy cover answers each target before any depth-first search. The
  // brute-force optimum decides which answer is right; a failed target's certified bound must lie
  // in (t, opt]. Targets come in random order, so some are answered from the listing of a larger
  // one (filtered), others list anew.
  std::mt19937_64 rng(63);
  std::size_t by_cover = 0, infeasible = 0, packings = 0;
  for (int it = 0; it < 240; ++it) {
    const std::size_t D = 4 + rng() % 5;  // 4..8
    const bool exact = it % 2 == 0;
    const auto sr = copy_cover_test::shape(rng, D, exact);
    const std::size_t S = sr.first, R = sr.second;  // plain variables: CAPTURE is a lambda
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const double opt = test::brute_force(g, L, p2p_cost{});
    const mapping_search<p2p_cost> s(g, L, p2p_cost{}, {.restarts = false});
    std::uniform_real_distribution<double> frac(0.5, 1.3);
    std::vector<double> targets{opt * (1 - 1e-6), opt, s.initial_lower_bound()};
    for (int k = 0; k < 4; ++k) targets.push_back(opt * frac(rng));
    std::shuffle(targets.begin(), targets.end(), rng);
    for (const double t : targets) {
      CAPTURE(it);
      CAPTURE(S);
      CAPTURE(R);
      CAPTURE(t);
      CAPTURE(opt);
      const auto a = s.search(t);
      CHECK(a.completed);
      CHECK(a.by_copy_cover);
      by_cover += a.by_copy_cover;
      CHECK(a.found == (opt <= t));
      if (a.found) {
        CHECK(a.objective_ms <= t);
        CHECK(evaluate_flat(g, L, p2p_cost{}, std::span<const std::size_t>(a.dev)).objective_ms == doctest::Approx(a.objective_ms));
        packings += S * R < D;
      } else {
        CHECK(a.next_lower_bound_ms > t);
        CHECK(a.next_lower_bound_ms <= opt * (1 + 1e-12));
        ++infeasible;
      }
    }
  }
  CHECK(by_cover > 1000);
  CHECK(infeasible > 300);
  CHECK(packings > 100);
  MESSAGE("targets answered by the copy cover: " << by_cover << ", infeasible " << infeasible << ", packings found " << packings);
}

TEST_CASE("mapper: with the copy cover answering, objective and status equal brute force") {
  std::mt19937_64 rng(64);
  std::size_t by_cover = 0, by_dfs = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 4 + rng() % 5;
    const auto sr = copy_cover_test::shape(rng, D, it % 2 == 0);
    const std::size_t S = sr.first, R = sr.second;  // plain variables: CAPTURE is a lambda
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const double opt = test::brute_force(g, L, p2p_cost{});
    // every third instance with limits the listing or the cover reach: the depth-first search
    // answers those targets instead
    mapper_options o{.threads = 1 + unsigned(it % 2), .restarts = false};
    o.copy_component_bound = false;  // its higher start leaves fewer targets for the cover to answer
    if (it % 3 == 2) {
      o.max_copy_embeddings = 1 + rng() % 3;
      o.copy_cover_nodes = 1 + rng() % 40;
    }
    const auto r = map_devices(g, L, p2p_cost{}, o);
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    test::check_valid_mapping(g, D, r);
    CHECK(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(opt).epsilon(1e-9));
    CHECK(r.lower_bound_ms <= opt * (1 + 1e-12));
    (it % 3 == 2 ? by_dfs : by_cover) += it % 3 == 2 ? r.searches - r.searches_by_copy_cover : r.searches_by_copy_cover;
  }
  CHECK(by_cover > 50);
  CHECK(by_dfs > 20);
  MESSAGE("mapper targets answered by the copy cover: " << by_cover << ", by the depth-first search under tight limits: " << by_dfs);
}

TEST_CASE("mapper: an 8 x 8 mesh tiled by 16 T-shaped copies is proved optimal") {
  // A star of 4 stages (centre 0 sends M to 1, 2, 3), 16 replicas on the 64 devices of an 8 x 8
  // mesh: every stage at its per-device bound needs the centre's three neighbours one hop away,
  // i.e. a tiling of the mesh by T tetrominoes (which exists: 4 per 4 x 4 block). Its objective,
  // by hand: c + 3 M w(1 hop).
  const double M = 64e6, c = 1;
  std::vector<std::vector<double>> m(4, std::vector<double>(4, 0.0));
  for (std::size_t k = 1; k < 4; ++k) m[0][k] = m[k][0] = M;
  const stage_graph g(16, {c, c, c, c}, {0, 0, 0, 0}, m);
  const auto topo = mesh2d(8, 8);
  const link_costs L(topo);
  const double by_hand = c + 3 * M * L.ms_per_byte(0, 1);
  const auto r = map_devices(g, L, p2p_cost{}, {.threads = 2, .timeout_s = 60});
  test::check_valid_mapping(g, 64, r);
  CHECK(r.status == status::optimal);
  CHECK(r.objective_ms == doctest::Approx(by_hand).epsilon(1e-12));
  CHECK(r.searches_by_copy_cover >= 1);
  // every copy is a T: its centre one hop from each of its three leaves
  for (std::size_t q = 0; q < 16; ++q)
    for (std::size_t k = 1; k < 4; ++k) CHECK(L.ms_per_byte(r.device_of[0][q], r.device_of[k][q]) == L.ms_per_byte(0, 1));
}
