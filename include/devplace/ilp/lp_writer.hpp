#pragma once
/// \file ilp/lp_writer.hpp
/// `write_lp`: a model in the CPLEX LP format, as read by CBC (`cbc model.lp solve`), GLPK
/// (`glpsol --lp model.lp`), HiGHS, Gurobi and CPLEX.
///
/// Layout: Minimize/Maximize, the objective row, Subject To with one row per constraint (long
/// rows wrapped), Bounds for every column whose bounds differ from the LP default [0, +inf),
/// General for integer columns, Binary for binary columns with bounds [0, 1], End. Names are
/// sanitised (ilp/detail/names.hpp); numbers are printed in the shortest form that reads back
/// exactly. An objective constant becomes a column fixed at 1 (not every reader takes a constant
/// in the objective). Non-template, O(size of the model).
#include <filesystem>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "devplace/ilp/detail/names.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/io/atomic_write.hpp"

namespace devplace::ilp {

namespace detail {

template <int = 0>
void write_lp_terms(std::ostream& os, const std::vector<term>& terms, const printed_names& n,
                           const std::string& fallback_col) {
  if (terms.empty()) {
    os << " 0 " << fallback_col;
    return;
  }
  std::size_t k = 0;
  for (const auto& t : terms) {
    if (k > 0 && k % 8 == 0) os << "\n   ";
    os << (t.coef < 0 ? " - " : " + ") << number(std::abs(t.coef)) << ' ' << n.cols[t.index];
    ++k;
  }
}

}  // namespace detail

/// Writes `m` in the CPLEX LP format.
template <int = 0>
void write_lp(std::ostream& os, const model& m) {
  const detail::printed_names n(m);
  // A column for "0 <name>" in empty rows; a model without columns gets a fixed dummy one.
  const bool need_dummy = m.num_vars() == 0;
  const std::string fallback = need_dummy ? std::string("dummy_column") : n.cols.front();

  os << "\\ Problem: " << detail::sanitize_name(m.name(), 'm', 0) << '\n';
  os << "\\ " << m.num_vars() << " columns (" << m.num_integral() << " integer), " << m.num_rows() << " rows, "
     << m.num_nonzeros() << " nonzeros\n";
  os << (m.sense() == objective_sense::minimize ? "Minimize\n" : "Maximize\n");
  os << ' ' << n.objective << ':';
  if (m.objective_terms().empty() && n.constant_col.empty()) {
    os << " 0 " << fallback;
  } else {
    detail::write_lp_terms(os, m.objective_terms(), n, fallback);
    if (!n.constant_col.empty())
      os << (m.objective_constant() < 0 ? " - " : " + ") << detail::number(std::abs(m.objective_constant())) << ' '
         << n.constant_col;
  }
  os << "\nSubject To\n";
  if (m.num_rows() == 0) os << " no_constraints: 0 " << fallback << " >= 0\n";  // GLPK rejects an empty section
  for (std::size_t i = 0; i < m.num_rows(); ++i) {
    const auto& r = m.rows()[i];
    os << ' ' << n.rows[i] << ':';
    detail::write_lp_terms(os, r.terms, n, fallback);
    os << (r.rel == relation::less_equal ? " <= " : r.rel == relation::greater_equal ? " >= " : " = ")
       << detail::number(r.rhs) << '\n';
  }
  os << "Bounds\n";
  bool any_general = false, any_binary = false;
  for (std::size_t j = 0; j < m.num_vars(); ++j) {
    const auto& v = m.variables()[j];
    const bool binary = v.kind == var_kind::binary && v.lower == 0 && v.upper == 1;
    any_binary = any_binary || binary;
    any_general = any_general || (v.kind != var_kind::continuous && !binary);
    if (binary || (v.lower == 0 && v.upper == infinity)) continue;
    const std::string& c = n.cols[j];
    if (v.lower == v.upper)
      os << ' ' << c << " = " << detail::number(v.lower) << '\n';
    else if (v.lower == -infinity && v.upper == infinity)
      os << ' ' << c << " free\n";
    else if (v.upper == infinity)
      os << ' ' << c << " >= " << detail::number(v.lower) << '\n';
    else
      os << ' ' << (v.lower == -infinity ? std::string("-inf") : detail::number(v.lower)) << " <= " << c
         << " <= " << detail::number(v.upper) << '\n';
  }
  if (!n.constant_col.empty()) os << ' ' << n.constant_col << " = 1\n";
  if (need_dummy) os << ' ' << fallback << " = 0\n";
  auto list = [&](bool binary_section) {
    std::size_t k = 0;
    for (std::size_t j = 0; j < m.num_vars(); ++j) {
      const auto& v = m.variables()[j];
      if (v.kind == var_kind::continuous) continue;
      const bool binary = v.kind == var_kind::binary && v.lower == 0 && v.upper == 1;
      if (binary != binary_section) continue;
      os << (k % 10 == 0 ? (k ? "\n " : " ") : " ") << n.cols[j];
      ++k;
    }
    os << '\n';
  };
  if (any_general) {
    os << "General\n";
    list(false);
  }
  if (any_binary) {
    os << "Binary\n";
    list(true);
  }
  os << "End\n";
}

/// The LP text of `m`.
template <int = 0>
[[nodiscard]] std::string to_lp_string(const model& m) {
  std::ostringstream os;
  write_lp(os, m);
  return os.str();
}

/// Writes `m` to `path` in the LP format, atomically: the text goes to a temporary file beside
/// `path` that is then renamed over it, so a failure never leaves a half-written model. Throws
/// io::output_error (a std::runtime_error) naming the file when it cannot be written.
template <int = 0>
void write_lp(const std::filesystem::path& path, const model& m) { io::atomic_write(path, to_lp_string(m)); }

}  // namespace devplace::ilp
