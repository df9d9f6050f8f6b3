#include "devplace/ilp/builders/mapping.hpp"

#include <doctest/doctest.h>

#include <random>
#include <stdexcept>

#include "devplace/map/mapper.hpp"
#include "ilp/solvers.hpp"
#include "map/map_support.hpp"

using namespace devplace;

namespace {

struct mapping_instance {
  stage_graph g;
  matrix_topology topo;
  cost_choice cost;
};

/// S·R ≤ max_v stage replicas on D ≤ max_d devices, every topology kind, both models.
mapping_instance random_instance(std::mt19937_64& rng, int trial, std::size_t max_v, std::size_t max_d) {
  std::size_t S = 1 + rng() % 3, R = 1 + rng() % 3;
  while (S * R > max_v) (S > R ? S : R) -= 1;
  const std::size_t D = S * R + rng() % (max_d - S * R + 1);
  auto g = test::random_stage_graph(rng, S, R);
  auto topo = test::random_topology(rng, D, test::all_topo_kinds[trial % 4]);
  return {std::move(g), std::move(topo), trial % 2 ? cost_choice::allreduce : cost_choice::p2p};
}

template <class C>
double oracle(const mapping_instance& in, const C& model) {
  return test::brute_force(in.g, link_costs(in.topo), model);
}

}  // namespace

TEST_CASE_TEMPLATE("mapping ILP optimum equals brute force on small instances", S, DEVPLACE_ILP_ALL_SOLVERS) {
  std::mt19937_64 rng(17);
  const bool reference = std::is_same_v<S, test::reference_solver>;
  const int trials = reference ? 16 : 40;
  for (int trial = 0; trial < trials; ++trial) {
    CAPTURE(trial);
    const auto in = random_instance(rng, trial, reference ? 3 : 4, reference ? 4 : 5);
    const link_costs L(in.topo);
    const double want = in.cost == cost_choice::allreduce ? oracle(in, allreduce_cost{}) : oracle(in, p2p_cost{});
    const auto ilp = ilp::build_mapping_ilp(in.g, L, {.cost = in.cost});
    const auto sol = S{}.solve(ilp.model(), {});
    REQUIRE(sol.status == ilp::solve_status::optimal);
    CHECK(ilp.model().max_violation(sol.values) <= 1e-6);
    const auto r = ilp.decode(sol);
    CHECK(r.status == status::optimal);
    CHECK(r.optimal);
    CHECK(r.objective_ms == doctest::Approx(want).epsilon(1e-9));
    // The model's objective is the plan's objective in ms.
    CHECK(sol.objective == doctest::Approx(r.objective_ms).epsilon(1e-7));
    CHECK(r.cost == (in.cost == cost_choice::allreduce ? "allreduce" : "p2p"));
  }
}

TEST_CASE_TEMPLATE("symmetry breaking keeps the mapping optimum", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 16; ++trial) {
    CAPTURE(trial);
    const auto in = random_instance(rng, trial, 6, 6);
    const link_costs L(in.topo);
    const auto a = ilp::solve_mapping_ilp(in.g, L, S{}, {.cost = in.cost, .symmetry_breaking = true});
    const auto b = ilp::solve_mapping_ilp(in.g, L, S{}, {.cost = in.cost, .symmetry_breaking = false});
    REQUIRE(a.status == status::optimal);
    REQUIRE(b.status == status::optimal);
    CHECK(a.objective_ms == doctest::Approx(b.objective_ms).epsilon(1e-9));
  }
}

TEST_CASE_TEMPLATE("property: the mapping ILP optimum equals the backtracking mapper's", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(31);
  int compared = 0;
  for (int trial = 0; trial < 24; ++trial) {
    CAPTURE(trial);
    const auto in = random_instance(rng, trial, 6, 7);
    const link_costs L(in.topo);
    const auto mapped = map_devices(in.g, L, {.cost = in.cost, .threads = 1, .timeout_s = 20});
    const auto ilp = ilp::solve_mapping_ilp(in.g, L, S{}, {.cost = in.cost}, {.time_limit_s = 20});
    if (!mapped.optimal || ilp.status != status::optimal) continue;  // compare where both finished
    ++compared;
    CHECK(ilp.objective_ms == doctest::Approx(mapped.objective_ms).epsilon(1e-9));
    CHECK(ilp.lower_bound_ms == doctest::Approx(ilp.objective_ms));
  }
  CHECK(compared >= 20);
}

TEST_CASE("the mapping ILP on the two_level example of the CLI tests") {
  // S = 2, R = 2 on 2 x 2 devices (11 / 1.1 GB/s): the p2p optimum keeps each replica chain in one node.
  const stage_graph g(2, {6, 6}, {1e6, 2e6}, {{0, 30e6}, {30e6, 0}});
  Eigen::MatrixXd bw(4, 4);
  bw << 0, 11, 1.1, 1.1, 11, 0, 1.1, 1.1, 1.1, 1.1, 0, 11, 1.1, 1.1, 11, 0;
  const matrix_topology topo(bw);
  const auto ilp = ilp::build_mapping_ilp(g, topo, {.cost = cost_choice::p2p});
  const auto r = ilp.decode(test::reference_solver{}.solve(ilp.model()));
  REQUIRE(r.status == status::optimal);
  CHECK(r.objective_ms == doctest::Approx(6 + 30e6 / 11e9 * 1e3));
  // Replica r of both stages on one node.
  for (std::size_t rep = 0; rep < 2; ++rep) CHECK(r.device_of[0][rep] / 2 == r.device_of[1][rep] / 2);
}

