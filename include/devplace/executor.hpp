#pragma once
/// \file executor.hpp
/// The one thread pool every parallel devplace algorithm runs on (the Parmesan flow's α values,
/// the mapper's concurrent target searches, the plan search's configurations).
///
///   devplace::executor ex(4);                 // 4 workers (0: one per hardware thread)
///   ex.submit([&] { work(0); });
///   ex.submit([&] { work(1); });
///   ex.wait();                                // rethrows the first exception a task threw
///
///   devplace::parallel_for(n, threads, [&](std::size_t i) { out[i] = f(i); });
///
/// Exceptions: the first exception thrown by a task is kept; from then on `stop_requested()` is
/// true, tasks not yet started are dropped, and `wait()` (or the destructor's join, through
/// `parallel_for`) hands the exception to the caller. Running tasks are not interrupted: long
/// tasks poll `stop_requested()` (or their own stop flag) to end early.
/// Determinism: the executor only decides *when* a task runs; algorithms write each task's result
/// to its own slot and merge the slots in index order, so results do not depend on the number of
/// threads.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace devplace {

/// The number of worker threads `threads` asks for: itself, or one per hardware thread for 0.
[[nodiscard]] inline unsigned resolve_threads(unsigned threads) noexcept {
  return threads ? threads : std::max(1u, std::thread::hardware_concurrency());
}

class executor {
 public:
  /// Starts `resolve_threads(threads)` workers.
  explicit executor(unsigned threads = 0) {
    const unsigned k = resolve_threads(threads);
    workers_.reserve(k);
    for (unsigned i = 0; i < k; ++i) workers_.emplace_back([this] { run(); });
  }
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;
  /// Finishes the queued tasks (or drops them after an exception) and joins the workers. An
  /// exception not collected by `wait()` is discarded here (destructors do not throw).
  ~executor() {
    {
      std::lock_guard lk(mu_);
      closing_ = true;
    }
    work_cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  [[nodiscard]] unsigned threads() const noexcept { return static_cast<unsigned>(workers_.size()); }

  /// Queues `f()` to run on a worker.
  void submit(std::function<void()> f) {
    if (!f) throw std::invalid_argument("executor::submit: empty task");
    {
      std::lock_guard lk(mu_);
      ++pending_;
      queue_.push_back(std::move(f));
    }
    work_cv_.notify_one();
  }

  /// Waits until every submitted task has finished or been dropped; rethrows the first exception
  /// a task threw (once; the executor is usable again afterwards).
  void wait() {
    std::unique_lock lk(mu_);
    idle_cv_.wait(lk, [&] { return pending_ == 0; });
    if (error_) {
      auto e = std::exchange(error_, nullptr);
      stop_ = false;
      std::rethrow_exception(e);
    }
  }

  /// True once a task has thrown (until `wait()` collects the exception).
  [[nodiscard]] bool stop_requested() const noexcept { return stop_.load(std::memory_order_relaxed); }

 private:
  void run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lk(mu_);
        work_cv_.wait(lk, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;  // closing and nothing left
        task = std::move(queue_.front());
        queue_.pop_front();
        if (error_) {  // a task failed: drop the rest
          finish_one(lk);
          continue;
        }
      }
      std::exception_ptr failure;
      try {
        task();
      } catch (...) {
        failure = std::current_exception();
      }
      std::unique_lock lk(mu_);
      if (failure && !error_) {
        error_ = failure;
        stop_ = true;
      }
      finish_one(lk);
    }
  }
  void finish_one(std::unique_lock<std::mutex>&) {
    if (--pending_ == 0) idle_cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  std::size_t pending_ = 0;
  bool closing_ = false;
  std::exception_ptr error_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

/// Calls `f(i)` for i = 0 .. n−1 on at most `resolve_threads(threads)` threads (the caller's
/// thread alone when that is 1 or n ≤ 1). Indices are handed out in increasing order. The first
/// exception thrown by any `f(i)` reaches the caller; indices not yet started are skipped.
template <class F>
void parallel_for(std::size_t n, unsigned threads, F&& f) {
  const unsigned k = static_cast<unsigned>(std::min<std::size_t>(resolve_threads(threads), n));
  if (k <= 1) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  executor ex(k);
  for (unsigned t = 0; t < k; ++t)
    ex.submit([&] {
      for (std::size_t i; !ex.stop_requested() && (i = next++) < n;) f(i);
    });
  ex.wait();
}

}  // namespace devplace
