#pragma once
/// \file topology/matrix_topology.hpp
/// `matrix_topology`: an owning topology backed by Eigen matrices (bandwidth GB/s, latency us)
/// and per-device memory and names, with optional nodes (servers whose devices share NICs:
/// `set_nodes`). Models `device_topology`.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/topology/concepts.hpp"

namespace devplace {

class matrix_topology {
 public:
  matrix_topology() = default;

  /// D x D bandwidths (GB/s); latency defaults to 0, memory to `mem_bytes` on every device.
  /// Throws std::invalid_argument if the matrix is not square, an off-diagonal bandwidth is not
  /// a finite positive number, a latency is negative or not finite, or a memory is not positive.
  explicit matrix_topology(Eigen::MatrixXd bw_gbps, double mem_bytes = 32.0 * (1ull << 30))
      : bandwidth_(std::move(bw_gbps)),
        latency_(Eigen::MatrixXd::Zero(bandwidth_.rows(), bandwidth_.cols())),
        memory_(static_cast<std::size_t>(bandwidth_.rows()), mem_bytes) {
    validate();
  }
  matrix_topology(Eigen::MatrixXd bw_gbps, Eigen::MatrixXd lat_us, std::vector<double> mem_bytes)
      : bandwidth_(std::move(bw_gbps)), latency_(std::move(lat_us)), memory_(std::move(mem_bytes)) {
    validate();
  }

  [[nodiscard]] std::size_t num_devices() const noexcept { return static_cast<std::size_t>(bandwidth_.rows()); }
  [[nodiscard]] double bandwidth_gbps(std::size_t a, std::size_t b) const noexcept {
    return bandwidth_(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b));
  }
  [[nodiscard]] double latency_us(std::size_t a, std::size_t b) const noexcept {
    return latency_(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b));
  }
  [[nodiscard]] double device_memory_bytes(std::size_t d) const noexcept { return memory_[d]; }

  /// The node of device d (d itself without node data), the NICs of node n and each NIC's
  /// bandwidth in GB/s (1 and +inf without node data).
  [[nodiscard]] std::size_t node_of(std::size_t d) const noexcept { return node_of_.empty() ? d : node_of_[d]; }
  [[nodiscard]] std::size_t nic_count(std::size_t n) const noexcept { return nics_.empty() ? 1 : nics_[n]; }
  [[nodiscard]] double nic_bandwidth_gbps(std::size_t n) const noexcept {
    return nic_gbps_.empty() ? std::numeric_limits<double>::infinity() : nic_gbps_[n];
  }
  [[nodiscard]] bool has_nodes() const noexcept { return !node_of_.empty(); }
  /// Groups the devices into nodes: `node_of[d]` < N for every device, and per node its NIC
  /// count (≥ 1) and per-NIC bandwidth (GB/s, > 0; +inf: no limit). Empty vectors remove the
  /// node data. Throws std::invalid_argument on a size mismatch or a bad entry.
  void set_nodes(std::vector<std::size_t> node_of, std::vector<std::size_t> nics, std::vector<double> nic_gbps) {
    if (node_of.empty() && nics.empty() && nic_gbps.empty()) {
      node_of_.clear(), nics_.clear(), nic_gbps_.clear();
      return;
    }
    if (node_of.size() != num_devices()) throw std::invalid_argument("nodes: one node per device");
    if (nics.size() != nic_gbps.size()) throw std::invalid_argument("nodes: one NIC count and one NIC bandwidth per node");
    for (std::size_t d = 0; d < node_of.size(); ++d)
      if (node_of[d] >= nics.size())
        throw std::invalid_argument("nodes: device " + std::to_string(d) + " is on node " + std::to_string(node_of[d]) +
                                    ", there are " + std::to_string(nics.size()));
    for (std::size_t n = 0; n < nics.size(); ++n)
      if (nics[n] == 0 || !(nic_gbps[n] > 0))
        throw std::invalid_argument("nodes: node " + std::to_string(n) + " needs at least one NIC of bandwidth > 0");
    node_of_ = std::move(node_of), nics_ = std::move(nics), nic_gbps_ = std::move(nic_gbps);
  }

  [[nodiscard]] const Eigen::MatrixXd& bandwidth_matrix() const noexcept { return bandwidth_; }
  [[nodiscard]] const Eigen::MatrixXd& latency_matrix() const noexcept { return latency_; }
  [[nodiscard]] const std::vector<double>& memory() const noexcept { return memory_; }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  /// Device labels (empty, or one per device).
  [[nodiscard]] const std::vector<std::string>& device_names() const noexcept { return device_names_; }
  void set_device_names(std::vector<std::string> names) {
    if (!names.empty() && names.size() != num_devices()) throw std::invalid_argument("device_names: one name per device");
    device_names_ = std::move(names);
  }

 private:
  void validate() const {
    const auto n = bandwidth_.rows();
    if (bandwidth_.cols() != n) throw std::invalid_argument("bandwidth matrix is not square");
    if (latency_.rows() != n || latency_.cols() != n) throw std::invalid_argument("latency matrix is not D x D");
    if (memory_.size() != static_cast<std::size_t>(n)) throw std::invalid_argument("memory: one entry per device");
    for (Eigen::Index j = 0; j < n; ++j)  // column-major order: 10^4 devices take 0.2 s, not 20
      for (Eigen::Index i = 0; i < n; ++i) {
        if (i == j) continue;
        const double b = bandwidth_(i, j), l = latency_(i, j);
        if (!std::isfinite(b) || b <= 0)
          throw std::invalid_argument("bandwidth [" + std::to_string(i) + "][" + std::to_string(j) +
                                      "] must be a finite number > 0");
        if (!std::isfinite(l) || l < 0)
          throw std::invalid_argument("latency [" + std::to_string(i) + "][" + std::to_string(j) +
                                      "] must be a finite number >= 0");
      }
    for (std::size_t d = 0; d < memory_.size(); ++d)
      if (!(memory_[d] > 0) || std::isnan(memory_[d]))
        throw std::invalid_argument("memory of device " + std::to_string(d) + " must be > 0");
  }

  Eigen::MatrixXd bandwidth_;
  Eigen::MatrixXd latency_;
  std::vector<double> memory_;
  std::vector<std::string> device_names_;
  std::string name_;
  std::vector<std::size_t> node_of_, nics_;
  std::vector<double> nic_gbps_;
};

