// The copy-cover search of the mapper (map/detail/copy_cover.hpp): the exact cover / packing
// solvers (dancing links and bit masks) against an enumeration of row subsets and against each
// other (the same nodes and rows), every target of mapping_search answered by it against the
// brute-force optimum (S·R = D and S·R < D, symmetric, asymmetric and latency links), the mapper's
// result against brute force, and a grid whose optimum is a tiling by T-shaped copies; on
// topologies with twin classes (the quotient: count vectors covering the class sizes), the class
// cover solver against an enumeration of count-vector multisets, and every target and the
// mapper's result against brute force.
#include "devplace/map/detail/copy_cover.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/mapper.hpp"
#include "devplace/map/symmetry.hpp"
#include "devplace/topology/generators.hpp"
#include "map/cover_support.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

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
    const bool expected = test::disjoint_rows_exist(rows, R, C);
    CAPTURE(it);
    auto check = [&](auto& x) {  // both solvers: dancing links and bit masks
      const auto o = x.solve(R, 0);
      REQUIRE(o != detail::packing_outcome::stopped);
      CHECK((o == detail::packing_outcome::found) == expected);
      if (o != detail::packing_outcome::found) return;
      REQUIRE(x.solution().size() == R);
      std::vector<char> used(C, 0);
      for (auto r : x.solution()) {
        REQUIRE(r < n);
        for (auto c : rows[r]) {
          CHECK_FALSE(used[c]);
          used[c] = 1;
        }
      }
    };
    test::with_both_packing_solvers(C, width, flat, check);
    found += expected;
    none += !expected;
  }
  CHECK(found > 200);
  CHECK(none > 200);
}

TEST_CASE("copy cover: the bit-mask packing solver visits the same nodes and returns the same rows as the dancing links") {
  // Two independent implementations of the same branching (the free column with the fewest live
  // rows, the lowest among equals; rows in order; then the column left empty): on every instance
  // the same outcome, node count and rows, with and without spare columns and budgets.
  std::mt19937_64 rng(64);
  std::size_t found = 0, none = 0, stopped = 0, wide = 0;
  for (int it = 0; it < 1500; ++it) {
    const std::size_t C = 2 + rng() % 63, width = 1 + rng() % std::min<std::size_t>(8, C);
    const std::size_t R = 1 + rng() % (C / width);
    const std::size_t n = rng() % (it % 3 == 0 ? 400 : 60);
    std::vector<std::uint32_t> flat;
    std::vector<std::uint32_t> cols(C);
    for (std::size_t i = 0; i < n; ++i) {
      std::iota(cols.begin(), cols.end(), std::uint32_t{0});
      std::shuffle(cols.begin(), cols.end(), rng);
      flat.insert(flat.end(), cols.begin(), cols.begin() + static_cast<std::ptrdiff_t>(width));
    }
    const std::uint64_t budget = it % 4 == 0 ? 1 + rng() % 50 : 0;
    const auto never = std::chrono::steady_clock::time_point::max();
    detail::exact_cover_packing links(C, width, std::span<const std::uint32_t>(flat));
    detail::bitset_cover_packing masks(C, width, std::span<const std::uint32_t>(flat));
    const auto a = links.solve(R, budget, nullptr, never);
    const auto b = masks.solve(R, budget, nullptr, never);
    CAPTURE(it);
    CHECK(a == b);
    CHECK(links.nodes() == masks.nodes());
    if (a == detail::packing_outcome::found && b == detail::packing_outcome::found) CHECK(links.solution() == masks.solution());
    const auto c = detail::solve_packing(C, width, std::span<const std::uint32_t>(flat), R, budget, nullptr, never);
    CHECK(c.outcome == b);
    CHECK(c.nodes == masks.nodes());
    found += a == detail::packing_outcome::found;
    none += a == detail::packing_outcome::none;
    stopped += a == detail::packing_outcome::stopped;
    wide += C > 32 && links.nodes() > 20;
  }
  CHECK(found > 200);
  CHECK(none > 200);
  CHECK(stopped > 50);
  CHECK(wide > 50);
  MESSAGE("found " << found << ", none " << none << ", stopped " << stopped << ", wide searches " << wide);
}

