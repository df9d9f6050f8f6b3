// The mapper's set-up under the time limit (issues 16 and 18): a deadline passing during the
// set-up gives the best baseline map with status time_limit and only a proved bound; the cheaper
// set-up (per-stage bound rows, signature classes, orbit search) gives what the plain one gives.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <vector>

#include "devplace/map/bisection_map.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/topology/generators.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

namespace {

/// A model that forwards to `C` but does not declare a replica-invariant bound: the bound table
/// is then computed row by row for every replica (the reference for the per-stage rows).
template <class C>
struct setup_limit_rowwise {
  C inner;
  [[nodiscard]] std::string_view name() const { return inner.name(); }
  [[nodiscard]] std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const { return inner.dependencies(g, v); }
  [[nodiscard]] double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    return inner.time(g, L, dev, v);
  }
  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    return inner.bound(g, L, dev, v);
  }
};

/// The best of the CS, p2p, random (seed 1) and, with `bisection`, the bisection maps, evaluated
/// independently of the mapper. (The mapper's bisection map stops its ring searches at a share of
/// the limit: on small instances they end long before, so the two agree.)
template <class C>
double setup_limit_best_baseline(const stage_graph& g, const link_costs& L, const C& model, bool bisection = true) {
  double best = evaluate(g, L, cs_map(g), model).objective_ms;
  best = std::min(best, evaluate(g, L, p2p_map(g), model).objective_ms);
  if (bisection) best = std::min(best, evaluate(g, L, bisection_map(g, L), model).objective_ms);
  return std::min(best, evaluate(g, L, random_map(g, L.devices(), 1), model).objective_ms);
}

template <class C>
void setup_limit_round(std::mt19937_64& rng, const C& model) {
  const std::size_t D = 4 + rng() % 3;
  std::size_t S = 0, R = 0;
  do S = 1 + rng() % D, R = 1 + rng() % D;
  while (S * R > D || S * R < 2);
  const auto g = test::random_stage_graph(rng, S, R);
  const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[rng() % 4]));
  const double opt = test::brute_force(g, L, model);
  // A limit of 0: the deadline has passed before the set-up starts.
  const auto r = map_devices(g, L, model, {.threads = 2, .timeout_s = 0});
  INFO("D=" << D << " S=" << S << " R=" << R << " model=" << model.name());
  test::check_valid_mapping(g, D, r);
  CHECK(r.objective_ms == doctest::Approx(evaluate(g, L, r.device_of, model).objective_ms).epsilon(1e-12));
  CHECK(r.objective_ms == setup_limit_best_baseline(g, L, model));  // the incumbent is the best baseline
  CHECK(r.lower_bound_ms == 0);  // nothing proved: the bound table was never built
  CHECK(r.lower_bound_ms <= opt);
  CHECK(r.nodes_explored == 0);
  CHECK(r.searches == 0);
  if (r.objective_ms > 0) {
    CHECK(r.status == status::time_limit);
    CHECK_FALSE(r.optimal);
  }
  // Without a limit the same instance is proved optimal (the set-up completes).
  const auto full = map_devices(g, L, model, {.threads = 2});
  CHECK(full.optimal);
  CHECK(full.objective_ms == doctest::Approx(opt).epsilon(1e-9));
}

}  // namespace

TEST_CASE("mapping_search: a set-up deadline already passed leaves it not ready, and search answers at once") {
  std::mt19937_64 rng(41);
  const auto g = test::random_stage_graph(rng, 3, 2);
  const link_costs L(torus2d(2, 4));
  const auto past = std::chrono::steady_clock::now();
  const mapping_search<p2p_cost> late(g, L, p2p_cost{}, {}, past);
  CHECK_FALSE(late.ready());
  CHECK(late.initial_lower_bound() == 0);
  const auto r = late.search(1e9);
  CHECK_FALSE(r.completed);
  CHECK_FALSE(r.found);
  CHECK(r.nodes == 0);
  const mapping_search<p2p_cost> in_time(g, L);
  CHECK(in_time.ready());
  CHECK(in_time.search(1e9).found);
}

