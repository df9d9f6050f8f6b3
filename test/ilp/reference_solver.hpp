#pragma once
// A tiny exact MILP solver for the tests: depth-first enumeration of the integer columns (finite
// bounds required) with bound propagation on the rows, and a dense two-phase simplex (Bland's
// rule) for the continuous columns at every leaf. It shares no code with CBC or GLPK, so it is an
// independent oracle for the builders on small instances (a handful of binaries).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "devplace/ilp/concepts.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/solution.hpp"

namespace devplace::test {

/// min c·y s.t. rows over y with bounds; dense, exact enough for small well-scaled LPs.
struct dense_lp {
  enum class result { optimal, infeasible, unbounded };

  // rows: coefficients over n columns, relation, rhs
  struct lp_row {
    std::vector<double> a;
    ilp::relation rel;
    double b;
  };

  static result solve(std::size_t n, const std::vector<double>& cost, const std::vector<double>& lower,
                      const std::vector<double>& upper, std::vector<lp_row> rows, std::vector<double>& y,
                      double& value) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    // Column substitution: y_j = off_j + sign_j * y'_j (y' >= 0), or a free split y = p - q.
    struct sub {
      double off;
      double sign;
      std::size_t col;        // index of y' (or p)
      std::size_t neg = npos; // index of q for free columns
    };
    std::vector<sub> subs(n);
    std::size_t N = 0;
    std::vector<lp_row> extra;
    for (std::size_t j = 0; j < n; ++j) {
      if (lower[j] > -inf) {
        subs[j] = {lower[j], 1.0, N++};
        if (upper[j] < inf) {
          lp_row r{std::vector<double>(n, 0.0), ilp::relation::less_equal, upper[j]};
          r.a[j] = 1.0;
          extra.push_back(r);
        }
      } else if (upper[j] < inf) {
        subs[j] = {upper[j], -1.0, N++};
      } else {
        subs[j] = {0.0, 1.0, N++};
        subs[j].neg = N++;
      }
    }
    for (auto& r : extra) rows.push_back(r);
    // Rows in y' space.
    const std::size_t M = rows.size();
    std::vector<std::vector<double>> A(M, std::vector<double>(N, 0.0));
    std::vector<double> b(M);
    std::vector<ilp::relation> rel(M);
    for (std::size_t i = 0; i < M; ++i) {
      double rhs = rows[i].b;
      for (std::size_t j = 0; j < n; ++j) {
        const double a = rows[i].a[j];
        if (a == 0) continue;
        rhs -= a * subs[j].off;
        A[i][subs[j].col] += a * subs[j].sign;
        if (subs[j].neg != npos) A[i][subs[j].neg] -= a;
      }
      b[i] = rhs;
      rel[i] = rows[i].rel;
      if (b[i] < 0) {
        b[i] = -b[i];
        for (auto& x : A[i]) x = -x;
        rel[i] = rel[i] == ilp::relation::less_equal ? ilp::relation::greater_equal
                 : rel[i] == ilp::relation::greater_equal ? ilp::relation::less_equal
                                                          : ilp::relation::equal;
      }
    }
    std::vector<double> c(N, 0.0);
    double c0 = 0;
    for (std::size_t j = 0; j < n; ++j) {
      c0 += cost[j] * subs[j].off;
      c[subs[j].col] += cost[j] * subs[j].sign;
      if (subs[j].neg != npos) c[subs[j].neg] -= cost[j];
    }
    // Tableau columns: N structural, then slacks/surplus, then artificials.
    std::size_t ns = 0, na = 0;
    for (auto r : rel) {
      if (r != ilp::relation::equal) ++ns;
      if (r != ilp::relation::less_equal) ++na;
    }
    const std::size_t W = N + ns + na;
    std::vector<std::vector<double>> T(M, std::vector<double>(W + 1, 0.0));
    std::vector<std::size_t> basis(M);
    std::vector<char> artificial(W, 0);
    std::size_t sk = N, ak = N + ns;
    for (std::size_t i = 0; i < M; ++i) {
      for (std::size_t j = 0; j < N; ++j) T[i][j] = A[i][j];
      T[i][W] = b[i];
      if (rel[i] == ilp::relation::less_equal) {
        T[i][sk] = 1;
        basis[i] = sk++;
      } else {
        if (rel[i] == ilp::relation::greater_equal) T[i][sk++] = -1;
        T[i][ak] = 1;
        artificial[ak] = 1;
        basis[i] = ak++;
      }
    }
    constexpr double eps = 1e-9;
    auto pivot = [&](std::size_t r, std::size_t col) {
      const double p = T[r][col];
      for (auto& x : T[r]) x /= p;
      for (std::size_t i = 0; i < M; ++i)
        if (i != r && T[i][col] != 0) {
          const double f = T[i][col];
          for (std::size_t j = 0; j <= W; ++j) T[i][j] -= f * T[r][j];
        }
      basis[r] = col;
    };
    // Runs the simplex for costs `cc` over the allowed columns; false when unbounded.
    auto run = [&](const std::vector<double>& cc, const std::vector<char>& allowed) {
      for (std::size_t iter = 0; iter < 100000; ++iter) {
        // Reduced costs d_j = cc_j - Σ cc_B T_ij; Bland: smallest j with d_j < -eps.
        std::size_t enter = W;
        for (std::size_t j = 0; j < W && enter == W; ++j) {
          if (!allowed[j]) continue;
          double d = cc[j];
          for (std::size_t i = 0; i < M; ++i) d -= cc[basis[i]] * T[i][j];
          if (d < -eps) enter = j;
        }
        if (enter == W) return true;
        std::size_t leave = M;
        double best = inf;
        for (std::size_t i = 0; i < M; ++i)
          if (T[i][enter] > eps) {
            const double ratio = T[i][W] / T[i][enter];
            if (ratio < best - 1e-12 || (std::abs(ratio - best) <= 1e-12 && leave < M && basis[i] < basis[leave])) {
              best = ratio;
              leave = i;
            }
          }
        if (leave == M) return false;
        pivot(leave, enter);
      }
      throw std::runtime_error("dense_lp: iteration limit");
    };
    std::vector<char> all(W, 1);
    if (na > 0) {
      std::vector<double> c1(W, 0.0);
      for (std::size_t j = 0; j < W; ++j)
        if (artificial[j]) c1[j] = 1;
      run(c1, all);
      double infeas = 0;
      for (std::size_t i = 0; i < M; ++i)
        if (artificial[basis[i]]) infeas += T[i][W];
      if (infeas > 1e-7) return result::infeasible;
      for (std::size_t i = 0; i < M; ++i)
        if (artificial[basis[i]])
          for (std::size_t j = 0; j < W; ++j)
            if (!artificial[j] && std::abs(T[i][j]) > eps) {
              pivot(i, j);
              break;
            }
    }
    std::vector<double> c2(W, 0.0);
    for (std::size_t j = 0; j < N; ++j) c2[j] = c[j];
    std::vector<char> allowed(W, 1);
    for (std::size_t j = 0; j < W; ++j)
      if (artificial[j]) allowed[j] = 0;
    if (!run(c2, allowed)) return result::unbounded;
    std::vector<double> yp(N, 0.0);
    for (std::size_t i = 0; i < M; ++i)
      if (basis[i] < N) yp[basis[i]] = T[i][W];
    y.assign(n, 0.0);
    value = c0;
    for (std::size_t j = 0; j < n; ++j) {
      y[j] = subs[j].off + subs[j].sign * yp[subs[j].col] - (subs[j].neg != npos ? yp[subs[j].neg] : 0.0);
      value += cost[j] * y[j];
    }
    return result::optimal;
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

/// Exact on small models; `max_leaves` guards against accidental huge enumerations (then it throws).
struct reference_solver {
  std::size_t max_leaves = 2'000'000;

