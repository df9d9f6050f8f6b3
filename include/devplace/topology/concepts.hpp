#pragma once
/// \file topology/concepts.hpp
/// The device-topology customisation points and the `device_topology` concept.
///
///   devplace::num_devices(t)              -> std::size_t  number of devices D, ids 0 .. D-1
///   devplace::bandwidth_gbps(t, a, b)     -> double       point-to-point bandwidth a -> b, GB/s (10^9 B/s)
///   devplace::latency_us(t, a, b)         -> double       per-message latency a -> b in us; default 0
///   devplace::device_memory_bytes(t, d)   -> double       memory of device d; default +infinity
///
/// Each tries a member (`t.bandwidth_gbps(a, b)`), then an ADL free function. A square
/// `Eigen::MatrixXd` of bandwidths models `device_topology` as it is.
#include <concepts>
#include <cstddef>
#include <limits>

#include "devplace/cost/transfer.hpp"

namespace devplace {
namespace detail::topology_cpo {

void num_devices() = delete;
void bandwidth_gbps() = delete;
void latency_us() = delete;
void device_memory_bytes() = delete;

template <class T>
concept eigen_matrix_like = requires(const T& t, std::ptrdiff_t i) {
  { t.rows() } -> std::integral;
  { t.cols() } -> std::integral;
  { t(i, i) } -> std::convertible_to<double>;
};

template <class T>
concept member_num_devices = requires(const T& t) { { t.num_devices() } -> std::integral; };
template <class T>
concept adl_num_devices = requires(const T& t) { { num_devices(t) } -> std::integral; };

struct num_devices_fn {
  template <class T>
    requires member_num_devices<T> || adl_num_devices<T> || eigen_matrix_like<T>
  [[nodiscard]] constexpr std::size_t operator()(const T& t) const {
    if constexpr (member_num_devices<T>) return static_cast<std::size_t>(t.num_devices());
    else if constexpr (adl_num_devices<T>) return static_cast<std::size_t>(num_devices(t));
    else return static_cast<std::size_t>(t.rows());
  }
};

template <class T>
concept member_bandwidth = requires(const T& t, std::size_t a) { { t.bandwidth_gbps(a, a) } -> std::convertible_to<double>; };
template <class T>
concept adl_bandwidth = requires(const T& t, std::size_t a) { { bandwidth_gbps(t, a, a) } -> std::convertible_to<double>; };

struct bandwidth_gbps_fn {
  template <class T, std::integral I, std::integral J>
    requires member_bandwidth<T> || adl_bandwidth<T> || eigen_matrix_like<T>
  [[nodiscard]] constexpr double operator()(const T& t, I a, J b) const {
    const auto aa = static_cast<std::size_t>(a), bb = static_cast<std::size_t>(b);
    if constexpr (member_bandwidth<T>) return static_cast<double>(t.bandwidth_gbps(aa, bb));
    else if constexpr (adl_bandwidth<T>) return static_cast<double>(bandwidth_gbps(t, aa, bb));
    else return static_cast<double>(t(static_cast<std::ptrdiff_t>(aa), static_cast<std::ptrdiff_t>(bb)));
  }
};

template <class T>
concept member_latency = requires(const T& t, std::size_t a) { { t.latency_us(a, a) } -> std::convertible_to<double>; };
template <class T>
concept adl_latency = requires(const T& t, std::size_t a) { { latency_us(t, a, a) } -> std::convertible_to<double>; };

struct latency_us_fn {
  template <class T, std::integral I, std::integral J>
  [[nodiscard]] constexpr double operator()(const T& t, I a, J b) const {
    const auto aa = static_cast<std::size_t>(a), bb = static_cast<std::size_t>(b);
    if constexpr (member_latency<T>) return static_cast<double>(t.latency_us(aa, bb));
    else if constexpr (adl_latency<T>) return static_cast<double>(latency_us(t, aa, bb));
    else return 0.0;
  }
};

template <class T>
concept member_memory = requires(const T& t, std::size_t d) { { t.device_memory_bytes(d) } -> std::convertible_to<double>; };
template <class T>
concept adl_memory = requires(const T& t, std::size_t d) { { device_memory_bytes(t, d) } -> std::convertible_to<double>; };

struct device_memory_bytes_fn {
  template <class T, std::integral I>
  [[nodiscard]] constexpr double operator()(const T& t, I d) const {
    const auto dd = static_cast<std::size_t>(d);
    if constexpr (member_memory<T>) return static_cast<double>(t.device_memory_bytes(dd));
    else if constexpr (adl_memory<T>) return static_cast<double>(device_memory_bytes(t, dd));
    else return std::numeric_limits<double>::infinity();
  }
};

}  // namespace detail::topology_cpo

inline namespace cpo {
inline constexpr detail::topology_cpo::num_devices_fn num_devices{};
inline constexpr detail::topology_cpo::bandwidth_gbps_fn bandwidth_gbps{};
inline constexpr detail::topology_cpo::latency_us_fn latency_us{};
inline constexpr detail::topology_cpo::device_memory_bytes_fn device_memory_bytes{};
}  // namespace cpo

/// \concept device_topology
/// D devices with a point-to-point bandwidth between every ordered pair.
/// Valid expressions: `num_devices(t)` (O(1)), `bandwidth_gbps(t, a, b)` (O(1)),
/// `latency_us(t, a, b)` (O(1), 0 by default), `device_memory_bytes(t, d)` (O(1), +inf by default).
/// Semantic requirements: for a != b, bandwidth > 0 and finite; latency >= 0; memory > 0. The
/// diagonal is never read. Bandwidth need not be symmetric.
/// Models: `matrix_topology`, `Eigen::MatrixXd`. Archetype: test/archetypes/minimal_topology.hpp
template <class T>
concept device_topology = requires(const T& t, std::size_t a) {
  { devplace::num_devices(t) } -> std::same_as<std::size_t>;
  { devplace::bandwidth_gbps(t, a, a) } -> std::same_as<double>;
  { devplace::latency_us(t, a, a) } -> std::same_as<double>;
  { devplace::device_memory_bytes(t, a) } -> std::same_as<double>;
};

/// Milliseconds to move `bytes` from a to b: T(bytes) of cost/transfer.hpp, bytes / (bandwidth ·
/// 10^6) + latency / 1000 for bytes > 0, and 0 for an empty message.
template <device_topology T>
[[nodiscard]] double transfer_ms(const T& t, std::size_t a, std::size_t b, double bytes) {
  return transfer_time_ms(bytes, devplace::bandwidth_gbps(t, a, b), devplace::latency_us(t, a, b));
}

}  // namespace devplace