TEST_CASE("the mapping ILP rejects too few devices and decodes failures as statuses") {
  std::mt19937_64 rng(3);
  const auto g = test::random_stage_graph(rng, 2, 2);
  const auto topo = test::random_topology(rng, 3, test::topo_kind::discrete);
  CHECK_THROWS_AS((void)ilp::build_mapping_ilp(g, topo), std::invalid_argument);
  const auto topo4 = test::random_topology(rng, 4, test::topo_kind::discrete);
  const auto ilp = ilp::build_mapping_ilp(g, topo4, {.cost = cost_choice::p2p});
  CHECK(ilp.cost() == cost_choice::p2p);
  ilp::solution timed;
  timed.status = ilp::solve_status::time_limit;
  timed.best_bound = 1.5;
  const auto r = ilp.decode(timed);
  CHECK(r.status == status::time_limit);
  CHECK(r.device_of.empty());
  CHECK(r.lower_bound_ms == 1.5);
  ilp::solution broken;
  broken.status = ilp::solve_status::error;
  CHECK_THROWS_AS((void)ilp.decode(broken), std::runtime_error);
}

TEST_CASE("a MIP start from any mapping is a feasible point of the model with that mapping's objective") {
  // start() must move the mapping into the symmetry class representative the symmetry rows keep.
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 120; ++trial) {
    CAPTURE(trial);
    const auto in = random_instance(rng, trial, 9, 10);
    // Identical stages sometimes, so that the ring-ordering rows are exercised.
    stage_graph g = in.g;
    if (trial % 3 == 0 && g.stages() >= 2) {
      std::vector<double> c(g.stages()), p(g.stages());
      std::vector<std::vector<double>> M(g.stages(), std::vector<double>(g.stages(), 0.0));
      for (std::size_t s = 0; s < g.stages(); ++s) {
        c[s] = s % 2 ? 3.0 : g.compute_ms(s);
        p[s] = s % 2 ? 4e6 : g.param_bytes(s);
        for (std::size_t t = 0; t < g.stages(); ++t) M[s][t] = g.message_bytes(s, t);
      }
      g = stage_graph(g.replicas(), c, p, M);
    }
    const link_costs L(in.topo);
    const bool sym = trial % 4 != 3;
    const auto p = ilp::build_mapping_ilp(g, L, {.cost = in.cost, .symmetry_breaking = sym});
    // A random injective mapping.
    std::vector<std::size_t> devices(L.devices());
    for (std::size_t d = 0; d < devices.size(); ++d) devices[d] = d;
    std::shuffle(devices.begin(), devices.end(), rng);
    device_mapping mapping(g.stages(), std::vector<std::size_t>(g.replicas()));
    for (std::size_t s = 0, k = 0; s < g.stages(); ++s)
      for (std::size_t r = 0; r < g.replicas(); ++r) mapping[s][r] = devices[k++];
    const double want = p.cost() == cost_choice::allreduce ? evaluate(g, L, mapping, allreduce_cost{}).objective_ms
                                                           : evaluate(g, L, mapping, p2p_cost{}).objective_ms;
    const auto x = p.start(mapping);
    CHECK(p.model().max_violation(x) <= 1e-9);
    CHECK(p.model().objective_value(x) == doctest::Approx(want).epsilon(1e-12));
  }
  const auto in = random_instance(rng, 0, 4, 4);
  const auto p = ilp::build_mapping_ilp(in.g, link_costs(in.topo), {.cost = in.cost});
  CHECK_THROWS_AS((void)p.start(device_mapping(in.g.stages() + 1, std::vector<std::size_t>(in.g.replicas()))),
                  std::invalid_argument);
}

TEST_CASE_TEMPLATE("a MIP start from the mapper: same optimum, and a time-limited solve never returns worse", S,
                   DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(43);
  for (int trial = 0; trial < 12; ++trial) {
    CAPTURE(trial);
    const auto in = random_instance(rng, trial, 6, 7);
    const link_costs L(in.topo);
    const auto mapped = map_devices(in.g, L, {.cost = in.cost, .threads = 1, .timeout_s = 20});
    REQUIRE(mapped.optimal);
    const auto p = ilp::build_mapping_ilp(in.g, L, {.cost = in.cost});
    const auto r = p.decode(S{}.solve(p.model(), {.start = p.start(mapped.device_of)}));
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(mapped.objective_ms).epsilon(1e-9));
  }
  // BERT-like sizes where the MILP cannot finish: 16 stage replicas on 16 random devices, p2p.
  const auto g = test::random_stage_graph(rng, 8, 2);
  const auto topo = test::random_topology(rng, 16, test::topo_kind::continuous);
  const link_costs L(topo);
  const auto greedy = cs_map(g);
  const double greedy_ms = evaluate(g, L, greedy, p2p_cost{}).objective_ms;
  const auto p = ilp::build_mapping_ilp(g, L, {.cost = cost_choice::p2p});
  const auto sol = S{}.solve(p.model(), {.time_limit_s = 0.5, .start = p.start(greedy)});
  REQUIRE(sol.has_values());
  const auto r = p.decode(sol);
  CHECK(r.objective_ms <= greedy_ms * (1 + 1e-9));
}
