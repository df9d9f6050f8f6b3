#pragma once
/// \file mcm/topology.hpp
/// `chip_topology`: a directed, possibly partly connected topology of chiplets (a link
/// bandwidth matrix where 0 means "no link"), with hop-shortest routes, and the one-way ring of
/// the MCM paper (links k -> k+1 only; traffic from chip a to chip b > a crosses links a .. b-1).
///
/// `matrix_topology` (topology/) requires every pair of devices to be reachable; an MCM ring
/// is not (nothing flows from a higher chip to a lower one), hence this separate type.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/topology/concepts.hpp"

namespace devplace::mcm {

class chip_topology {
 public:
  chip_topology() = default;

  /// `gbps[a][b]` is the bandwidth of the link a -> b in GB/s (1 GB/s = 1e6 bytes per ms), 0 when
  /// there is none; `sram_bytes` the memory of each chip. Throws std::invalid_argument on a non
  /// square matrix, a negative or non-finite entry, a self-link, or a non-positive memory.
  template <int = 0>
  chip_topology(std::vector<std::vector<double>> gbps, double sram_bytes) : gbps_(std::move(gbps)), sram_(sram_bytes) {
    const std::size_t C = gbps_.size();
    if (C == 0) throw std::invalid_argument("mcm::chip_topology: no chips");
    if (!(sram_bytes > 0)) throw std::invalid_argument("mcm::chip_topology: sram_bytes must be > 0");
    for (std::size_t a = 0; a < C; ++a) {
      if (gbps_[a].size() != C) throw std::invalid_argument("mcm::chip_topology: the bandwidth matrix is not square");
      for (std::size_t b = 0; b < C; ++b) {
        const double x = gbps_[a][b];
        if (!(x >= 0) || x == std::numeric_limits<double>::infinity())
          throw std::invalid_argument("mcm::chip_topology: bandwidth " + std::to_string(a) + " -> " + std::to_string(b) +
                                      " must be a finite number >= 0");
        if (a == b && x != 0) throw std::invalid_argument("mcm::chip_topology: self-link on chip " + std::to_string(a));
      }
    }
    routes();
  }

  [[nodiscard]] std::size_t chips() const noexcept { return gbps_.size(); }
  [[nodiscard]] double sram_bytes() const noexcept { return sram_; }
  /// Bandwidth of the link a -> b in GB/s, 0 when there is no link.
  [[nodiscard]] double link_gbps(std::size_t a, std::size_t b) const noexcept { return gbps_[a][b]; }
  [[nodiscard]] bool reachable(std::size_t a, std::size_t b) const noexcept { return a == b || next_[a][b] != npos; }
  /// The links (x, y) of the hop-shortest route a ~> b (lowest next chip on ties); empty when
  /// a == b or b is unreachable.
  template <int = 0>
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> route(std::size_t a, std::size_t b) const {
    std::vector<std::pair<std::size_t, std::size_t>> r;
    if (!reachable(a, b)) return r;
    for (std::size_t x = a; x != b; x = next_[x][b]) r.emplace_back(x, next_[x][b]);
    return r;
  }

 private:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  template <int = 0>
  void routes() {
    const std::size_t C = gbps_.size();
    next_.assign(C, std::vector<std::size_t>(C, npos));
    for (std::size_t b = 0; b < C; ++b) {  // BFS backwards from b
      std::vector<std::size_t> dist(C, npos), q{b};
      dist[b] = 0;
      for (std::size_t h = 0; h < q.size(); ++h) {
        const std::size_t y = q[h];
        for (std::size_t x = 0; x < C; ++x)
          if (gbps_[x][y] > 0 && dist[x] == npos) dist[x] = dist[y] + 1, next_[x][b] = y, q.push_back(x);
      }
    }
  }
  std::vector<std::vector<double>> gbps_;
  std::vector<std::vector<std::size_t>> next_;
  double sram_ = 0;
};

/// The paper's package: C chips on a one-way ring, links k -> k+1 of `link_gbps` each (the
/// wrap-around link is never used under eq. 2 and is left out). Defaults: seed-mcm §6 A8.
template <int = 0>
[[nodiscard]] chip_topology one_way_ring(std::size_t chips = 36, double sram_bytes = 32.0 * 1024 * 1024,
                                         double link_gbps = 20.0) {
  if (chips == 0) throw std::invalid_argument("mcm::one_way_ring: chips must be >= 1");
  if (!(link_gbps > 0)) throw std::invalid_argument("mcm::one_way_ring: link_gbps must be > 0");
  std::vector<std::vector<double>> m(chips, std::vector<double>(chips, 0.0));
  for (std::size_t k = 0; k + 1 < chips; ++k) m[k][k + 1] = link_gbps;
  return chip_topology(std::move(m), sram_bytes);
}

/// Any `device_topology` (topology/concepts.hpp) as a chip topology: the link a -> b has
/// `bandwidth_gbps(t, a, b)` (0: no link, as on a one-way ring), every chip the smallest
/// `device_memory_bytes` of the devices as its SRAM; latencies are not part of the MCM model.
/// Throws std::invalid_argument as the `chip_topology` constructor does (e.g. no devices, a
/// negative bandwidth, or memory left at its +infinity default: give `device_memory_bytes`).
template <device_topology T>
[[nodiscard]] chip_topology to_chip_topology(const T& t) {
  const std::size_t C = devplace::num_devices(t);
  std::vector<std::vector<double>> gbps(C, std::vector<double>(C, 0.0));
  double sram = std::numeric_limits<double>::infinity();
  for (std::size_t a = 0; a < C; ++a) {
    sram = std::min(sram, devplace::device_memory_bytes(t, a));
    for (std::size_t b = 0; b < C; ++b)
      if (a != b) gbps[a][b] = devplace::bandwidth_gbps(t, a, b);
  }
  if (!(sram < std::numeric_limits<double>::infinity()))
    throw std::invalid_argument("mcm::to_chip_topology: the topology gives no finite device_memory_bytes (the chips' SRAM)");
  return chip_topology(std::move(gbps), sram);
}

}  // namespace devplace::mcm
