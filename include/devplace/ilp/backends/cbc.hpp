#pragma once
/// \file ilp/backends/cbc.hpp
/// `cbc_solver`: solves an `ilp::model` with COIN-OR CBC through its C API (Cbc_C_Interface.h,
/// which runs the same driver as the `cbc` program). This is the only devplace header that
/// includes a CBC header; link the target `devplace::cbc` (it defines DEVPLACE_HAS_CBC=1).
///
///   #include <devplace/ilp/backends/cbc.hpp>
///   auto sol = devplace::ilp::cbc_solver{}.solve(m, {.time_limit_s = 10, .threads = 2});
///
/// Settings, and why:
///   * preprocess off (default). With CBC 2.10's default integer preprocessing (CglPreProcess),
///     CBC has been seen to report a wrong "proven optimal" objective on the PHAZE operator
///     scheduling model of a 17-operator layer (its incumbent was feasible but 2-9 % worse than
///     the true optimum, which GLPK and CBC without preprocessing both found). Turning
///     preprocessing off (or, in that report, cuts off) removed the error; the test suite
///     cross-checks CBC against GLPK and brute force on every builder. `preprocess = true`
///     restores CBC's default for experiments; results are then not to be trusted as proofs.
///   * cuts on (CBC's default); `cuts = false` switches every cut generator off.
///   * a MIP start (`solve_options::start`): its integer columns go to Cbc_setMIPStartI.
///   * threads, time limit (wall clock: timeMode elapsed) and relative gap from `solve_options`; the log is silent unless
///     `verbose`.
/// Status: `optimal` only when CBC proved optimality and did not stop on the gap; a time limit
/// gives `time_limit` with the incumbent, if any. `best_bound` is CBC's best possible objective.
/// One `solve` call owns its CBC model; do not run CBC solves from several threads at once (its
/// driver keeps global state).
#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/detail/backend_support.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"

namespace devplace::ilp {

struct cbc_solver {
  bool preprocess = false;  ///< CBC's integer preprocessing; off by default (see the file comment)
  bool cuts = true;         ///< CBC's cut generators

  [[nodiscard]] static constexpr const char* name() noexcept { return "cbc"; }