TEST_CASE("copy cover: the bit-mask packing solver rejects what it cannot represent") {
  const std::vector<std::uint32_t> ok{0, 1, 2, 3}, outside{0, 4}, twice{1, 1}, ragged{0, 1, 2};
  CHECK_THROWS_AS(detail::bitset_cover_packing(65, 2, std::span<const std::uint32_t>(ok)), std::invalid_argument);
  CHECK_THROWS_AS(detail::bitset_cover_packing(4, 2, std::span<const std::uint32_t>(outside)), std::invalid_argument);
  CHECK_THROWS_AS(detail::bitset_cover_packing(4, 2, std::span<const std::uint32_t>(twice)), std::invalid_argument);
  CHECK_THROWS_AS(detail::bitset_cover_packing(4, 2, std::span<const std::uint32_t>(ragged)), std::invalid_argument);
  detail::bitset_cover_packing x(4, 2, std::span<const std::uint32_t>(ok));
  CHECK(x.solve(2, 0) == detail::packing_outcome::found);
  CHECK(x.solve(3, 0) == detail::packing_outcome::none);  // 3 rows of 2 > 4 columns
  // 65 columns and more go to the dancing links
  std::vector<std::uint32_t> big;
  for (std::uint32_t c = 0; c < 66; ++c) big.push_back(c);
  const auto r = detail::solve_packing(66, 2, std::span<const std::uint32_t>(big), 33, 0);
  CHECK(r.outcome == detail::packing_outcome::found);
  CHECK(r.solution.size() == 33);
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
  test::target_counts n;
  for (int it = 0; it < 240; ++it) {
    const std::size_t D = 4 + rng() % 5;  // 4..8
    const bool exact = it % 2 == 0;
    const auto sr = test::cover_shape(rng, D, exact);
    const std::size_t S = sr.first, R = sr.second;  // plain variables: CAPTURE is a lambda
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const double opt = test::brute_force(g, L, p2p_cost{});
    const mapping_search<p2p_cost> s(g, L, p2p_cost{}, {.restarts = false});
    test::check_cover_targets(s, g, L, opt, it, rng, n);
  }
  CHECK(n.by_cover > 1000);
  CHECK(n.infeasible > 300);
  CHECK(n.packings > 100);
  MESSAGE("targets answered by the copy cover: " << n.by_cover << ", infeasible " << n.infeasible << ", packings found " << n.packings);
}

TEST_CASE("mapper: with the copy cover answering, objective and status equal brute force") {
  std::mt19937_64 rng(64);
  std::size_t by_cover = 0, by_dfs = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 4 + rng() % 5;
    const auto sr = test::cover_shape(rng, D, it % 2 == 0);
    const auto g = test::random_stage_graph(rng, sr.first, sr.second);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    mapper_options o{.threads = 1 + unsigned(it % 2), .restarts = false};
    o.copy_component_bound = false;  // its higher start leaves fewer targets for the cover to answer
    test::check_mapper_with_cover(g, L, p2p_cost{}, o, rng, it, by_cover, by_dfs);
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
  CHECK(r.answered_by("copy_cover") >= 1);
  // every copy is a T: its centre one hop from each of its three leaves
  for (std::size_t q = 0; q < 16; ++q)
    for (std::size_t k = 1; k < 4; ++k) CHECK(L.ms_per_byte(r.device_of[0][q], r.device_of[k][q]) == L.ms_per_byte(0, 1));
}

