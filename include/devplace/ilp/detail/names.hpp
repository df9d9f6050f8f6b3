#pragma once
/// \file ilp/detail/names.hpp
/// Names and numbers as the LP and MPS writers print them (private to the writers).
///
/// A name keeps only [A-Za-z0-9_] (other characters become '_'); an empty name becomes x<j> or
/// r<i>; a name that starts with a digit or with 'e'/'E' (read as an exponent by some LP readers),
/// or that is an LP keyword (st, bounds, free, inf, ...), gets a leading '_'; names are cut to 255
/// characters and made unique by a suffix. Columns and rows are separate name spaces; the
/// objective is a row.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "devplace/ilp/model.hpp"

namespace devplace::ilp::detail {

template <int = 0>
bool is_lp_keyword(std::string_view s) {
  static constexpr std::array<std::string_view, 32> kw = {
      "minimize", "maximize", "minimise", "maximise", "minimum", "maximum", "min", "max", "subject", "to", "such",
      "that", "st", "bounds", "bound", "general", "generals", "gen", "integer", "integers", "int", "binary",
      "binaries", "bin", "semi", "semis", "semicontinuous", "sos", "end", "free", "inf", "infinity"};
  std::string low(s);
  std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(kw.begin(), kw.end(), std::string_view(low)) != kw.end();
}

/// A name safe for both formats (not yet unique).
template <int = 0>
std::string sanitize_name(std::string_view raw, char prefix, std::size_t index) {
  std::string s;
  if (raw.empty()) {
    s = std::string(1, prefix) + std::to_string(index);
  } else {
    s.reserve(raw.size() + 1);
    for (char c : raw) s.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_');
  }
  if (std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == 'e' || s.front() == 'E' || is_lp_keyword(s))
    s.insert(s.begin(), '_');
  if (s.size() > 240) s.resize(240);
  return s;
}

/// Makes `s` unique within `used` by appending _2, _3, ...; records it.
template <int = 0>
std::string make_unique_name(std::string s, std::unordered_set<std::string>& used) {
  if (used.insert(s).second) return s;
  for (std::size_t k = 2;; ++k) {
    std::string t = s + "_" + std::to_string(k);
    if (used.insert(t).second) return t;
  }
}

/// The printed names of a model's columns, rows and objective.
struct printed_names {
  std::vector<std::string> cols, rows;
  std::string objective;
  std::string constant_col;  ///< column carrying the objective constant (fixed at 1), when needed

  template <int = 0>
  explicit printed_names(const model& m) {
    std::unordered_set<std::string> used_cols, used_rows;
    objective = make_unique_name(sanitize_name(m.objective_name().empty() ? "obj" : m.objective_name(), 'o', 0), used_rows);
    cols.reserve(m.num_vars());
    for (std::size_t j = 0; j < m.num_vars(); ++j)
      cols.push_back(make_unique_name(sanitize_name(m.variables()[j].name, 'x', j), used_cols));
    rows.reserve(m.num_rows());
    for (std::size_t i = 0; i < m.num_rows(); ++i)
      rows.push_back(make_unique_name(sanitize_name(m.rows()[i].name, 'r', i), used_rows));
    if (m.objective_constant() != 0) constant_col = make_unique_name("objective_constant", used_cols);
  }
};

/// Shortest decimal text that reads back as the same double.
template <int = 0>
std::string number(double x) {
  if (x == 0) return "0";
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return std::string(buf.data(), r.ptr);
}

}  // namespace devplace::ilp::detail
