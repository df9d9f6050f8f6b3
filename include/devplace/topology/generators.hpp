#pragma once
/// \file topology/generators.hpp
/// Generators of the device topologies of the Parmesan experiments (seed-parmesan.md §9.1), as
/// `matrix_topology` values. Bandwidths are in GB/s (10^9 B/s); device ids are row-major over
/// `shape` (the last coordinate fastest); every generated matrix is symmetric.
///
/// | generator      | parameters (defaults)                               | bandwidth |
/// |----------------|-----------------------------------------------------|-----------|
/// | two_level      | shape [nodes, per_node] ([4, 4]), intra 11, inter 1.1 | intra inside a node, inter across |
/// | dgx1           | none                                                | NVLink count 2: 43.2, 1: 21.4, 0: PCIe 10.1 |
/// | dgx1_cluster   | shape [nodes] ([4]), inter 1.4                      | dgx1 inside a node, inter across |
/// | mesh2d, torus2d| shape [x, y]                                        | table IX by Manhattan (wrap-around) hops |
/// | mesh3d, torus3d| shape [x, y, z]                                     | table IX by hops |
/// | random_blk_1   | devices D, seed                                     | per-node intra U[1e-4, 1e-2] MB/us, inter 1e-4 MB/us |
/// | random_blk_2   | devices D, seed                                     | per-pair intra U[1e-5, 1e-2] MB/us, inter mean/10/|i-j| |
/// | uniform_dist   | devices D, seed                                     | every pair U[1e-5, 1e-2] MB/us |
///
/// Random values in MB/us are converted to GB/s with B[GB/s] = B[MB/us] / 0.001024 (the paper's
/// 1 GB/s = 1024/10^6 MB/us). Random generators use splitmix64 and their own conversion of 53
/// random bits to [0, 1), so the same seed gives the same matrix on every platform. Node sizes of
/// the random_blk families are drawn uniformly from {1..8} until they cover D (the last clipped).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/topology/device_limit.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace {

/// Parameters of a generator, as in the generator form of a `devplace.topology/1` document.
struct generator_spec {
  std::string generator;                ///< one of `generator_names()`
  std::vector<std::size_t> shape;       ///< empty: the generator's default
  std::optional<std::size_t> devices;   ///< random generators
  std::optional<std::uint64_t> seed;    ///< random generators
  std::optional<double> memory_bytes;   ///< memory of every device [32 GiB]
  std::optional<double> latency_us;     ///< latency of every pair [0]
  std::optional<double> intra_gbps;     ///< two_level
  std::optional<double> inter_gbps;     ///< two_level, dgx1_cluster
};

/// A bad generator parameter: `field()` names the parameter (as in the JSON document), `what()`
/// is the reason.
class spec_error : public std::invalid_argument {
 public:
  spec_error(std::string field, const std::string& reason) : std::invalid_argument(reason), field_(std::move(field)) {}
  [[nodiscard]] const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

/// The names accepted by `generate_topology`.
[[nodiscard]] inline const std::array<std::string_view, 10>& generator_names() noexcept {
  static constexpr std::array<std::string_view, 10> names{"two_level", "dgx1", "dgx1_cluster", "mesh2d", "torus2d",
                                                          "mesh3d", "torus3d", "random_blk_1", "random_blk_2",
                                                          "uniform_dist"};
  return names;
}

inline constexpr double default_device_memory_bytes = 34359738368.0;  // 32 GiB


/// Bandwidth in GB/s of a mesh/torus link spanning `hops` hops (Parmesan table IX; the printed
/// overlap at 31 resolved as 21–30 → 0.088, 31–51 → 0.078, ≥ 52 → 0.068).
[[nodiscard]] inline double hop_bandwidth_gbps(std::size_t hops) {
  static constexpr double table[] = {0,    78.1, 39.0, 24.4, 14.6, 9.77, 7.81, 5.86, 4.4,   2.93, 1.46,
                                     0.88, 0.78, 0.68, 0.59, 0.49, 0.39, 0.29, 0.19, 0.098, 0.098};
  if (hops == 0) throw std::invalid_argument("hop_bandwidth_gbps: hops must be >= 1");
  if (hops <= 20) return table[hops];
  if (hops <= 30) return 0.088;
  if (hops <= 51) return 0.078;
  return 0.068;
}

/// The DGX-1 NVLink-count matrix (8 V100s, hybrid cube-mesh; numbering of microsoft/msccl-tools
/// `dgx1()`): 16 linked pairs, 8 of them double, every row sums to 6.
[[nodiscard]] inline const std::array<std::array<int, 8>, 8>& dgx1_nvlink_counts() noexcept {
  static constexpr std::array<std::array<int, 8>, 8> links{{{0, 2, 1, 1, 2, 0, 0, 0},
                                                            {2, 0, 1, 2, 0, 1, 0, 0},
                                                            {1, 1, 0, 2, 0, 0, 2, 0},
                                                            {1, 2, 2, 0, 0, 0, 0, 1},
                                                            {2, 0, 0, 0, 0, 2, 1, 1},
                                                            {0, 1, 0, 0, 2, 0, 1, 2},
                                                            {0, 0, 2, 0, 1, 1, 0, 2},
                                                            {0, 0, 0, 1, 1, 2, 2, 0}}};
  return links;
}

namespace detail {

/// splitmix64: a tiny generator whose output is fully specified, hence identical everywhere.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) from the top 53 bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  /// Uniform integer in [lo, hi] (rejection sampling, no modulo bias).
  std::uint64_t integer(std::uint64_t lo, std::uint64_t hi) {
    const std::uint64_t span = hi - lo + 1;
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % span);
    std::uint64_t x;
    do x = next(); while (x >= limit);
    return lo + x % span;
  }

