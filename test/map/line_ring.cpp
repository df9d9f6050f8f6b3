// The line ring cover of the mapper (map/detail/line_ring.hpp): the Robinson order of the link
// classes (a line of nodes shuffled, against every permutation on small matrices), the relaxed
// costs, the closed-form ring cost against every cyclic order of the multiset, every target decided
// exactly against a brute-force packing of the relaxation, none only below the brute-force
// optimum of the real topology and realised mappings within t, and the mapper's result with it
// against brute force (and on random_blk_2 with rings of 16).
#include "devplace/map/detail/line_ring.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

namespace {

/// D devices in nodes of 1–3 along a line, links between nodes at distance d of bandwidth
/// 4 / ⌈d / 2⌉ (ties between distances), inside a node 1, 8, 16 or 30; shuffled.
matrix_topology line_with_ties(std::mt19937_64& rng, std::size_t D) {
  std::vector<std::size_t> node;
  for (std::size_t k = 0; node.size() < D; ++k)
    for (std::size_t n = 1 + rng() % 3; n > 0 && node.size() < D; --n) node.push_back(k);
  const double inside[] = {1.0, 8.0, 16.0, 30.0};
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = a + 1; b < D; ++b) {
      const double v = node[a] == node[b] ? inside[rng() % 4] : 4.0 / static_cast<double>((node[b] - node[a] + 1) / 2);
      bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = bw(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(a)) = v;
    }
  std::vector<std::size_t> perm(D);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  return test::relabel(matrix_topology(bw), perm);
}

/// D devices alone at random points of a line (1 to 3 apart), bandwidth 4 / distance; shuffled.
matrix_topology chain(std::mt19937_64& rng, std::size_t D) {
  std::vector<double> x(D, 0);
  for (std::size_t d = 1; d < D; ++d) x[d] = x[d - 1] + double(1 + rng() % 3);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = a + 1; b < D; ++b)
      bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = bw(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(a)) = 4.0 / (x[b] - x[a]);
  std::vector<std::size_t> perm(D);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  return test::relabel(matrix_topology(bw), perm);
}

matrix_topology line_topology(std::mt19937_64& rng, std::size_t D, int kind) {
  switch (kind % 5) {
    case 0: return test::line_of_nodes(rng, D);
    case 1: return line_with_ties(rng, D);
    case 2: return random_blk_2(D, rng());
    case 3: return chain(rng, D);
    default: return random_blk_1(D, rng());
  }
}

/// The least largest cost over every cyclic order of the multiset `seq` (items by class).
template <class Cost>
double brute_ring(std::vector<std::size_t> seq, Cost&& w) {
  std::sort(seq.begin(), seq.end());
  double best = std::numeric_limits<double>::infinity();
  do {
    double m = 0;
    for (std::size_t i = 0; i < seq.size(); ++i) m = std::max(m, w(seq[i], seq[(i + 1) % seq.size()]));
    best = std::min(best, m);
  } while (std::next_permutation(seq.begin(), seq.end()));
  return best;
}

/// Every count vector over `size` with Σ = R.
std::vector<std::vector<std::uint32_t>> count_vectors(const std::vector<std::uint32_t>& size, std::uint32_t R) {
  std::vector<std::vector<std::uint32_t>> out;
  std::vector<std::uint32_t> c(size.size(), 0);
  auto rec = [&](auto&& self, std::size_t x, std::uint32_t left) -> void {
    if (x == size.size()) {
      if (left == 0) out.push_back(c);
      return;
    }
    for (std::uint32_t n = 0; n <= std::min(left, size[x]); ++n) {
      c[x] = n;
      self(self, x + 1, left - n);
    }
    c[x] = 0;
  };
  rec(rec, 0, R);
  return out;
}

/// A small instance of the line tests: S stages of R replicas (S · R ≤ D) and D devices on a line
/// topology of kind `kind` (line_topology).
struct small_instance {
  std::size_t S, R;
  stage_graph g;
  link_costs L;
};
small_instance draw_instance(std::mt19937_64& rng, std::size_t D, int kind) {
  const auto [S, R] = test::small_shape(rng, D);
  auto g = test::ring_stage_graph(rng, S, R);
  return {S, R, std::move(g), link_costs(line_topology(rng, D, kind))};
}

}  // namespace

