#include "devplace/ilp/expr.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "devplace/ilp/model.hpp"

using namespace devplace::ilp;

namespace {

template <class A, class B>
concept le_able = requires(const A& a, const B& b) { a <= b; };
template <class A, class B>
concept ge_able = requires(const A& a, const B& b) { a >= b; };
template <class A, class B>
concept eq_able = requires(const A& a, const B& b) { a == b; };
template <class A, class B>
concept lt_able = requires(const A& a, const B& b) { a < b; };
template <class A, class B>
concept ne_able = requires(const A& a, const B& b) { a != b; };
template <class A, class B>
concept plus_able = requires(const A& a, const B& b) { a + b; };

// Expressions compare into constraints...
static_assert(le_able<var, var> && ge_able<var, double> && eq_able<double, linear_expr>);
static_assert(le_able<linear_expr, int> && ge_able<int, var>);
// ...but a constraint is never an operand again: `0 <= x <= 1` and friends do not compile.
static_assert(!le_able<constraint, double> && !le_able<constraint, var> && !le_able<double, constraint>);
static_assert(!ge_able<constraint, double> && !ge_able<linear_expr, constraint>);
static_assert(!eq_able<constraint, double> && !eq_able<constraint, constraint> && !eq_able<var, constraint>);
static_assert(!plus_able<constraint, var> && !plus_able<double, constraint>);
// Strict comparisons and != have no meaning in a linear program.
static_assert(!lt_able<var, var> && !lt_able<linear_expr, double> && !lt_able<double, var>);
static_assert(!ne_able<var, var> && !ne_able<linear_expr, double>);
// There is no public way to make a constraint other than the operators.
static_assert(!std::is_default_constructible_v<constraint>);

double coef(const std::vector<term>& t, var v) {
  for (const auto& x : t)
    if (x.index == v.index) return x.coef;
  return 0;
}

}  // namespace

TEST_CASE("arithmetic builds merged linear expressions") {
  model m;
  const var x = m.add_binary("x"), y = m.add_continuous(0, 5, "y"), z = m.add_integer(-2, 2, "z");
  linear_expr e = 2 * x + y - 3 * z + 1.5;
  e += x;
  e -= 0.5;
  e *= 2;
  const auto t = e.normalized();
  CHECK(coef(t, x) == 6.0);
  CHECK(coef(t, y) == 2.0);
  CHECK(coef(t, z) == -6.0);
  CHECK(e.constant() == 2.0);
  const linear_expr f = -(x - y) / 4 + (10 - z);
  CHECK(coef(f.normalized(), x) == -0.25);
  CHECK(coef(f.normalized(), y) == 0.25);
  CHECK(coef(f.normalized(), z) == -1.0);
  CHECK(f.constant() == 10.0);
  CHECK(f.evaluate({1, 2, 3}) == doctest::Approx(-0.25 + 0.5 + 7));
  // Terms that cancel are dropped.
  CHECK((x + y - x).normalized().size() == 1);
  CHECK(sum({x, y, z}).normalized().size() == 3);
  CHECK(coef(dot({1, 2, 3}, {x, y, z}).normalized(), z) == 3.0);
}

TEST_CASE("comparisons move every variable to the left and every number to the right") {
  model m;
  const var x = m.add_binary("x"), y = m.add_continuous(0, 5, "y");
  const constraint c = 2 * x + 3 <= y - 1;
  CHECK(c.rel() == relation::less_equal);
  CHECK(c.rhs() == -4.0);
  CHECK(coef(c.lhs().normalized(), x) == 2.0);
  CHECK(coef(c.lhs().normalized(), y) == -1.0);
  const constraint d = 7 >= x;
  CHECK(d.rel() == relation::greater_equal);
  CHECK(d.rhs() == -7.0);  // 7 >= x is stored as -x >= -7
  CHECK(coef(d.lhs().normalized(), x) == -1.0);
  const constraint e = x == y;
  CHECK(e.rel() == relation::equal);
  const auto i = m.add(c, "c");
  CHECK(m.rows()[i].terms.size() == 2);
  CHECK(m.rows()[i].rhs == -4.0);
  CHECK(m.rows()[i].name == "c");
}

TEST_CASE("a constraint built the other way round means the same row") {
  model m;
  const var x = m.add_continuous(), y = m.add_continuous();
  m.add(3 <= x + y);
  m.add(x + y >= 3);
  const auto& a = m.rows()[0];
  const auto& b = m.rows()[1];
  // 3 <= x + y  is  -(x + y) <= -3 or (x + y) >= 3: both must accept exactly the points with x + y >= 3.
  for (double s : {2.0, 3.0, 4.0}) {
    const std::vector<double> pt{s / 2, s / 2};
    const bool ok_a = a.rel == relation::less_equal ? m.activity(0, pt) <= a.rhs : m.activity(0, pt) >= a.rhs;
    const bool ok_b = b.rel == relation::less_equal ? m.activity(1, pt) <= b.rhs : m.activity(1, pt) >= b.rhs;
    CHECK(ok_a == (s >= 3));
    CHECK(ok_b == (s >= 3));
  }
}

TEST_CASE("the model rejects caller errors") {
  model m;
  const var x = m.add_binary();
  CHECK_THROWS_AS(m.add_continuous(2, 1), std::invalid_argument);
  CHECK_THROWS_AS(m.add_continuous(std::numeric_limits<double>::quiet_NaN(), 1), std::invalid_argument);
  CHECK_THROWS_AS(m.add_var(var_kind::binary, 0, 2), std::invalid_argument);
  CHECK_THROWS_AS(m.add_integer(infinity, infinity), std::invalid_argument);
  CHECK_THROWS_AS(m.add(x * std::numeric_limits<double>::infinity() <= 1), std::invalid_argument);
  CHECK_THROWS_AS(m.add(x <= std::numeric_limits<double>::infinity()), std::invalid_argument);
  model other;
  const var a = other.add_binary(), b = other.add_binary();
  (void)a;
  CHECK_THROWS_AS(m.add(linear_expr(b) <= 1), std::invalid_argument);  // column 1 of a 1-column model
  CHECK_THROWS_AS(m.minimize(linear_expr(b)), std::invalid_argument);
  CHECK_NOTHROW(m.fix(x, 1));
  CHECK(m.get(x).lower == 1);
  CHECK_THROWS_AS(m.set_bounds(x, 0, 3), std::invalid_argument);
}

TEST_CASE("max_violation measures bounds, rows and integrality") {
  model m;
  const var x = m.add_integer(0, 3), y = m.add_continuous(-1, 1);
  m.add(x + y <= 2);
  m.add(x - y == 1);
  CHECK(m.max_violation({1, 0}) == 0.0);
  CHECK(m.max_violation({1.5, 0.5}) == doctest::Approx(0.5));  // fractional integer
  CHECK(m.max_violation({2, 1}) == doctest::Approx(1.0));      // x + y = 3 > 2
  CHECK(m.max_violation({3, -1}) == doctest::Approx(3.0));     // x - y = 4 != 1
  CHECK(m.max_violation({1}) == infinity);
  m.minimize(2 * x - y + 4);
  CHECK(m.objective_value({1, 0}) == 6.0);
  CHECK(m.num_integral() == 1);
  CHECK(m.num_nonzeros() == 4);
}