 private:
  std::uint64_t s_;
};

inline double mbus_to_gbps(double mb_per_us) { return mb_per_us / 0.001024; }

inline void check_positive(const char* field, double x) {
  if (!std::isfinite(x) || x <= 0) throw spec_error(field, std::string(field) + " must be a finite number > 0");
}

inline matrix_topology finish(Eigen::MatrixXd bw, std::string name, std::vector<std::string> device_names,
                              double memory_bytes, double latency_us) {
  check_positive("memory_bytes", memory_bytes);
  if (!std::isfinite(latency_us) || latency_us < 0)
    throw spec_error("latency_us", "latency_us must be a finite number >= 0");
  const auto n = bw.rows();
  for (Eigen::Index i = 0; i < n; ++i) bw(i, i) = 0;
  Eigen::MatrixXd lat = Eigen::MatrixXd::Constant(n, n, latency_us);
  for (Eigen::Index i = 0; i < n; ++i) lat(i, i) = 0;
  matrix_topology t(std::move(bw), std::move(lat), std::vector<double>(static_cast<std::size_t>(n), memory_bytes));
  t.set_name(std::move(name));
  t.set_device_names(std::move(device_names));
  return t;
}

/// Hop count between two row-major grid coordinates (Manhattan, or wrap-around for a torus).
inline std::size_t grid_hops(const std::vector<std::size_t>& shape, std::size_t a, std::size_t b, bool torus) {
  std::size_t hops = 0;
  for (std::size_t k = shape.size(); k-- > 0;) {
    const std::size_t n = shape[k], x = a % n, y = b % n;
    const std::size_t d = x > y ? x - y : y - x;
    hops += torus ? std::min(d, n - d) : d;
    a /= n;
    b /= n;
  }
  return hops;
}

inline matrix_topology grid(const std::vector<std::size_t>& shape, bool torus, const char* name,
                            double memory_bytes, double latency_us) {
  std::size_t n = 1;
  for (auto s : shape) n *= s;
  Eigen::MatrixXd bw(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  std::vector<std::string> names(n);
  for (std::size_t a = 0; a < n; ++a) {
    std::string label = "(";
    std::size_t rest = a;
    std::vector<std::size_t> coord(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
      coord[k] = rest % shape[k];
      rest /= shape[k];
    }
    for (std::size_t k = 0; k < coord.size(); ++k) label += (k ? "," : "") + std::to_string(coord[k]);
    names[a] = label + ")";
    for (std::size_t b = 0; b < n; ++b)
      bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) =
          a == b ? 0.0 : hop_bandwidth_gbps(grid_hops(shape, a, b, torus));
  }
  return finish(std::move(bw), name, std::move(names), memory_bytes, latency_us);
}

/// Node sizes for the random_blk families: uniform in {1..8} until they cover D, last clipped.
inline std::vector<std::size_t> random_node_sizes(splitmix64& rng, std::size_t devices) {
  std::vector<std::size_t> sizes;
  std::size_t sum = 0;
  while (sum < devices) {
    std::size_t b = static_cast<std::size_t>(rng.integer(1, 8));
    if (sum + b > devices) b = devices - sum;
    sizes.push_back(b);
    sum += b;
  }
  return sizes;
}

