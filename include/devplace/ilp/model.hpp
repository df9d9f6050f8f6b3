#pragma once
/// \file ilp/model.hpp
/// A solver-neutral mixed-integer linear program as plain data: variables (continuous, integer,
/// binary; bounds; names), linear rows `Σ a_j x_j (<= | >= | ==) b`, and a linear objective to
/// minimise or maximise. Builders emit it; the writers (ilp/lp_writer.hpp, ilp/mps_writer.hpp)
/// print it; the backends (ilp/backends/*.hpp, separate CMake targets) solve it.
///
///   ilp::model m("example");
///   const ilp::var x = m.add_binary("x"), y = m.add_continuous(0, 10, "y");
///   m.add(x + 2 * y <= 7, "cap");          // operators from <devplace/ilp/expr.hpp>
///   m.minimize(y - 3 * x);
///
/// Handles (`var`) are column indices; `linear_expr` is a sparse sum plus a constant; a
/// `constraint` exists only as the result of `expr <= | >= | == expr` (ilp/expr.hpp), so a chained
/// comparison such as `0 <= x <= 1` does not compile. Caller errors (a non-finite coefficient, a
/// variable of another size, empty bounds) throw std::invalid_argument. Only std headers.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace devplace::ilp {

inline constexpr double infinity = std::numeric_limits<double>::infinity();

enum class var_kind { continuous, integer, binary };

/// A variable of one model: its column index. Compare handles through `index`; `==` between
/// handles builds a constraint (ilp/expr.hpp).
struct var {
  std::size_t index = 0;
};

/// One coefficient of a linear expression or row.
struct term {
  std::size_t index = 0;  ///< column
  double coef = 0;
};

/// Σ coef · x + constant. Built with the operators of ilp/expr.hpp or with `add`.
class linear_expr {
 public:
  linear_expr() = default;
  linear_expr(var v) : terms_{{v.index, 1.0}} {}  // NOLINT: implicit, so that `x + y` works
  explicit linear_expr(double constant) : constant_(constant) {}

  linear_expr& add(var v, double coef) {
    terms_.push_back({v.index, coef});
    return *this;
  }
  linear_expr& add(const linear_expr& e, double factor = 1.0) {
    for (const auto& t : e.terms_) terms_.push_back({t.index, t.coef * factor});
    constant_ += e.constant_ * factor;
    return *this;
  }
  linear_expr& add_constant(double c) {
    constant_ += c;
    return *this;
  }
  linear_expr& scale(double f) {
    for (auto& t : terms_) t.coef *= f;
    constant_ *= f;
    return *this;
  }

  /// The terms as added (possibly repeated indices, zeros); `normalized()` merges them.
  [[nodiscard]] const std::vector<term>& terms() const noexcept { return terms_; }
  [[nodiscard]] double constant() const noexcept { return constant_; }
  [[nodiscard]] bool empty() const noexcept { return terms_.empty(); }

  /// Terms sorted by column, repeated columns added up, zero coefficients dropped.
  [[nodiscard]] std::vector<term> normalized() const {
    std::vector<term> t = terms_;
    std::sort(t.begin(), t.end(), [](const term& a, const term& b) { return a.index < b.index; });
    std::vector<term> out;
    for (const auto& x : t) {
      if (!out.empty() && out.back().index == x.index)
        out.back().coef += x.coef;
      else
        out.push_back(x);
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const term& x) { return x.coef == 0.0; }), out.end());
    return out;
  }

  /// The value at `x` (one entry per column of the model).
  [[nodiscard]] double evaluate(const std::vector<double>& x) const {
    double v = constant_;
    for (const auto& t : terms_) v += t.coef * x.at(t.index);
    return v;
  }

 private:
  std::vector<term> terms_;
  double constant_ = 0;
};

enum class relation { less_equal, greater_equal, equal };

class constraint;
namespace detail {
constraint make_constraint(linear_expr lhs, relation r, const linear_expr& rhs);
}

