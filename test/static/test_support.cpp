// The test programs' own support: a skip is reported to ctest only when no check failed.
#include <doctest/doctest.h>

#include <string>

#include "support/skip.hpp"

TEST_CASE("skip: the ctest marker only for a test case without a failed check") {
  const std::string marker = "DEVPLACE-SKIPPED:";
  CHECK(devplace::test::skip_verdict("cbc not installed", false) == marker + " cbc not installed");
  const std::string failed = devplace::test::skip_verdict("cbc not installed", true);
  CHECK(failed.find(marker) == std::string::npos);  // ctest's SKIP_REGULAR_EXPRESSION does not match
  CHECK(failed.find("cbc not installed") != std::string::npos);
}

TEST_CASE("skip: reasons accumulate within a test case") {
  auto& pending = devplace::test::pending_skip();
  const std::string before = pending;
  pending.clear();
  devplace::test::skip("a");
  devplace::test::skip("b");
  CHECK(pending == "a; b");
  pending = before;  // this test case is not skipped
}