inline std::vector<std::string> node_device_names(const std::vector<std::size_t>& sizes, const char* what) {
  std::vector<std::string> names;
  for (std::size_t node = 0; node < sizes.size(); ++node)
    for (std::size_t k = 0; k < sizes[node]; ++k)
      names.push_back("node" + std::to_string(node) + "/" + what + std::to_string(k));
  return names;
}

}  // namespace detail

/// Two-level hierarchy: `nodes` nodes of `per_node` devices; `intra_gbps` inside a node (PCIe
/// 11 GB/s in the paper), `inter_gbps` across nodes (Ethernet 1.1 GB/s).
[[nodiscard]] inline matrix_topology two_level(std::size_t nodes = 4, std::size_t per_node = 4, double intra_gbps = 11.0,
                                               double inter_gbps = 1.1,
                                               double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  if (nodes == 0 || per_node == 0) throw spec_error("shape", "two_level needs shape [nodes, devices_per_node] >= 1");
  detail::check_positive("intra_gbps", intra_gbps);
  detail::check_positive("inter_gbps", inter_gbps);
  const std::size_t n = nodes * per_node;
  Eigen::MatrixXd bw(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = a / per_node == b / per_node ? intra_gbps : inter_gbps;
  return detail::finish(std::move(bw), "two_level", detail::node_device_names(std::vector<std::size_t>(nodes, per_node), "gpu"),
                        mem_bytes, lat_us);
}

/// A cluster of `nodes` DGX-1 boxes: NVLink double 43.2, single 21.4, PCIe 10.1 GB/s inside a
/// node, `inter_gbps` (1.4) across nodes. Device i is GPU i mod 8 of node i / 8.
[[nodiscard]] inline matrix_topology dgx1_cluster(std::size_t nodes = 4, double inter_gbps = 1.4,
                                                  double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  if (nodes == 0) throw spec_error("shape", "dgx1_cluster needs shape [nodes] with nodes >= 1");
  detail::check_positive("inter_gbps", inter_gbps);
  const std::size_t n = nodes * 8;
  const auto& links = dgx1_nvlink_counts();
  constexpr double by_links[3] = {10.1, 21.4, 43.2};
  Eigen::MatrixXd bw(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) =
          a / 8 == b / 8 ? by_links[links[a % 8][b % 8]] : inter_gbps;
  auto t = detail::finish(std::move(bw), nodes == 1 ? "dgx1" : "dgx1_cluster",
                          detail::node_device_names(std::vector<std::size_t>(nodes, 8), "gpu"), mem_bytes, lat_us);
  return t;
}

/// One DGX-1 (8 V100s).
[[nodiscard]] inline matrix_topology dgx1(double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  return dgx1_cluster(1, 1.4, mem_bytes, lat_us);
}

[[nodiscard]] inline matrix_topology mesh2d(std::size_t x, std::size_t y, double mem_bytes = default_device_memory_bytes,
                                            double lat_us = 0) {
  if (x == 0 || y == 0) throw spec_error("shape", "mesh2d needs shape [x, y] with x, y >= 1");
  return detail::grid({x, y}, false, "mesh2d", mem_bytes, lat_us);
}
[[nodiscard]] inline matrix_topology torus2d(std::size_t x, std::size_t y, double mem_bytes = default_device_memory_bytes,
                                             double lat_us = 0) {
  if (x == 0 || y == 0) throw spec_error("shape", "torus2d needs shape [x, y] with x, y >= 1");
  return detail::grid({x, y}, true, "torus2d", mem_bytes, lat_us);
}
[[nodiscard]] inline matrix_topology mesh3d(std::size_t x, std::size_t y, std::size_t z,
                                            double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  if (x == 0 || y == 0 || z == 0) throw spec_error("shape", "mesh3d needs shape [x, y, z] with x, y, z >= 1");
  return detail::grid({x, y, z}, false, "mesh3d", mem_bytes, lat_us);
}
[[nodiscard]] inline matrix_topology torus3d(std::size_t x, std::size_t y, std::size_t z,
                                             double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  if (x == 0 || y == 0 || z == 0) throw spec_error("shape", "torus3d needs shape [x, y, z] with x, y, z >= 1");
  return detail::grid({x, y, z}, true, "torus3d", mem_bytes, lat_us);
}

/// random_blk_1: nodes of random size; one intra-node bandwidth per node from U[1e-4, 1e-2]
/// MB/us; every inter-node pair 1e-4 MB/us.
[[nodiscard]] inline matrix_topology random_blk_1(std::size_t devices, std::uint64_t seed,
                                                  double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  if (devices == 0) throw spec_error("devices", "random_blk_1 needs devices >= 1");
  detail::splitmix64 rng(seed);
  const auto sizes = detail::random_node_sizes(rng, devices);
  std::vector<double> intra(sizes.size());
  for (auto& b : intra) b = rng.uniform(1e-4, 1e-2);
  std::vector<std::size_t> device_node;
  for (std::size_t k = 0; k < sizes.size(); ++k) device_node.insert(device_node.end(), sizes[k], k);
  const auto n = static_cast<Eigen::Index>(devices);
  Eigen::MatrixXd bw(n, n);
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index b = 0; b < n; ++b) {
      const auto na = device_node[static_cast<std::size_t>(a)], nb = device_node[static_cast<std::size_t>(b)];
      bw(a, b) = detail::mbus_to_gbps(na == nb ? intra[na] : 1e-4);
    }
  return detail::finish(std::move(bw), "random_blk_1", detail::node_device_names(sizes, "dev"), mem_bytes, lat_us);
}