/// `lhs rel rhs`, where everything variable sits in `lhs` and `rhs` is a number. Made only by the
/// comparison operators of ilp/expr.hpp (there is no public constructor).
class constraint {
 public:
  [[nodiscard]] const linear_expr& lhs() const noexcept { return lhs_; }
  [[nodiscard]] relation rel() const noexcept { return rel_; }
  [[nodiscard]] double rhs() const noexcept { return rhs_; }

 private:
  friend constraint detail::make_constraint(linear_expr, relation, const linear_expr&);
  constraint(linear_expr lhs, relation r, double rhs) : lhs_(std::move(lhs)), rel_(r), rhs_(rhs) {}
  linear_expr lhs_;
  relation rel_ = relation::less_equal;
  double rhs_ = 0;
};

namespace detail {
/// `lhs rel rhs` moved into the form `terms rel number`.
inline constraint make_constraint(linear_expr lhs, relation r, const linear_expr& rhs) {
  lhs.add(rhs, -1.0);
  const double c = lhs.constant();
  lhs.add_constant(-c);
  return constraint(std::move(lhs), r, -c);
}
}  // namespace detail

/// A column of the model.
struct variable {
  std::string name;  ///< may be empty; writers then use x<index>
  var_kind kind = var_kind::continuous;
  double lower = 0;
  double upper = infinity;
};

/// A row of the model: Σ terms rel rhs, terms merged and sorted by column.
struct row {
  std::string name;  ///< may be empty; writers then use r<index>
  std::vector<term> terms;
  relation rel = relation::less_equal;
  double rhs = 0;
};

enum class objective_sense { minimize, maximize };

class model {
 public:
  explicit model(std::string name = "devplace") : name_(std::move(name)) {}

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  /// A new variable. Throws std::invalid_argument for NaN bounds, lower > upper, lower = +inf or
  /// upper = -inf; a binary's bounds must lie within [0, 1].
  var add_var(var_kind kind, double lower, double upper, std::string name = {}) {
    check_bounds(kind, lower, upper, name);
    vars_.push_back({std::move(name), kind, lower, upper});
    return var{vars_.size() - 1};
  }
  var add_binary(std::string name = {}) { return add_var(var_kind::binary, 0, 1, std::move(name)); }
  var add_integer(double lower, double upper, std::string name = {}) {
    return add_var(var_kind::integer, lower, upper, std::move(name));
  }
  var add_continuous(double lower = 0, double upper = infinity, std::string name = {}) {
    return add_var(var_kind::continuous, lower, upper, std::move(name));
  }

  /// Changes the bounds of `v` (same checks as add_var).
  void set_bounds(var v, double lower, double upper) {
    auto& x = vars_.at(v.index);
    check_bounds(x.kind, lower, upper, x.name);
    x.lower = lower;
    x.upper = upper;
  }
  void fix(var v, double value) { set_bounds(v, value, value); }

  /// Adds a row; returns its index. Throws std::invalid_argument if a coefficient or the right-hand
  /// side is not finite, or a term names a column the model does not have.
  std::size_t add(const constraint& c, std::string name = {}) {
    row r;
    r.name = std::move(name);
    r.terms = checked_terms(c.lhs(), "constraint");
    r.rel = c.rel();
    r.rhs = c.rhs();
    if (!std::isfinite(r.rhs)) throw std::invalid_argument("ilp::model: constraint " + r.name + " has a non-finite right-hand side");
    rows_.push_back(std::move(r));
    return rows_.size() - 1;
  }

  void minimize(const linear_expr& e) { set_objective(e, objective_sense::minimize); }
  void maximize(const linear_expr& e) { set_objective(e, objective_sense::maximize); }
  void set_objective(const linear_expr& e, objective_sense s) {
    objective_terms_ = checked_terms(e, "objective");
    objective_constant_ = e.constant();
    if (!std::isfinite(objective_constant_)) throw std::invalid_argument("ilp::model: the objective constant is not finite");
    sense_ = s;
  }
  /// Name of the objective row in the writers (default "obj").
  void set_objective_name(std::string n) { objective_name_ = std::move(n); }

