#pragma once
/// \file sweep/driver.hpp
/// Runs a prepared space (sweep/space.hpp) into a result file (sweep/results.hpp), in one process
/// or over the ranks of a `channel` (sweep/mpi.hpp), resumable (docs/sweep.md).
///
///   auto s = sweep::prepare(sweep::read_space_file("space.json"));
///   sweep::solo_channel one;
///   auto r = sweep::run(s, {.out = "results.jsonl", .threads = 2}, one);
///   // r.complete: results.jsonl holds one line per point, in point order
///
/// Rank 0 reads the lines already written (the output and its part files), and hands the other
/// points out one at a time: to its own `threads` workers and, through the channel, to the other
/// ranks, whichever asks first; a run of points of one group (point_space::group) goes to one
/// asker. Every process appends its lines to its own part file; when all
/// points have a line, rank 0 writes the output in point order and removes the parts. A run
/// stopped early (`stop_after`, a kill) leaves the parts; the same call resumes it. The merged
/// file does not depend on the number of ranks or threads, apart from the time fields.
///
/// `run` is a template with one defaulted parameter, called as before (the parameter is never
/// given): a file compiles it where it calls it, not where it includes this header.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/executor.hpp"
#include "devplace/sweep/results.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

/// How the processes of a sweep talk. Rank 0 hands out points; the others ask for them.
class channel {
 public:
  virtual ~channel() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// Rank 0: answers the other ranks' requests with `next(r)` (r: the asking rank) until each
  /// was told that nothing is left; `finished(k)` reports k points another rank has completed.
  virtual void serve(const std::function<std::optional<std::size_t>(int)>& next,
                     const std::function<void(std::size_t)>& finished) = 0;
  /// Other ranks: the next point to evaluate, or nothing when the sweep is done; `finished`: the
  /// points the caller completed since its last request.
  virtual std::optional<std::size_t> request(std::size_t finished) = 0;
  /// Rank 0's `value`, on every rank.
  virtual std::size_t broadcast(std::size_t value) = 0;
  virtual void barrier() = 0;
};

/// One process, no other ranks.
class solo_channel final : public channel {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  void serve(const std::function<std::optional<std::size_t>(int)>&, const std::function<void(std::size_t)>&) override {}
  std::optional<std::size_t> request(std::size_t) override { return std::nullopt; }
  std::size_t broadcast(std::size_t value) override { return value; }
  void barrier() override {}
};

/// Where a sweep stands (rank 0).
struct progress {
  std::size_t total = 0;       ///< points of the space
  std::size_t done = 0;        ///< points with a line, earlier runs included
  std::size_t this_run = 0;    ///< points evaluated by this run
  double elapsed_s = 0;        ///< wall time of this run
  [[nodiscard]] double rate() const noexcept { return elapsed_s > 0 ? this_run / elapsed_s : 0; }
  /// Seconds left at this run's rate (0 when unknown).
  [[nodiscard]] double eta_s() const noexcept { return rate() > 0 ? (total - done) / rate() : 0; }
};

struct run_options {
  std::filesystem::path out;   ///< the result file (JSON lines)
  unsigned threads = 1;        ///< evaluation threads per process (0: one per hardware thread)
  /// Evaluate at most this many points in this run (all ranks together), then stop without
  /// merging: a time-boxed run, resumed by the next.
  std::size_t stop_after = std::numeric_limits<std::size_t>::max();
  std::function<void(const progress&)> on_progress;  ///< rank 0; at most every `progress_interval_s`, and at the end
  double progress_interval_s = 0.5;
};

struct run_report {
  std::size_t total = 0;        ///< points of the space
  std::size_t done_before = 0;  ///< points that already had a line
  std::size_t evaluated = 0;    ///< points evaluated by this process
  std::size_t done = 0;         ///< rank 0: points with a line at the end
  bool complete = false;        ///< rank 0: the output holds every point
};

namespace detail {

/// Counts completed points on rank 0 and calls `on_progress` now and then. Thread-safe.
class progress_meter {
 public:
  progress_meter(const run_options& o, std::size_t total, std::size_t before) : o_(o) {
    p_.total = total;
    p_.done = before;
  }
  void add(std::size_t k) {
    std::lock_guard lk(mu_);
    p_.done += k;
    p_.this_run += k;
    report(false);
  }
  /// The last report, with the exact count of points that have a line.
  void finish(std::size_t done) {
    std::lock_guard lk(mu_);
    p_.this_run += done - std::min(done, p_.done);
    p_.done = done;
    report(true);
  }

