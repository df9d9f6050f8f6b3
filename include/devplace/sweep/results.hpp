#pragma once
/// \file sweep/results.hpp
/// Result lines and the files that hold them (docs/sweep.md). One JSON object per line:
///
///   {"index": 17, "inputs": {...}, "status": "optimal", "result": {...},
///    "wall_time_s": 0.41, "cpu_time_s": 0.40}
///
/// plus `"error": "..."` when the evaluation threw (status `error`). A sweep writing `R.jsonl`
/// streams its lines to part files `R.jsonl.parts/run<k>-rank<r>.jsonl` (one per process and run)
/// and, once every point has a line, writes R.jsonl with the lines in point order and removes the
/// parts. `collect_lines` reads R.jsonl and the parts back: the lines already there are the points
/// a resumed sweep skips. A line cut short by a killed process does not parse and is ignored.
///
/// The functions are templates with one defaulted parameter, called as before (the parameter is
/// never given): a file compiles them where it calls them, not where it includes this header.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/io/atomic_write.hpp"
#include "devplace/io/error.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

/// CPU time of the calling thread, in seconds.
template <int = 0>
[[nodiscard]] double thread_cpu_seconds() noexcept {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Evaluates point `i` of `s` into its result line; an exception becomes status `error`.
template <int = 0>
[[nodiscard]] json evaluate_line(const point_space& s, std::size_t i) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_seconds();
  json line{{"index", i}, {"inputs", s.inputs(i)}};
  try {
    auto r = s.evaluate(i);
    line["status"] = std::move(r.status);
    line["result"] = std::move(r.result);
  } catch (const std::exception& e) {
    line["status"] = "error";
    line["result"] = json::object();
    line["error"] = e.what();
  }
  line["wall_time_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  line["cpu_time_s"] = thread_cpu_seconds() - c0;
  return line;
}

/// The directory of part files of the sweep writing `out`.
template <int = 0>
[[nodiscard]] std::filesystem::path parts_directory(const std::filesystem::path& out) {
  return std::filesystem::path(out.string() + ".parts");
}

/// A part file: lines appended with one write(2) each, so that a killed process leaves at most
/// its last line cut short. Thread-safe.
class part_writer {
 public:
  explicit part_writer(const std::filesystem::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw io::output_error(path.string() + ": cannot open for appending: " + std::strerror(errno));
  }
  part_writer(const part_writer&) = delete;
  part_writer& operator=(const part_writer&) = delete;
  ~part_writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  void write(const json& line) {
    const std::string text = line.dump() + "\n";
    std::lock_guard lk(mu_);
    for (std::size_t done = 0; done < text.size();) {  // no fsync: a killed process loses nothing written
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw io::output_error(path_.string() + ": cannot write: " + std::strerror(n < 0 ? errno : EIO));
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mu_;
};

namespace detail {

/// Reads the lines of `file` into `lines` (first one per index wins). Lines that do not parse
/// (cut short) are skipped; a parsed line with a bad index or other inputs than the space's is an
/// io::input_error naming the file and the line.
template <int = 0>
void read_lines(const point_space& s, const std::filesystem::path& file, std::vector<std::optional<std::string>>& lines) {
  std::ifstream in(file);
  if (!in) throw io::input_error(file.string(), "/", "cannot open for reading");
  std::string text;
  for (std::size_t n = 1; std::getline(in, text); ++n) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) continue;  // cut short by a stopped process: evaluated again
    const std::string where = "line " + std::to_string(n);
    const auto it = j.is_object() ? j.find("index") : j.end();
    if (it == j.end() || !it->is_number_unsigned() || it->get<std::size_t>() >= s.size)
      throw io::input_error(file.string(), where, "expected a result line with an index below " + std::to_string(s.size));
    const auto i = it->get<std::size_t>();
    if (!j.contains("inputs") || j["inputs"] != s.inputs(i))
      throw io::input_error(file.string(), where, "the inputs of point " + std::to_string(i) +
                                                       " differ from the space's (the file belongs to another space)");
    if (!lines[i]) lines[i] = j.dump();
  }
}

}  // namespace detail

/// The result lines already written for the sweep writing `out` (in `out` itself and in its part
/// files), by point index. Throws io::input_error as `detail::read_lines`.
template <int = 0>
[[nodiscard]] std::vector<std::optional<std::string>> collect_lines(const point_space& s, const std::filesystem::path& out) {
  std::vector<std::optional<std::string>> lines(s.size);
  if (std::filesystem::exists(out)) detail::read_lines(s, out, lines);
  const auto dir = parts_directory(out);
  if (std::filesystem::is_directory(dir)) {
    std::vector<std::filesystem::path> parts;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".jsonl") parts.push_back(e.path());
    std::sort(parts.begin(), parts.end());
    for (const auto& p : parts) detail::read_lines(s, p, lines);
  }
  return lines;
}

/// The number of the next run's part files: one more than the largest `run<k>-…` there.
template <int = 0>
[[nodiscard]] std::size_t next_run_number(const std::filesystem::path& out) {
  std::size_t k = 0;
  const auto dir = parts_directory(out);
  if (!std::filesystem::is_directory(dir)) return 1;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.rfind("run", 0) == 0) k = std::max<std::size_t>(k, std::strtoull(name.c_str() + 3, nullptr, 10));
  }
  return k + 1;
}

/// Writes `out` (atomically) from a complete set of lines, in point order, and removes the parts.
template <int = 0>
void merge_lines(const std::vector<std::optional<std::string>>& lines, const std::filesystem::path& out) {
  std::string text;
  for (const auto& l : lines) {
    DEVPLACE_EXPECTS(l.has_value(), "sweep: merge_lines: a point has no line");
    text += *l;
    text += '\n';
  }
  io::atomic_write(out, text);
  std::filesystem::remove_all(parts_directory(out));
}

}  // namespace devplace::sweep