namespace copy_cover_test {

/// D devices in twin classes of 1..4 devices (at least one of two or more), the devices of a
/// class scattered over the ids: the link between two devices depends only on their classes
/// (one draw per ordered class pair, the diagonal the intra-class link), so the devices of a
/// class are twins. `asymmetric`: both directions drawn; `latency`: per class pair.
matrix_topology twin_topology(std::mt19937_64& rng, std::size_t D, bool asymmetric, bool latency) {
  std::vector<std::size_t> cls;
  for (std::size_t k = 0; cls.size() < D; ++k) {
    const std::size_t n = std::min<std::size_t>(D - cls.size(), 1 + rng() % 4);
    cls.insert(cls.end(), n, k);
  }
  if (cls.back() + 1 == D) cls[1] = 0;  // every class a single device: make one a pair
  std::shuffle(cls.begin(), cls.end(), rng);
  const std::size_t K = *std::max_element(cls.begin(), cls.end()) + 1;
  const double levels[] = {1, 2, 5, 10};
  std::vector<double> w(K * K), l(K * K, 0.0);
  for (std::size_t a = 0; a < K; ++a)
    for (std::size_t b = a; b < K; ++b) {
      w[a * K + b] = w[b * K + a] = levels[rng() % 4];
      if (asymmetric) w[b * K + a] = levels[rng() % 4];
      if (latency) l[a * K + b] = l[b * K + a] = double(rng() % 4) * 100.0;
    }
  const auto n = static_cast<Eigen::Index>(D);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(n, n), lat = Eigen::MatrixXd::Zero(n, n);
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) {
        bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = w[cls[a] * K + cls[b]];
        lat(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = l[cls[a] * K + cls[b]];
      }
  return matrix_topology(bw, lat, std::vector<double>(D, 1e9));
}

/// One of the twin topologies of the tests below: the class-block ones above, or random_blk_1
/// (nodes of 1..8 devices, with a uniform latency on every other instance).
matrix_topology some_twin_topology(std::mt19937_64& rng, std::size_t D, int it) {
  switch (it % 4) {
    case 0: return twin_topology(rng, D, false, false);
    case 1: return twin_topology(rng, D, true, it % 8 == 1);
    case 2: return twin_topology(rng, D, false, true);
    default: return random_blk_1(D, rng(), 32.0 * (1ull << 30), it % 8 == 3 ? 5.0 : 0.0);
  }
}

/// Whether R count vectors (repetition allowed) sum to at most `sizes` in every class: every
/// multiset tried, by nondecreasing vector index.
bool count_vectors_fit(const std::vector<std::vector<std::uint32_t>>& vectors, std::size_t R, std::vector<std::uint32_t> rem) {
  auto rec = [&](auto&& self, std::size_t from, std::size_t left) -> bool {
    if (left == 0) return true;
    for (std::size_t e = from; e < vectors.size(); ++e) {
      bool fits = true;
      for (std::size_t k = 0; k < rem.size(); ++k) fits = fits && vectors[e][k] <= rem[k];
      if (!fits) continue;
      for (std::size_t k = 0; k < rem.size(); ++k) rem[k] -= vectors[e][k];
      const bool ok = self(self, e, left - 1);
      for (std::size_t k = 0; k < rem.size(); ++k) rem[k] += vectors[e][k];
      if (ok) return true;
    }
    return false;
  };
  return rec(rec, 0, R);
}

/// Up to n random count vectors over the classes of `sizes`, each summing to S within the sizes,
/// no two equal (`tries` draws at most).
std::vector<std::vector<std::uint32_t>> random_count_vectors(std::mt19937_64& rng, const std::vector<std::uint32_t>& sizes, std::size_t S,
                                                             std::size_t n, std::size_t tries) {
  const std::size_t K = sizes.size();
  std::vector<std::vector<std::uint32_t>> vectors;
  for (std::size_t t = 0; vectors.size() < n && t < tries; ++t) {
    std::vector<std::uint32_t> c(K, 0);
    bool ok = true;
    for (std::size_t s = 0; s < S && ok; ++s) {
      const std::size_t k = rng() % K;
      ok = ++c[k] <= sizes[k];
    }
    if (ok && std::find(vectors.begin(), vectors.end(), c) == vectors.end()) vectors.push_back(c);
  }
  return vectors;
}

/// The count vectors as the class cover solver's rows: the nonzero counts, and where each starts.
std::pair<std::vector<detail::class_cover_packing::entry>, std::vector<std::size_t>> packing_rows(
    const std::vector<std::vector<std::uint32_t>>& vectors) {
  std::vector<detail::class_cover_packing::entry> entries;
  std::vector<std::size_t> starts{0};
  for (const auto& c : vectors) {
    for (std::size_t k = 0; k < c.size(); ++k)
      if (c[k] > 0) entries.push_back({static_cast<std::uint32_t>(k), c[k]});
    starts.push_back(entries.size());
  }
  return {entries, starts};
}

}  // namespace copy_cover_test

