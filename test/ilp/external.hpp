#pragma once
// Runs the cbc and glpsol programs (when installed) on a written model file and reads back the
// status and optimum they report.
#include <unistd.h>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "devplace/ilp/lp_writer.hpp"
#include "devplace/ilp/model.hpp"
#include "devplace/ilp/mps_writer.hpp"

namespace devplace::test {

struct external_result {
  bool ran = false;
  bool optimal = false;
  bool infeasible = false;
  double objective = std::numeric_limits<double>::quiet_NaN();
  std::string status_line;
};

inline const char* cbc_program = "/usr/bin/cbc";
inline const char* glpsol_program = "/usr/bin/glpsol";

inline bool have_program(const char* p) { return std::filesystem::exists(p); }

/// A fresh scratch directory under the system temp directory.
/// Remove it with std::filesystem::remove_all when done.
inline std::filesystem::path scratch_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  const auto d = std::filesystem::temp_directory_path() /
                 ("devplace_ilp_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(d);
  return d;
}

/// `cbc FILE -preprocess off -solve -solu OUT`; the first line of OUT reads
/// "Optimal - objective value 12.5" (or "Infeasible - ...").
inline external_result run_cbc_program(const std::filesystem::path& model_file) {
  external_result r;
  if (!have_program(cbc_program)) return r;
  const auto out = model_file.string() + ".cbc.sol";
  std::filesystem::remove(out);
  const std::string cmd = std::string(cbc_program) + " '" + model_file.string() + "' -preprocess off -solve -solu '" +
                          out + "' > '" + model_file.string() + ".cbc.log' 2>&1";
  if (std::system(cmd.c_str()) != 0) return r;
  std::ifstream in(out);
  if (!std::getline(in, r.status_line)) return r;
  r.ran = true;
  r.optimal = r.status_line.rfind("Optimal", 0) == 0;
  r.infeasible = r.status_line.rfind("Infeasible", 0) == 0 || r.status_line.find("infeasible") != std::string::npos;
  const auto k = r.status_line.find("objective value");
  if (k != std::string::npos) r.objective = std::stod(r.status_line.substr(k + 15));
  return r;
}

/// `glpsol --lp|--freemps FILE -o OUT`; OUT has "Status: ... OPTIMAL" and "Objective: obj = 12.5 (MINimum)".
inline external_result run_glpsol_program(const std::filesystem::path& model_file, bool mps) {
  external_result r;
  if (!have_program(glpsol_program)) return r;
  const auto out = model_file.string() + ".glpsol.txt";
  std::filesystem::remove(out);
  const std::string cmd = std::string(glpsol_program) + (mps ? " --freemps '" : " --lp '") + model_file.string() +
                          "' -o '" + out + "' > '" + model_file.string() + ".glpsol.log' 2>&1";
  std::system(cmd.c_str());  // glpsol returns 0 also for infeasible models; the output decides
  std::ifstream in(out);
  if (!in) return r;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Status:", 0) == 0) {
      r.status_line = line;
      r.optimal = line.find("OPTIMAL") != std::string::npos;
      r.infeasible = !r.optimal;
    } else if (line.rfind("Objective:", 0) == 0) {
      const auto k = line.find('=');
      if (k != std::string::npos) r.objective = std::stod(line.substr(k + 1));
    }
  }
  r.ran = !r.status_line.empty();
  return r;
}

/// Every installed program on a model written twice: cbc on `lp` and `mps`, glpsol --lp on `lp`
/// and --freemps on `mps` (programs that are not installed are left out).
inline std::vector<external_result> run_programs(const std::filesystem::path& lp, const std::filesystem::path& mps) {
  std::vector<external_result> runs;
  if (have_program(cbc_program)) {
    runs.push_back(run_cbc_program(lp));
    runs.push_back(run_cbc_program(mps));
  }
  if (have_program(glpsol_program)) {
    runs.push_back(run_glpsol_program(lp, false));
    runs.push_back(run_glpsol_program(mps, true));
  }
  return runs;
}

/// Writes `m` as dir/m.lp and dir/m.mps and requires every installed program to prove the
/// (minimisation) optimum `want` from each file.
inline void check_written_model(const ilp::model& m, const std::filesystem::path& dir, double want) {
  ilp::write_lp(dir / "m.lp", m);
  ilp::write_mps(dir / "m.mps", m);
  for (const auto& r : run_programs(dir / "m.lp", dir / "m.mps")) {
    CAPTURE(r.status_line);
    REQUIRE(r.ran);
    CHECK(r.optimal);
    CHECK(r.objective == doctest::Approx(want).epsilon(1e-7));
  }
}

}  // namespace devplace::test
