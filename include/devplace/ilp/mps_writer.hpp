#pragma once
/// \file ilp/mps_writer.hpp
/// `write_mps`: a model in the free MPS format, as read by CBC (`cbc model.mps solve`), GLPK
/// (`glpsol --freemps model.mps`), HiGHS, Gurobi and CPLEX.
///
/// Sections NAME (with the word FREE after the name, without which CBC's reader may take the file
/// for fixed-format MPS and misread short names), ROWS, COLUMNS (integer columns between MARKER INTORG/INTEND lines), RHS,
/// BOUNDS, ENDATA. MPS has no portable objective sense (GLPK rejects an OBJSENSE section, CBC
/// 2.10 ignores it), so a maximisation is written as the minimisation of the negated objective,
/// and a comment line says so: the optimum a solver reports for the file is then −(optimum). Every integer column gets explicit bounds
/// (some readers default an integer column without bounds to [0, 1]); an upper bound is written
/// before the lower bound so that no reader applies the old "negative upper bound means
/// lower = -inf" rule to it. An objective constant becomes a column fixed at 1 (readers disagree
/// on the sign of an RHS entry of the objective row). Names as in ilp/detail/names.hpp.
/// Non-template, O(size of the model).
#include <filesystem>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/ilp/detail/names.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/io/atomic_write.hpp"

namespace devplace::ilp {

/// Writes `m` in the free MPS format.
template <int = 0>
void write_mps(std::ostream& os, const model& m) {
  const detail::printed_names n(m);
  os << "* " << m.num_vars() << " columns (" << m.num_integral() << " integer), " << m.num_rows() << " rows, "
     << m.num_nonzeros() << " nonzeros\n";
  const bool negate = m.sense() == objective_sense::maximize;
  if (negate) os << "* maximisation written as: minimise the negated objective\n";
  os << "NAME " << detail::sanitize_name(m.name(), 'm', 0) << " FREE\n";  // FREE: CoinMpsIO would guess fixed
  os << "ROWS\n";
  os << " N " << n.objective << '\n';
  for (std::size_t i = 0; i < m.num_rows(); ++i) {
    const auto rel = m.rows()[i].rel;
    os << ' ' << (rel == relation::less_equal ? 'L' : rel == relation::greater_equal ? 'G' : 'E') << ' ' << n.rows[i]
       << '\n';
  }
  // Column-wise entries: (row, coef) per column, objective first.
  std::vector<std::vector<std::pair<std::size_t, double>>> col(m.num_vars());
  std::vector<double> obj(m.num_vars(), 0.0);
  for (const auto& t : m.objective_terms()) obj[t.index] = negate ? -t.coef : t.coef;
  for (std::size_t i = 0; i < m.num_rows(); ++i)
    for (const auto& t : m.rows()[i].terms) col[t.index].emplace_back(i, t.coef);
  os << "COLUMNS\n";
  bool in_int = false;
  for (std::size_t j = 0; j < m.num_vars(); ++j) {
    const bool integral = m.variables()[j].kind != var_kind::continuous;
    if (integral != in_int) {
      os << "    MARKER 'MARKER' " << (integral ? "'INTORG'" : "'INTEND'") << '\n';
      in_int = integral;
    }
    const std::string& c = n.cols[j];
    if (obj[j] != 0 || col[j].empty()) os << "    " << c << ' ' << n.objective << ' ' << detail::number(obj[j]) << '\n';
    for (auto [i, a] : col[j]) os << "    " << c << ' ' << n.rows[i] << ' ' << detail::number(a) << '\n';
  }
  if (in_int) os << "    MARKER 'MARKER' 'INTEND'\n";
  if (!n.constant_col.empty())
    os << "    " << n.constant_col << ' ' << n.objective << ' ' << detail::number(negate ? -m.objective_constant() : m.objective_constant())
       << '\n';
  os << "RHS\n";
  for (std::size_t i = 0; i < m.num_rows(); ++i)
    if (m.rows()[i].rhs != 0) os << "    RHS " << n.rows[i] << ' ' << detail::number(m.rows()[i].rhs) << '\n';
  os << "BOUNDS\n";
  for (std::size_t j = 0; j < m.num_vars(); ++j) {
    const auto& v = m.variables()[j];
    const std::string& c = n.cols[j];
    const bool integral = v.kind != var_kind::continuous;
    if (!integral && v.lower == 0 && v.upper == infinity) continue;
    if (v.lower == v.upper) {
      os << " FX BND " << c << ' ' << detail::number(v.lower) << '\n';
      continue;
    }
    if (v.lower == -infinity && v.upper == infinity) {
      os << " FR BND " << c << '\n';
      continue;
    }
    if (v.upper == infinity)
      os << " PL BND " << c << '\n';
    else
      os << " UP BND " << c << ' ' << detail::number(v.upper) << '\n';
    if (v.lower == -infinity)
      os << " MI BND " << c << '\n';
    else
      os << " LO BND " << c << ' ' << detail::number(v.lower) << '\n';
  }
  if (!n.constant_col.empty()) os << " FX BND " << n.constant_col << " 1\n";
  os << "ENDATA\n";
}

/// The MPS text of `m`.
template <int = 0>
[[nodiscard]] std::string to_mps_string(const model& m) {
  std::ostringstream os;
  write_mps(os, m);
  return os.str();
}

/// Writes `m` to `path` in the free MPS format, atomically: the text goes to a temporary file beside
/// `path` that is then renamed over it, so a failure never leaves a half-written model. Throws
/// io::output_error (a std::runtime_error) naming the file when it cannot be written.
template <int = 0>
void write_mps(const std::filesystem::path& path, const model& m) { io::atomic_write(path, to_mps_string(m)); }

}  // namespace devplace::ilp
