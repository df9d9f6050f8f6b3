// Every backend against the enumeration reference solver, and the statuses they report.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/expr.hpp"
#include "ilp/random_model.hpp"
#include "ilp/solvers.hpp"

using namespace devplace;
using namespace devplace::ilp;

namespace {

/// Market-split equality knapsacks: tiny, and hard for branch and bound.
model market_split(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  model m("market split");
  std::vector<var> x;
  for (std::size_t i = 0; i < n; ++i) x.push_back(m.add_binary());
  for (int r = 0; r < 4; ++r) {
    linear_expr e;
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double a = double(rng() % 100);
      e.add(x[i], a);
      total += a;
    }
    m.add(e == std::floor(total / 2));
  }
  linear_expr obj;
  for (std::size_t i = 0; i < n; ++i) obj.add(x[i], double(rng() % 10));
  m.minimize(obj);
  return m;
}

}  // namespace

TEST_CASE_TEMPLATE("a backend agrees with the reference solver on random small MILPs", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(99);
  int optimal = 0, infeasible = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const model m = test::random_model(rng, 2 + rng() % 6, 1 + rng() % 5);
    const auto ref = test::reference_solver{}.solve(m);
    const auto sol = S{}.solve(m, {});
    REQUIRE((ref.status == solve_status::optimal || ref.status == solve_status::infeasible));
    CHECK(sol.status == ref.status);
    if (ref.status == solve_status::optimal) {
      ++optimal;
      REQUIRE(sol.has_values());
      CHECK(m.max_violation(sol.values) <= 1e-6);
      CHECK(sol.objective == doctest::Approx(ref.objective).epsilon(1e-7));
      CHECK(sol.objective == doctest::Approx(m.objective_value(sol.values)));
      CHECK(sol.best_bound == doctest::Approx(sol.objective).epsilon(1e-7));
    } else {
      ++infeasible;
      CHECK(!sol.has_values());
    }
  }
  CHECK(optimal >= 30);
  CHECK(infeasible >= 3);
}

TEST_CASE_TEMPLATE("backends report infeasible, unbounded, pure LP and maximisation correctly", S, DEVPLACE_ILP_ALL_SOLVERS) {
  SUBCASE("integer infeasible, LP feasible") {
    model m;
    const var a = m.add_binary(), b = m.add_binary();
    m.add(2 * a + 2 * b == 3);
    m.minimize(a);
    CHECK(S{}.solve(m, {}).status == solve_status::infeasible);
  }
  SUBCASE("LP infeasible") {
    model m;
    const var a = m.add_continuous(0, 10);
    m.add(a >= 3);
    m.add(a <= 2);
    m.minimize(a);
    CHECK(S{}.solve(m, {}).status == solve_status::infeasible);
  }
  SUBCASE("pure LP") {
    model m;
    const var a = m.add_continuous(0, 10), b = m.add_continuous();
    m.add(a + b >= 3);
    m.add(a - b <= 1);
    m.minimize(2 * a + 3 * b + 1);
    const auto s = S{}.solve(m, {});
    CHECK(s.status == solve_status::optimal);
    CHECK(s.objective == doctest::Approx(8.0));  // a = 2, b = 1
    CHECK(s.value(a) == doctest::Approx(2.0));
  }
  SUBCASE("maximisation with a constant") {
    model m;
    const var x = m.add_integer(-3, 7), y = m.add_continuous(-10, 4.5), z = m.add_binary();
    m.add(x + 2 * y + z <= 9.25);
    m.add(x - y >= -2);
    m.maximize(x + y + 3 * z + 100.5);
    const auto s = S{}.solve(m, {});
    CHECK(s.status == solve_status::optimal);
    CHECK(s.objective == doctest::Approx(111.125));
    CHECK(s.best_bound == doctest::Approx(111.125));
  }
}

TEST_CASE_TEMPLATE("backends report an unbounded model", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  model m;
  const var e = m.add_integer(-infinity, infinity), f = m.add_continuous();
  m.add(e - f <= 2);
  m.minimize(e);
  const auto s = S{}.solve(m, {});
  CHECK(s.status == solve_status::unbounded);
  CHECK(!s.has_values());
  CHECK_THROWS_AS((void)result_status(s), std::runtime_error);
}

