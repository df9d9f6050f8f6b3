// The only translation unit that defines doctest's main(), and the listener that reports a test
// case skipped (support/skip.hpp) only when none of its checks failed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdio>

#include "support/skip.hpp"

namespace {

struct skip_listener : doctest::IReporter {
  explicit skip_listener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { devplace::test::pending_skip().clear(); }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& st) override {
    auto& reason = devplace::test::pending_skip();
    if (reason.empty()) return;
    const bool failed = !st.testCaseSuccess || st.numAssertsFailedCurrentTest > 0;
    std::printf("%s\n", devplace::test::skip_verdict(reason, failed).c_str());
    std::fflush(stdout);
    reason.clear();
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("devplace_skip", 1, skip_listener);
