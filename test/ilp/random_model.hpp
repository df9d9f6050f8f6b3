#pragma once
// Seeded random small MILPs for the writer and backend tests: mixed continuous / integer / binary
// columns with awkward names, all three relations, an objective constant, either sense. A hidden
// integral point satisfies most rows, so most models are feasible; some are not.
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "devplace/ilp/expr.hpp"
#include "devplace/ilp/model.hpp"

namespace devplace::test {

inline ilp::model random_model(std::mt19937_64& rng, std::size_t cols, std::size_t rows, bool allow_infeasible = true) {
  static const char* names[] = {"x", "e1", "E", "2nd", "st", "bounds", "free", "a b", "a-b", "x", "", "ü", "inf",
                                "Subject", "end", "x.y", "obj"};
  ilp::model m("random model");
  std::vector<ilp::var> v;
  std::vector<double> point;
  auto uni = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1)); };
  for (std::size_t j = 0; j < cols; ++j) {
    const auto kind = rng() % 3;
    const std::string name = names[rng() % (sizeof(names) / sizeof(names[0]))];
    if (kind == 0) {
      v.push_back(m.add_binary(name));
      point.push_back(double(rng() % 2));
    } else if (kind == 1) {
      const int lo = uni(-4, 2), hi = lo + uni(0, 6);
      v.push_back(m.add_integer(lo, hi, name));
      point.push_back(double(uni(lo, hi)));
    } else {
      const int lo = uni(-5, 3), hi = lo + uni(1, 8);
      const bool free_lo = rng() % 5 == 0;
      v.push_back(m.add_continuous(free_lo ? -ilp::infinity : lo, hi, name));
      point.push_back(double(uni(lo, hi)) + 0.5 * double(rng() % 2));
    }
  }
  for (std::size_t i = 0; i < rows; ++i) {
    ilp::linear_expr e;
    double act = 0;
    for (std::size_t j = 0; j < cols; ++j)
      if (rng() % 3 != 0) {
        const double a = uni(-6, 6) + (rng() % 4 == 0 ? 0.25 : 0.0);
        e.add(v[j], a);
        act += a * point[j];
      }
    const auto rel = rng() % 5;
    const double slack = double(rng() % 4);
    const double shift = allow_infeasible && rng() % 12 == 0 ? 50.0 : 0.0;  // sometimes infeasible
    const std::string name = names[rng() % (sizeof(names) / sizeof(names[0]))];
    if (rel == 0)
      m.add(e == act + shift, name);
    else if (rel <= 2)
      m.add(e <= act + slack - shift, name);
    else
      m.add(act - slack + shift <= e, name);
  }
  // Bound the free continuous columns so the optimum is finite.
  for (std::size_t j = 0; j < cols; ++j)
    if (m.variables()[j].lower == -ilp::infinity) m.add(ilp::linear_expr(v[j]) >= point[j] - 10.0, "lower_bound");
  ilp::linear_expr obj(double(uni(-20, 20)));
  for (std::size_t j = 0; j < cols; ++j) obj.add(v[j], uni(-5, 5) + (rng() % 3 == 0 ? 0.5 : 0.0));
  if (rng() % 2)
    m.minimize(obj);
  else
    m.maximize(obj);
  return m;
}

}  // namespace devplace::test
