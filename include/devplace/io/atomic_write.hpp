#pragma once
/// \file io/atomic_write.hpp
/// Writing output files so that nothing is ever half-written.
///
/// - `atomic_write(path, text)`: writes to a temporary file beside `path` (same directory, so the
///   same file system), flushes it to disk, then renames it over `path`. A failure (missing
///   directory, no permission, full disk, `RLIMIT_FSIZE`) removes the temporary file, leaves an
///   existing `path` untouched and throws `output_error` with one line naming the file and the
///   system's reason.
/// - `check_writable(path)`: the same checks up front (the directory exists, a file can be created
///   in it, `path` is not a directory or a read-only file), so that a command finds an unwritable
///   output before its work starts.
/// - `remove_temp_files_on_signals()`: installs SIGINT / SIGTERM / SIGHUP handlers that delete the
///   temporary files being written at that moment and then re-raise the signal (the process ends
///   as the signal says), and ignores SIGXFSZ so that exceeding `RLIMIT_FSIZE` is a write error
///   (EFBIG), not a kill that would leave the temporary file behind. For programs (the CLI).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <string>
#include <string_view>

#include "devplace/io/error.hpp"

namespace devplace::io {

namespace detail {

/// The temporary files being written now, readable from a signal handler: a fixed table of
/// slots, each free (0), being filled (1) or holding a path (2).
struct temp_file_table {
  static constexpr int slots = 16;
  static constexpr std::size_t max_path = 4096;
  std::atomic<int> state[slots] = {};
  char path[slots][max_path] = {};
};
inline temp_file_table temp_files{};

/// Registers a temporary file path for removal on a signal while it exists (RAII).
class registered_temp {
 public:
  explicit registered_temp(const std::string& p) {
    if (p.size() >= temp_file_table::max_path) return;
    for (int i = 0; i < temp_file_table::slots; ++i) {
      int expected = 0;
      if (temp_files.state[i].compare_exchange_strong(expected, 1)) {
        std::memcpy(temp_files.path[i], p.c_str(), p.size() + 1);
        temp_files.state[i].store(2);
        slot_ = i;
        return;
      }
    }
  }
  registered_temp(const registered_temp&) = delete;
  registered_temp& operator=(const registered_temp&) = delete;
  ~registered_temp() {
    if (slot_ >= 0) temp_files.state[slot_].store(0);
  }

 private:
  int slot_ = -1;
};

extern "C" inline void remove_temp_files_and_reraise(int sig) {
  for (int i = 0; i < temp_file_table::slots; ++i)
    if (temp_files.state[i].load() == 2) ::unlink(temp_files.path[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

inline std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

/// A name no other writer on this host uses at the same time: the process, a count of this
/// process's temporary files and the clock's nanoseconds (not <random>, which costs a fifth of a
/// second of compile time in every file that includes a writer).
inline std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned long long> count{0};
  std::timespec now{};
  std::timespec_get(&now, TIME_UTC);
  return directory_of(path) / (".devplace-" + path.filename().string() + "." + std::to_string(::getpid()) + "-" +
                               std::to_string(count.fetch_add(1)) + "-" + std::to_string(now.tv_nsec) + ".tmp");
}

[[noreturn]] inline void fail_output(const std::filesystem::path& path, const std::string& why) {
  throw output_error(path.string() + ": cannot write: " + why);
}

/// Creates `tmp` exclusively; throws `output_error` for `path` when it cannot.
inline int create_temp(const std::filesystem::path& path, const std::filesystem::path& tmp) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    fail_output(path, "cannot create a file in '" + directory_of(path).string() + "': " + std::strerror(errno));
  return fd;
}

/// The checks that need no file: the directory exists, `path` is no directory nor read-only.
inline void check_target(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = directory_of(path);
  if (path.empty() || !path.has_filename()) fail_output(path, "not a file name");
  if (!fs::is_directory(dir, ec)) fail_output(path, "directory '" + dir.string() + "' does not exist");
  if (fs::is_directory(path, ec)) fail_output(path, "it is a directory");
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) fail_output(path, "the file is read-only");
}

/// Writes all of `text` to `fd` and syncs it; returns 0 or the errno of the failure.
inline int write_all(int fd, std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return ::fsync(fd) == 0 ? 0 : errno;
}

}  // namespace detail

/// Throws `output_error` (one line) when a file cannot be written at `path`: missing directory,
/// a directory in the way, a read-only file, or no file can be created in the directory.
inline void check_writable(const std::filesystem::path& path) {
  detail::check_target(path);
  const std::filesystem::path tmp = detail::temp_path_for(path);
  detail::registered_temp guard(tmp.string());
  const int fd = detail::create_temp(path, tmp);
  ::close(fd);
  ::unlink(tmp.c_str());
}

/// Writes `text` to `path` atomically: the old file stays intact on failure, and no partial
/// file is left. Throws `output_error`.
inline void atomic_write(const std::filesystem::path& path, std::string_view text) {
  detail::check_target(path);
  const std::filesystem::path tmp = detail::temp_path_for(path);
  detail::registered_temp guard(tmp.string());
  const int fd = detail::create_temp(path, tmp);
  struct stat old {};
  if (::stat(path.c_str(), &old) == 0) (void)::fchmod(fd, old.st_mode & 07777);  // keep the old file's mode
  int err = detail::write_all(fd, text);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    detail::fail_output(path, std::strerror(err));
  }
}

/// For programs: on SIGINT, SIGTERM or SIGHUP delete the temporary files being written, then die
/// of the signal (a signal the process was started ignoring stays ignored); ignore SIGXFSZ so that a file-size limit is a write error.
inline void remove_temp_files_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    if (std::signal(sig, detail::remove_temp_files_and_reraise) == SIG_IGN) std::signal(sig, SIG_IGN);  // stay ignored
  std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace devplace::io
