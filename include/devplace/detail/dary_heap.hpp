#pragma once
/// \file detail/dary_heap.hpp
/// A min-heap with D children per node (default 4): half the depth of a binary heap and its
/// children side by side in memory, so a pop touches fewer cache lines once the heap outgrows the
/// caches (greedy_cluster's candidate heap on 10^5-operator graphs). Same interface subset as
/// std::priority_queue with std::greater: top() is the least element under `Less`.
#include <cstddef>
#include <utility>
#include <vector>

namespace devplace::detail {

template <class T, class Less, std::size_t D = 4>
class dary_heap {
  static_assert(D >= 2);

 public:
  explicit dary_heap(Less less = {}) : less_(std::move(less)) {}

  [[nodiscard]] bool empty() const noexcept { return v_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return v_.size(); }
  [[nodiscard]] const T& top() const { return v_.front(); }
  void reserve(std::size_t n) { v_.reserve(n); }

  void push(T x) {
    std::size_t i = v_.size();
    v_.push_back(std::move(x));
    T item = std::move(v_[i]);
    while (i > 0) {
      const std::size_t parent = (i - 1) / D;
      if (!less_(item, v_[parent])) break;
      v_[i] = std::move(v_[parent]);
      i = parent;
    }
    v_[i] = std::move(item);
  }

  void pop() {
    T item = std::move(v_.back());
    v_.pop_back();
    const std::size_t n = v_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = D * i + 1;
      if (first >= n) break;
      const std::size_t last = first + D < n ? first + D : n;
      std::size_t best = first;
      for (std::size_t c = first + 1; c < last; ++c)
        if (less_(v_[c], v_[best])) best = c;
      if (!less_(v_[best], item)) break;
      v_[i] = std::move(v_[best]);
      i = best;
    }
    v_[i] = std::move(item);
  }

 private:
  std::vector<T> v_;
  Less less_;
};

}  // namespace devplace::detail
