#pragma once
/// \file map/detail/exact_cover.hpp
/// Knuth's Algorithm X with dancing links, for the cover searches of the mapper: R pairwise
/// disjoint rows of equal width over the device columns (an exact cover, or a packing leaving
/// spare columns). Used by the copy cover (map/detail/copy_cover.hpp).
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "devplace/map/detail/cover_common.hpp"

namespace devplace::detail {

/// What both packing searches share: the limits and the rows chosen (see `exact_cover_packing`).
class packing_search {
 public:
  [[nodiscard]] const std::vector<std::size_t>& solution() const noexcept { return solution_; }
  [[nodiscard]] std::uint64_t nodes() const noexcept { return lim_.count; }

 protected:
  /// Starts a search for R rows of `width` columns out of `columns`; false when they cannot fit.
  bool start(std::size_t R, std::uint64_t node_budget, const std::atomic<bool>* stop, cover_clock::time_point deadline,
             std::size_t columns, std::size_t width) {
    lim_ = {.most = work_counter::fewer_than(node_budget), .stop = stop, .deadline = deadline};
    solution_.clear();
    return width * R <= columns;
  }

  work_counter lim_;
  std::vector<std::size_t> solution_;
};

/// Algorithm X with dancing links for R pairwise disjoint rows out of equal-sized rows (each row
/// `width` distinct columns out of `columns`), leaving at most `columns − R·width` columns
/// uncovered. Rows are stored contiguously, so a row's other nodes are found by index, and a node
/// keeps only its up/down links and column (12 bytes).
template <int = 0>
class basic_exact_cover_packing : public packing_search {
 public:
  using outcome = packing_outcome;

  /// `rows`: `width` column ids per row, row after row.
  basic_exact_cover_packing(std::size_t columns, std::size_t width, std::span<const std::uint32_t> rows)
      : C_(static_cast<std::uint32_t>(columns)), W_(static_cast<std::uint32_t>(width)) {
    const std::size_t n = rows.size();
    const std::size_t nodes = C_ + 1 + n;
    up_.resize(nodes), down_.resize(nodes), col_.resize(nodes);
    left_.resize(C_ + 1), right_.resize(C_ + 1), size_.assign(C_ + 1, 0);
    for (std::uint32_t c = 0; c <= C_; ++c) {
      left_[c] = c == 0 ? C_ : c - 1;
      right_[c] = c == C_ ? 0 : c + 1;
      up_[c] = down_[c] = col_[c] = c;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const auto x = static_cast<std::uint32_t>(C_ + 1 + i), c = rows[i];
      col_[x] = c;
      up_[x] = up_[c], down_[x] = c;
      down_[up_[c]] = x, up_[c] = x;
      ++size_[c];
    }
  }

  /// Searches R disjoint rows (spare = columns − R·width uncovered columns at most); the rows of
  /// the answer are in `solution()`. Stops after `node_budget` nodes (0: none), or when `*stop`
  /// becomes true or `deadline` passes (checked every 1,024 nodes). A search that ends `none` or
  /// `stopped` leaves the links as they were (another `solve` may follow); one that ends `found`
  /// leaves its rows covered.
  outcome solve(std::size_t R, std::uint64_t node_budget, const std::atomic<bool>* stop = nullptr,
                std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    if (!start(R, node_budget, stop, deadline, C_, W_)) return outcome::none;
    const std::size_t spare = C_ - static_cast<std::size_t>(W_) * R;
    if (search(R, spare)) return outcome::found;
    return lim_.aborted ? outcome::stopped : outcome::none;
  }

 private:
  [[nodiscard]] std::uint32_t row_base(std::uint32_t x) const noexcept { return C_ + 1 + (x - C_ - 1) / W_ * W_; }