TEST_CASE("line ring: the Robinson order of a shuffled line is the line, and a cycle has none, as every permutation shows") {
  std::mt19937_64 rng(91);
  for (int it = 0; it < 40; ++it) {
    // strictly increasing costs along random positions on a line
    const std::size_t K = 2 + rng() % 9;
    std::vector<double> x(K);
    for (auto& v : x) v = double(rng() % 1000) + 0.001 * double(&v - x.data());
    std::vector<double> w(K * K);
    for (std::size_t a = 0; a < K; ++a)
      for (std::size_t b = 0; b < K; ++b) w[a * K + b] = a == b ? 0.5 : 1.0 + std::abs(x[a] - x[b]) * (1.0 + std::abs(x[a] - x[b]));
    const auto o = detail::find_robinson_order(w, K);
    REQUIRE(o.size() == K);
    CHECK(detail::is_robinson_order(w, K, o));
    // the order is the line, one way or the other
    bool up = true, down = true;
    for (std::size_t i = 1; i < K; ++i) up = up && x[o[i]] > x[o[i - 1]], down = down && x[o[i]] < x[o[i - 1]];
    CHECK((up || down));
  }
  // small matrices, random costs from a few levels: an order found is Robinsonian; none found on a
  // cycle, where no permutation is
  std::size_t found = 0, none = 0;
  for (int it = 0; it < 300; ++it) {
    const std::size_t K = 3 + rng() % 4;
    std::vector<double> w(K * K, 0);
    const bool cycle = it % 3 == 0;
    for (std::size_t a = 0; a < K; ++a)
      for (std::size_t b = a + 1; b < K; ++b) {
        const std::size_t d = b - a;
        w[a * K + b] = w[b * K + a] = cycle ? double(std::min(d, K - d)) : double(1 + rng() % 3);
      }
    std::vector<std::size_t> perm(K);
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    bool any = false;
    do any = any || detail::is_robinson_order(w, K, perm);
    while (!any && std::next_permutation(perm.begin(), perm.end()));
    const auto o = detail::find_robinson_order(w, K);
    CAPTURE(it);
    if (!o.empty()) {
      ++found;
      CHECK(any);
      CHECK(detail::is_robinson_order(w, K, o));
    } else {
      ++none;
    }
    if (cycle && K >= 4) CHECK(!any);
  }
  CHECK(found > 50);
  CHECK(none > 50);
}

TEST_CASE("line ring: relaxed costs, and the closed-form ring cost equals the best cyclic order of the multiset") {
  std::mt19937_64 rng(92);
  std::size_t checked = 0;
  for (int it = 0; it < 120; ++it) {
    const std::size_t D = 5 + rng() % 6, R = std::min<std::size_t>(D, 2 + rng() % 6);
    const auto g = test::ring_stage_graph(rng, 1, R);
    const link_costs L(line_topology(rng, D, it));
    const detail::line_ring_search q(g, L, detail::find_link_classes(L));
    CAPTURE(it);
    REQUIRE(q.applies());
    const auto& classes = q.link_classes();
    const std::size_t K = classes.size();
    // w'(x, y) = the links between classes; w'(x, x) = min(cheapest link inside x, cheapest of its row)
    for (std::size_t x = 0; x < K; ++x) {
      double row = std::numeric_limits<double>::infinity(), inside = row;
      for (std::size_t y = 0; y < K; ++y)
        if (y != x) {
          for (const auto a : classes[x])
            for (const auto b : classes[y]) CHECK(q.cost(x, y) == L.ms_per_byte(a, b));
          row = std::min(row, q.cost(x, y));
        }
      for (const auto a : classes[x])
        for (const auto b : classes[x])
          if (a != b) inside = std::min(inside, L.ms_per_byte(a, b));
      CHECK(q.cost(x, x) == std::min(inside, row));
    }
    std::vector<std::uint32_t> size(K);
    for (std::size_t x = 0; x < K; ++x) size[x] = static_cast<std::uint32_t>(classes[x].size());
    auto vectors = count_vectors(size, static_cast<std::uint32_t>(R));
    std::shuffle(vectors.begin(), vectors.end(), rng);
    if (vectors.size() > 12) vectors.resize(12);
    for (const auto& c : vectors) {
      std::vector<std::size_t> seq;
      for (std::size_t x = 0; x < K; ++x) seq.insert(seq.end(), c[x], x);
      CHECK(q.ring_cost(c) == brute_ring(seq, [&](std::size_t a, std::size_t b) { return q.cost(a, b); }));
      ++checked;
    }
  }
  CHECK(checked > 600);
}