  [[nodiscard]] solution solve(const model& m, const solve_options& o = {}) const {
    const auto t0 = std::chrono::steady_clock::now();
    solution sol;
    sol.solver = "cbc";
    const auto finish = [&]() -> solution {
      sol.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return sol;
    };
    const int n = static_cast<int>(m.num_vars()), r = static_cast<int>(m.num_rows());
    auto fin = [](double x) { return x == infinity ? DBL_MAX : x == -infinity ? -DBL_MAX : x; };

    // Column-wise (CSC) matrix.
    std::vector<CoinBigIndex> start(static_cast<std::size_t>(n) + 1, 0);
    for (const auto& row : m.rows())
      for (const auto& t : row.terms) ++start[t.index + 1];
    for (int j = 0; j < n; ++j) start[static_cast<std::size_t>(j) + 1] += start[static_cast<std::size_t>(j)];
    std::vector<int> index(static_cast<std::size_t>(start.back()));
    std::vector<double> value(index.size());
    {
      std::vector<CoinBigIndex> next(start.begin(), start.end() - 1);
      for (int i = 0; i < r; ++i)
        for (const auto& t : m.rows()[static_cast<std::size_t>(i)].terms) {
          const auto k = static_cast<std::size_t>(next[t.index]++);
          index[k] = i;
          value[k] = t.coef;
        }
    }
    std::vector<double> lb(static_cast<std::size_t>(n)), ub(static_cast<std::size_t>(n)), obj(static_cast<std::size_t>(n), 0.0);
    for (int j = 0; j < n; ++j) {
      lb[static_cast<std::size_t>(j)] = fin(m.variables()[static_cast<std::size_t>(j)].lower);
      ub[static_cast<std::size_t>(j)] = fin(m.variables()[static_cast<std::size_t>(j)].upper);
    }
    for (const auto& t : m.objective_terms()) obj[t.index] = t.coef;
    std::vector<double> rlb(static_cast<std::size_t>(r)), rub(static_cast<std::size_t>(r));
    for (int i = 0; i < r; ++i) {
      const auto& row = m.rows()[static_cast<std::size_t>(i)];
      rlb[static_cast<std::size_t>(i)] = row.rel == relation::less_equal ? -DBL_MAX : row.rhs;
      rub[static_cast<std::size_t>(i)] = row.rel == relation::greater_equal ? DBL_MAX : row.rhs;
    }

    std::unique_ptr<Cbc_Model, void (*)(Cbc_Model*)> cbc(Cbc_newModel(), &Cbc_deleteModel);
    if (!cbc) {
      sol.message = "Cbc_newModel failed";
      return finish();
    }
    Cbc_loadProblem(cbc.get(), n, r, start.data(), index.data(), value.data(), lb.data(), ub.data(), obj.data(),
                    rlb.data(), rub.data());
    for (int j = 0; j < n; ++j)
      if (m.is_integral(static_cast<std::size_t>(j))) Cbc_setInteger(cbc.get(), j);
    Cbc_setObjSense(cbc.get(), m.sense() == objective_sense::minimize ? 1.0 : -1.0);
    if (o.start.size() == m.num_vars()) {  // CBC takes the integer columns and computes the rest
      std::vector<int> idx;
      std::vector<double> val;
      for (int j = 0; j < n; ++j)
        if (m.is_integral(static_cast<std::size_t>(j))) {
          idx.push_back(j);
          val.push_back(std::round(o.start[static_cast<std::size_t>(j)]));
        }
      if (!idx.empty()) Cbc_setMIPStartI(cbc.get(), static_cast<int>(idx.size()), idx.data(), val.data());
    }
    Cbc_setLogLevel(cbc.get(), o.verbose ? 1 : 0);
    Cbc_setParameter(cbc.get(), "log", o.verbose ? "1" : "0");
    Cbc_setParameter(cbc.get(), "slog", o.verbose ? "1" : "0");
    if (!preprocess) Cbc_setParameter(cbc.get(), "preprocess", "off");
    if (!cuts) Cbc_setParameter(cbc.get(), "cuts", "off");
    if (o.threads > 1) Cbc_setParameter(cbc.get(), "threads", std::to_string(o.threads).c_str());
    if (std::isfinite(o.time_limit_s)) {
      // CBC measures its limit in CPU seconds by default, which with threads (or a busy machine)
      // is not the wall-clock limit solve_options promises.
      Cbc_setParameter(cbc.get(), "timeMode", "elapsed");
      Cbc_setMaximumSeconds(cbc.get(), std::max(0.0, o.time_limit_s));
    }
    if (o.relative_gap > 0) Cbc_setAllowableFractionGap(cbc.get(), o.relative_gap);

    Cbc_solve(cbc.get());

    const double constant = m.objective_constant();
    const double* x = Cbc_bestSolution(cbc.get());
    if (x == nullptr && m.num_integral() == 0 && Cbc_isProvenOptimal(cbc.get())) x = Cbc_getColSolution(cbc.get());
    if (x != nullptr) {
      sol.values.assign(x, x + n);
      for (int j = 0; j < n; ++j)
        if (m.is_integral(static_cast<std::size_t>(j))) sol.values[static_cast<std::size_t>(j)] = std::round(sol.values[static_cast<std::size_t>(j)]);
      sol.objective = m.objective_value(sol.values);
    }
    const double bound = Cbc_getBestPossibleObjValue(cbc.get());
    if (std::isfinite(bound) && std::abs(bound) < 1e300) sol.best_bound = bound + constant;
    const int secondary = Cbc_secondaryStatus(cbc.get());
    if (Cbc_isProvenInfeasible(cbc.get()) && x == nullptr) {
      sol.status = solve_status::infeasible;
    } else if (Cbc_isContinuousUnbounded(cbc.get()) && x == nullptr) {
      sol.status = solve_status::unbounded;
      sol.message = "the LP relaxation is unbounded";
    } else if (Cbc_isSecondsLimitReached(cbc.get()) || secondary == 4) {
      sol.status = solve_status::time_limit;
    } else if (Cbc_isAbandoned(cbc.get())) {
      sol.status = solve_status::error;
      sol.message = "CBC abandoned the search (numerical difficulties)";
    } else if (Cbc_isProvenOptimal(cbc.get()) && x != nullptr) {
      sol.status = secondary == 2 ? solve_status::feasible : solve_status::optimal;
      if (sol.status == solve_status::optimal) sol.best_bound = sol.objective;
    } else if (x != nullptr) {
      sol.status = solve_status::feasible;
    } else {
      sol.status = solve_status::error;
      sol.message = "CBC ended with status " + std::to_string(Cbc_status(cbc.get())) + ", secondary status " +
                    std::to_string(secondary) + " and no solution";
    }
    if (x != nullptr) detail::clamp_bound(m, sol);
    if (!sol.has_values() && n > 0 && sol.status != solve_status::time_limit)
      sol.best_bound = std::numeric_limits<double>::quiet_NaN();
    detail::keep_start(m, o, sol);
    return finish();
  }
};

static_assert(ilp_solver<cbc_solver>);

}  // namespace devplace::ilp
