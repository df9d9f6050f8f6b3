#pragma once
// Skipping a test whose input is missing. doctest has no "skipped" outcome, so a skipped test
// case prints a marker line on stdout and returns; test/CMakeLists.txt gives every discovered test
// the ctest property SKIP_REGULAR_EXPRESSION "DEVPLACE-SKIPPED:", so ctest reports it as skipped
// (never as passed).
//
//   if (!devplace::test::require_path(shared / "data" / "peers" / "piper")) return;
#include <cstdio>
#include <filesystem>
#include <string>

namespace devplace::test {

/// Marks the running test case as skipped, giving the reason.
inline void skip(const std::string& reason) {
  std::printf("DEVPLACE-SKIPPED: %s\n", reason.c_str());
  std::fflush(stdout);
}

/// True when `p` exists; otherwise marks the test case skipped and returns false.
inline bool require_path(const std::filesystem::path& p) {
  if (std::filesystem::exists(p)) return true;
  skip(p.string() + " is not there");
  return false;
}

}  // namespace devplace::test