  [[nodiscard]] std::size_t num_vars() const noexcept { return vars_.size(); }
  [[nodiscard]] std::size_t num_rows() const noexcept { return rows_.size(); }
  [[nodiscard]] const variable& get(var v) const { return vars_.at(v.index); }
  [[nodiscard]] const std::vector<variable>& variables() const noexcept { return vars_; }
  [[nodiscard]] const std::vector<row>& rows() const noexcept { return rows_; }
  [[nodiscard]] const std::vector<term>& objective_terms() const noexcept { return objective_terms_; }
  [[nodiscard]] double objective_constant() const noexcept { return objective_constant_; }
  [[nodiscard]] objective_sense sense() const noexcept { return sense_; }
  [[nodiscard]] const std::string& objective_name() const noexcept { return objective_name_; }
  [[nodiscard]] bool is_integral(std::size_t j) const { return vars_.at(j).kind != var_kind::continuous; }
  [[nodiscard]] std::size_t num_integral() const noexcept {
    return static_cast<std::size_t>(std::count_if(vars_.begin(), vars_.end(),
                                                  [](const variable& v) { return v.kind != var_kind::continuous; }));
  }
  [[nodiscard]] std::size_t num_nonzeros() const noexcept {
    std::size_t k = 0;
    for (const auto& r : rows_) k += r.terms.size();
    return k;
  }

  /// The objective at `x` (one value per column).
  [[nodiscard]] double objective_value(const std::vector<double>& x) const {
    double v = objective_constant_;
    for (const auto& t : objective_terms_) v += t.coef * x.at(t.index);
    return v;
  }
  /// The activity Σ a_j x_j of row `i` at `x`.
  [[nodiscard]] double activity(std::size_t i, const std::vector<double>& x) const {
    double v = 0;
    for (const auto& t : rows_.at(i).terms) v += t.coef * x.at(t.index);
    return v;
  }
  /// The largest violation at `x` of a bound, a row or an integrality requirement (0 when `x`
  /// is feasible); +inf when `x` has the wrong size.
  [[nodiscard]] double max_violation(const std::vector<double>& x) const {
    if (x.size() != vars_.size()) return infinity;
    double worst = 0;
    for (std::size_t j = 0; j < vars_.size(); ++j) {
      const auto& v = vars_[j];
      worst = std::max({worst, v.lower - x[j], x[j] - v.upper});
      if (v.kind != var_kind::continuous) worst = std::max(worst, std::abs(x[j] - std::round(x[j])));
    }
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const double a = activity(i, x), b = rows_[i].rhs;
      switch (rows_[i].rel) {
        case relation::less_equal: worst = std::max(worst, a - b); break;
        case relation::greater_equal: worst = std::max(worst, b - a); break;
        case relation::equal: worst = std::max(worst, std::abs(a - b)); break;
      }
    }
    return worst;
  }

 private:
  static void check_bounds(var_kind kind, double lower, double upper, const std::string& name) {
    if (std::isnan(lower) || std::isnan(upper) || lower > upper || lower == infinity || upper == -infinity)
      throw std::invalid_argument("ilp::model: variable " + name + " has empty or invalid bounds [" +
                                  std::to_string(lower) + ", " + std::to_string(upper) + "]");
    if (kind == var_kind::binary && (lower < 0 || upper > 1))
      throw std::invalid_argument("ilp::model: binary variable " + name + " must have bounds within [0, 1]");
  }
  std::vector<term> checked_terms(const linear_expr& e, const char* what) const {
    auto t = e.normalized();
    for (const auto& x : t) {
      if (x.index >= vars_.size())
        throw std::invalid_argument(std::string("ilp::model: the ") + what + " uses column " + std::to_string(x.index) +
                                    " of a model with " + std::to_string(vars_.size()));
      if (!std::isfinite(x.coef))
        throw std::invalid_argument(std::string("ilp::model: the ") + what + " has a non-finite coefficient");
    }
    return t;
  }

  std::string name_;
  std::vector<variable> vars_;
  std::vector<row> rows_;
  std::vector<term> objective_terms_;
  double objective_constant_ = 0;
  objective_sense sense_ = objective_sense::minimize;
  std::string objective_name_ = "obj";
};

}  // namespace devplace::ilp
