#include "devplace/ilp/lp_writer.hpp"
#include "devplace/ilp/mps_writer.hpp"

#include <doctest/doctest.h>

#include "support/skip.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>

#include "devplace/ilp/expr.hpp"
#include "ilp/external.hpp"
#include "ilp/random_model.hpp"
#include "ilp/reference_solver.hpp"

using namespace devplace;
using namespace devplace::ilp;

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

model small_model() {
  model m("small model");
  const var x = m.add_integer(-3, 7, "x 1"), y = m.add_continuous(-infinity, 4.5, "e1"), z = m.add_binary("bounds");
  const var w = m.add_integer(2, infinity, "st"), f = m.add_continuous(-infinity, infinity, "x 1");
  m.add(x + 2 * y + z <= 9.25, "c1");
  m.add(x - y >= -2);
  m.add(w + z == 3, "c1");
  m.add(f - x == 0.5, "tie");
  m.maximize(x + y + 3 * z - w + f + 100.5);
  return m;
}

}  // namespace

TEST_CASE("names are sanitised, unique, and never read as numbers or keywords") {
  CHECK(detail::sanitize_name("a b", 'x', 0) == "a_b");
  CHECK(detail::sanitize_name("", 'x', 12) == "x12");
  CHECK(detail::sanitize_name("2nd", 'x', 0) == "_2nd");
  CHECK(detail::sanitize_name("e1", 'x', 0) == "_e1");
  CHECK(detail::sanitize_name("End", 'x', 0) == "_End");
  CHECK(detail::sanitize_name("free", 'x', 0) == "_free");
  CHECK(detail::sanitize_name(std::string(400, 'a'), 'x', 0).size() <= 255);
  const model m = small_model();
  const detail::printed_names n(m);
  CHECK(n.cols[0] == "x_1");
  CHECK(n.cols[4] == "x_1_2");  // a second "x 1"
  CHECK(n.rows[0] == "c1");
  CHECK(n.rows[1] == "r1");
  CHECK(n.rows[2] == "c1_2");
  CHECK(!n.constant_col.empty());
}

TEST_CASE("numbers read back exactly") {
  for (double x : {0.1, 1.0 / 3.0, 1e-300, 123456789.123456789, -2.5e17, 4.0})
    CHECK(std::stod(detail::number(x)) == x);
  CHECK(detail::number(0.0) == "0");
  CHECK(detail::number(-0.0) == "0");
}

TEST_CASE("the LP text has every section, bound kind and integer list") {
  const std::string lp = to_lp_string(small_model());
  CHECK(contains(lp, "Maximize\n obj:"));
  CHECK(contains(lp, "Subject To\n c1: + 1 x_1 + 2 _e1 + 1 _bounds <= 9.25\n"));
  CHECK(contains(lp, " r1: + 1 x_1 - 1 _e1 >= -2\n"));
  CHECK(contains(lp, " c1_2: + 1 _bounds + 1 _st = 3\n"));
  CHECK(contains(lp, " -3 <= x_1 <= 7\n"));
  CHECK(contains(lp, " -inf <= _e1 <= 4.5\n"));
  CHECK(contains(lp, " _st >= 2\n"));
  CHECK(contains(lp, " x_1_2 free\n"));
  CHECK(contains(lp, " objective_constant = 1\n"));
  CHECK(contains(lp, "+ 100.5 objective_constant"));
  CHECK(contains(lp, "General\n x_1 _st\n"));
  CHECK(contains(lp, "Binary\n _bounds\n"));
  CHECK(lp.substr(lp.size() - 4) == "End\n");
}

TEST_CASE("the MPS text has explicit integer bounds, markers, and a negated maximisation") {
  const std::string mps = to_mps_string(small_model());
  CHECK(contains(mps, "* maximisation written as: minimise the negated objective\n"));
  CHECK(contains(mps, "NAME small_model FREE\nROWS\n N obj\n L c1\n G r1\n E c1_2\n E tie\nCOLUMNS\n"));
  CHECK(contains(mps, "    MARKER 'MARKER' 'INTORG'\n    x_1 obj -1\n"));
  CHECK(contains(mps, "    objective_constant obj -100.5\n"));
  CHECK(contains(mps, " UP BND x_1 7\n LO BND x_1 -3\n"));
  CHECK(contains(mps, " UP BND _e1 4.5\n MI BND _e1\n"));
  CHECK(contains(mps, " UP BND _bounds 1\n LO BND _bounds 0\n"));
  CHECK(contains(mps, " PL BND _st\n LO BND _st 2\n"));
  CHECK(contains(mps, " FR BND x_1_2\n"));
  CHECK(contains(mps, "RHS\n    RHS c1 9.25\n"));
  CHECK(mps.substr(mps.size() - 7) == "ENDATA\n");
}