/// random_blk_2: nodes of random size; every intra-node pair from U[1e-5, 1e-2] MB/us; nodes i
/// and j connected at (mean intra-node bandwidth / 10) / |i - j|.
[[nodiscard]] inline matrix_topology random_blk_2(std::size_t devices, std::uint64_t seed,
                                                  double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  if (devices == 0) throw spec_error("devices", "random_blk_2 needs devices >= 1");
  detail::splitmix64 rng(seed);
  const auto sizes = detail::random_node_sizes(rng, devices);
  std::vector<std::size_t> device_node;
  for (std::size_t k = 0; k < sizes.size(); ++k) device_node.insert(device_node.end(), sizes[k], k);
  const auto n = static_cast<Eigen::Index>(devices);
  Eigen::MatrixXd mbus = Eigen::MatrixXd::Zero(n, n);
  double sum = 0;
  std::size_t count = 0;
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index b = a + 1; b < n; ++b)
      if (device_node[static_cast<std::size_t>(a)] == device_node[static_cast<std::size_t>(b)]) {
        mbus(a, b) = mbus(b, a) = rng.uniform(1e-5, 1e-2);
        sum += mbus(a, b);
        ++count;
      }
  const double inter = (count ? sum / static_cast<double>(count) : 1e-2) / 10.0;  // no pair: U's upper end
  Eigen::MatrixXd bw(n, n);
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index b = 0; b < n; ++b) {
      const auto na = device_node[static_cast<std::size_t>(a)], nb = device_node[static_cast<std::size_t>(b)];
      const double gap = static_cast<double>(na > nb ? na - nb : nb - na);
      bw(a, b) = detail::mbus_to_gbps(na == nb ? mbus(a, b) : inter / gap);
    }
  return detail::finish(std::move(bw), "random_blk_2", detail::node_device_names(sizes, "dev"), mem_bytes, lat_us);
}

/// uniform_dist: every pair from U[1e-5, 1e-2] MB/us.
[[nodiscard]] inline matrix_topology uniform_dist(std::size_t devices, std::uint64_t seed,
                                                  double mem_bytes = default_device_memory_bytes, double lat_us = 0) {
  if (devices == 0) throw spec_error("devices", "uniform_dist needs devices >= 1");
  detail::splitmix64 rng(seed);
  const auto n = static_cast<Eigen::Index>(devices);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index b = a + 1; b < n; ++b) bw(a, b) = bw(b, a) = detail::mbus_to_gbps(rng.uniform(1e-5, 1e-2));
  std::vector<std::string> names;
  for (std::size_t d = 0; d < devices; ++d) names.push_back("dev" + std::to_string(d));
  return detail::finish(std::move(bw), "uniform_dist", std::move(names), mem_bytes, lat_us);
}

