#pragma once
/// \file detail/dary_heap.hpp
/// An indexed min-heap with D children per node (default 4): half the depth of a binary heap and
/// its children side by side in memory, so a step touches fewer cache lines once the heap
/// outgrows the caches (greedy_cluster's candidate pairs on 10^5-operator graphs).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace devplace::detail {

/// A D-ary min-heap of ids 0..n-1, each with a key, that can change or remove the key of an id
/// in place (O(log_D size)), so no stale entries accumulate: greedy_cluster re-keys every pair
/// of a merged node, and a heap with lazy deletion would pop each outdated entry at full depth.
/// Keys sit in the heap array beside their ids; `pos` finds an id's slot.
template <class Key, class Less, std::size_t D = 4>
class indexed_dary_heap {
  static_assert(D >= 2);
  static constexpr std::uint32_t npos = static_cast<std::uint32_t>(-1);
  struct entry {
    Key key;
    std::uint32_t id;
  };

 public:
  explicit indexed_dary_heap(std::size_t ids, Less less = {}) : pos_(ids, npos), less_(std::move(less)) {}

  [[nodiscard]] bool empty() const noexcept { return v_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return v_.size(); }
  [[nodiscard]] bool contains(std::size_t id) const { return pos_[id] != npos; }
  [[nodiscard]] std::size_t top_id() const { return v_.front().id; }
  [[nodiscard]] const Key& top_key() const { return v_.front().key; }
  void reserve(std::size_t n) { v_.reserve(n); }

  /// Inserts `id` with `key`, or changes its key when it is already in.
  void set(std::size_t id, const Key& key) {
    const std::uint32_t p = pos_[id];
    if (p == npos) {
      v_.push_back({key, static_cast<std::uint32_t>(id)});
      sift_up(v_.size() - 1);
    } else if (less_(key, v_[p].key)) {
      v_[p].key = key;
      sift_up(p);
    } else {
      v_[p].key = key;
      sift_down(p);
    }
  }

  /// Removes `id` if it is in.
  void erase(std::size_t id) {
    const std::uint32_t p = pos_[id];
    if (p == npos) return;
    pos_[id] = npos;
    entry last = v_.back();
    v_.pop_back();
    if (p == v_.size()) return;
    v_[p] = last;
    pos_[last.id] = p;
    if (p > 0 && less_(last.key, v_[(p - 1) / D].key))
      sift_up(p);
    else
      sift_down(p);
  }

  void pop() { erase(v_.front().id); }

 private:
  void place(std::size_t i, const entry& e) {
    v_[i] = e;
    pos_[e.id] = static_cast<std::uint32_t>(i);
  }
  void sift_up(std::size_t i) {
    const entry e = v_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / D;
      if (!less_(e.key, v_[parent].key)) break;
      place(i, v_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void sift_down(std::size_t i) {
    const entry e = v_[i];
    const std::size_t n = v_.size();
    for (;;) {
      const std::size_t first = D * i + 1;
      if (first >= n) break;
      const std::size_t last = first + D < n ? first + D : n;
      std::size_t best = first;
      for (std::size_t c = first + 1; c < last; ++c)
        if (less_(v_[c].key, v_[best].key)) best = c;
      if (!less_(v_[best].key, e.key)) break;
      place(i, v_[best]);
      i = best;
    }
    place(i, e);
  }

  std::vector<entry> v_;
  std::vector<std::uint32_t> pos_;
  Less less_;
};

}  // namespace devplace::detail