TEST_CASE("empty rows, an empty objective and a model without columns are still valid files") {
  model m("empty bits");
  const var x = m.add_continuous(0, 1, "x");
  m.add(0 * x <= 1, "trivial");
  const std::string lp = to_lp_string(m);
  CHECK(contains(lp, " obj: 0 x\n"));
  CHECK(contains(lp, " trivial: 0 x <= 1\n"));
  model none("nothing");
  const std::string lp2 = to_lp_string(none);
  CHECK(contains(lp2, " obj: 0 dummy_column\n"));
  CHECK(contains(lp2, " dummy_column = 0\n"));
  const auto dir = test::scratch_dir("empty");
  for (const model* mm : {&m, &none}) {
    write_lp(dir / "e.lp", *mm);
    write_mps(dir / "e.mps", *mm);
    if (test::have_program(test::cbc_program)) {
      const auto a = test::run_cbc_program(dir / "e.lp"), b = test::run_cbc_program(dir / "e.mps");
      CHECK(a.optimal);
      CHECK(b.optimal);
      CHECK(a.objective == doctest::Approx(0.0));
    }
    if (test::have_program(test::glpsol_program)) {
      const auto a = test::run_glpsol_program(dir / "e.lp", false), b = test::run_glpsol_program(dir / "e.mps", true);
      CHECK(a.optimal);
      CHECK(b.optimal);
      CHECK(a.objective == doctest::Approx(0.0));
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("writing to an unwritable path throws") {
  CHECK_THROWS_AS(write_lp(std::filesystem::path("/nonexistent-dir/m.lp"), small_model()), std::runtime_error);
  CHECK_THROWS_AS(write_mps(std::filesystem::path("/nonexistent-dir/m.mps"), small_model()), std::runtime_error);
  CHECK_THROWS_WITH(write_lp(std::filesystem::path("/nonexistent-dir/m.lp"), small_model()),
                    doctest::Contains("/nonexistent-dir/m.lp"));
}

TEST_CASE("writing a model file replaces it whole and leaves no temporary file") {
  const auto dir = test::scratch_dir("atomic");
  {
    std::ofstream old(dir / "m.lp");
    old << std::string(100000, 'x');  // longer than the model: a truncating writer would be caught
  }
  write_lp(dir / "m.lp", small_model());
  write_mps(dir / "m.mps", small_model());
  std::ifstream in(dir / "m.lp");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == to_lp_string(small_model()));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cbc and glpsol read the written LP and MPS files and find the reference optimum") {
  const bool cbc = test::have_program(test::cbc_program), glp = test::have_program(test::glpsol_program);
  if (!cbc && !glp) {
    devplace::test::skip("neither /usr/bin/cbc nor /usr/bin/glpsol is installed: file acceptance not tested");
    return;
  }
  std::mt19937_64 rng(2024);
  const auto dir = test::scratch_dir("files");
  int optimal = 0, infeasible = 0;
  for (int trial = 0; trial < 24; ++trial) {
    CAPTURE(trial);
    const model m = test::random_model(rng, 3 + rng() % 4, 2 + rng() % 4);
    const auto ref = test::reference_solver{}.solve(m);
    REQUIRE((ref.status == solve_status::optimal || ref.status == solve_status::infeasible));
    // The optimum of the file: MPS minimises the negated objective of a maximisation.
    const double sign_mps = m.sense() == objective_sense::maximize ? -1.0 : 1.0;
    write_lp(dir / "m.lp", m);
    write_mps(dir / "m.mps", m);
    std::vector<std::pair<test::external_result, double>> runs;
    if (cbc) {
      runs.emplace_back(test::run_cbc_program(dir / "m.lp"), 1.0);
      runs.emplace_back(test::run_cbc_program(dir / "m.mps"), sign_mps);
    }
    if (glp) {
      runs.emplace_back(test::run_glpsol_program(dir / "m.lp", false), 1.0);
      runs.emplace_back(test::run_glpsol_program(dir / "m.mps", true), sign_mps);
    }
    for (const auto& [r, sign] : runs) {
      CAPTURE(r.status_line);
      REQUIRE(r.ran);
      if (ref.status == solve_status::optimal) {
        CHECK(r.optimal);
        CHECK(sign * r.objective == doctest::Approx(ref.objective).epsilon(1e-6));
      } else {
        CHECK(r.infeasible);
      }
    }
    (ref.status == solve_status::optimal ? optimal : infeasible)++;
  }
  CHECK(optimal >= 10);  // the generator must exercise both outcomes
  CHECK(infeasible >= 2);
  std::filesystem::remove_all(dir);
}