TEST_CASE("copy cover: the class cover solver finds R count vectors within the class sizes exactly when an enumeration of multisets does") {
  std::mt19937_64 rng(65);
  std::size_t found = 0, none = 0, with_spare = 0;
  for (int it = 0; it < 3000; ++it) {
    const std::size_t K = 1 + rng() % 5, S = 1 + rng() % 4;
    std::vector<std::uint32_t> sizes(K);
    std::size_t total = 0;
    for (auto& n : sizes) total += n = static_cast<std::uint32_t>(1 + rng() % 4);
    if (total < S) continue;
    const std::size_t R = 1 + rng() % (total / S);
    // random count vectors summing to S, each within the sizes, no two equal
    const std::size_t n = rng() % 8;
    const auto vectors = copy_cover_test::random_count_vectors(rng, sizes, S, n, 50);
    const auto [entries, starts] = copy_cover_test::packing_rows(vectors);
    detail::class_cover_packing x{std::span<const std::uint32_t>(sizes), std::span<const detail::class_cover_packing::entry>(entries),
                                  std::span<const std::size_t>(starts)};
    // a tiny memo on every other instance: the solver must stay exact when its memo is full
    const auto o = x.solve(R, 0, nullptr, std::chrono::steady_clock::time_point::max(), it % 2 ? std::size_t{64} << 20 : 200);
    const bool expected = copy_cover_test::count_vectors_fit(vectors, R, sizes);
    CAPTURE(it);
    REQUIRE(o != detail::class_cover_packing::outcome::stopped);
    CHECK((o == detail::class_cover_packing::outcome::found) == expected);
    if (o == detail::class_cover_packing::outcome::found) {
      ++found;
      with_spare += S * R < total;
      REQUIRE(x.solution().size() == R);
      std::vector<std::uint32_t> sum(K, 0);
      for (auto e : x.solution()) {
        REQUIRE(e < vectors.size());
        for (std::size_t k = 0; k < K; ++k) sum[k] += vectors[e][k];
      }
      for (std::size_t k = 0; k < K; ++k) CHECK(sum[k] <= sizes[k]);
    } else {
      ++none;
    }
  }
  CHECK(found > 300);
  CHECK(none > 300);
  CHECK(with_spare > 100);
  MESSAGE("class covers found " << found << " (with spare devices " << with_spare << "), none " << none);
}

