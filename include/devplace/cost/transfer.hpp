#pragma once
/// \file cost/transfer.hpp
/// The one definition of communication time that every component uses: the phase-1 stage cost
/// (at the constant bandwidth β̄, no latency), the mapper's cost models, the simulator and the ILP
/// builders (docs/formats.md, "Cost conventions").
///
///   T(x; B, ℓ)      = x / (B · 10^6) + ℓ · 10^-3   ms for x > 0 bytes at B GB/s with latency ℓ µs
///                   = 0                            for x = 0 (nothing is sent; a dependency stays)
///   ring allreduce  = 2 (R − 1) · max_i T(P / R; B_i, ℓ_i)   over the links i of the ring
///
/// The ring allreduce of P bytes over R replicas is 2(R − 1) steps (reduce-scatter, then
/// all-gather); in each step every replica sends P / R bytes to its ring successor at once, so a
/// step takes as long as its slowest link, latency included. For R = 1 it is 0.
#include <cstddef>

namespace devplace {

/// T(x; B, ℓ) in ms: `bytes` at `gbps` GB/s plus `lat_us` µs; 0 for an empty message.
[[nodiscard]] constexpr double transfer_time_ms(double bytes, double gbps, double lat_us = 0) noexcept {
  return bytes > 0 ? bytes / (gbps * 1e6) + lat_us * 1e-3 : 0.0;
}

/// The same from ms per byte (w = 1 / (B · 10^6)) and latency in ms, as dense tables store them.
[[nodiscard]] constexpr double transfer_time_ms_w(double bytes, double ms_per_byte, double latency_ms) noexcept {
  return bytes > 0 ? bytes * ms_per_byte + latency_ms : 0.0;
}

/// Bytes each replica sends per ring step of an allreduce of `grad_bytes` over `replicas`: P / R.
[[nodiscard]] constexpr double ring_step_bytes(double grad_bytes, std::size_t replicas) noexcept {
  return replicas > 1 ? grad_bytes / static_cast<double>(replicas) : 0.0;
}

/// Steps of a ring allreduce over `replicas`: 2(R − 1).
[[nodiscard]] constexpr double ring_steps(std::size_t replicas) noexcept {
  return replicas > 1 ? 2.0 * static_cast<double>(replicas - 1) : 0.0;
}

/// The ring allreduce time from the time of its slowest step, max_i T(P / R; B_i, ℓ_i).
[[nodiscard]] constexpr double ring_allreduce_ms(double slowest_step_ms, std::size_t replicas) noexcept {
  return ring_steps(replicas) * slowest_step_ms;
}

}  // namespace devplace
