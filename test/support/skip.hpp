#pragma once
// Skipping a test whose input is missing. doctest has no "skipped" outcome, so a skipped test
// case prints a marker line on stdout; test/CMakeLists.txt gives every discovered test the ctest
// property SKIP_REGULAR_EXPRESSION "DEVPLACE-SKIPPED:", so ctest reports it as skipped (never as
// passed).
//
// `skip` only records the reason: the marker is printed when the test case ends, and only when
// none of its checks failed (the listener in test/main.cpp). A test case that skips part of its
// work after a failed check is reported failed, never skipped.
//
//   if (!devplace::test::require_path(shared / "data" / "peers" / "piper")) return;
#include <cstdio>
#include <filesystem>
#include <string>

namespace devplace::test {

/// The reasons the running test case gave for skipping (empty: it does not skip).
inline std::string& pending_skip() {
  static std::string reasons;
  return reasons;
}

/// Marks the running test case as skipped, giving the reason (reported when it ends without a
/// failed check).
inline void skip(const std::string& reason) {
  std::printf("skipping: %s\n", reason.c_str());
  std::fflush(stdout);
  auto& r = pending_skip();
  r += r.empty() ? reason : "; " + reason;
}

/// The line printed when a test case that asked to skip ends: the ctest marker when none of its
/// checks failed, else a note (the test case is then reported failed, as it is).
inline std::string skip_verdict(const std::string& reasons, bool failed) {
  return failed ? "not reported as skipped (" + reasons + "): a check failed" : "DEVPLACE-SKIPPED: " + reasons;
}

/// True when `p` exists; otherwise marks the test case skipped and returns false.
inline bool require_path(const std::filesystem::path& p) {
  if (std::filesystem::exists(p)) return true;
  skip(p.string() + " is not there");
  return false;
}

}  // namespace devplace::test
