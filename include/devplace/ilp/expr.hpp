#pragma once
/// \file ilp/expr.hpp
/// Operators that build `linear_expr` and `constraint` (ilp/model.hpp):
///
///   x + y, x - 2 * y, 3.5 * x + 1, -e, e / 4, e += x        -> linear_expr
///   e <= f, e >= 2, 0 == x - y                              -> constraint
///
/// A constraint is made only by `<=`, `>=` or `==` between expressions or an expression and a
/// number. Comparing a constraint again (`0 <= x <= 1`, `(x <= y) == z`) does not compile, nor do
/// `<`, `>` and `!=`: a program cannot build a row that means something else than it reads.
#include <cstddef>
#include <utility>
#include <vector>

#include "devplace/ilp/model.hpp"

namespace devplace::ilp {

// --- arithmetic -----------------------------------------------------------------------------

[[nodiscard]] inline linear_expr operator-(linear_expr e) { return std::move(e.scale(-1.0)); }
[[nodiscard]] inline linear_expr operator+(linear_expr a, const linear_expr& b) { return std::move(a.add(b)); }
[[nodiscard]] inline linear_expr operator-(linear_expr a, const linear_expr& b) { return std::move(a.add(b, -1.0)); }
[[nodiscard]] inline linear_expr operator+(linear_expr a, double c) { return std::move(a.add_constant(c)); }
[[nodiscard]] inline linear_expr operator+(double c, linear_expr a) { return std::move(a.add_constant(c)); }
[[nodiscard]] inline linear_expr operator-(linear_expr a, double c) { return std::move(a.add_constant(-c)); }
[[nodiscard]] inline linear_expr operator-(double c, linear_expr a) { return std::move(a.scale(-1.0).add_constant(c)); }
[[nodiscard]] inline linear_expr operator*(linear_expr a, double f) { return std::move(a.scale(f)); }
[[nodiscard]] inline linear_expr operator*(double f, linear_expr a) { return std::move(a.scale(f)); }
[[nodiscard]] inline linear_expr operator/(linear_expr a, double f) { return std::move(a.scale(1.0 / f)); }

inline linear_expr& operator+=(linear_expr& a, const linear_expr& b) { return a.add(b); }
inline linear_expr& operator-=(linear_expr& a, const linear_expr& b) { return a.add(b, -1.0); }
inline linear_expr& operator+=(linear_expr& a, double c) { return a.add_constant(c); }
inline linear_expr& operator-=(linear_expr& a, double c) { return a.add_constant(-c); }
inline linear_expr& operator*=(linear_expr& a, double f) { return a.scale(f); }

/// Σ of the variables.
[[nodiscard]] inline linear_expr sum(const std::vector<var>& xs) {
  linear_expr e;
  for (auto x : xs) e.add(x, 1.0);
  return e;
}
/// Σ coefs[k] · xs[k]. Precondition: equal sizes.
[[nodiscard]] inline linear_expr dot(const std::vector<double>& coefs, const std::vector<var>& xs) {
  linear_expr e;
  for (std::size_t k = 0; k < xs.size() && k < coefs.size(); ++k) e.add(xs[k], coefs[k]);
  return e;
}

// --- constraints ----------------------------------------------------------------------------

[[nodiscard]] inline constraint operator<=(const linear_expr& a, const linear_expr& b) {
  return detail::make_constraint(a, relation::less_equal, b);
}
[[nodiscard]] inline constraint operator>=(const linear_expr& a, const linear_expr& b) {
  return detail::make_constraint(a, relation::greater_equal, b);
}
[[nodiscard]] inline constraint operator==(const linear_expr& a, const linear_expr& b) {
  return detail::make_constraint(a, relation::equal, b);
}
[[nodiscard]] inline constraint operator<=(const linear_expr& a, double b) {
  return detail::make_constraint(a, relation::less_equal, linear_expr(b));
}
[[nodiscard]] inline constraint operator>=(const linear_expr& a, double b) {
  return detail::make_constraint(a, relation::greater_equal, linear_expr(b));
}
[[nodiscard]] inline constraint operator==(const linear_expr& a, double b) {
  return detail::make_constraint(a, relation::equal, linear_expr(b));
}
[[nodiscard]] inline constraint operator<=(double a, const linear_expr& b) {
  return detail::make_constraint(linear_expr(a), relation::less_equal, b);
}
[[nodiscard]] inline constraint operator>=(double a, const linear_expr& b) {
  return detail::make_constraint(linear_expr(a), relation::greater_equal, b);
}
[[nodiscard]] inline constraint operator==(double a, const linear_expr& b) {
  return detail::make_constraint(linear_expr(a), relation::equal, b);
}

// Strict comparisons have no meaning in a linear program.
void operator<(const linear_expr&, const linear_expr&) = delete;
void operator>(const linear_expr&, const linear_expr&) = delete;
void operator<(const linear_expr&, double) = delete;
void operator>(const linear_expr&, double) = delete;
void operator<(double, const linear_expr&) = delete;
void operator>(double, const linear_expr&) = delete;

// A constraint is not an operand: `0 <= x <= 1` and friends are ill-formed.
template <class T>
void operator<=(const constraint&, const T&) = delete;
template <class T>
void operator>=(const constraint&, const T&) = delete;
template <class T>
void operator==(const constraint&, const T&) = delete;
template <class T>
void operator<=(const T&, const constraint&) = delete;
template <class T>
void operator>=(const T&, const constraint&) = delete;
template <class T>
void operator==(const T&, const constraint&) = delete;
template <class T>
void operator+(const constraint&, const T&) = delete;
template <class T>
void operator+(const T&, const constraint&) = delete;

}  // namespace devplace::ilp
