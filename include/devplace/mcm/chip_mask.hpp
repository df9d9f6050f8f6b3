#pragma once
/// \file mcm/chip_mask.hpp
/// Chip sets of the MCM constraint engine (seed-mcm §2.6.1, §6 A22): one `std::uint64_t` when
/// C <= 64 (`chip_mask`), and `wide_chip_mask<W>` (W words, C <= 64 W) above. Both are used
/// through the same free functions, so the engine and the repair are written once:
///   `mask_traits<M>::bit(c)`, `::from(c)` (chips >= c), `::upto(c)` (chips <= c), `::capacity`;
///   `any_chip(m)`, `has_chip(m, c)`, `single_chip(m)`, `lowest_chip(m)`, `highest_chip(m)`, `chip_count(m)`,
///   `for_each_chip(m, f)` (ascending), `uniform_bit(rng, m)`.
/// A wide mask of W = 1 behaves bit for bit like `chip_mask`; `uniform_bit` draws the same chip
/// from the same random state for both (the k-th set bit, k uniform below the popcount).
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "devplace/mcm/random.hpp"

namespace devplace::mcm {

using chip_mask = std::uint64_t;

[[nodiscard]] constexpr chip_mask chip_bit(std::size_t c) noexcept { return chip_mask{1} << c; }
/// Chips >= c.
[[nodiscard]] constexpr chip_mask chips_from(std::size_t c) noexcept { return c >= 64 ? 0 : ~chip_mask{0} << c; }
/// Chips <= c.
[[nodiscard]] constexpr chip_mask chips_upto(std::size_t c) noexcept {
  return c >= 63 ? ~chip_mask{0} : (chip_mask{1} << (c + 1)) - 1;
}

/// A set of up to 64 W chips (word k holds chips 64 k .. 64 k + 63).
template <std::size_t W>
struct wide_chip_mask {
  static_assert(W >= 1);
  std::array<std::uint64_t, W> w{};

