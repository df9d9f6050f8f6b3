#pragma once
/// \file topology/matrix_topology.hpp
/// `matrix_topology`: an owning topology backed by Eigen matrices (bandwidth GB/s, latency us)
/// and per-device memory and names. Models `device_topology`.
#include <cmath>
#include <cstddef>
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

  /// D x D bandwidths (GB/s); latency defaults to 0, memory to `memory_bytes` on every device.
  /// Throws std::invalid_argument if the matrix is not square, an off-diagonal bandwidth is not
  /// a finite positive number, a latency is negative or not finite, or a memory is not positive.
  explicit matrix_topology(Eigen::MatrixXd bandwidth_gbps, double memory_bytes = 32.0 * (1ull << 30))
      : bandwidth_(std::move(bandwidth_gbps)),
        latency_(Eigen::MatrixXd::Zero(bandwidth_.rows(), bandwidth_.cols())),
        memory_(static_cast<std::size_t>(bandwidth_.rows()), memory_bytes) {
    validate();
  }
  matrix_topology(Eigen::MatrixXd bandwidth_gbps, Eigen::MatrixXd latency_us, std::vector<double> memory_bytes)
      : bandwidth_(std::move(bandwidth_gbps)), latency_(std::move(latency_us)), memory_(std::move(memory_bytes)) {
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
    return matrix_topology(std::move(bw), std::move(lat), std::move(mem));
  }
}

}  // namespace devplace