TEST_CASE("copy cover: the class cover solver, with bit sets and with lists, exact on larger instances and past rejected solutions") {
  // instances with more vectors (bit sets that turn into lists below the root), most without
  // spare devices (the hash lookups of the last one and two copies); a test rejecting the
  // solutions that hold vector 0 twice or a vector of odd index next to one of index ≡ 1 mod 3:
  // the answer must be that of the enumeration over the accepted multisets
  std::mt19937_64 rng(66);
  std::size_t found = 0, none = 0, exact = 0, rejected = 0;
  for (int it = 0; it < 1500; ++it) {
    const std::size_t K = 2 + rng() % 6, S = 2 + rng() % 4;
    std::vector<std::uint32_t> sizes(K);
    std::size_t total = 0;
    for (auto& n : sizes) total += n = static_cast<std::uint32_t>(1 + rng() % 6);
    if (total < 2 * S) continue;
    const std::size_t R = 2 + rng() % std::min<std::size_t>(4, total / S - 1);
    if (it % 3 != 0) {  // no spare devices: the class sizes sum to S·R
      while (total > S * R) {
        const std::size_t k = rng() % K;
        if (sizes[k] > 0) --sizes[k], --total;
      }
    }
    const std::size_t n = 4 + rng() % (it % 4 == 0 ? 200 : 24);
    const auto vectors = copy_cover_test::random_count_vectors(rng, sizes, S, n, 3 * n);
    if (vectors.empty()) continue;
    const auto [entries, starts] = copy_cover_test::packing_rows(vectors);
    const bool test = it % 2 == 1;
    auto acceptable = [](std::span<const std::size_t> sol) {
      std::size_t zeros = 0;
      bool odd = false, third = false;
      for (auto e : sol) zeros += e == 0, odd = odd || e % 2 == 1, third = third || e % 3 == 1;
      return zeros < 2 && !(odd && third && sol.size() > 1);
    };
    // the enumeration over multisets by nondecreasing index, the test applied to each
    bool expected = false;
    {
      std::vector<std::uint32_t> rem(sizes);
      std::vector<std::size_t> pick;
      auto rec = [&](auto&& self, std::size_t from, std::size_t left) -> bool {
        if (left == 0) return !test || acceptable(pick);
        for (std::size_t e = from; e < vectors.size(); ++e) {
          bool fits = true;
          for (std::size_t k = 0; k < K; ++k) fits = fits && vectors[e][k] <= rem[k];
          if (!fits) continue;
          for (std::size_t k = 0; k < K; ++k) rem[k] -= vectors[e][k];
          pick.push_back(e);
          const bool ok = self(self, e, left - 1);
          pick.pop_back();
          for (std::size_t k = 0; k < K; ++k) rem[k] += vectors[e][k];
          if (ok) return true;
        }
        return false;
      };
      expected = rec(rec, 0, R);
    }
    CAPTURE(it);
    for (const bool bit_sets : {true, false}) {
      CAPTURE(bit_sets);
      detail::class_cover_packing x{std::span<const std::uint32_t>(sizes), std::span<const detail::class_cover_packing::entry>(entries),
                                    std::span<const std::size_t>(starts), bit_sets};
      if (test) x.set_accept(acceptable, std::size_t{1} << 30);
      const auto o = x.solve(R, 0);
      REQUIRE(o != detail::class_cover_packing::outcome::stopped);
      CHECK((o == detail::class_cover_packing::outcome::found) == expected);
      if (o == detail::class_cover_packing::outcome::found) {
        REQUIRE(x.solution().size() == R);
        if (test) CHECK(acceptable(x.solution()));
        std::vector<std::uint32_t> sum(K, 0);
        for (auto e : x.solution()) {
          REQUIRE(e < vectors.size());
          for (std::size_t k = 0; k < K; ++k) sum[k] += vectors[e][k];
        }
        for (std::size_t k = 0; k < K; ++k) CHECK(sum[k] <= sizes[k]);
      }
      if (bit_sets) {
        found += o == detail::class_cover_packing::outcome::found;
        none += o == detail::class_cover_packing::outcome::none;
        exact += S * R == total;
        rejected += x.rejections() > 0;
      }
    }
  }
  CHECK(found > 200);
  CHECK(none > 200);
  CHECK(exact > 400);
  CHECK(rejected > 100);
  MESSAGE("class covers found " << found << ", none " << none << " (without spare devices " << exact << ", with rejections " << rejected << ")");
}

TEST_CASE("copy cover: the class cover solver stops after its most rejections") {
  // two classes of 2, vectors (1, 1), (2, 0), (0, 2): two copies fit two ways; a test rejecting
  // every solution stops the search after the most rejections allowed
  const std::vector<std::uint32_t> sizes{2, 2};
  const std::vector<detail::class_cover_packing::entry> entries{{0, 1}, {1, 1}, {0, 2}, {1, 2}};
  const std::vector<std::size_t> starts{0, 2, 3, 4};
  detail::class_cover_packing x{std::span<const std::uint32_t>(sizes), std::span<const detail::class_cover_packing::entry>(entries),
                                std::span<const std::size_t>(starts)};
  std::size_t calls = 0;
  x.set_accept([&](std::span<const std::size_t>) { return ++calls > 100; }, 2);
  CHECK(x.solve(2, 0) == detail::class_cover_packing::outcome::stopped);
  CHECK(x.rejections() == 2);
  x.set_accept([&](std::span<const std::size_t> sol) { return std::find(sol.begin(), sol.end(), std::size_t{0}) == sol.end(); }, 10);
  REQUIRE(x.solve(2, 0) == detail::class_cover_packing::outcome::found);
  std::vector<std::size_t> sol(x.solution());
  std::sort(sol.begin(), sol.end());
  CHECK(sol == std::vector<std::size_t>{1, 2});
}

