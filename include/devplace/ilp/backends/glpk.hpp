#pragma once
/// \file ilp/backends/glpk.hpp
/// `glpk_solver`: solves an `ilp::model` with GLPK's branch-and-cut (`glp_intopt` with its
/// presolver). This is the only devplace header that includes <glpk.h>; link the target
/// `devplace::glpk` (it defines DEVPLACE_HAS_GLPK=1).
///
///   #include <devplace/ilp/backends/glpk.hpp>
///   auto sol = devplace::ilp::glpk_solver{}.solve(m, {.time_limit_s = 10});
///
/// Settings: presolve on (`presolve = false` solves the LP relaxation with the simplex first and
/// then branches without presolving), terminal output off unless `verbose`, time limit `tm_lim`,
/// relative gap `mip_gap`. GLPK is single-threaded: `threads` is ignored. A MIP start
/// (`solve_options::start`, every column) is offered once through `glp_ios_heur_sol` when it is
/// feasible (GLPK would not check it); a solve with a start runs without the MIP presolver (whose transformed problem the callback would see).
/// A time limit is wall-clock and covers the whole solve: a solve with a limit runs without the
/// MIP presolver too (GLPK solves the presolved LP relaxation with no time limit), and the search
/// callback ends the search (`glp_ios_terminate`) once the deadline has passed.
/// Status: `optimal` when glp_intopt ended normally with an optimal MIP; `feasible` when it stopped
/// on the requested gap; `time_limit` with the incumbent, if any; `infeasible` when the LP
/// relaxation or the search proved it; `unbounded` when the LP relaxation is unbounded.
/// `best_bound` is the best bound of the active nodes, tracked by a search callback.
/// GLPK keeps per-thread state; solves on different threads each create their own problem object.
#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <climits>
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

namespace detail {
/// GLPK keeps its environment (memory pools, terminal hooks) in thread-local storage and never
/// frees it on its own: a worker thread that solved would leave it behind when it ends. One
/// guard per thread frees it at thread exit (glp_free_env is a no-op when no environment exists).
struct glpk_thread_environment {
  glpk_thread_environment() = default;
  glpk_thread_environment(const glpk_thread_environment&) = delete;
  glpk_thread_environment& operator=(const glpk_thread_environment&) = delete;
  ~glpk_thread_environment() { glp_free_env(); }
};
inline void glpk_free_environment_at_thread_exit() {
  thread_local glpk_thread_environment guard;
  (void)guard;
}

struct glpk_bound_tracker {
  double bound = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> start;  ///< 1-based MIP start (start[0] unused); empty: none
  bool start_offered = false;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool deadline_passed = false;
  static void callback(glp_tree* tree, void* info) {
    auto* self = static_cast<glpk_bound_tracker*>(info);
    if (!self->deadline_passed && std::chrono::steady_clock::now() >= self->deadline) {
      self->deadline_passed = true;
      glp_ios_terminate(tree);  // glp_intopt returns GLP_ESTOP
    }
    if (glp_ios_reason(tree) == GLP_IHEUR && !self->start.empty() && !self->start_offered) {
      self->start_offered = true;
      glp_ios_heur_sol(tree, self->start.data());  // GLPK checks it and keeps it if it is better
    }
    const int p = glp_ios_best_node(tree);
    if (p == 0) return;
    const double b = glp_ios_node_bound(tree, p);
    if (std::isfinite(b) && std::abs(b) < 1e300) self->bound = b;
  }
};

/// Loads model `m` into the empty problem `P` (columns, objective, rows and the matrix).
inline void glpk_load(glp_prob* P, const model& m) {
  const int n = static_cast<int>(m.num_vars()), r = static_cast<int>(m.num_rows());
  glp_set_obj_dir(P, m.sense() == objective_sense::minimize ? GLP_MIN : GLP_MAX);
  if (r > 0) glp_add_rows(P, r);
  if (n > 0) glp_add_cols(P, n);
  for (int j = 1; j <= n; ++j) {
    const auto& v = m.variables()[static_cast<std::size_t>(j - 1)];
    const bool lo = v.lower != -infinity, up = v.upper != infinity;
    const int type = v.lower == v.upper ? GLP_FX : lo && up ? GLP_DB : lo ? GLP_LO : up ? GLP_UP : GLP_FR;
    glp_set_col_bnds(P, j, type, lo ? v.lower : 0.0, up ? v.upper : 0.0);
    if (v.kind != var_kind::continuous) glp_set_col_kind(P, j, GLP_IV);
  }
  for (const auto& t : m.objective_terms()) glp_set_obj_coef(P, static_cast<int>(t.index) + 1, t.coef);
  glp_set_obj_coef(P, 0, m.objective_constant());
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  for (int i = 1; i <= r; ++i) {
    const auto& row = m.rows()[static_cast<std::size_t>(i - 1)];
    const int type = row.rel == relation::less_equal ? GLP_UP : row.rel == relation::greater_equal ? GLP_LO : GLP_FX;
    glp_set_row_bnds(P, i, type, row.rhs, row.rhs);
    for (const auto& t : row.terms) {
      ia.push_back(i);
      ja.push_back(static_cast<int>(t.index) + 1);
      ar.push_back(t.coef);
    }
  }
  glp_load_matrix(P, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
}

/// The status of `sol` from glp_intopt's return code `ret` and MIP status `mst`.
inline void glpk_read_status(glp_prob* P, int ret, int mst, bool deadline_passed, solution& sol) {
  switch (ret) {
    case 0:
      sol.status = mst == GLP_OPT ? solve_status::optimal
                   : mst == GLP_NOFEAS ? solve_status::infeasible
                   : mst == GLP_FEAS ? solve_status::feasible
                                     : solve_status::error;
      if (sol.status == solve_status::error) sol.message = "glp_intopt ended without a MIP status";
      break;
    case GLP_ENOPFS: sol.status = solve_status::infeasible; break;
    case GLP_ENODFS: {
      // The LP relaxation has no dual feasible solution: unbounded or infeasible. Decide it.
      glp_smcp sp;
      glp_init_smcp(&sp);
      sp.msg_lev = GLP_MSG_OFF;
      sp.presolve = GLP_OFF;
      const int sret = glp_simplex(P, &sp);
      const int st = glp_get_status(P);
      if (sret == 0 && st == GLP_NOFEAS) {
        sol.status = solve_status::infeasible;
      } else {
        sol.status = solve_status::unbounded;
        sol.message = "the LP relaxation is unbounded";
      }
      break;
    }
    case GLP_ETMLIM: sol.status = solve_status::time_limit; break;
    case GLP_EMIPGAP: sol.status = solve_status::feasible; break;
    case GLP_ESTOP:
      if (deadline_passed) {
        sol.status = solve_status::time_limit;
        break;
      }
      [[fallthrough]];
    default:
      sol.status = solve_status::error;
      sol.message = "glp_intopt returned " + std::to_string(ret);
      break;
  }
}
}  // namespace detail

struct glpk_solver {
  bool presolve = true;  ///< glp_intopt's MIP presolver

