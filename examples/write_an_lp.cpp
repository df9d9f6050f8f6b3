// The ILP model and the LP writer: build a small MILP, write it in the CPLEX LP format that CBC,
// GLPK, HiGHS and Gurobi read, and check it without any solver by enumerating its binaries
// (docs/ilp.md).
//
//   ./build/examples/example_write_an_lp [out.lp]
#include <devplace/ilp/expr.hpp>
#include <devplace/ilp/lp_writer.hpp>

#include <algorithm>
#include <iostream>
#include <limits>
#include <vector>

namespace ilp = devplace::ilp;

int main(int argc, char** argv) {
  // Three operators of 3, 2 and 2 ms on two devices; minimise the makespan T.
  //   x[v][d] = 1 when operator v runs on device d;  every operator on one device;
  //   every device's load <= T.
  // By hand: 3 | 2 + 2 gives T = 4; every other split puts 5 or more on one device.
  const std::vector<double> ms{3, 2, 2};
  ilp::model m("makespan");
  std::vector<std::vector<ilp::var>> x(3);
  for (std::size_t v = 0; v < 3; ++v)
    for (std::size_t d = 0; d < 2; ++d) x[v].push_back(m.add_binary("x_" + std::to_string(v) + "_" + std::to_string(d)));
  const ilp::var T = m.add_continuous(0, ilp::infinity, "T");
  for (std::size_t v = 0; v < 3; ++v) m.add(x[v][0] + x[v][1] == 1, "once_" + std::to_string(v));
  for (std::size_t d = 0; d < 2; ++d) {
    ilp::linear_expr load;
    for (std::size_t v = 0; v < 3; ++v) load += ms[v] * x[v][d];
    m.add(load <= T, "load_" + std::to_string(d));
  }
  m.minimize(T);
  std::cout << m.num_vars() << " columns, " << m.num_rows() << " rows\n";
  // prints: 7 columns, 5 rows

  // The LP text (cbc file.lp solve, glpsol --lp file.lp); to a file when one is named.
  if (argc > 1) ilp::write_lp(argv[1], m);
  std::cout << ilp::to_lp_string(m);
  // prints: Minimize
  // prints: load_0: \+ 3 x_0_0 \+ 2 x_1_0 \+ 2 x_2_0 - 1 T <= 0
  // prints: Binary
  // prints:  x_0_0 x_0_1 x_1_0 x_1_1 x_2_0 x_2_1

  // Solve by enumeration: every 0/1 vector of the six binaries with T set to the largest load;
  // keep the feasible ones (max_violation 0) of least objective.
  double best = std::numeric_limits<double>::infinity();
  for (unsigned bits = 0; bits < 64; ++bits) {
    std::vector<double> value(m.num_vars(), 0.0);
    double load[2] = {0, 0};
    for (std::size_t v = 0; v < 3; ++v)
      for (std::size_t d = 0; d < 2; ++d)
        if (bits >> (2 * v + d) & 1u) {
          value[x[v][d].index] = 1;
          load[d] += ms[v];
        }
    value[T.index] = std::max(load[0], load[1]);
    if (m.max_violation(value) == 0) best = std::min(best, m.objective_value(value));
  }
  std::cout << "optimum by enumeration: T = " << best << " ms\n";
  // prints: optimum by enumeration: T = 4 ms
  return 0;
}