/// Expands a generator specification. Throws `spec_error` naming the offending field.
[[nodiscard]] inline matrix_topology generate_topology(const generator_spec& s, const device_limit& limit = {}) {
  const std::size_t cap = std::min(limit.max, max_generated_devices);
  const double mem = s.memory_bytes.value_or(default_device_memory_bytes);
  const double lat = s.latency_us.value_or(0.0);
  if (s.memory_bytes) detail::check_positive("memory_bytes", mem);
  auto shape_of = [&](std::size_t arity, std::vector<std::size_t> dflt, const char* form) {
    if (s.shape.empty() && !dflt.empty()) return dflt;
    if (s.shape.size() != arity)
      throw spec_error("shape", s.generator + " needs shape " + form + " (" + std::to_string(arity) +
                                    (arity == 1 ? " entry" : " entries") + "), got " + std::to_string(s.shape.size()));
    return s.shape;
  };
  auto random_args = [&]() {
    if (!s.devices) throw spec_error("devices", s.generator + " needs devices");
    if (!s.seed) throw spec_error("seed", s.generator + " needs seed");
    return std::pair{*s.devices, *s.seed};
  };
  auto unused = [&](bool used_shape, bool used_random, bool used_intra, bool used_inter) {
    if (!used_shape && !s.shape.empty()) throw spec_error("shape", s.generator + " takes no shape");
    if (!used_random && s.devices) throw spec_error("devices", s.generator + " takes no devices (its size is fixed by shape)");
    if (!used_intra && s.intra_gbps) throw spec_error("intra_gbps", s.generator + " takes no intra_gbps");
    if (!used_inter && s.inter_gbps) throw spec_error("inter_gbps", s.generator + " takes no inter_gbps");
  };
  const std::string& g = s.generator;
  auto capped = [&](std::vector<std::size_t> sh, std::size_t per_entry, const char* field) {
    std::size_t n = per_entry;
    bool over = false;  // n is then only a lower bound of the product
    for (auto x : sh) {
      if (x != 0 && n > max_generated_devices / x) n = max_generated_devices + 1, over = true;
      else n *= x;
    }
    if (n > cap) {
      if (cap == max_generated_devices && limit.reason.empty())
        throw spec_error(field, g + " would have more than " + std::to_string(max_generated_devices) + " devices");
      throw spec_error(field, g + " would have " + device_limit{cap, limit.reason}.message(over ? cap : n, !over));
    }
    return sh;
  };
  if (g == "two_level") {
    unused(true, false, true, true);
    const auto sh = capped(shape_of(2, {4, 4}, "[nodes, devices_per_node]"), 1, "shape");
    return two_level(sh[0], sh[1], s.intra_gbps.value_or(11.0), s.inter_gbps.value_or(1.1), mem, lat);
  }
  if (g == "dgx1") {
    unused(false, false, false, false);
    return dgx1(mem, lat);
  }
  if (g == "dgx1_cluster") {
    unused(true, false, false, true);
    const auto sh = capped(shape_of(1, {4}, "[nodes]"), 8, "shape");
    return dgx1_cluster(sh[0], s.inter_gbps.value_or(1.4), mem, lat);
  }
  if (g == "mesh2d" || g == "torus2d") {
    unused(true, false, false, false);
    const auto sh = capped(shape_of(2, {}, "[x, y]"), 1, "shape");
    return g == "mesh2d" ? mesh2d(sh[0], sh[1], mem, lat) : torus2d(sh[0], sh[1], mem, lat);
  }
  if (g == "mesh3d" || g == "torus3d") {
    unused(true, false, false, false);
    const auto sh = capped(shape_of(3, {}, "[x, y, z]"), 1, "shape");
    return g == "mesh3d" ? mesh3d(sh[0], sh[1], sh[2], mem, lat) : torus3d(sh[0], sh[1], sh[2], mem, lat);
  }
  if (g == "random_blk_1" || g == "random_blk_2" || g == "uniform_dist") {
    unused(false, true, false, false);
    const auto [d, seed] = random_args();
    (void)capped({d}, 1, "devices");
    if (g == "random_blk_1") return random_blk_1(d, seed, mem, lat);
    if (g == "random_blk_2") return random_blk_2(d, seed, mem, lat);
    return uniform_dist(d, seed, mem, lat);
  }
  std::string list;
  for (auto name : generator_names()) list += (list.empty() ? "" : ", ") + std::string(name);
  throw spec_error("generator", "unknown generator '" + g + "' (expected one of " + list + ")");
}

}  // namespace devplace