 private:
  void report(bool force) {
    if (!o_.on_progress) return;
    const auto now = std::chrono::steady_clock::now();
    p_.elapsed_s = std::chrono::duration<double>(now - start_).count();
    if (!force && std::chrono::duration<double>(now - last_).count() < o_.progress_interval_s) return;
    last_ = now;
    o_.on_progress(p_);
  }
  const run_options& o_;
  std::mutex mu_;
  progress p_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

/// Rank 0's points to hand out: those without a line, at most `limit` of them, in runs of one
/// group (point_space::group): a requester (a rank, or a thread of rank 0) is given the points
/// of its run one at a time, then the next run nobody has. Thread-safe.
class dispenser {
 public:
  dispenser(std::vector<std::size_t> pending, std::size_t limit, const std::function<std::size_t(std::size_t)>& group)
      : pending_(std::move(pending)), limit_(std::min(limit, pending_.size())) {
    for (std::size_t k = 0; k < limit_; ++k)
      if (k == 0 || !group || group(pending_[k]) != group(pending_[k - 1])) runs_.push_back(k);
    runs_.push_back(limit_);
  }
  /// The next point for `requester` (any number that names it), or nothing when none is left.
  std::optional<std::size_t> next(int requester) {
    std::lock_guard lk(mu_);
    auto& [at, end] = current_[requester];
    if (at == end) {
      if (next_run_ + 1 >= runs_.size()) return std::nullopt;
      at = runs_[next_run_];
      end = runs_[++next_run_];
    }
    return pending_[at++];
  }

 private:
  std::vector<std::size_t> pending_;
  std::size_t limit_;
  std::vector<std::size_t> runs_;  ///< where each run starts in pending_, then limit_
  std::size_t next_run_ = 0;
  std::map<int, std::pair<std::size_t, std::size_t>> current_;  ///< per requester: its run's [at, end)
  std::mutex mu_;
};

}  // namespace detail

/// Runs the sweep of `s` into `o.out` on every rank of `ch` (each rank calls it; see the file
/// comment). Throws io::input_error when the existing lines belong to another space and
/// io::output_error when a file cannot be written.
template <int = 0>
run_report run(const point_space& s, const run_options& o, channel& ch) {
  DEVPLACE_EXPECTS(!o.out.empty(), "sweep: run_options.out must name a file");
  DEVPLACE_EXPECTS(static_cast<bool>(s.inputs) && static_cast<bool>(s.evaluate), "sweep: the point space has no functions");
  run_report rep;
  rep.total = s.size;
  const bool root = ch.rank() == 0;
  std::optional<detail::dispenser> disp;
  std::optional<detail::progress_meter> meter;
  std::size_t run_number = 0;
  if (root) {
    const auto lines = collect_lines(s, o.out);
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (!lines[i]) pending.push_back(i);
    rep.done_before = s.size - pending.size();
    disp.emplace(std::move(pending), o.stop_after, s.group);
    meter.emplace(o, s.size, rep.done_before);
    std::filesystem::create_directories(parts_directory(o.out));
    run_number = next_run_number(o.out);
  }
  run_number = ch.broadcast(run_number);
  part_writer writer(parts_directory(o.out) /
                     ("run" + std::to_string(run_number) + "-rank" + std::to_string(ch.rank()) + ".jsonl"));
  std::mutex request_mu;  // requests of several threads on one rank go through the channel one at a time
  std::atomic<std::size_t> evaluated{0};
  auto worker = [&](int thread) {
    std::size_t finished = 0;
    for (;;) {
      std::optional<std::size_t> i;
      if (root) {
        i = disp->next(-1 - thread);  // rank 0's threads; other ranks ask as themselves
      } else {
        std::lock_guard lk(request_mu);
        i = ch.request(finished);
      }
      if (!i) break;
      writer.write(evaluate_line(s, *i));
      evaluated.fetch_add(1);
      finished = 1;
      if (root) meter->add(1);
    }
  };
  {
    executor ex(o.threads);
    for (unsigned t = 0; t < resolve_threads(o.threads); ++t) ex.submit([&, t] { worker(static_cast<int>(t)); });
    if (root) ch.serve([&](int r) { return disp->next(r); }, [&](std::size_t k) { meter->add(k); });
    ex.wait();
  }
  rep.evaluated = evaluated.load();
  ch.barrier();  // every part file is complete
  if (root) {
    const auto lines = collect_lines(s, o.out);
    const auto done = static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [](const auto& l) { return l.has_value(); }));
    meter->finish(done);
    rep.done = done;
    rep.complete = done == s.size;
    if (rep.complete) merge_lines(lines, o.out);
  }
  return rep;
}

}  // namespace devplace::sweep
