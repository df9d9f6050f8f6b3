// The node-group cover of the mapper (map/detail/group_cover.hpp) on topologies of nodes (one cost
// inside each node, one between nodes): the node structure it reads, every target answered by
// it against the brute-force optimum (found iff opt ≤ t, a mapping within t; none only below the
// optimum, with a next value ≤ opt), on random_blk_1 and on random node blocks with a hub stage
// graph, S·R = D and packings; and the mapper's result with it against brute force.
#include "devplace/map/detail/group_cover.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/cover_support.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

namespace group_cover_test {

/// Nodes of 1..4 devices (at least one of two or more), each with its own bandwidth inside, one
/// bandwidth (the lowest) between nodes; the devices shuffled.
matrix_topology random_nodes(std::mt19937_64& rng, std::size_t D) {
  std::vector<std::size_t> sizes;
  for (std::size_t left = D; left > 0;) {
    const std::size_t n = std::min<std::size_t>(left, 1 + rng() % 4);
    sizes.push_back(n), left -= n;
  }
  if (std::all_of(sizes.begin(), sizes.end(), [](std::size_t n) { return n == 1; })) sizes = {2, D - 2};
  const double slow = 0.5;
  const double levels[] = {0.5, 1, 2, 5, 10, 20};
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D), slow);
  std::size_t first = 0;
  for (const auto n : sizes) {
    const double fast = levels[rng() % 6];
    for (std::size_t a = first; a < first + n; ++a)
      for (std::size_t b = first; b < first + n; ++b) bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = fast;
    first += n;
  }
  std::vector<std::size_t> perm(D);
  for (std::size_t d = 0; d < D; ++d) perm[d] = d;
  std::shuffle(perm.begin(), perm.end(), rng);
  return test::relabel(matrix_topology(bw), perm);
}

/// A stage graph whose stage 0 exchanges with every other stage (a hub) half of the time, else
/// the random chain with skip edges of the other tests.
stage_graph some_stage_graph(std::mt19937_64& rng, std::size_t S, std::size_t R, bool hub) {
  if (!hub) return test::random_stage_graph(rng, S, R);
  std::vector<double> c(S), p(S, 0.0);
  std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
  for (std::size_t s = 0; s < S; ++s) c[s] = double(rng() % 6);
  for (std::size_t s = 1; s < S; ++s) {
    m[0][s] = m[s][0] = double(1 + rng() % 3) * 1e6;
    if (s + 1 < S) m[s][s + 1] = m[s + 1][s] = double(1 + rng() % 9) * 1e6;
  }
  return stage_graph(R, c, p, m);
}

matrix_topology some_node_topology(std::mt19937_64& rng, std::size_t D, int it) {
  return it % 2 == 0 ? random_nodes(rng, D) : random_blk_1(D, rng());
}

/// Nodes of 2–4 devices with two or three of them alike (one size, one bandwidth inside: the
/// group cover merges them into a class whose groups may not pack), one bandwidth between nodes;
/// the devices shuffled.
matrix_topology alike_nodes(std::mt19937_64& rng, std::size_t& D) {
  const std::size_t n = 3 + rng() % 2, alike = n == 4 ? 2 : 2 + rng() % 2;  // at most 12 devices alike
  std::vector<std::size_t> sizes(alike, n);
  std::vector<double> fast(alike, 10.0);
  sizes.push_back(2 + rng() % 2), fast.push_back(rng() % 2 ? 10.0 : 5.0);
  D = 0;
  for (auto x : sizes) D += x;
  if (D > 11) --sizes.back(), --D;  // the last node keeps 1 device or more
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D), 1.0);
  std::size_t first = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    for (std::size_t a = first; a < first + sizes[k]; ++a)
      for (std::size_t b = first; b < first + sizes[k]; ++b) bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = fast[k];
    first += sizes[k];
  }
  std::vector<std::size_t> perm(D);
  for (std::size_t d = 0; d < D; ++d) perm[d] = d;
  std::shuffle(perm.begin(), perm.end(), rng);
  return test::relabel(matrix_topology(bw), perm);
}

