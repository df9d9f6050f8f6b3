#pragma once
/// \file topology/concepts.hpp
/// The device-topology customisation points and the `device_topology` concept.
///
///   devplace::num_devices(t)              -> std::size_t  number of devices D, ids 0 .. D-1
///   devplace::bandwidth_gbps(t, a, b)     -> double       point-to-point bandwidth a -> b, GB/s (10^9 B/s)
///   devplace::latency_us(t, a, b)         -> double       per-message latency a -> b in us; default 0
///   devplace::device_memory_bytes(t, d)   -> double       memory of device d; default +infinity
///   devplace::node_of(t, d)               -> std::size_t  the node (server) holding device d; default d
///   devplace::nic_count(t, n)             -> std::size_t  NICs of node n; default 1
///   devplace::nic_bandwidth_gbps(t, n)    -> double       bandwidth of each NIC of node n, GB/s; default +infinity
///
/// The node points describe network tiers shared by the devices of a server: a transfer between
/// devices of different nodes also passes an egress NIC of the sender's node and an ingress NIC
/// of the receiver's, which the transfers of all the node's devices share (the pipeline
/// simulator, sim/pipeline_simulator.hpp, serialises them per NIC). With the defaults every
/// device is its own node behind a NIC of infinite bandwidth: independent pairwise links.
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
void node_of() = delete;
void nic_count() = delete;
void nic_bandwidth_gbps() = delete;

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

template <class T>
concept member_node_of = requires(const T& t, std::size_t d) { { t.node_of(d) } -> std::integral; };
template <class T>
concept adl_node_of = requires(const T& t, std::size_t d) { { node_of(t, d) } -> std::integral; };

struct node_of_fn {
  template <class T, std::integral I>
  [[nodiscard]] constexpr std::size_t operator()(const T& t, I d) const {
    const auto dd = static_cast<std::size_t>(d);
    if constexpr (member_node_of<T>) return static_cast<std::size_t>(t.node_of(dd));
    else if constexpr (adl_node_of<T>) return static_cast<std::size_t>(node_of(t, dd));
    else return dd;
  }
};

template <class T>
concept member_nic_count = requires(const T& t, std::size_t n) { { t.nic_count(n) } -> std::integral; };
template <class T>
concept adl_nic_count = requires(const T& t, std::size_t n) { { nic_count(t, n) } -> std::integral; };

struct nic_count_fn {
  template <class T, std::integral I>
  [[nodiscard]] constexpr std::size_t operator()(const T& t, I n) const {
    const auto nn = static_cast<std::size_t>(n);
    if constexpr (member_nic_count<T>) return static_cast<std::size_t>(t.nic_count(nn));
    else if constexpr (adl_nic_count<T>) return static_cast<std::size_t>(nic_count(t, nn));
    else return 1;
  }
};

template <class T>
concept member_nic_bandwidth = requires(const T& t, std::size_t n) { { t.nic_bandwidth_gbps(n) } -> std::convertible_to<double>; };
template <class T>
concept adl_nic_bandwidth = requires(const T& t, std::size_t n) { { nic_bandwidth_gbps(t, n) } -> std::convertible_to<double>; };

struct nic_bandwidth_gbps_fn {
  template <class T, std::integral I>
  [[nodiscard]] constexpr double operator()(const T& t, I n) const {
    const auto nn = static_cast<std::size_t>(n);
    if constexpr (member_nic_bandwidth<T>) return static_cast<double>(t.nic_bandwidth_gbps(nn));
    else if constexpr (adl_nic_bandwidth<T>) return static_cast<double>(nic_bandwidth_gbps(t, nn));
    else return std::numeric_limits<double>::infinity();
  }
};

}  // namespace detail::topology_cpo

inline namespace cpo {
inline constexpr detail::topology_cpo::num_devices_fn num_devices{};
inline constexpr detail::topology_cpo::bandwidth_gbps_fn bandwidth_gbps{};
inline constexpr detail::topology_cpo::latency_us_fn latency_us{};
inline constexpr detail::topology_cpo::device_memory_bytes_fn device_memory_bytes{};
inline constexpr detail::topology_cpo::node_of_fn node_of{};
inline constexpr detail::topology_cpo::nic_count_fn nic_count{};
inline constexpr detail::topology_cpo::nic_bandwidth_gbps_fn nic_bandwidth_gbps{};
}  // namespace cpo

/// \concept device_topology
/// D devices with a point-to-point bandwidth between every ordered pair.
/// Valid expressions: `num_devices(t)` (O(1)), `bandwidth_gbps(t, a, b)` (O(1)),
/// `latency_us(t, a, b)` (O(1), 0 by default), `device_memory_bytes(t, d)` (O(1), +inf by default),
/// `node_of(t, d)`, `nic_count(t, n)`, `nic_bandwidth_gbps(t, n)` (O(1); d, 1 and +inf by default).
/// Semantic requirements: for a != b, bandwidth > 0 and finite; latency >= 0; memory > 0. The
/// diagonal is never read. Bandwidth need not be symmetric. Nodes are numbered 0 .. N−1 with N − 1
/// the largest `node_of`; every node has ≥ 1 NIC of bandwidth > 0.
/// Models: `matrix_topology`, `Eigen::MatrixXd`. Archetypes: test/archetypes/minimal_topology.hpp,
/// test/archetypes/node_topology.hpp (with nodes).
template <class T>
concept device_topology = requires(const T& t, std::size_t a) {
  { devplace::num_devices(t) } -> std::same_as<std::size_t>;
  { devplace::bandwidth_gbps(t, a, a) } -> std::same_as<double>;
  { devplace::latency_us(t, a, a) } -> std::same_as<double>;
  { devplace::device_memory_bytes(t, a) } -> std::same_as<double>;
  { devplace::node_of(t, a) } -> std::same_as<std::size_t>;
  { devplace::nic_count(t, a) } -> std::same_as<std::size_t>;
  { devplace::nic_bandwidth_gbps(t, a) } -> std::same_as<double>;
};

/// Milliseconds to move `bytes` from a to b: T(bytes) of cost/transfer.hpp, bytes / (bandwidth ·
/// 10^6) + latency / 1000 for bytes > 0, and 0 for an empty message.
template <device_topology T>
[[nodiscard]] double transfer_ms(const T& t, std::size_t a, std::size_t b, double bytes) {
  return transfer_time_ms(bytes, devplace::bandwidth_gbps(t, a, b), devplace::latency_us(t, a, b));
}

}  // namespace devplace