TEST_CASE("mapper: a time limit passing in the set-up returns the best baseline, time_limit, no bound claim") {
  std::mt19937_64 rng(42);
  for (int it = 0; it < 8; ++it) {
    CAPTURE(it);
    setup_limit_round(rng, p2p_cost{});
    setup_limit_round(rng, allreduce_cost{});
    setup_limit_round(rng, combined_cost{.micro_batches = 2});
  }
}

TEST_CASE("mapper: 1,024 devices under a short time limit: a valid mapping no worse than the baselines") {
  // 1,024 devices (a 32 x 32 torus), 8 stages x 16 replicas, 0.3 s: the set-up or the search
  // stops at the limit; whatever status, the mapping is an injection no worse than every baseline.
  std::mt19937_64 rng(43);
  const auto g = test::random_stage_graph(rng, 8, 16);
  const link_costs L(torus2d(32, 32));
  for (auto c : {cost_choice::p2p, cost_choice::allreduce}) {
    const auto r = map_devices(g, L, {.cost = c, .threads = 2, .timeout_s = 0.3});
    CAPTURE(to_string(c));
    test::check_valid_mapping(g, 1024, r);
    // no worse than the CS, p2p and random maps (its bisection map depends on the time it had)
    const double best = c == cost_choice::p2p ? setup_limit_best_baseline(g, L, p2p_cost{}, false)
                                              : setup_limit_best_baseline(g, L, allreduce_cost{}, false);
    CHECK(r.objective_ms <= best);
    CHECK(r.objective_ms == doctest::Approx(evaluate(g, L, r.device_of, c).objective_ms).epsilon(1e-12));
    CHECK(r.lower_bound_ms <= r.objective_ms);
    CHECK((r.status == status::time_limit || r.status == status::optimal || r.status == status::feasible));
    CHECK(r.optimal == (r.status == status::optimal));
  }
}

TEST_CASE("device bounds: one row per stage equals the table computed replica by replica") {
  std::mt19937_64 rng(44);
  for (int it = 0; it < 30; ++it) {
    const std::size_t D = 4 + rng() % 12, S = 1 + rng() % 4, R = 1 + rng() % std::max<std::size_t>(1, D / S);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    CAPTURE(it);
    auto same = [](const device_bound_table& a, const device_bound_table& b) {
      return a.vertices == b.vertices && a.devices == b.devices && a.value == b.value && a.complete && b.complete;
    };
    const auto ar = prepare_model(allreduce_cost{}, g, L);
    const auto cb = prepare_model(combined_cost{.micro_batches = 3}, g, L);
    CHECK(same(make_device_bound_table(g, L, p2p_cost{}), make_device_bound_table(g, L, setup_limit_rowwise<p2p_cost>{})));
    CHECK(same(make_device_bound_table(g, L, ar), make_device_bound_table(g, L, setup_limit_rowwise<allreduce_cost>{ar})));
    CHECK(same(make_device_bound_table(g, L, cb), make_device_bound_table(g, L, setup_limit_rowwise<combined_cost>{cb})));
  }
}

TEST_CASE("symmetry: signature classes are exactly the devices with equal sorted link rows") {
  std::mt19937_64 rng(45);
  std::vector<matrix_topology> tops = {torus2d(4, 4), mesh2d(3, 4), two_level(3, 4), dgx1_cluster(2), mesh3d(2, 2, 3)};
  for (int k = 0; k < 8; ++k) tops.push_back(test::random_topology(rng, 5 + rng() % 8, test::all_topo_kinds[k % 4]));
  for (const auto& t : tops) {
    const link_costs L(t);
    const auto cls = device_signature_classes(L);
    for (std::size_t a = 0; a < L.devices(); ++a)
      for (std::size_t b = 0; b < L.devices(); ++b)
        CHECK((cls[a] == cls[b]) == (detail::device_signature(L, a) == detail::device_signature(L, b)));
  }
}

