#pragma once
// A sweep::channel whose "ranks" are threads of the test process: the driver's multi-rank path
// (rank 0 serving requests, one part file per rank, the merge after the barrier) without MPI.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "devplace/sweep/driver.hpp"

namespace devplace::test {

/// What the thread ranks share.
struct rank_hub {
  explicit rank_hub(int n) : ranks(n), replies(static_cast<std::size_t>(n)) {}
  int ranks;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<int, std::size_t>> requests;                // (rank, finished)
  std::vector<std::optional<std::optional<std::size_t>>> replies;  // per rank: a reply waiting
  std::optional<std::size_t> broadcast_value;
  int at_barrier = 0, barrier_round = 0;
  std::size_t finished_reported = 0;
};

class thread_rank final : public sweep::channel {
 public:
  thread_rank(rank_hub& h, int r) : h_(h), r_(r) {}
  [[nodiscard]] int rank() const override { return r_; }
  [[nodiscard]] int size() const override { return h_.ranks; }
  void serve(const std::function<std::optional<std::size_t>(int)>& next, const std::function<void(std::size_t)>& finished) override {
    for (int active = h_.ranks - 1; active > 0;) {
      std::unique_lock lk(h_.mu);
      h_.cv.wait(lk, [&] { return !h_.requests.empty(); });
      const auto [from, k] = h_.requests.front();
      h_.requests.pop_front();
      h_.finished_reported += k;
      lk.unlock();
      if (k) finished(k);
      const auto i = next(from);
      lk.lock();
      h_.replies[static_cast<std::size_t>(from)] = i;
      h_.cv.notify_all();
      if (!i) --active;
    }
  }
  std::optional<std::size_t> request(std::size_t finished) override {
    if (done_) return std::nullopt;
    std::unique_lock lk(h_.mu);
    h_.requests.emplace_back(r_, finished);
    h_.cv.notify_all();
    auto& slot = h_.replies[static_cast<std::size_t>(r_)];
    h_.cv.wait(lk, [&] { return slot.has_value(); });
    const auto i = *slot;
    slot.reset();
    done_ = !i;
    return i;
  }
  std::size_t broadcast(std::size_t value) override {
    std::unique_lock lk(h_.mu);
    if (r_ == 0) {
      h_.broadcast_value = value;
      h_.cv.notify_all();
      return value;
    }
    h_.cv.wait(lk, [&] { return h_.broadcast_value.has_value(); });
    return *h_.broadcast_value;
  }
  void barrier() override {
    std::unique_lock lk(h_.mu);
    const int round = h_.barrier_round;
    if (++h_.at_barrier == h_.ranks) {
      h_.at_barrier = 0;
      ++h_.barrier_round;
      h_.cv.notify_all();
      return;
    }
    h_.cv.wait(lk, [&] { return h_.barrier_round != round; });
  }

 private:
  rank_hub& h_;
  int r_;
  bool done_ = false;
};

}  // namespace devplace::test