/// The p2p optimum on a topology of nodes by brute force over the nodes of every vertex (the
/// devices of a node are alike: each vertex takes the next free device of its node), every time
/// the model's own.
double node_brute_force(const stage_graph& g, const link_costs& L, const detail::node_structure& n) {
  const std::size_t V = g.vertices(), K = n.nodes.size();
  std::vector<std::size_t> used(K, 0), dev(V, 0);
  double best = std::numeric_limits<double>::infinity();
  auto rec = [&](auto&& self, std::size_t v) -> void {
    if (v == V) {
      double obj = 0;
      for (std::size_t u = 0; u < V; ++u) obj = std::max(obj, static_cast<double>(p2p_cost{}.time(g, L, std::span<const std::size_t>(dev), u)));
      best = std::min(best, obj);
      return;
    }
    for (std::size_t k = 0; k < K; ++k) {
      if (used[k] == n.nodes[k].size()) continue;
      dev[v] = n.nodes[k][used[k]++];
      self(self, v + 1);
      --used[k];
    }
  };
  rec(rec, 0);
  return best;
}

}  // namespace group_cover_test

TEST_CASE("group cover: the node structure of random_blk_1, and none where a link breaks it") {
  const link_costs L(random_blk_1(64, 1));
  const auto n = detail::find_node_structure(L);
  REQUIRE(n.has_value());
  std::size_t devices = 0;
  for (const auto& d : n->nodes) devices += d.size();
  CHECK(devices == 64);
  for (std::size_t k = 0; k < n->nodes.size(); ++k)
    for (auto a : n->nodes[k])
      for (auto b : n->nodes[k])
        if (a != b) CHECK(L.ms_per_byte(a, b) == n->w_in[k]);
  CHECK(n->w_out == L.ms_per_byte(n->nodes[0][0], n->nodes[1][0]));
  // one link between two nodes faster than the others: no structure
  Eigen::MatrixXd bw = test::node_blocks({2, 3}, 10.0, 1.0).bandwidth_matrix();
  CHECK(detail::find_node_structure(link_costs(matrix_topology(bw))).has_value());
  bw(0, 4) = bw(4, 0) = 2.0;
  CHECK_FALSE(detail::find_node_structure(link_costs(matrix_topology(bw))).has_value());
  // two costs inside one node: none either
  bw = test::node_blocks({3, 2}, 10.0, 1.0).bandwidth_matrix();
  bw(0, 1) = bw(1, 0) = 5.0;
  CHECK_FALSE(detail::find_node_structure(link_costs(matrix_topology(bw))).has_value());
  // latency: none
  CHECK_FALSE(detail::find_node_structure(link_costs(random_blk_1(8, 3, 32.0 * (1ull << 30), 5.0))).has_value());
}

TEST_CASE("group cover: every target answered against the brute-force optimum") {
  std::mt19937_64 rng(71);
  std::size_t found = 0, none = 0, unknown = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 6 + rng() % 3;
    const auto sr = test::cover_shape(rng, D, it % 3 != 2);
    const std::size_t S = sr.first, R = sr.second;
    const auto g = group_cover_test::some_stage_graph(rng, S, R, it % 4 < 2);
    const link_costs L(group_cover_test::some_node_topology(rng, D, it));
    auto n = detail::find_node_structure(L);
    REQUIRE(n.has_value());
    const detail::group_cover_search c(g, L, std::move(*n));
    REQUIRE(c.applies());
    const double opt = test::brute_force(g, L, p2p_cost{});
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    CAPTURE(opt);
    const double targets[] = {opt, opt * (1 - 1e-9), opt * 0.9, opt * 1.1, opt * 0.97, opt * 1.5};
    for (const double t : targets) {
      CAPTURE(t);
      const auto a = c.solve(t, {.vectors = 1u << 30, .listing_steps = 0, .packing_nodes = 0});
      if (a.answer == detail::cover_answer::kind::unknown) {
        ++unknown;  // only from the limits, and there are none
        CHECK(false);
        continue;
      }
      if (a.answer == detail::cover_answer::kind::found) {
        ++found;
        CHECK(opt <= t);
        const double obj = evaluate_flat(g, L, p2p_cost{}, std::span<const std::size_t>(a.dev)).objective_ms;
        CHECK(obj <= t);
      } else {
        ++none;
        CHECK(opt > t);
        CHECK(a.next_change > t);
        CHECK(a.next_change <= opt);
      }
    }
  }
  CHECK(found > 200);
  CHECK(none > 150);
  MESSAGE("group cover targets: found " << found << ", none " << none << ", unknown " << unknown);
}