  [[nodiscard]] static constexpr const char* name() noexcept { return "reference"; }

  [[nodiscard]] ilp::solution solve(const ilp::model& m, const ilp::solve_options& = {}) const {
    const auto t0 = std::chrono::steady_clock::now();
    ilp::solution sol;
    sol.solver = "reference";
    const std::size_t n = m.num_vars();
    std::vector<double> lo(n), hi(n);
    std::vector<std::size_t> ints, conts;
    for (std::size_t j = 0; j < n; ++j) {
      const auto& v = m.variables()[j];
      lo[j] = v.lower;
      hi[j] = v.upper;
      if (v.kind != ilp::var_kind::continuous) {
        if (!std::isfinite(v.lower) || !std::isfinite(v.upper))
          throw std::invalid_argument("reference_solver: integer columns need finite bounds");
        lo[j] = std::ceil(v.lower - 1e-9);
        hi[j] = std::floor(v.upper + 1e-9);
        ints.push_back(j);
      } else {
        conts.push_back(j);
      }
    }
    const double sense = m.sense() == ilp::objective_sense::minimize ? 1.0 : -1.0;
    std::vector<double> cost(n, 0.0);
    for (const auto& t : m.objective_terms()) cost[t.index] = t.coef;
    double best = std::numeric_limits<double>::infinity();  // in minimisation terms
    std::vector<double> best_x;
    bool unbounded = false;
    std::size_t leaves = 0;

    // Bound propagation over the rows for the integer columns; false on a conflict.
    auto propagate = [&](std::vector<double>& L, std::vector<double>& U) {
      const double inf = std::numeric_limits<double>::infinity();
      for (int round = 0; round < 100000; ++round) {
        bool changed = false;
        for (const auto& r : m.rows()) {
          // Finite parts and counts of infinite parts of the least and largest activity.
          double minact = 0, maxact = 0;
          std::size_t mininf = 0, maxinf = 0;
          auto lohi = [&](const ilp::term& t, double& mn, double& mx) {
            const double a = t.coef, l = L[t.index], u = U[t.index];
            mn = a > 0 ? a * l : a * u;
            mx = a > 0 ? a * u : a * l;
            if (std::isnan(mn)) mn = -inf;
            if (std::isnan(mx)) mx = inf;
          };
          for (const auto& t : r.terms) {
            double mn, mx;
            lohi(t, mn, mx);
            if (std::isinf(mn)) ++mininf; else minact += mn;
            if (std::isinf(mx)) ++maxinf; else maxact += mx;
          }
          const bool le = r.rel != ilp::relation::greater_equal, ge = r.rel != ilp::relation::less_equal;
          const double tol = 1e-7 * (1 + std::abs(r.rhs));
          if (le && mininf == 0 && minact > r.rhs + tol) return false;
          if (ge && maxinf == 0 && maxact < r.rhs - tol) return false;
          bool row_changed = false;
          for (const auto& t : r.terms) {
            if (m.variables()[t.index].kind == ilp::var_kind::continuous || L[t.index] == U[t.index]) continue;
            double mn, mx;
            lohi(t, mn, mx);
            const double a = t.coef;
            if (le) {  // a x <= rhs - (least activity of the others)
              const std::size_t others_inf = mininf - (std::isinf(mn) ? 1 : 0);
              if (others_inf == 0) {
                const double bound = (r.rhs - (minact - (std::isinf(mn) ? 0.0 : mn))) / a;
                if (a > 0) {
                  const double nu = std::floor(bound + 1e-7);
                  if (nu < U[t.index]) U[t.index] = nu, row_changed = true;
                } else {
                  const double nl = std::ceil(bound - 1e-7);
                  if (nl > L[t.index]) L[t.index] = nl, row_changed = true;
                }
              }
            }
            if (ge) {  // a x >= rhs - (largest activity of the others)
              const std::size_t others_inf = maxinf - (std::isinf(mx) ? 1 : 0);
              if (others_inf == 0) {
                const double bound = (r.rhs - (maxact - (std::isinf(mx) ? 0.0 : mx))) / a;
                if (a > 0) {
                  const double nl = std::ceil(bound - 1e-7);
                  if (nl > L[t.index]) L[t.index] = nl, row_changed = true;
                } else {
                  const double nu = std::floor(bound + 1e-7);
                  if (nu < U[t.index]) U[t.index] = nu, row_changed = true;
                }
              }
            }
            if (L[t.index] > U[t.index]) return false;
            changed = changed || row_changed;
            if (row_changed) break;  // activities are stale: recompute this row in the next round
          }
        }
        if (!changed) return true;
      }
      return true;
    };

    auto leaf = [&](const std::vector<double>& L) {
      if (++leaves > max_leaves) throw std::runtime_error("reference_solver: too many leaves");
      // LP over the continuous columns with the integers fixed at L.
      const std::size_t k = conts.size();
      std::vector<double> c(k), cl(k), cu(k);
      for (std::size_t q = 0; q < k; ++q) {
        c[q] = sense * cost[conts[q]];
        cl[q] = lo[conts[q]];
        cu[q] = hi[conts[q]];
      }
      std::vector<std::size_t> pos(n, dense_lp::npos);
      for (std::size_t q = 0; q < k; ++q) pos[conts[q]] = q;
      std::vector<dense_lp::lp_row> rows;
      for (const auto& r : m.rows()) {
        dense_lp::lp_row lr{std::vector<double>(k, 0.0), r.rel, r.rhs};
        bool any = false;
        for (const auto& t : r.terms) {
          if (pos[t.index] != dense_lp::npos) {
            lr.a[pos[t.index]] += t.coef;
            any = true;
          } else {
            lr.b -= t.coef * L[t.index];
          }
        }
        if (!any) {
          const double tol = 1e-7 * (1 + std::abs(r.rhs));
          if ((r.rel != ilp::relation::greater_equal && lr.b < -tol) || (r.rel != ilp::relation::less_equal && lr.b > tol))
            return;
          continue;
        }
        rows.push_back(std::move(lr));
      }
      std::vector<double> y;
      double val = 0;
      const auto res = dense_lp::solve(k, c, cl, cu, rows, y, val);
      if (res == dense_lp::result::infeasible) return;
      if (res == dense_lp::result::unbounded) {
        unbounded = true;
        return;
      }
      double obj = val;
      for (std::size_t j : ints) obj += sense * cost[j] * L[j];
      if (obj < best - 1e-9) {
        best = obj;
        best_x = L;
        for (std::size_t q = 0; q < k; ++q) best_x[conts[q]] = y[q];
      }
    };

    // Iterative DFS over the integer columns.
    struct frame {
      std::vector<double> L, U;
      std::size_t depth;
    };
    std::vector<frame> stack;
    {
      frame f{lo, hi, 0};
      if (propagate(f.L, f.U)) stack.push_back(std::move(f));
    }
    while (!stack.empty() && !unbounded) {
      frame f = std::move(stack.back());
      stack.pop_back();
      std::size_t d = f.depth;
      while (d < ints.size() && f.L[ints[d]] == f.U[ints[d]]) ++d;
      if (d == ints.size()) {
        leaf(f.L);
        continue;
      }
      const std::size_t j = ints[d];
      for (double v = f.U[j]; v >= f.L[j]; v -= 1.0) {  // pushed high first, so low values run first
        frame g{f.L, f.U, d + 1};
        g.L[j] = g.U[j] = v;
        if (propagate(g.L, g.U)) stack.push_back(std::move(g));
      }
    }
    sol.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (unbounded) {
      sol.status = ilp::solve_status::unbounded;
      return sol;
    }
    if (best_x.empty() && n > 0) {
      sol.status = ilp::solve_status::infeasible;
      return sol;
    }
    sol.status = ilp::solve_status::optimal;
    sol.values = best_x;
    sol.objective = n > 0 ? m.objective_value(best_x) : m.objective_constant();
    sol.best_bound = sol.objective;
    return sol;
  }
};

static_assert(ilp::ilp_solver<reference_solver>);

}  // namespace devplace::test
