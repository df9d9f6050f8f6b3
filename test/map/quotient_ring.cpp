// The quotient ring cover of the mapper (map/detail/quotient_ring.hpp): the link classes it finds
// (the nodes of random_blk_2; none across a link that breaks them), the ring cost of a count
// vector against every cyclic order of the multiset, every target answered against the
// brute-force optimum on small lines of nodes (none only below the optimum, with a next value
// ≤ opt; a realised mapping within t), and the mapper's result with it against brute force.
#include "devplace/map/detail/quotient_ring.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;


TEST_CASE("quotient ring: the link classes of random_blk_2 are its nodes, and a link that breaks a node splits it") {
  const auto topo = random_blk_2(64, 1);
  const link_costs L(topo);
  const auto classes = detail::find_link_classes(L);
  std::vector<std::size_t> node_of(64);
  std::vector<std::string> names;
  for (std::size_t d = 0; d < 64; ++d) {
    const auto& n = topo.device_names()[d];
    const auto prefix = n.substr(0, n.find('/'));
    const auto it = std::find(names.begin(), names.end(), prefix);
    node_of[d] = static_cast<std::size_t>(it - names.begin());
    if (it == names.end()) names.push_back(prefix);
  }
  REQUIRE(classes.size() == names.size());
  std::size_t devices = 0;
  for (const auto& c : classes) {
    devices += c.size();
    for (const auto d : c) CHECK(node_of[d] == node_of[c.front()]);
  }
  CHECK(devices == 64);
  // a node of two or more devices whose first device gets a faster link to another node: the
  // devices of that node no longer agree outside it
  const auto big = std::find_if(classes.begin(), classes.end(), [](const auto& c) { return c.size() >= 3; });
  REQUIRE(big != classes.end());
  Eigen::MatrixXd bw = topo.bandwidth_matrix();
  const std::size_t a = big->front(), other = big == classes.begin() ? classes.back().front() : classes.front().front();
  bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(other)) *= 3;
  bw(static_cast<Eigen::Index>(other), static_cast<Eigen::Index>(a)) *= 3;
  const link_costs broken_links{matrix_topology(bw)};
  const auto broken = detail::find_link_classes(broken_links);
  std::size_t found = 0;
  for (const auto& c : broken) {
    if (std::find(c.begin(), c.end(), a) == c.end()) continue;
    ++found;
    CHECK(c != *big);  // the node is no longer a class
    for (const auto x : c)  // and the class found is one: its devices agree outside it
      for (std::size_t d = 0; d < 64; ++d)
        if (std::find(c.begin(), c.end(), d) == c.end()) CHECK(broken_links.ms_per_byte(x, d) == broken_links.ms_per_byte(a, d));
  }
  CHECK(found == 1);
}

TEST_CASE("quotient ring: the ring cost of a count vector is the best cyclic order of the multiset") {
  std::mt19937_64 rng(81);
  const auto g = test::ring_stage_graph(rng, 2, 4);
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 8 + rng() % 5;
    const link_costs L(test::line_of_nodes(rng, D));
    const auto classes = detail::find_link_classes(L);
    const detail::quotient_ring_search q(g, L, classes);
    if (!q.applies()) continue;
    const std::size_t K = classes.size();
    // the relaxed cost of two classes: the real one between them, the cheapest link inside one
    auto w = [&](std::size_t x, std::size_t y) {
      if (x != y) return L.ms_per_byte(classes[x][0], classes[y][0]);
      double m = std::numeric_limits<double>::infinity();
      for (auto p : classes[x])
        for (auto r : classes[x])
          if (p != r) m = std::min(m, L.ms_per_byte(p, r));
      return m;
    };
    for (int v = 0; v < 20; ++v) {
      const std::size_t R = 2 + rng() % 4;
      std::vector<std::uint32_t> count(K, 0);
      std::vector<std::size_t> seq;
      for (std::size_t i = 0; i < R; ++i) {
        const std::size_t x = rng() % K;
        if (count[x] < classes[x].size()) ++count[x], seq.push_back(x);
      }
      if (seq.size() < 2) continue;
      std::sort(seq.begin(), seq.end());
      double best = std::numeric_limits<double>::infinity();
      do {
        double m = 0;
        for (std::size_t i = 0; i < seq.size(); ++i) m = std::max(m, w(seq[i], seq[(i + 1) % seq.size()]));
        best = std::min(best, m);
      } while (std::next_permutation(seq.begin(), seq.end()));
      CAPTURE(it);
      CHECK(q.ring_cost(count) == best);
    }
  }
}

TEST_CASE("quotient ring: every target answered against the brute-force optimum on lines of nodes") {
  std::mt19937_64 rng(82);
  std::size_t none = 0, realised = 0, held = 0;
  for (int it = 0; it < 150; ++it) {
    const std::size_t D = 6 + rng() % 3;
    std::size_t S = 0, R = 0;
    for (int tries = 0;; ++tries) {  // S·R = D on even instances where some shape gives it
      S = 1 + rng() % 3, R = 2 + rng() % 3;
      if (S * R <= D && (it % 2 == 1 || S * R == D || tries > 50)) break;
    }
    const auto g = test::ring_stage_graph(rng, S, R);
    const link_costs L(it % 4 == 3 ? random_blk_2(D, rng()) : test::line_of_nodes(rng, D));
    const detail::quotient_ring_search q(g, L, detail::find_link_classes(L));
    if (!q.applies()) continue;
    const double opt = test::brute_force(g, L, allreduce_cost{});
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    CAPTURE(opt);
    for (const double t : {opt, opt * (1 - 1e-9), opt * 0.9, opt * 0.97, opt * 1.1, opt * 1.5}) {
      CAPTURE(t);
      const auto a = q.solve(t, {.vectors = 1u << 30, .listing_steps = 0, .packing_nodes = 0});
      REQUIRE(a.answer != detail::cover_answer::kind::unknown);
      if (a.answer == detail::cover_answer::kind::none) {
        ++none;
        CHECK(opt > t);
        CHECK(a.next_change > t);
        CHECK(a.next_change <= opt * (1 + 1e-12));
        continue;
      }
      ++held;
      const auto dev = q.realise(a, t);
      if (dev.empty()) continue;
      ++realised;
      test::check_mapping_within(g, L, allreduce_cost{}, dev, t);
    }
  }
  CHECK(none > 150);
  CHECK(held > 200);
  CHECK(realised > 150);
  MESSAGE("quotient ring targets: none " << none << ", relaxation held " << held << " (realised " << realised << ")");
}

TEST_CASE("mapper: allreduce on lines of nodes, with the quotient ring cover, objective and status equal brute force") {
  std::mt19937_64 rng(83);
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 6 + rng() % 3;
    const auto shape = test::small_shape(rng, D);
    const std::size_t S = shape.first, R = shape.second;
    const auto g = test::ring_stage_graph(rng, S, R);
    const link_costs L(test::line_of_nodes(rng, D));
    const double opt = test::brute_force(g, L, allreduce_cost{});
    // the ring cover off on every other instance: the quotient and the depth-first search answer
    const auto r = map_devices(g, L, allreduce_cost{},
                               {.threads = 1 + unsigned(it % 2), .restarts = it % 3 != 0, .oracles = it % 2 == 0 ? default_oracles() : oracles_without({"ring_cover", "quotient_ring"}),
                                .local_search = false, .neighbourhood_search = false});
    CAPTURE(it);
    test::check_proved_optimum(g, D, r, opt);
  }
}