TEST_CASE("group cover: on alike nodes merged into classes, every target answered against a brute force over the nodes") {
  // two or three nodes of 3 or 4 devices alike: the merged class may be given groups that do not
  // pack into its nodes (3 + 3 + 2 into two nodes of 4); such packings are searched past, and
  // when none realises the decision is repeated without the merge
  std::mt19937_64 rng(74);
  std::size_t found = 0, none = 0, rejected = 0, rejected_none = 0;
  for (int it = 0; it < 400; ++it) {
    std::size_t D = 0;
    const link_costs L(group_cover_test::alike_nodes(rng, D));
    auto n = detail::find_node_structure(L);
    REQUIRE(n.has_value());
    std::size_t S = 0, R = 0;
    for (;;) {
      S = 3 + rng() % 3, R = 2 + rng() % 2;
      if (S * R <= D && S * R + 2 >= D) break;
    }
    const auto g = group_cover_test::some_stage_graph(rng, S, R, it % 3 != 2);
    const double opt = group_cover_test::node_brute_force(g, L, *n);
    const detail::group_cover_search c(g, L, std::move(*n));
    REQUIRE(c.applies());
    CAPTURE(it);
    CAPTURE(D);
    CAPTURE(S);
    CAPTURE(R);
    CAPTURE(opt);
    const double targets[] = {opt, opt * (1 - 1e-9), opt * 0.95, opt * 1.05, opt * 1.2};
    for (const double t : targets) {
      CAPTURE(t);
      // every other instance stops the merged pass after one or two packings that do not realise
      const std::size_t tries = it % 2 ? 1 + std::size_t(it % 4 / 2) : std::size_t{1} << 20;
      const auto a = c.solve(t, {.vectors = 1u << 30, .listing_steps = 0, .packing_nodes = 0, .placing_nodes = 0, .placing_tries = tries});
      rejected += a.rejected > 0;
      rejected_none += a.rejected > 0 && a.answer == detail::cover_answer::kind::none;
      REQUIRE(a.answer != detail::cover_answer::kind::unknown);
      if (a.answer == detail::cover_answer::kind::found) {
        ++found;
        CHECK(opt <= t);
        std::vector<std::size_t> dev(a.dev);
        std::sort(dev.begin(), dev.end());
        CHECK(std::adjacent_find(dev.begin(), dev.end()) == dev.end());
        CHECK(evaluate_flat(g, L, p2p_cost{}, std::span<const std::size_t>(a.dev)).objective_ms <= t);
      } else {
        ++none;
        CHECK(opt > t);
        CHECK(a.next_change > t);
        CHECK(a.next_change <= opt);
      }
    }
  }
  CHECK(found > 400);
  CHECK(none > 400);
  CHECK(rejected > 30);
  MESSAGE("group cover on alike nodes: found " << found << ", none " << none << ", decisions with packings searched past "
                                                 << rejected << " (none " << rejected_none << ")");
}

TEST_CASE("mapper: on topologies of nodes, with the group cover answering, objective and status equal brute force") {
  std::mt19937_64 rng(73);
  std::size_t by_groups = 0;
  for (int it = 0; it < 80; ++it) {
    const std::size_t D = 6 + rng() % 3;
    const auto sr = test::cover_shape(rng, D, it % 3 != 2);
    const std::size_t S = sr.first, R = sr.second;
    const auto g = group_cover_test::some_stage_graph(rng, S, R, it % 4 < 2);
    const link_costs L(group_cover_test::some_node_topology(rng, D, it));
    const double opt = test::brute_force(g, L, p2p_cost{});
    // the other covers off on every other instance: the group cover and the depth-first search answer
    const auto r = map_devices(g, L, p2p_cost{},
                               {.threads = 1 + unsigned(it % 2), .restarts = it % 3 == 0, .oracles = it % 2 == 0 ? default_oracles() : oracles_without({"copy_cover"}),
                                .local_search = false, .neighbourhood_search = false});
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    test::check_valid_mapping(g, D, r);
    CHECK(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(opt).epsilon(1e-9));
    CHECK(r.lower_bound_ms <= opt * (1 + 1e-12));
    // the targets of the same search answered by the group cover
    const mapping_search<p2p_cost> s(g, L, p2p_cost{}, {.oracles = oracles_without({"copy_cover"})});
    const auto a = s.search(opt);
    CHECK(a.found);
    by_groups += a.oracle == "group_cover";
  }
  CHECK(by_groups > 60);
  MESSAGE("mapper on nodes: targets at the optimum answered by the group cover " << by_groups << " of 80");
}