TEST_CASE("line ring: a chain of devices, by hand") {
  // five devices at 0, 1, 2, 3, 4 on a line (cost per byte ∝ distance); one stage of three
  // replicas with compute 1 ms and x = 1e6 bytes. A ring of three holds a hop of two at least
  // (the cycle 0 → 1 → 2 → 0): the optimum is 1 + 1e6 · w(2), and nothing is below it.
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(5, 5);
  for (Eigen::Index a = 0; a < 5; ++a)
    for (Eigen::Index b = 0; b < 5; ++b)
      if (a != b) bw(a, b) = 4.0 / double(std::abs(a - b));
  const link_costs L{matrix_topology(bw)};
  const stage_graph g(3, {1.0}, {1e6 * 3.0 / 4.0}, {{0.0}});  // x_s = 2(R − 1)/R · P = P · 4/3
  const detail::line_ring_search q(g, L, detail::find_link_classes(L));
  REQUIRE(q.applies());
  CHECK(q.classes() == 5);
  const double x = g.allreduce_bytes(0), w1 = L.ms_per_byte(0, 1), w2 = L.ms_per_byte(0, 2);
  REQUIRE(x == doctest::Approx(1e6));
  const double opt = 1.0 + x * w2;
  const auto below = q.solve(opt * (1 - 1e-9));
  CHECK(below.answer == detail::cover_answer::kind::none);
  CHECK(below.next_change == doctest::Approx(opt).epsilon(1e-12));
  const auto at = q.solve(opt);
  REQUIRE(at.answer == detail::cover_answer::kind::relaxed_found);
  const auto dev = q.realise(at, opt);
  REQUIRE(dev.size() == 3);
  CHECK(evaluate_flat(g, L, allreduce_cost{}, std::span<const std::size_t>(dev)).objective_ms == doctest::Approx(opt));
  // one hop of one only: a ring of two
  const stage_graph g2(2, {1.0}, {1e6}, {{0.0}});
  const detail::line_ring_search q2(g2, L, detail::find_link_classes(L));
  const double opt2 = 1.0 + g2.allreduce_bytes(0) * w1;
  CHECK(q2.solve(opt2).answer == detail::cover_answer::kind::relaxed_found);
  CHECK(q2.solve(opt2 * (1 - 1e-9)).answer == detail::cover_answer::kind::none);
}