  friend constexpr wide_chip_mask operator&(wide_chip_mask a, const wide_chip_mask& b) noexcept {
    for (std::size_t k = 0; k < W; ++k) a.w[k] &= b.w[k];
    return a;
  }
  friend constexpr wide_chip_mask operator|(wide_chip_mask a, const wide_chip_mask& b) noexcept {
    for (std::size_t k = 0; k < W; ++k) a.w[k] |= b.w[k];
    return a;
  }
  constexpr wide_chip_mask operator~() const noexcept {
    wide_chip_mask r;
    for (std::size_t k = 0; k < W; ++k) r.w[k] = ~w[k];
    return r;
  }
  constexpr wide_chip_mask& operator&=(const wide_chip_mask& b) noexcept { return *this = *this & b; }
  constexpr wide_chip_mask& operator|=(const wide_chip_mask& b) noexcept { return *this = *this | b; }
  friend constexpr bool operator==(const wide_chip_mask&, const wide_chip_mask&) noexcept = default;
  constexpr explicit operator bool() const noexcept {
    for (auto x : w)
      if (x) return true;
    return false;
  }
};

template <class M>
struct mask_traits;

template <>
struct mask_traits<chip_mask> {
  static constexpr std::size_t capacity = 64;
  static constexpr chip_mask bit(std::size_t c) noexcept { return chip_bit(c); }
  static constexpr chip_mask from(std::size_t c) noexcept { return chips_from(c); }
  static constexpr chip_mask upto(std::size_t c) noexcept { return chips_upto(c); }
};

template <std::size_t W>
struct mask_traits<wide_chip_mask<W>> {
  using M = wide_chip_mask<W>;
  static constexpr std::size_t capacity = 64 * W;
  static constexpr M bit(std::size_t c) noexcept {
    M m;
    if (c < capacity) m.w[c / 64] = chip_bit(c % 64);
    return m;
  }
  static constexpr M from(std::size_t c) noexcept {
    M m;
    for (std::size_t k = 0; k < W; ++k)
      m.w[k] = c <= 64 * k ? ~std::uint64_t{0} : chips_from(c - 64 * k);
    return m;
  }
  static constexpr M upto(std::size_t c) noexcept {
    M m;
    for (std::size_t k = 0; k < W; ++k)
      m.w[k] = c < 64 * k ? 0 : chips_upto(c - 64 * k);
    return m;
  }
};

// ---- the narrow mask
[[nodiscard]] constexpr bool any_chip(chip_mask m) noexcept { return m != 0; }
[[nodiscard]] constexpr bool has_chip(chip_mask m, std::size_t c) noexcept { return c < 64 && ((m >> c) & 1u); }
[[nodiscard]] constexpr bool single_chip(chip_mask m) noexcept { return m && !(m & (m - 1)); }
/// The lowest chip of a non-empty mask.
[[nodiscard]] constexpr std::size_t lowest_chip(chip_mask m) noexcept { return static_cast<std::size_t>(std::countr_zero(m)); }
/// The highest chip of a non-empty mask.
[[nodiscard]] constexpr std::size_t highest_chip(chip_mask m) noexcept { return 63 - static_cast<std::size_t>(std::countl_zero(m)); }
[[nodiscard]] constexpr std::size_t chip_count(chip_mask m) noexcept { return static_cast<std::size_t>(std::popcount(m)); }
template <class F>
constexpr void for_each_chip(chip_mask m, F&& f) {
  for (; m; m &= m - 1) f(static_cast<std::size_t>(std::countr_zero(m)));
}

// ---- wide masks
template <std::size_t W>
[[nodiscard]] constexpr bool any_chip(const wide_chip_mask<W>& m) noexcept { return static_cast<bool>(m); }
template <std::size_t W>
[[nodiscard]] constexpr bool has_chip(const wide_chip_mask<W>& m, std::size_t c) noexcept {
  return c < 64 * W && ((m.w[c / 64] >> (c % 64)) & 1u);
}
template <std::size_t W>
[[nodiscard]] constexpr std::size_t chip_count(const wide_chip_mask<W>& m) noexcept {
  std::size_t n = 0;
  for (auto x : m.w) n += static_cast<std::size_t>(std::popcount(x));
  return n;
}
template <std::size_t W>
[[nodiscard]] constexpr bool single_chip(const wide_chip_mask<W>& m) noexcept { return chip_count(m) == 1; }
template <std::size_t W>
[[nodiscard]] constexpr std::size_t lowest_chip(const wide_chip_mask<W>& m) noexcept {
  for (std::size_t k = 0; k < W; ++k)
    if (m.w[k]) return 64 * k + static_cast<std::size_t>(std::countr_zero(m.w[k]));
  return 64 * W;
}
template <std::size_t W>
[[nodiscard]] constexpr std::size_t highest_chip(const wide_chip_mask<W>& m) noexcept {
  for (std::size_t k = W; k-- > 0;)
    if (m.w[k]) return 64 * k + 63 - static_cast<std::size_t>(std::countl_zero(m.w[k]));
  return 0;
}
template <std::size_t W, class F>
constexpr void for_each_chip(const wide_chip_mask<W>& m, F&& f) {
  for (std::size_t k = 0; k < W; ++k)
    for (std::uint64_t x = m.w[k]; x; x &= x - 1) f(64 * k + static_cast<std::size_t>(std::countr_zero(x)));
}

/// A uniform chip of a non-empty wide mask (the k-th set bit, k uniform below the popcount: the
/// same draw as `uniform_bit` on a narrow mask with the same bits).
template <std::size_t W>
[[nodiscard]] inline int uniform_bit(random_engine& rng, const wide_chip_mask<W>& m) {
  auto k = uniform_below(rng, static_cast<std::uint64_t>(chip_count(m)));
  for (std::size_t i = 0; i < W; ++i) {
    const auto c = static_cast<std::uint64_t>(std::popcount(m.w[i]));
    if (k >= c) {
      k -= c;
      continue;
    }
    std::uint64_t x = m.w[i];
    while (k--) x &= x - 1;
    return static_cast<int>(64 * i + static_cast<std::size_t>(std::countr_zero(x)));
  }
  return -1;  // unreachable for a non-empty mask
}

}  // namespace devplace::mcm