/// Copies any `device_topology` into a `matrix_topology`, reading every entry through the
/// customisation points (bandwidth, latency, memory; the diagonal is never read and set to 0).
/// A `matrix_topology` is returned as it is. Throws std::invalid_argument as the constructor does.
template <device_topology T>
[[nodiscard]] matrix_topology to_matrix_topology(const T& t) {
  if constexpr (std::is_same_v<T, matrix_topology>) {
    return t;
  } else {
    const std::size_t D = devplace::num_devices(t);
    const auto n = static_cast<Eigen::Index>(D);
    Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(n, n), lat = Eigen::MatrixXd::Zero(n, n);
    std::vector<double> mem(D);
    for (std::size_t a = 0; a < D; ++a) {
      mem[a] = devplace::device_memory_bytes(t, a);
      for (std::size_t b = 0; b < D; ++b)
        if (a != b) {
          bw(Eigen::Index(a), Eigen::Index(b)) = devplace::bandwidth_gbps(t, a, b);
          lat(Eigen::Index(a), Eigen::Index(b)) = devplace::latency_us(t, a, b);
        }
    }
    matrix_topology out(std::move(bw), std::move(lat), std::move(mem));
    std::vector<std::size_t> node(D), nics;
    std::vector<double> gbps;
    bool limited = false;
    for (std::size_t d = 0; d < D; ++d) node[d] = devplace::node_of(t, d);
    const std::size_t N = D == 0 ? 0 : *std::max_element(node.begin(), node.end()) + 1;
    for (std::size_t k = 0; k < N; ++k) {
      nics.push_back(devplace::nic_count(t, k));
      gbps.push_back(devplace::nic_bandwidth_gbps(t, k));
      limited = limited || std::isfinite(gbps.back());
    }
    if (limited) out.set_nodes(std::move(node), std::move(nics), std::move(gbps));
    return out;
  }
}

}  // namespace devplace
