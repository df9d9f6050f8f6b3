#pragma once
/// \file ilp/backends/cbc.hpp
/// `cbc_solver`: solves an `ilp::model` with COIN-OR CBC through its C++ interface (CbcModel over
/// OsiClpSolverInterface, run by CbcMain1: the same driver as the `cbc` program and as CBC's C
/// interface). This is the only devplace header that includes a CBC header; link the target
/// `devplace::cbc` (it defines DEVPLACE_HAS_CBC=1).
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
///   * threads, time limit and relative gap from `solve_options`; the log is silent unless
///     `verbose`.
///   * the time limit is a wall-clock deadline from the start of `solve`. CBC's own limit
///     (`-sec`, timeMode elapsed) is only checked between its phases: its root LP relaxation (and
///     every other LP it solves) ran to the end whatever the limit (33-44 s under a 2 s limit on
///     a 52 609-column mapping model). A Clp event handler on the solver ends any simplex run once
///     the deadline has passed (`detail::cbc_deadline`), and a limited solve uses the dual simplex
///     for its LPs (Clp's automatic choice may start with the "idiot" crash, which runs for
///     seconds without an event). Hence the C++ interface: the C one gives no access to Clp.
/// Status: `optimal` only when CBC proved optimality and did not stop on the gap; a time limit
/// gives `time_limit` with the incumbent, if any (and no bound when an LP was cut short, since
/// CBC's bound then comes from an unfinished relaxation). `best_bound` is CBC's best possible objective.
/// One `solve` call owns its CBC model. CBC's driver (CbcMain0, CbcMain1) keeps global state, so
/// solves called from several threads at once run their branch-and-cut one at a time (a
/// process-wide lock; a time limit counts the wait).
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/ClpEventHandler.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/ClpSolve.hpp>
#include <coin/CoinError.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/detail/backend_support.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"

namespace devplace::ilp {

namespace detail {

/// Ends every Clp simplex run (the root relaxation, the LPs of cuts, heuristics and nodes) at the
/// end of the first iteration after `deadline`. CBC clones the solver, and with it this handler,
/// wherever it copies a model: the clones share `fired`, which records that an LP was cut short.
class cbc_deadline final : public ClpEventHandler {
 public:
  using clock = std::chrono::steady_clock;
  cbc_deadline(clock::time_point deadline, std::shared_ptr<std::atomic<bool>> fired)
      : deadline_(deadline), fired_(std::move(fired)) {}
  int event(Event e) override {
    if (e != endOfIteration) return -1;
    if (clock::now() < deadline_) return -1;
    fired_->store(true, std::memory_order_relaxed);
    return 0;  // >= 0: Clp stops with problem status 5 ("stopped by event handler")
  }
  [[nodiscard]] ClpEventHandler* clone() const override { return new cbc_deadline(*this); }

 private:
  clock::time_point deadline_;
  std::shared_ptr<std::atomic<bool>> fired_;
};

/// Loads model `m` into `lp`: the column-wise matrix, the bounds, the objective, the integers.
inline void cbc_load(OsiClpSolverInterface& lp, const model& m) {
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

  lp.loadProblem(n, r, start.data(), index.data(), value.data(), lb.data(), ub.data(), obj.data(), rlb.data(),
                 rub.data());
  for (int j = 0; j < n; ++j)
    if (m.is_integral(static_cast<std::size_t>(j))) lp.setInteger(j);
  lp.setObjSense(m.sense() == objective_sense::minimize ? 1.0 : -1.0);
}

}  // namespace detail

struct cbc_solver {
  bool preprocess = false;  ///< CBC's integer preprocessing; off by default (see the file comment)
  bool cuts = true;         ///< CBC's cut generators

  [[nodiscard]] static constexpr const char* name() noexcept { return "cbc"; }

