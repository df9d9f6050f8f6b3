// Fault behaviour of io::atomic_write / io::check_writable (issue 18): the old file survives every
// failure, no temporary file is left, and a signal while a temporary file exists removes it.
#include "devplace/io/atomic_write.hpp"

#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace devplace;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("devplace-atomic-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int temp_files_in(const fs::path& d) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(d))
    if (e.path().filename().string().rfind(".devplace-", 0) == 0) ++n;
  return n;
}

std::string error_of(const fs::path& p, const std::string& text) {
  try {
    io::atomic_write(p, text);
  } catch (const io::output_error& e) {
    return e.what();
  }
  return "";
}

/// Runs `child` in a forked process and returns its wait status.
template <class F>
int in_child(F child) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    child();
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return st;
}

}  // namespace

TEST_CASE("atomic_write replaces a file whole and keeps its mode") {
  const fs::path d = fresh_dir("replace");
  const fs::path f = d / "out.json";
  io::atomic_write(f, "first\n");
  fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  io::atomic_write(f, "second\n");
  CHECK(contents(f) == "second\n");
  CHECK((fs::status(f).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(temp_files_in(d) == 0);
  fs::remove_all(d);
}

TEST_CASE("an unwritable path is one line naming the file and the reason") {
  const fs::path d = fresh_dir("unwritable");
  CHECK(error_of(d / "missing" / "x.json", "x") ==
        (d / "missing" / "x.json").string() + ": cannot write: directory '" + (d / "missing").string() +
            "' does not exist");
  CHECK(error_of(d, "x") == d.string() + ": cannot write: it is a directory");
  CHECK(error_of("/proc/devplace.json", "x").rfind("/proc/devplace.json: cannot write: cannot create a file in '/proc'", 0) == 0);
  CHECK_THROWS_AS(io::check_writable(d / "missing" / "x.json"), io::output_error);
  CHECK_THROWS_AS(io::check_writable("/proc/devplace.json"), io::output_error);
  CHECK_NOTHROW(io::check_writable(d / "fine.json"));
  CHECK_FALSE(fs::exists(d / "fine.json"));  // the probe leaves nothing
  CHECK(temp_files_in(d) == 0);
  fs::remove_all(d);
}

TEST_CASE("a file-size limit (as a full disk) keeps the old file and leaves no temporary file") {
  const fs::path d = fresh_dir("fsize");
  const fs::path f = d / "out.json";
  io::atomic_write(f, "old\n");
  const int st = in_child([&] {
    io::remove_temp_files_on_signals();  // SIGXFSZ ignored: the limit is a write error
    const rlimit lim{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    const std::string msg = error_of(f, std::string(100000, 'x'));
    ::_exit(msg == f.string() + ": cannot write: File too large" ? 0 : 3);
  });
  REQUIRE(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  CHECK(contents(f) == "old\n");
  CHECK(temp_files_in(d) == 0);
  fs::remove_all(d);
}

TEST_CASE("SIGTERM and SIGINT remove the temporary files being written, then end the process") {
  for (int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const fs::path d = fresh_dir("signal");
    const fs::path tmp = d / ".devplace-out.json.1.tmp";
    const int st = in_child([&] {
      io::remove_temp_files_on_signals();
      std::ofstream(tmp) << "half a fi";
      io::detail::registered_temp guard(tmp.string());
      std::raise(sig);
      ::_exit(4);  // not reached: the handler re-raises with the default action
    });
    REQUIRE(WIFSIGNALED(st));
    CHECK(WTERMSIG(st) == sig);
    CHECK_FALSE(fs::exists(tmp));
    fs::remove_all(d);
  }
}

TEST_CASE("a released temporary file is not removed by a later signal") {
  const fs::path d = fresh_dir("released");
  const fs::path kept = d / "kept.json";
  const int st = in_child([&] {
    io::remove_temp_files_on_signals();
    std::ofstream(kept) << "done";
    { io::detail::registered_temp guard(kept.string()); }  // renamed into place: no longer temporary
    std::raise(SIGTERM);
  });
  REQUIRE(WIFSIGNALED(st));
  CHECK(fs::exists(kept));
  fs::remove_all(d);
}
