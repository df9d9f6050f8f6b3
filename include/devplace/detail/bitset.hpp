#pragma once
/// \file detail/bitset.hpp
/// `dynamic_bitset`: a fixed-size-at-construction bit set over 64-bit words, with the set
/// operations the down-set, reachability and convexity code needs. Not part of the public API.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace devplace::detail {

/// The set bits of `x`, inline on every target: without a popcount instruction enabled (x86-64
/// builds without -mpopcnt) std::popcount calls a library routine, which the bit-set loops of
/// the cover searches pay per word.
[[nodiscard]] constexpr unsigned popcount64(std::uint64_t x) noexcept {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<unsigned>((x * 0x0101010101010101ull) >> 56);
}

class dynamic_bitset {
 public:
  using word_type = std::uint64_t;
  static constexpr std::size_t bits_per_word = 64;

  dynamic_bitset() = default;
  explicit dynamic_bitset(std::size_t n) : n_(n), w_((n + bits_per_word - 1) / bits_per_word, 0) {}

  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] std::size_t num_words() const noexcept { return w_.size(); }
  [[nodiscard]] const word_type* words() const noexcept { return w_.data(); }
  [[nodiscard]] word_type* words() noexcept { return w_.data(); }

  [[nodiscard]] bool test(std::size_t i) const noexcept { return (w_[i / bits_per_word] >> (i % bits_per_word)) & 1u; }
  void set(std::size_t i) noexcept { w_[i / bits_per_word] |= word_type{1} << (i % bits_per_word); }
  void reset(std::size_t i) noexcept { w_[i / bits_per_word] &= ~(word_type{1} << (i % bits_per_word)); }
  void clear() noexcept { std::fill(w_.begin(), w_.end(), 0); }

  [[nodiscard]] std::size_t count() const noexcept {
    std::size_t c = 0;
    for (auto x : w_) c += static_cast<std::size_t>(std::popcount(x));
    return c;
  }
  [[nodiscard]] bool none() const noexcept {
    for (auto x : w_) if (x) return false;
    return true;
  }
  [[nodiscard]] bool any() const noexcept { return !none(); }

  dynamic_bitset& operator|=(const dynamic_bitset& o) noexcept {
    for (std::size_t k = 0; k < w_.size(); ++k) w_[k] |= o.w_[k];
    return *this;
  }
  dynamic_bitset& operator&=(const dynamic_bitset& o) noexcept {
    for (std::size_t k = 0; k < w_.size(); ++k) w_[k] &= o.w_[k];
    return *this;
  }
  /// this := this \ o
  dynamic_bitset& subtract(const dynamic_bitset& o) noexcept {
    for (std::size_t k = 0; k < w_.size(); ++k) w_[k] &= ~o.w_[k];
    return *this;
  }
  [[nodiscard]] bool intersects(const dynamic_bitset& o) const noexcept {
    for (std::size_t k = 0; k < w_.size(); ++k) if (w_[k] & o.w_[k]) return true;
    return false;
  }
  /// this ⊆ o
  [[nodiscard]] bool is_subset_of(const dynamic_bitset& o) const noexcept {
    for (std::size_t k = 0; k < w_.size(); ++k) if (w_[k] & ~o.w_[k]) return false;
    return true;
  }
  /// Calls f(i) for every set bit, in increasing order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t k = 0; k < w_.size(); ++k) {
      word_type x = w_[k];
      while (x) {
        const auto b = static_cast<std::size_t>(std::countr_zero(x));
        f(k * bits_per_word + b);
        x &= x - 1;
      }
    }
  }
  [[nodiscard]] std::size_t hash() const noexcept {
    std::size_t h = 0xcbf29ce484222325ull;
    for (auto x : w_) h = (h ^ static_cast<std::size_t>(x)) * 0x100000001b3ull + (h >> 29);
    return h;
  }
  friend bool operator==(const dynamic_bitset&, const dynamic_bitset&) = default;

 private:
  std::size_t n_ = 0;
  std::vector<word_type> w_;
};

struct dynamic_bitset_hash {
  std::size_t operator()(const dynamic_bitset& b) const noexcept { return b.hash(); }
};

}  // namespace devplace::detail
