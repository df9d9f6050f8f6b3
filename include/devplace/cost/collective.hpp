#pragma once
/// \file cost/collective.hpp
/// Ring collectives on one network tier, built on the one transfer time T(x; B, ℓ) of
/// cost/transfer.hpp: the mapper's ring allreduce, and the tensor-, context-, pipeline- and
/// data-parallel collectives of the LLM evaluation (llm/evaluate.hpp), are the same formulas.
///
/// A group of n members holds a buffer of `bytes` each (the whole tensor; for a reduce-scatter the
/// input, for an all-gather the output). On a ring every step moves one chunk of bytes / n from
/// each member to its successor at once, so a step takes T(bytes / n; B, ℓ):
///
///   all-reduce      2 (n − 1) · T(bytes / n; B, ℓ)     (reduce-scatter, then all-gather)
///   reduce-scatter    (n − 1) · T(bytes / n; B, ℓ)
///   all-gather        (n − 1) · T(bytes / n; B, ℓ)
///   point-to-point            T(bytes; B, ℓ)           (one message; n is ignored)
///
/// n = 1 costs nothing. B is the bandwidth one member achieves on the tier (link bandwidth times
/// the achievable fraction), ℓ the per-step latency. `ring_allreduce_ms` of cost/transfer.hpp is
/// the all-reduce line with the slowest step given.
#include <cstddef>
#include <stdexcept>
#include <string_view>

#include "devplace/cost/transfer.hpp"

namespace devplace {

enum class collective_op { all_reduce, reduce_scatter, all_gather, point_to_point };

[[nodiscard]] constexpr std::string_view to_string(collective_op c) noexcept {
  switch (c) {
    case collective_op::all_reduce: return "all_reduce";
    case collective_op::reduce_scatter: return "reduce_scatter";
    case collective_op::all_gather: return "all_gather";
    case collective_op::point_to_point: return "point_to_point";
  }
  return "?";
}

/// Ring steps of `c` among `members`: 2(n − 1), n − 1, n − 1 or 1 (0 for one member).
[[nodiscard]] constexpr double collective_steps(collective_op c, std::size_t members) noexcept {
  if (c == collective_op::point_to_point) return 1.0;
  if (members <= 1) return 0.0;
  const double n1 = static_cast<double>(members - 1);
  return c == collective_op::all_reduce ? 2.0 * n1 : n1;
}

/// Bytes one member sends per step: bytes / n, or the whole message for point-to-point.
[[nodiscard]] constexpr double collective_chunk_bytes(collective_op c, double bytes, std::size_t members) noexcept {
  if (c == collective_op::point_to_point) return bytes;
  return members > 1 ? bytes / static_cast<double>(members) : 0.0;
}

/// Time in ms of collective `c` on a buffer of `bytes` among `members` on a ring whose every
/// member achieves `gbps` GB/s with `lat_us` µs per step. Throws
/// std::invalid_argument for a negative size, no members or a bandwidth that is not > 0.
[[nodiscard]] inline double ring_collective_ms(collective_op c, double bytes, std::size_t members,
                                               double gbps, double lat_us = 0) {
  if (!(bytes >= 0)) throw std::invalid_argument("ring_collective_ms: bytes must be >= 0");
  if (members == 0) throw std::invalid_argument("ring_collective_ms: at least one member");
  if (!(gbps > 0)) throw std::invalid_argument("ring_collective_ms: bandwidth must be > 0");
  if (!(lat_us >= 0)) throw std::invalid_argument("ring_collective_ms: latency must be >= 0");
  if (c != collective_op::point_to_point && members == 1) return 0.0;
  return collective_steps(c, members) *
         transfer_time_ms(collective_chunk_bytes(c, bytes, members), gbps, lat_us);
}

}  // namespace devplace
