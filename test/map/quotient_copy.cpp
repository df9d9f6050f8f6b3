// The quotient copy cover of the mapper (map/detail/quotient_copy.hpp): the programme's count
// vectors against random class assignments (every assignment's counts listed, with τ' at most
// its relaxed time), every target decided exactly against the brute-force optimum on small lines
// of nodes (none only below the optimum, with a next value ≤ opt; found at and above it, with a
// mapping within t), and the mapper's result with it against brute force.
#include "devplace/map/detail/quotient_copy.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

namespace quotient_copy_test {

/// The limits of an exact decision: none.
constexpr detail::quotient_copy_search::limits unlimited{
    .listing_steps = 0, .states = 0, .packing_nodes = 0, .realise_steps = 0, .assignments = 0};

/// A stage graph of S stages like BERT's: a chain, every stage also exchanging with stage 0 (a hub).
stage_graph hub_stage_graph(std::mt19937_64& rng, std::size_t S, std::size_t R) {
  std::vector<double> c(S), p(S, 1e6);
  std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
  for (std::size_t s = 0; s < S; ++s) c[s] = double(10 + rng() % 10);
  for (std::size_t a = 0; a + 1 < S; ++a) m[a][a + 1] = m[a + 1][a] = double(4 + rng() % 12) * 1e6;
  for (std::size_t b = 2; b < S; ++b) m[0][b] = m[b][0] = double(1 + rng() % 4) * 1e6;
  return stage_graph(R, c, p, m);
}

}  // namespace quotient_copy_test

using quotient_copy_test::hub_stage_graph;
using quotient_copy_test::unlimited;

TEST_CASE("quotient copy: every class assignment's count vector is listed, with tau' at most its relaxed time") {
  std::mt19937_64 rng(91);
  std::size_t checked = 0;
  for (int it = 0; it < 12; ++it) {
    const std::size_t S = 6 + rng() % 7, D = 32 + rng() % 33;
    const auto g = it % 2 ? hub_stage_graph(rng, S, 1) : test::random_stage_graph(rng, S, 1);
    const link_costs L(random_blk_2(D, rng()));
    const auto classes = detail::find_link_classes(L);
    const detail::quotient_copy_search q(g, L, classes);
    REQUIRE(q.applies());
    const std::size_t K = classes.size();
    // random class assignments within the class sizes, and their relaxed copy times
    std::vector<std::vector<std::uint8_t>> counts;
    std::vector<double> times;
    for (int a = 0; a < 200; ++a) {
      std::vector<std::uint8_t> c(K, 0);
      std::vector<std::size_t> cls(S);
      const std::size_t centre = rng() % K;
      bool ok = true;
      for (std::size_t s = 0; s < S && ok; ++s) {
        std::size_t x = (centre + rng() % 3 + K - 1) % K;  // near one class, as good copies are
        for (std::size_t tries = 0; c[x] == classes[x].size() && tries < K; ++tries) x = (x + 1) % K;
        ok = c[x] < classes[x].size();
        cls[s] = x, ++c[x];
      }
      if (!ok) continue;
      double worst = 0;
      for (std::size_t s = 0; s < S; ++s) {
        double v = g.replica_compute_ms(s);
        for (auto u : g.neighbours(s)) v += g.message_bytes(s, u) * q.class_cost(cls[s], cls[u]);
        worst = std::max(worst, v);
      }
      counts.push_back(c), times.push_back(worst);
    }
    REQUIRE(!times.empty());
    // T: the time of the fastest third (the listing of every vector within the slowest random
    // assignment would be huge)
    std::vector<double> sorted(times);
    std::sort(sorted.begin(), sorted.end());
    const double T = sorted[sorted.size() / 3];
    const auto lst = q.list(T, unlimited);
    REQUIRE(lst != nullptr);
    CHECK(std::is_sorted(lst->tau.begin(), lst->tau.end()));
    for (std::size_t a = 0; a < counts.size(); ++a) {
      if (times[a] > T) continue;
      bool found = false;
      for (std::size_t e = 0; e < lst->tau.size() && !found; ++e)
        if (std::equal(counts[a].begin(), counts[a].end(), lst->flat.begin() + static_cast<std::ptrdiff_t>(e * K))) {
          found = true;
          CHECK(lst->tau[e] <= times[a] * (1 + 1e-12));
        }
      CAPTURE(it);
      CAPTURE(a);
      CHECK(found);
      ++checked;
    }
  }
  CHECK(checked > 500);
}