  [[nodiscard]] static constexpr const char* name() noexcept { return "glpk"; }

  [[nodiscard]] solution solve(const model& m, const solve_options& o = {}) const {
    const auto t0 = std::chrono::steady_clock::now();
    solution sol;
    sol.solver = "glpk";
    const auto finish = [&]() -> solution {
      sol.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return sol;
    };
    detail::glpk_free_environment_at_thread_exit();
    std::unique_ptr<glp_prob, void (*)(glp_prob*)> owner(glp_create_prob(), &glp_delete_prob);
    glp_prob* P = owner.get();
    const int n = static_cast<int>(m.num_vars());
    detail::glpk_load(P, m);

    detail::glpk_bound_tracker tracker;
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = o.verbose ? GLP_MSG_ON : GLP_MSG_OFF;
    if (std::isfinite(o.time_limit_s)) {
      parm.tm_lim = static_cast<int>(std::clamp(o.time_limit_s * 1000.0, 0.0, static_cast<double>(INT_MAX)));
      tracker.deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(std::min(o.time_limit_s, 1e9)));
    }
    if (o.relative_gap > 0) parm.mip_gap = o.relative_gap;
    parm.cb_func = &detail::glpk_bound_tracker::callback;
    parm.cb_info = &tracker;

    // A MIP start is offered from the search callback, which sees the presolved problem when the
    // MIP presolver is on: with a start, the LP relaxation is solved first and presolve is off.
    // glp_ios_heur_sol does not check primal feasibility, so an infeasible start is dropped here.
    const bool start = detail::feasible_start(m, o);
    const bool use_presolve = presolve && !start && !std::isfinite(o.time_limit_s);
    if (start) {
      tracker.start.assign(1, 0.0);
      tracker.start.insert(tracker.start.end(), o.start.begin(), o.start.end());
    }
    parm.presolve = use_presolve ? GLP_ON : GLP_OFF;
    int ret = 0;
    if (!use_presolve) {
      glp_smcp sp;
      glp_init_smcp(&sp);
      sp.msg_lev = parm.msg_lev;
      // The time limit covers the LP relaxation too, counted (like every limit) from the start of
      // `solve`: loading the 52 609-column mapping model took 0.4-0.5 s of a 3 s limit on a loaded
      // machine, which GLPK's own clock (started here) would not see.
      const double limit_ms = parm.tm_lim;
      auto left_ms = [&] {
        const double spent_ms = 1000.0 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return static_cast<int>(std::max(0.0, limit_ms - spent_ms));
      };
      if (parm.tm_lim != INT_MAX) sp.tm_lim = left_ms();
      ret = glp_simplex(P, &sp);
      if (parm.tm_lim != INT_MAX) parm.tm_lim = left_ms();
      if (ret == 0) {
        const int st = glp_get_status(P);
        if (st == GLP_NOFEAS) {
          sol.status = solve_status::infeasible;
          return finish();
        }
        if (st == GLP_UNBND) {
          sol.status = solve_status::unbounded;
          sol.message = "the LP relaxation is unbounded";
          return finish();
        }
      }
    }
    if (ret == 0) ret = glp_intopt(P, &parm);
    const int mst = glp_mip_status(P);
    const bool has_x = mst == GLP_OPT || mst == GLP_FEAS;
    if (has_x) {
      sol.values.resize(static_cast<std::size_t>(n));
      for (int j = 1; j <= n; ++j) {
        double x = glp_mip_col_val(P, j);
        if (m.is_integral(static_cast<std::size_t>(j - 1))) x = std::round(x);
        sol.values[static_cast<std::size_t>(j - 1)] = x;
      }
      sol.objective = m.objective_value(sol.values);
    }
    detail::glpk_read_status(P, ret, mst, tracker.deadline_passed, sol);
    if (sol.status == solve_status::optimal) {
      sol.best_bound = sol.objective;
    } else if (!std::isnan(tracker.bound) && (has_x || sol.status == solve_status::time_limit)) {
      sol.best_bound = tracker.bound + 0.0;
      if (has_x) detail::clamp_bound(m, sol);
    }
    if (!has_x && sol.status != solve_status::time_limit) sol.values.clear();
    detail::keep_start(m, o, sol);
    return finish();
  }
};

static_assert(ilp_solver<glpk_solver>);

}  // namespace devplace::ilp