TEST_CASE("line ring: every target decided exactly against a brute-force packing of the relaxation") {
  std::mt19937_64 rng(93);
  std::size_t none = 0, found = 0;
  for (int it = 0; it < 160; ++it) {
    const std::size_t D = 6 + rng() % 4;
    const auto inst = draw_instance(rng, D, it);
    const std::size_t S = inst.S, R = inst.R;
    const auto& g = inst.g;
    const auto& L = inst.L;
    const detail::line_ring_search q(g, L, detail::find_link_classes(L));
    CAPTURE(it);
    REQUIRE(q.applies());
    const auto& classes = q.link_classes();
    const std::size_t K = classes.size();
    std::vector<std::uint32_t> size(K);
    for (std::size_t x = 0; x < K; ++x) size[x] = static_cast<std::uint32_t>(classes[x].size());
    const auto vectors = count_vectors(size, static_cast<std::uint32_t>(R));
    std::vector<double> W(vectors.size());
    for (std::size_t e = 0; e < vectors.size(); ++e) {
      std::vector<std::size_t> seq;
      for (std::size_t x = 0; x < K; ++x) seq.insert(seq.end(), vectors[e][x], x);
      W[e] = brute_ring(seq, [&](std::size_t a, std::size_t b) { return q.cost(a, b); });
    }
    auto time = [&](std::size_t s, double w) { return g.replica_compute_ms(s) + g.allreduce_bytes(s) * w; };
    // the oracle: S vectors within the sizes, stage s's within t
    auto feasible = [&](double t) {
      std::vector<std::uint32_t> left(size);
      auto rec = [&](auto&& self, std::size_t s) -> bool {
        if (s == S) return true;
        for (std::size_t e = 0; e < vectors.size(); ++e) {
          if (time(s, W[e]) > t) continue;
          bool fits = true;
          for (std::size_t x = 0; x < K; ++x) fits = fits && vectors[e][x] <= left[x];
          if (!fits) continue;
          for (std::size_t x = 0; x < K; ++x) left[x] -= vectors[e][x];
          const bool ok = self(self, s + 1);
          for (std::size_t x = 0; x < K; ++x) left[x] += vectors[e][x];
          if (ok) return true;
        }
        return false;
      };
      return rec(rec, 0);
    };
    // targets: the stage times of the ring costs, just below, at and between them
    std::vector<double> times;
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t e = 0; e < vectors.size(); ++e)
        if (std::isfinite(W[e])) times.push_back(time(s, W[e]));
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    std::vector<double> targets;
    for (int k = 0; k < 6 && !times.empty(); ++k) {
      const double v = times[rng() % times.size()];
      targets.insert(targets.end(), {v, v * (1 - 1e-9), v * (1 + 1e-9)});
    }
    for (const double t : targets) {
      CAPTURE(t);
      const auto a = q.solve(t);
      REQUIRE(a.answer != detail::cover_answer::kind::unknown);
      const bool oracle = feasible(t);
      CHECK((a.answer == detail::cover_answer::kind::relaxed_found) == oracle);
      if (a.answer == detail::cover_answer::kind::none) {
        ++none;
        CHECK(a.next_change > t);
        CHECK(!feasible(std::nextafter(a.next_change, 0.0)));
        continue;
      }
      ++found;
      // the counts: R devices per stage within its target, the class sizes respected
      std::vector<std::uint32_t> used(K, 0);
      for (std::size_t s = 0; s < S; ++s) {
        const std::span<const std::uint32_t> c(a.counts.data() + s * K, K);
        CHECK(std::accumulate(c.begin(), c.end(), std::size_t{0}) == R);
        CHECK(time(s, q.ring_cost(c)) <= t);
        for (std::size_t x = 0; x < K; ++x) used[x] += c[x];
      }
      for (std::size_t x = 0; x < K; ++x) CHECK(used[x] <= size[x]);
    }
  }
  CHECK(none > 150);
  CHECK(found > 150);
  MESSAGE("line ring targets: none " << none << ", relaxation held " << found);
}

TEST_CASE("line ring: none only below the brute-force optimum, and realised mappings within t") {
  std::mt19937_64 rng(94);
  std::size_t none = 0, realised = 0;
  for (int it = 0; it < 100; ++it) {
    const std::size_t D = 6 + rng() % 3;
    const auto inst = draw_instance(rng, D, it);
    const auto& g = inst.g;
    const auto& L = inst.L;
    const detail::line_ring_search q(g, L, detail::find_link_classes(L));
    REQUIRE(q.applies());
    const double opt = test::brute_force(g, L, allreduce_cost{});
    CAPTURE(it);
    CAPTURE(opt);
    for (const double t : {opt, opt * (1 - 1e-9), opt * 0.9, opt * 1.1, opt * 1.5}) {
      CAPTURE(t);
      const auto a = q.solve(t);
      REQUIRE(a.answer != detail::cover_answer::kind::unknown);
      if (a.answer == detail::cover_answer::kind::none) {
        ++none;
        CHECK(opt > t);
        CHECK(a.next_change <= opt * (1 + 1e-12));
        continue;
      }
      const auto dev = q.realise(a, t);
      if (dev.empty()) continue;
      ++realised;
      test::check_mapping_within(g, L, allreduce_cost{}, dev, t);
    }
  }
  CHECK(none > 80);
  CHECK(realised > 150);
  MESSAGE("line ring on real links: none " << none << ", realised " << realised);
}