TEST_CASE("quotient copy: every target decided exactly against the brute-force optimum on lines of nodes") {
  std::mt19937_64 rng(92);
  std::size_t none = 0, found = 0, rejected = 0;
  for (int it = 0; it < 160; ++it) {
    const std::size_t D = 6 + rng() % 3;
    std::size_t S = 0, R = 0;
    for (int tries = 0;; ++tries) {  // S·R = D on even instances where some shape gives it
      S = 1 + rng() % 4, R = 1 + rng() % 3;
      if (S * R <= D && (it % 2 == 1 || S * R == D || tries > 50)) break;
    }
    const auto g = it % 3 == 0 ? hub_stage_graph(rng, S, R) : test::random_stage_graph(rng, S, R);
    const link_costs L(it % 4 == 3 ? random_blk_2(D, rng()) : test::line_of_nodes(rng, D));
    const detail::quotient_copy_search q(g, L, detail::find_link_classes(L));
    if (!q.applies()) continue;
    const double opt = test::brute_force(g, L, p2p_cost{});
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    CAPTURE(opt);
    // descending, then ascending targets: the listing is cached at the largest one
    for (const double t : {opt * 1.5, opt, opt * (1 - 1e-9), opt * 0.9, opt * 0.97, opt * 1.1, opt * 2}) {
      CAPTURE(t);
      const auto a = q.solve(t, unlimited);
      REQUIRE(a.answer != detail::cover_answer::kind::unknown);
      rejected += a.rejected;
      if (a.answer == detail::cover_answer::kind::none) {
        ++none;
        CHECK(opt > t);
        CHECK(a.next_change > t);
        CHECK(a.next_change <= opt * (1 + 1e-12));
        continue;
      }
      ++found;
      CHECK(opt <= t * (1 + 1e-12));
      std::vector<std::size_t> sorted(a.dev);
      std::sort(sorted.begin(), sorted.end());
      REQUIRE(sorted.size() == g.vertices());
      CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
      CHECK(sorted.back() < D);
      CHECK(evaluate_flat(g, L, p2p_cost{}, std::span<const std::size_t>(a.dev)).objective_ms <= t * (1 + 1e-12));
    }
  }
  CHECK(none > 200);
  CHECK(found > 400);
  CHECK(rejected > 0);
  MESSAGE("quotient copy targets: none " << none << ", found " << found << ", packings rejected " << rejected);
}

TEST_CASE("mapper: p2p on lines of nodes, with the quotient copy cover, objective and status equal brute force") {
  std::mt19937_64 rng(93);
  std::size_t by_cover = 0;
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 6 + rng() % 3;
    std::size_t S = 0, R = 0;
    do {
      S = 1 + rng() % 4, R = 1 + rng() % 3;
    } while (S * R > D);
    const auto g = it % 3 == 0 ? hub_stage_graph(rng, S, R) : test::random_stage_graph(rng, S, R);
    const link_costs L(test::line_of_nodes(rng, D));
    const double opt = test::brute_force(g, L, p2p_cost{});
    // every third instance with tiny limits: the cover's listing stops, the other searches answer
    const std::uint64_t nodes = it % 3 == 2 ? 1 + rng() % 40 : 1'000'000;
    const auto r = map_devices(g, L, p2p_cost{},
                               {.threads = 1 + unsigned(it % 2), .restarts = it % 3 != 0, .oracles = it % 2 == 0 ? default_oracles() : oracles_without({"copy_cover"}),
                                .copy_cover_nodes = nodes, .local_search = false, .neighbourhood_search = false});
    CAPTURE(it);
    test::check_proved_optimum(g, D, r, opt);
    by_cover += r.answered_by("quotient_copy") + r.answered_by("copy_cover");
  }
  CHECK(by_cover > 40);
  MESSAGE("mapper with the quotient copy cover: " << by_cover << " targets answered by a cover");
}

TEST_CASE("quotient copy: targets at and around the optimum decided exactly on 12-20 devices, against the depth-first mapper") {
  // The oracle is the mapper without the quotient copy cover (depth-first search and the copy
  // cover on the devices), proved optimal. At these sizes the copies have many class assignments
  // per count vector, and a packing is realised only by a combination of them that is not each
  // copy's first (a realisation that tried only the first ones answers none at the optimum).
  std::mt19937_64 rng(94);
  std::size_t none = 0, found = 0, compared = 0;
  for (int it = 0; it < 160; ++it) {
    const std::size_t D = 12 + rng() % 9, R = 2 + rng() % 3;
    const std::size_t S = std::min<std::size_t>(D / R, 2 + rng() % 4);
    const auto g = it % 3 == 0 ? hub_stage_graph(rng, S, R) : test::random_stage_graph(rng, S, R);
    const link_costs L(it % 2 ? random_blk_2(D, rng()) : test::line_of_nodes(rng, D));
    const detail::quotient_copy_search q(g, L, detail::find_link_classes(L));
    if (!q.applies()) continue;
    const auto oracle = map_devices(g, L, p2p_cost{},
                                    {.threads = 1, .timeout_s = 20, .oracles = oracles_without({"group_cover", "quotient_copy"}),
                                     .local_search = false, .neighbourhood_search = false});
    if (!oracle.optimal) continue;
    const double opt = oracle.objective_ms;
    ++compared;
    CAPTURE(it);
    CAPTURE(D);
    CAPTURE(S);
    CAPTURE(R);
    CAPTURE(opt);
    for (const double t : {opt * 1.02, opt, opt * (1 - 1e-9), opt * 0.98}) {
      CAPTURE(t);
      const auto a = q.solve(t, unlimited);
      REQUIRE(a.answer != detail::cover_answer::kind::unknown);
      if (a.answer == detail::cover_answer::kind::none) {
        ++none;
        CHECK(opt > t * (1 + 1e-12));
        CHECK(a.next_change <= opt * (1 + 1e-12));
        continue;
      }
      ++found;
      CHECK(opt <= t * (1 + 1e-12));
      CHECK(evaluate_flat(g, L, p2p_cost{}, std::span<const std::size_t>(a.dev)).objective_ms <= t * (1 + 1e-12));
    }
  }
  CHECK(compared >= 120);
  CHECK(none > 120);
  CHECK(found > 120);
  MESSAGE("quotient copy against the depth-first mapper: " << compared << " instances, none " << none << ", found " << found);
}