TEST_CASE("symmetry: orbits of vertex-transitive topologies are one, a topology without symmetry has none") {
  std::uint64_t budget = 20'000'000;
  for (const auto& t : {torus2d(4, 4), torus3d(2, 3, 4), two_level(3, 4)}) {
    const link_costs L(t);
    const auto m = device_orbit_minima(L, device_signature_classes(L), {}, budget);
    for (auto x : m) CHECK(x == 0);  // every device is in the orbit of device 0
  }
  // uniform_dist draws every pair apart: only the identity.
  const link_costs U(uniform_dist(24, 3));
  const auto m = device_orbit_minima(U, device_signature_classes(U), {}, budget);
  for (std::size_t x = 0; x < m.size(); ++x) CHECK(m[x] == x);
  // Each merge is a verified automorphism: on the 4 x 4 torus the stabiliser of device 0 maps
  // device 1 onto its other neighbours 3, 4 and 12.
  const link_costs T(torus2d(4, 4));
  const auto s = device_orbit_minima(T, device_signature_classes(T), {0}, budget);
  CHECK(s[0] == 0);
  CHECK(s[3] == 1);
  CHECK(s[4] == 1);
  CHECK(s[12] == 1);
  CHECK(s[5] != 1);  // a diagonal neighbour is two hops away: another orbit
}

TEST_CASE("assignment bound: Hall's condition over subsets of groups answers as augmenting paths do") {
  std::mt19937_64 rng(46);
  const auto never = std::chrono::steady_clock::time_point::max();
  for (int it = 0; it < 200; ++it) {
    // a random table with G groups of random counts over D devices, values from a few levels (ties)
    const std::size_t D = 2 + rng() % 20, G = 1 + rng() % std::min<std::size_t>(D, detail::hall_max_groups);
    std::vector<std::pair<std::size_t, std::size_t>> groups;
    std::size_t V = 0;
    for (std::size_t i = 0; i < G && V < D; ++i) {
      const std::size_t n = 1 + rng() % std::max<std::size_t>(1, (D - V) / (G - i));
      groups.emplace_back(V, std::min(n, D - V));
      V += groups.back().second;
    }
    device_bound_table t{V, D, std::vector<double>(V * D), true};
    for (auto& x : t.value) x = double(rng() % 5);
    for (double theta : {0.0, 1.0, 2.0, 3.0, 4.0}) {
      CAPTURE(it);
      CAPTURE(theta);
      CHECK(detail::groups_fit_hall(t, groups, theta) == *detail::groups_fit_augmenting(t, groups, theta, never));
    }
  }
}

TEST_CASE("link_costs: sorted rows, latencies and transfer times equal a direct computation") {
  std::mt19937_64 rng(47);
  for (int it = 0; it < 24; ++it) {
    const std::size_t D = 1 + rng() % 12;
    const auto t = test::random_topology(rng, D, test::all_topo_kinds[it % 4]);
    const link_costs L(t);
    CAPTURE(it);
    for (std::size_t a = 0; a < D; ++a) {
      // outgoing and incoming: (w, device) pairs sorted, latencies sorted apart
      std::vector<std::pair<double, std::size_t>> out, in;
      std::vector<double> out_l, in_l;
      for (std::size_t x = 0; x < D; ++x) {
        if (x == a) continue;
        out.emplace_back(1.0 / (t.bandwidth_gbps(a, x) * 1e6), x);
        in.emplace_back(1.0 / (t.bandwidth_gbps(x, a) * 1e6), x);
        out_l.push_back(t.latency_us(a, x) * 1e-3);
        in_l.push_back(t.latency_us(x, a) * 1e-3);
        CHECK(L.ms_per_byte(a, x) == out.back().first);
        CHECK(L.latency_ms(a, x) == out_l.back());
        CHECK(L.transfer_ms(a, x, 1e6) == transfer_time_ms_w(1e6, out.back().first, out_l.back()));
      }
      std::sort(out.begin(), out.end());
      std::sort(in.begin(), in.end());
      std::sort(out_l.begin(), out_l.end());
      std::sort(in_l.begin(), in_l.end());
      REQUIRE(L.out_sorted(a).size() == D - 1);
      REQUIRE(L.in_sorted(a).size() == D - 1);
      for (std::size_t i = 0; i + 1 < D; ++i) {
        CHECK(L.out_sorted(a)[i] == out[i].first);
        CHECK(L.out_sorted_devices(a)[i] == out[i].second);
        CHECK(L.in_sorted(a)[i] == in[i].first);
        CHECK(L.in_sorted_devices(a)[i] == in[i].second);
        CHECK(L.out_latency_sorted(a)[i] == out_l[i]);
        CHECK(L.in_latency_sorted(a)[i] == in_l[i]);
      }
    }
  }
}