  [[nodiscard]] solution solve(const model& m, const solve_options& o = {}) const {
    const auto t0 = clock::now();
    solution sol;
    sol.solver = "cbc";
    const auto finish = [&]() -> solution {
      sol.time_s = std::chrono::duration<double>(clock::now() - t0).count();
      return sol;
    };
    const int n = static_cast<int>(m.num_vars());
    const bool limited = std::isfinite(o.time_limit_s) && o.time_limit_s < 1e9;
    const auto deadline = limited ? t0 + std::chrono::duration_cast<clock::duration>(
                                             std::chrono::duration<double>(std::max(0.0, o.time_limit_s)))
                                  : clock::time_point::max();
    OsiClpSolverInterface lp;
    lp.messageHandler()->setLogLevel(o.verbose ? 1 : 0);
    lp.getModelPtr()->setLogLevel(o.verbose ? 1 : 0);
    detail::cbc_load(lp, m);
    auto fired = std::make_shared<std::atomic<bool>>(false);
    if (limited) {
      const detail::cbc_deadline handler(deadline, fired);
      lp.getModelPtr()->passInEventHandler(&handler);  // copied in
      // Clp's automatic choice starts a large LP with its "idiot" crash, which runs for seconds
      // without an event (2.3 s of the root LP of the 52 609-column mapping model): with a limit,
      // the dual simplex (after presolve), whose every iteration the handler sees.
      ClpSolve dual;
      dual.setSolveType(ClpSolve::useDual);
      dual.setPresolveType(ClpSolve::presolveOn);
      lp.setSolveOptions(dual);
    }

    const double constant = m.objective_constant();
    const bool mip = m.num_integral() > 0;
    CbcModel cbc(lp);  // clones the solver (and its event handler)
    std::vector<double> x;
    try {
      if (!mip) {
        // As CBC's C interface: an LP goes to Clp alone.
        cbc.solver()->initialSolve();
      } else {
        run_mip(cbc, m, o, limited ? deadline : std::optional<clock::time_point>{});
      }
    } catch (const CoinError& e) {
      sol.status = solve_status::error;
      sol.message = "CBC: " + e.className() + "::" + e.methodName() + ": " + e.message();
      return finish();
    }
    const bool cut_short = fired->load(std::memory_order_relaxed) || (limited && clock::now() >= deadline);

    if (mip) {
      if (const double* b = cbc.bestSolution(); b != nullptr) x.assign(b, b + n);
    } else if (cbc.solver()->isProvenOptimal()) {
      const double* c = cbc.solver()->getColSolution();
      x.assign(c, c + n);
    }
    if (!x.empty()) {
      sol.values = std::move(x);
      for (int j = 0; j < n; ++j)
        if (m.is_integral(static_cast<std::size_t>(j))) sol.values[static_cast<std::size_t>(j)] = std::round(sol.values[static_cast<std::size_t>(j)]);
      sol.objective = m.objective_value(sol.values);
    }
    const bool have = sol.has_values();
    if (!mip)
      read_lp_status(cbc, cut_short, sol);
    else
      read_mip_status(cbc, fired->load(std::memory_order_relaxed), cut_short, have, constant, sol);
    if (have) detail::clamp_bound(m, sol);
    if (!have && n > 0 && sol.status != solve_status::time_limit)
      sol.best_bound = std::numeric_limits<double>::quiet_NaN();
    detail::keep_start(m, o, sol);
    return finish();
  }

 private:
  using clock = std::chrono::steady_clock;