TEST_CASE("copy cover: a node budget stops the class cover solver without an answer") {
  // three classes of 3 devices, count vectors (2, 0, 0), (0, 2, 0), (0, 0, 2): 4 copies of 2 fit
  // in 9 devices but not in the classes (each class holds one copy); proving it takes more than
  // 2 nodes
  const std::vector<std::uint32_t> sizes{3, 3, 3};
  const std::vector<detail::class_cover_packing::entry> entries{{0, 2}, {1, 2}, {2, 2}};
  const std::vector<std::size_t> starts{0, 1, 2, 3};
  detail::class_cover_packing x{std::span<const std::uint32_t>(sizes), std::span<const detail::class_cover_packing::entry>(entries),
                                std::span<const std::size_t>(starts)};
  CHECK(x.solve(4, 2) == detail::class_cover_packing::outcome::stopped);
  CHECK(x.solve(4, 0) == detail::class_cover_packing::outcome::none);
  CHECK(x.nodes() > 2);
  CHECK(x.solve(3, 0) == detail::class_cover_packing::outcome::found);
}

TEST_CASE("mapping_search: on twin classes the copy cover answers every target exactly against brute force") {
  // as above, on topologies with twin classes, where the copy cover lists the embeddings up to
  // twin permutations and covers the class sizes with count vectors
  std::mt19937_64 rng(66);
  test::target_counts n;
  std::size_t quotients = 0;
  for (int it = 0; it < 160; ++it) {
    const std::size_t D = 6 + rng() % 4;  // 6..9
    const bool exact = it % 2 == 0;
    const auto sr = test::cover_shape(rng, D, exact);
    const std::size_t S = sr.first, R = sr.second;  // plain variables: CAPTURE is a lambda
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(copy_cover_test::some_twin_topology(rng, D, it));
    const double opt = test::brute_force(g, L, p2p_cost{});
    // the node-group cover (which answers first on random_blk_1) off: the copy cover is tested here
    const mapping_search<p2p_cost> s(g, L, p2p_cost{}, {.restarts = false, .oracles = oracles_without({"group_cover"})});
    {
      std::vector<std::vector<std::size_t>> deps;
      for (std::size_t v = 0; v < g.vertices(); ++v) deps.push_back(p2p_cost{}.dependencies(g, v));
      const detail::copy_cover_search<p2p_cost> c(g, L, s.device_bounds(), deps, device_twins(L));
      quotients += c.on_twin_classes();
    }
    test::check_cover_targets(s, g, L, opt, it, rng, n);
  }
  CHECK(quotients == 160);
  CHECK(n.by_cover > 700);
  CHECK(n.infeasible > 200);
  CHECK(n.packings > 50);
  MESSAGE("twin classes: targets answered by the copy cover " << n.by_cover << ", infeasible " << n.infeasible << ", packings found " << n.packings);
}

TEST_CASE("mapper: on twin classes, with the copy cover answering, objective and status equal brute force") {
  std::mt19937_64 rng(67);
  std::size_t by_cover = 0, searches = 0;
  for (int it = 0; it < 100; ++it) {
    const std::size_t D = 6 + rng() % 4;
    const auto sr = test::cover_shape(rng, D, it % 2 == 0);
    const std::size_t S = sr.first, R = sr.second;  // plain variables: CAPTURE is a lambda
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(copy_cover_test::some_twin_topology(rng, D, it));
    const double opt = test::brute_force(g, L, p2p_cost{});
    // without local search, and on every other instance from the weaker bound of eq. 10: more targets searched
    const auto r = map_devices(g, L, p2p_cost{},
                               {.threads = 1 + unsigned(it % 2), .assignment_bound = it % 4 < 2, .restarts = it % 3 == 0,
                                .oracles = oracles_without({"group_cover"}), .local_search = false});
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    test::check_valid_mapping(g, D, r);
    CHECK(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(opt).epsilon(1e-9));
    CHECK(r.lower_bound_ms <= opt * (1 + 1e-12));
    by_cover += test::by_copy_oracles(r);
    searches += r.searches;
  }
  CHECK(by_cover > 20);
  MESSAGE("twin classes: mapper targets searched " << searches << ", answered by the copy cover " << by_cover);
}