TEST_CASE("line ring: realised rings of more than 12 devices follow the line") {
  // rings of 13–16 on random_blk_2 (no Held–Karp): a relaxed answer at a loose target realises,
  // and its rings meet the target on the real links
  std::mt19937_64 rng(95);
  for (int it = 0; it < 6; ++it) {
    const std::size_t R = 13 + rng() % 4, S = 2;
    const auto g = test::ring_stage_graph(rng, S, R);
    const link_costs L(random_blk_2(48, rng()));
    const detail::line_ring_search q(g, L, detail::find_link_classes(L));
    REQUIRE(q.applies());
    const auto flat_cs = flatten(g, cs_map(g));
    const auto cs = evaluate_flat(g, L, allreduce_cost{}, std::span<const std::size_t>(flat_cs)).objective_ms;
    const auto a = q.solve(cs);
    REQUIRE(a.answer == detail::cover_answer::kind::relaxed_found);
    const auto dev = q.realise(a, cs * 4);
    CAPTURE(it);
    REQUIRE(!dev.empty());
    test::check_mapping_within(g, L, allreduce_cost{}, dev, cs * 4);
  }
}

TEST_CASE("mapper: allreduce on lines of nodes, with the line ring cover, objective and status equal brute force") {
  std::mt19937_64 rng(96);
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 6 + rng() % 3;
    const auto inst = draw_instance(rng, D, it);
    const auto& g = inst.g;
    const auto& L = inst.L;
    const double opt = test::brute_force(g, L, allreduce_cost{});
    // the line ring cover alone on most instances: it and the depth-first search answer
    const auto r = map_devices(g, L, allreduce_cost{},
                               {.threads = 1 + unsigned(it % 2), .restarts = it % 3 != 0, .oracles = it % 4 == 0 ? default_oracles() : oracle_portfolio("rings"),
                                .local_search = false, .neighbourhood_search = false});
    CAPTURE(it);
    test::check_proved_optimum(g, D, r, opt);
  }
}

TEST_CASE("mapper: random_blk_2 with rings of 16 is proved by the line ring cover") {
  // 64 devices, 4 stages of 16 (beyond the ring cover's 12): the line ring proves the incumbent
  std::mt19937_64 rng(97);
  for (int it = 0; it < 3; ++it) {
    const auto g = test::ring_stage_graph(rng, 4, 16);
    const link_costs L(random_blk_2(64, 1 + static_cast<std::uint64_t>(it)));
    const auto r = map_devices(g, L, allreduce_cost{}, {.threads = 2, .timeout_s = 120});
    CAPTURE(it);
    test::check_valid_mapping(g, 64, r);
    CHECK(r.status == status::optimal);
    // independently: the line ring at just below the objective has no relaxed mapping, and at the
    // objective it holds
    const detail::line_ring_search q(g, L, detail::find_link_classes(L));
    REQUIRE(q.applies());
    CHECK(q.solve(r.objective_ms * (1 - 1e-9)).answer == detail::cover_answer::kind::none);
    CHECK(q.solve(r.objective_ms).answer == detail::cover_answer::kind::relaxed_found);
    // and without it the mapper finds nothing better
    const auto off = map_devices(g, L, allreduce_cost{}, {.threads = 2, .timeout_s = 1, .oracles = oracles_without({"line_ring"})});
    CHECK(off.objective_ms >= r.objective_ms * (1 - 1e-12));
  }
}