TEST_CASE_TEMPLATE("a MIP start never changes the optimum, feasible or not", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(101);
  int started = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const model m = test::random_model(rng, 2 + rng() % 6, 1 + rng() % 5);
    const auto ref = test::reference_solver{}.solve(m);
    // A start: the reference optimum (feasible), a random point (almost never feasible), or the
    // wrong size (ignored).
    std::vector<double> start(m.num_vars());
    for (auto& x : start) x = double(rng() % 3);
    if (trial % 3 == 0 && ref.has_values()) start = ref.values;
    if (trial % 7 == 6) start.push_back(0);
    started += m.max_violation(start) <= 1e-9;
    const auto sol = S{}.solve(m, {.start = start});
    CHECK(sol.status == ref.status);
    if (ref.status == solve_status::optimal) {
      REQUIRE(sol.has_values());
      CHECK(m.max_violation(sol.values) <= 1e-6);
      CHECK(sol.objective == doctest::Approx(ref.objective).epsilon(1e-7));
    }
  }
  CHECK(started >= 8);
  // That a time-limited solve returns the start: test/ilp/mapping.cpp (16 devices, 0.5 s).
}

TEST_CASE_TEMPLATE("a time limit stops a hard model with a valid bound and no false optimum", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  const model m = market_split(30, 5);
  const auto s = S{}.solve(m, {.time_limit_s = 0.3});
  CHECK(s.status == solve_status::time_limit);
  if (s.has_values()) {
    CHECK(m.max_violation(s.values) <= 1e-6);
    if (!std::isnan(s.best_bound)) CHECK(s.best_bound <= s.objective + 1e-9);
  }
  CHECK(result_status(s) == status::time_limit);
}

// Two solves at once on threads that end: both agree with the solve here (CBC's driver keeps
// global state, which the backend serialises), and under LeakSanitizer (scripts/test --sanitize)
// the test fails at exit when a backend leaves per-thread state behind (GLPK keeps its environment
// in thread-local storage).
TEST_CASE_TEMPLATE("solves on threads that end agree with the same solve here and leave nothing behind", S, DEVPLACE_ILP_BACKENDS) {
  if (!test::backend_available<S>()) return;
  std::mt19937_64 rng(5);
  const model m = test::random_model(rng, 12, 8, false);
  const auto here = S{}.solve(m, {});
  solution there[2];
  std::thread a([&] { there[0] = S{}.solve(m, {}); }), b([&] { there[1] = S{}.solve(m, {}); });
  a.join();
  b.join();
  for (const auto& t : there) {
    CHECK(t.status == here.status);
    if (here.status == solve_status::optimal) CHECK(t.objective == doctest::Approx(here.objective).epsilon(1e-9));
  }
}

#if defined(DEVPLACE_HAS_CBC) && defined(DEVPLACE_HAS_GLPK)
TEST_CASE("CBC and GLPK agree on larger random MILPs (beyond the reference solver)") {
  std::mt19937_64 rng(7);
  int optimal = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const model m = test::random_model(rng, 10 + rng() % 15, 6 + rng() % 10);
    const auto a = cbc_solver{}.solve(m, {}), b = glpk_solver{}.solve(m, {});
    CHECK(a.status == b.status);
    if (a.status == solve_status::optimal && b.status == solve_status::optimal) {
      ++optimal;
      CHECK(a.objective == doctest::Approx(b.objective).epsilon(1e-7));
      CHECK(m.max_violation(a.values) <= 1e-6);
      CHECK(m.max_violation(b.values) <= 1e-6);
    }
  }
  CHECK(optimal >= 5);
}

TEST_CASE("CBC uses several threads and still proves the same optimum") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    const model m = test::random_model(rng, 14, 8, false);
    const auto a = cbc_solver{}.solve(m, {.threads = 2}), b = glpk_solver{}.solve(m, {});
    CHECK(a.status == b.status);
    if (a.status == solve_status::optimal) CHECK(a.objective == doctest::Approx(b.objective).epsilon(1e-7));
  }
}
#endif