  void cover(std::uint32_t c) {
    right_[left_[c]] = right_[c], left_[right_[c]] = left_[c];
    for (std::uint32_t i = down_[c]; i != c; i = down_[i]) {
      const std::uint32_t b = row_base(i);
      for (std::uint32_t j = b; j < b + W_; ++j) {
        if (j == i) continue;
        down_[up_[j]] = down_[j], up_[down_[j]] = up_[j];
        --size_[col_[j]];
      }
    }
  }
  void uncover(std::uint32_t c) {
    for (std::uint32_t i = up_[c]; i != c; i = up_[i]) {
      const std::uint32_t b = row_base(i);
      for (std::uint32_t j = b + W_; j-- > b;) {
        if (j == i) continue;
        ++size_[col_[j]];
        down_[up_[j]] = j, up_[down_[j]] = j;
      }
    }
    right_[left_[c]] = c, left_[right_[c]] = c;
  }

  /// `left` rows still to choose, `spare` columns that may stay uncovered.
  bool search(std::size_t left, std::size_t spare) {
    if (left == 0) return true;
    if (!lim_.step()) return false;
    // the free column with the fewest live rows; more empty columns than spare ones: dead
    std::uint32_t best = C_;
    std::size_t empty = 0;
    for (std::uint32_t c = right_[C_]; c != C_; c = right_[c]) {
      if (size_[c] == 0) ++empty;
      if (best == C_ || size_[c] < size_[best]) best = c;
    }
    if (best == C_ || empty > spare) return false;
    const std::uint32_t c = best;
    cover(c);
    for (std::uint32_t r = down_[c]; r != c; r = down_[r]) {
      const std::size_t row = (r - C_ - 1) / W_;
      solution_.push_back(row);
      const std::uint32_t b = row_base(r);  // the row's other columns covered, then uncovered
      for (std::uint32_t j = b; j < b + W_; ++j)
        if (j != r) cover(col_[j]);
      if (search(left - 1, spare)) return true;
      for (std::uint32_t j = b + W_; j-- > b;)
        if (j != r) uncover(col_[j]);
      solution_.pop_back();
      if (lim_.aborted) break;
    }
    if (!lim_.aborted && spare > 0 && search(left, spare - 1)) return true;  // c stays empty
    uncover(c);
    return false;
  }

  std::uint32_t C_, W_;
  std::vector<std::uint32_t> up_, down_, col_, left_, right_, size_;
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using exact_cover_packing = basic_exact_cover_packing<>;

/// The search of `exact_cover_packing` for at most 64 columns, on bit masks: a row is a 64-bit
/// mask, and each node keeps the list of live rows as a contiguous run filtered from its parent's.
/// It branches exactly as the dancing links do, so both visit the same nodes and return the same
/// rows (docs/mapping-oracles.md, "Copy cover": its cost and speed).
template <int = 0>
class basic_bitset_cover_packing : public packing_search {
 public:
  using outcome = packing_outcome;
  static constexpr std::size_t max_columns = 64;

  /// `rows`: `width` distinct column ids (< columns ≤ 64) per row, row after row.
  basic_bitset_cover_packing(std::size_t columns, std::size_t width, std::span<const std::uint32_t> rows)
      : C_(columns), W_(width) {
    if (columns > max_columns) throw std::invalid_argument("bitset_cover_packing: more than 64 columns");
    if (width == 0 ? !rows.empty() : rows.size() % width != 0)
      throw std::invalid_argument("bitset_cover_packing: the rows are not a whole number of rows of the width");
    const std::size_t n = width == 0 ? 0 : rows.size() / width;
    masks_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t m = 0;
      for (std::size_t k = 0; k < width; ++k) {
        const std::uint32_t c = rows[i * width + k];
        if (c >= columns) throw std::invalid_argument("bitset_cover_packing: a column id outside the columns");
        if ((m >> c) & 1u) throw std::invalid_argument("bitset_cover_packing: a column twice in a row");
        m |= std::uint64_t{1} << c;
      }
      masks_[i] = m;
    }
  }

  /// As `exact_cover_packing::solve` (after `found` the rows are in `solution()`).
  outcome solve(std::size_t R, std::uint64_t node_budget, const std::atomic<bool>* stop = nullptr,
                std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    if (!start(R, node_budget, stop, deadline, C_, W_)) return outcome::none;
    live_.clear();
    live_.reserve(2 * masks_.size() + 64);
    for (std::size_t i = 0; i < masks_.size(); ++i) live_.push_back(static_cast<std::uint32_t>(i));
    all_ = C_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << C_) - 1;
    if (search(R, C_ - W_ * R, 0, 0, live_.size())) return outcome::found;
    return lim_.aborted ? outcome::stopped : outcome::none;
  }

