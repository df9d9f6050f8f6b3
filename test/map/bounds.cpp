#include "devplace/map/bounds.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "devplace/map/mapper.hpp"
#include "map/map_support.hpp"

using namespace devplace;

namespace {

// min over injective placements of the neighbours of stage s (on devices other than d) of the
// p2p communication time of s on d.
double brute_p2p(const stage_graph& g, const link_costs& L, std::size_t s, std::size_t d) {
  const auto nb = g.neighbours(s);
  std::vector<std::size_t> others;
  for (std::size_t x = 0; x < L.devices(); ++x)
    if (x != d) others.push_back(x);
  double best = std::numeric_limits<double>::infinity();
  do {
    double c = g.compute_ms(s);
    for (std::size_t i = 0; i < nb.size(); ++i) c += L.transfer_ms(d, others[i], g.message_bytes(s, nb[i]));
    best = std::min(best, c);
  } while (std::next_permutation(others.begin(), others.end()));
  return best;
}

// min over distinct ring neighbours (pred, succ) of stage s's allreduce time with a replica on d.
double brute_allreduce(const stage_graph& g, const link_costs& L, std::size_t s, std::size_t d) {
  const double x = g.allreduce_bytes(s);
  if (x == 0) return g.compute_ms(s);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t p = 0; p < L.devices(); ++p)
    for (std::size_t q = 0; q < L.devices(); ++q) {
      if (p == d || q == d) continue;
      if (g.replicas() == 2 && p != q) continue;  // one partner
      if (g.replicas() >= 3 && p == q) continue;  // two distinct partners
      // 2(R-1) ring steps, each paying the link's latency: x·w + 2(R-1)·latency
      const double steps = 2.0 * double(g.replicas() - 1);
      auto ring_link = [&](std::size_t a, std::size_t b) { return x * L.ms_per_byte(a, b) + steps * L.latency_ms(a, b); };
      best = std::min(best, g.compute_ms(s) + std::max(ring_link(p, d), ring_link(d, q)));
    }
  return best;
}

}  // namespace

TEST_CASE("bounds: the sorting-based per-device bound equals brute-force injective minimisation") {
  std::mt19937_64 rng(41);
  for (int it = 0; it < 40; ++it) {
    const std::size_t D = 3 + rng() % 5;
    const std::size_t S = 1 + rng() % D, R = 1 + rng() % std::max<std::size_t>(1, D / S);
    const auto g = test::random_stage_graph(rng, S, R);
    const auto kind = it % 2 ? test::topo_kind::discrete : test::topo_kind::continuous;  // no latency
    const link_costs L(test::random_topology(rng, D, kind));
    const auto tp = make_device_bound_table(g, L, p2p_cost{});
    const auto ta = make_device_bound_table(g, L, allreduce_cost{});
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t d = 0; d < D; ++d) {
        CHECK(tp(g.vertex(s, 0), d) == doctest::Approx(brute_p2p(g, L, s, d)).epsilon(1e-12));
        CHECK(ta(g.vertex(s, 0), d) == doctest::Approx(brute_allreduce(g, L, s, d)).epsilon(1e-12));
        for (std::size_t r = 1; r < R; ++r) CHECK(tp(g.vertex(s, r), d) == tp(g.vertex(s, 0), d));
      }
  }
}

TEST_CASE("bounds: with latency and asymmetric links the per-device bound stays below brute force") {
  std::mt19937_64 rng(42);
  for (int it = 0; it < 30; ++it) {
    const std::size_t D = 3 + rng() % 5;
    const std::size_t S = 1 + rng() % D, R = 1 + rng() % std::max<std::size_t>(1, D / S);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, it % 2 ? test::topo_kind::latency : test::topo_kind::asymmetric));
    const auto tp = make_device_bound_table(g, L, p2p_cost{});
    const auto ta = make_device_bound_table(g, L, allreduce_cost{});
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t d = 0; d < D; ++d) {
        CHECK(tp(g.vertex(s, 0), d) <= brute_p2p(g, L, s, d) * (1 + 1e-12));
        CHECK(ta(g.vertex(s, 0), d) <= brute_allreduce(g, L, s, d) * (1 + 1e-12));
      }
  }
}

TEST_CASE("bounds: eq. 10/11 <= assignment bound <= optimum") {
  std::mt19937_64 rng(43);
  for (int it = 0; it < 40; ++it) {
    const std::size_t D = 2 + rng() % 6;
    std::size_t S, R;
    do S = 1 + rng() % D, R = 1 + rng() % D; while (S * R > D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const double op = test::brute_force(g, L, p2p_cost{}), oa = test::brute_force(g, L, allreduce_cost{});
    const double sp = p2p_lower_bound(g, L), sa = allreduce_lower_bound(g, L);
    const double ap = assignment_lower_bound(g, L, p2p_cost{}), aa = assignment_lower_bound(g, L, allreduce_cost{});
    CHECK(sp <= ap);
    CHECK(sa <= aa);
    CHECK(ap <= op * (1 + 1e-12));
    CHECK(aa <= oa * (1 + 1e-12));
  }
}

TEST_CASE("bounds: the assignment bound sees that R copies cannot share the best device") {
  // 4 devices: 0-1 fast (10 GB/s), everything else slow (1 GB/s); one stage pair, R = 2.
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(4, 4, 1.0);
  bw(0, 1) = bw(1, 0) = 10.0;
  const link_costs L{matrix_topology(bw)};
  const stage_graph g(2, {0, 0}, {0, 0}, {{0, 1e7}, {1e7, 0}});
  const double eq10 = p2p_lower_bound(g, L);
  CHECK(eq10 == doctest::Approx(1.0));                                     // 1e7 B at 10 GB/s
  CHECK(assignment_lower_bound(g, L, p2p_cost{}) == doctest::Approx(10.0));  // only two devices reach 10 GB/s
  CHECK(test::brute_force(g, L, p2p_cost{}) == doctest::Approx(10.0));
}