  /// Runs CBC's branch-and-cut as its standalone solver does (CbcMain0, CbcMain1), with the
  /// options of `o`, the MIP start of `o` and a wall-clock `deadline` where there is one.
  void run_mip(CbcModel& cbc, const model& m, const solve_options& o,
               std::optional<clock::time_point> deadline) const {
    const int n = static_cast<int>(m.num_vars());
    if (o.start.size() == m.num_vars()) {  // CBC takes the integer columns (by name) and computes the rest
      std::vector<std::string> names;
      std::vector<double> vals;
      for (int j = 0; j < n; ++j)
        if (m.is_integral(static_cast<std::size_t>(j))) {
          names.push_back(cbc.solver()->getColName(j));
          vals.push_back(std::round(o.start[static_cast<std::size_t>(j)]));
        }
      std::vector<const char*> cnames;
      for (const auto& s : names) cnames.push_back(s.c_str());
      if (!cnames.empty()) cbc.setMIPStart(static_cast<int>(cnames.size()), cnames.data(), vals.data());
    }
    static std::mutex driver;  // CbcMain0 / CbcMain1 share global state across the process
    const std::lock_guard lock(driver);
    CbcSolverUsefulData data;
    data.noPrinting_ = !o.verbose;
    data.useSignalHandler_ = false;  // devplace's own signal handling stays in place
    CbcMain0(cbc, data);
    cbc.setLogLevel(o.verbose ? 1 : 0);
    std::vector<std::string> args{"devplace", "-log", o.verbose ? "1" : "0", "-slog", o.verbose ? "1" : "0"};
    if (!preprocess) args.insert(args.end(), {"-preprocess", "off"});
    if (!cuts) args.insert(args.end(), {"-cuts", "off"});
    if (o.threads > 1) args.insert(args.end(), {"-threads", std::to_string(o.threads)});
    if (deadline) {
      // CBC measures its limit in CPU seconds by default, which with threads (or a busy machine)
      // is not the wall-clock limit solve_options promises; it counts from its own start.
      const double left = std::chrono::duration<double>(*deadline - clock::now()).count();
      args.insert(args.end(), {"-timeMode", "elapsed", "-sec", std::to_string(std::max(0.0, left))});
    }
    if (o.relative_gap > 0) args.insert(args.end(), {"-ratioGap", std::to_string(o.relative_gap)});
    args.insert(args.end(), {"-solve", "-quit"});
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, nullptr, data);
  }

  /// The status of a pure LP solved by Clp alone.
  static void read_lp_status(CbcModel& cbc, bool cut_short, solution& sol) {
    const auto* s = cbc.solver();
    if (s->isProvenOptimal()) {
      sol.status = solve_status::optimal;
      sol.best_bound = sol.objective;
    } else if (cut_short) {
      sol.status = solve_status::time_limit;
    } else if (s->isProvenPrimalInfeasible()) {
      sol.status = solve_status::infeasible;
    } else if (s->isProvenDualInfeasible()) {
      sol.status = solve_status::unbounded;
      sol.message = "the LP is unbounded";
    } else {
      sol.status = solve_status::error;
      sol.message = "Clp ended with status " + std::to_string(lp_status(cbc)) + " and no solution";
    }
  }

  /// The status of a MIP from CBC's statuses; `fired`: an LP was cut short at the deadline.
  static void read_mip_status(CbcModel& cbc, bool fired, bool cut_short, bool have, double constant,
                              solution& sol) {
    const double bound = cbc.getBestPossibleObjValue();
    if (!fired && std::isfinite(bound) && std::abs(bound) < 1e300)
      sol.best_bound = bound + constant;
    const int secondary = cbc.secondaryStatus();
    const bool proved = cbc.isProvenOptimal() && !fired;
    if (proved && have) {
      sol.status = secondary == 2 ? solve_status::feasible : solve_status::optimal;
      if (sol.status == solve_status::optimal) sol.best_bound = sol.objective;
    } else if (cut_short || cbc.isSecondsLimitReached() || secondary == 4) {
      sol.status = solve_status::time_limit;
    } else if (cbc.isProvenInfeasible() && !have) {
      sol.status = solve_status::infeasible;
    } else if (cbc.isContinuousUnbounded() && !have) {
      sol.status = solve_status::unbounded;
      sol.message = "the LP relaxation is unbounded";
    } else if (cbc.isAbandoned()) {
      sol.status = solve_status::error;
      sol.message = "CBC abandoned the search (numerical difficulties)";
    } else if (have) {
      sol.status = solve_status::feasible;
    } else {
      sol.status = solve_status::error;
      sol.message = "CBC ended with status " + std::to_string(cbc.status()) + ", secondary status " +
                    std::to_string(secondary) + " and no solution";
    }
  }

  static int lp_status(CbcModel& cbc) {
    auto* clp = dynamic_cast<OsiClpSolverInterface*>(cbc.solver());
    return clp != nullptr ? clp->getModelPtr()->status() : -1;
  }
};

static_assert(ilp_solver<cbc_solver>);

}  // namespace devplace::ilp