 private:
  /// `left` rows still to choose, `spare` columns that may stay empty, `used` the columns taken
  /// (by rows or left empty), live_[b, e) the rows disjoint from them.
  bool search(std::size_t left, std::size_t spare, std::uint64_t used, std::size_t b, std::size_t e) {
    if (left == 0) return true;
    if (!lim_.step()) return false;
    std::uint32_t count[64] = {};
    for (std::size_t i = b; i < e; ++i)
      for (std::uint64_t m = masks_[live_[i]]; m != 0; m &= m - 1) ++count[std::countr_zero(m)];
    // the free column with the fewest live rows; more empty columns than spare ones: dead
    int best = -1;
    std::size_t empty = 0;
    for (std::uint64_t m = all_ & ~used; m != 0; m &= m - 1) {
      const int c = std::countr_zero(m);
      if (count[c] == 0) ++empty;
      if (best < 0 || count[c] < count[best]) best = c;
    }
    if (best < 0 || empty > spare) return false;
    const std::uint64_t bit = std::uint64_t{1} << best;
    for (std::size_t i = b; i < e; ++i) {
      const std::uint32_t r = live_[i];
      if (!(masks_[r] & bit)) continue;
      solution_.push_back(r);
      const std::size_t child = filter(b, e, used | masks_[r]);
      if (search(left - 1, spare, used | masks_[r], child, live_.size())) return true;
      live_.resize(child);
      solution_.pop_back();
      if (lim_.aborted) break;
    }
    if (!lim_.aborted && spare > 0) {  // best stays empty
      const std::size_t child = filter(b, e, used | bit);
      if (search(left, spare - 1, used | bit, child, live_.size())) return true;
      live_.resize(child);
    }
    return false;
  }
  /// Appends the rows of live_[b, e) disjoint from `used`; returns where they begin.
  std::size_t filter(std::size_t b, std::size_t e, std::uint64_t used) {
    const std::size_t begin = live_.size();
    live_.resize(begin + (e - b));
    std::size_t k = begin;
    for (std::size_t i = b; i < e; ++i) {
      const std::uint32_t q = live_[i];
      live_[k] = q;
      k += (masks_[q] & used) == 0;
    }
    live_.resize(k);
    return begin;
  }

  std::size_t C_, W_;
  std::uint64_t all_ = 0;
  std::vector<std::uint64_t> masks_;
  std::vector<std::uint32_t> live_;  // the live rows of the nodes on the path, run after run
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using bitset_cover_packing = basic_bitset_cover_packing<>;

/// The node budgets of one cover turn (map/detail/cover_oracles.hpp): the listing's and the
/// cover's (0: none).
struct cover_budget {
  std::uint64_t listing = 0, cover = 0;
};

/// A packing search's answer (see `exact_cover_packing`).
struct packing_result {
  packing_outcome outcome = packing_outcome::stopped;
  std::vector<std::size_t> solution;  ///< found: the R rows
  std::uint64_t nodes = 0;
};

/// The packing search of `exact_cover_packing` on bit masks when the columns fit in 64
/// (`bitset_cover_packing`: the same nodes, faster), on dancing links otherwise.
template <int I = 0>
[[nodiscard]] packing_result solve_packing(std::size_t columns, std::size_t width, std::span<const std::uint32_t> rows, std::size_t R,
                                                  std::uint64_t node_budget, const std::atomic<bool>* stop = nullptr,
                                                  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  packing_result r;
  auto run = [&](auto& x) {
    r.outcome = x.solve(R, node_budget, stop, deadline);
    r.nodes = x.nodes();
    if (r.outcome == packing_outcome::found) r.solution = x.solution();
  };
  if (columns <= basic_bitset_cover_packing<I>::max_columns) {
    basic_bitset_cover_packing<I> x(columns, width, rows);
    run(x);
  } else {
    basic_exact_cover_packing<I> x(columns, width, rows);
    run(x);
  }
  return r;
}

}  // namespace devplace::detail
