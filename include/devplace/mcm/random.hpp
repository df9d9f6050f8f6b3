#pragma once
/// \file mcm/random.hpp
/// The random engine of the MCM component and the draws it makes. `std::mt19937_64`'s output is
/// fixed by the standard, but `std::*_distribution` differs between standard libraries, so every
/// draw is computed here: the same seed gives the same partitions on every platform.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace devplace::mcm {

using random_engine = std::mt19937_64;

/// Uniform in [0, 1) with 53 random bits.
[[nodiscard]] inline double uniform01(random_engine& rng) {
  return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

/// Uniform integer in [0, n), n >= 1 (rejection of the top partial block, then modulo).
[[nodiscard]] inline std::uint64_t uniform_below(random_engine& rng, std::uint64_t n) {
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n + 1) % n;  // last accepted value
  for (;;) {
    const std::uint64_t x = rng();
    if (x <= limit) return x % n;
  }
}

/// Exp(1) draw.
[[nodiscard]] inline double exponential1(random_engine& rng) { return -std::log1p(-uniform01(rng)); }

/// A uniform bit of a non-zero mask.
[[nodiscard]] inline int uniform_bit(random_engine& rng, std::uint64_t mask) {
  auto k = uniform_below(rng, static_cast<std::uint64_t>(std::popcount(mask)));
  while (k--) mask &= mask - 1;
  return std::countr_zero(mask);
}

/// A uniformly random permutation of 0 .. n-1 (Fisher-Yates).
[[nodiscard]] inline std::vector<std::size_t> random_permutation(random_engine& rng, std::size_t n) {
  std::vector<std::size_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = i;
  for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[uniform_below(rng, i)]);
  return p;
}

}  // namespace devplace::mcm
