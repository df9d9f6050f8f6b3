#pragma once
/// \file llm/tiers.hpp
/// The network tiers of any `device_topology` (topology/concepts.hpp), for a `hardware` built on
/// a user's topology type. With b_1 > b_2 > … > b_T the distinct bandwidths between two different
/// devices, tier i groups the devices joined by links of at least b_i GB/s: its groups must be
/// cliques of one size g_i (every pair inside a group linked at >= b_i), and the sizes increase.
/// Tier i is {size g_i, bandwidth b_i, efficiency 1, latency: the largest latency_us of a pair
/// whose bandwidth is b_i}; set the efficiencies afterwards (they are measured, not topology).
///
///   hardware hw{.name = "my cluster", .gpu = h100, .tiers = llm::tiers_of(my_topology)};
///
/// A DGX-like cluster (NVLink inside nodes of 8, InfiniBand between them) gives two tiers;
/// a ring or a torus, whose farther devices are not linked directly, is refused.
/// O(T · D²) for D devices.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/llm/system.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace::llm {

namespace detail {

/// Group label of every device in the graph of links >= b (labels in order of first device).
template <class T>
std::vector<std::size_t> groups_at(const T& t, double b) {
  const std::size_t D = devplace::num_devices(t);
  std::vector<std::size_t> label(D, D);
  std::size_t next = 0;
  for (std::size_t s = 0; s < D; ++s) {
    if (label[s] != D) continue;
    std::vector<std::size_t> stack{s};
    label[s] = next;
    while (!stack.empty()) {
      const std::size_t a = stack.back();
      stack.pop_back();
      for (std::size_t c = 0; c < D; ++c)
        if (label[c] == D && c != a && devplace::bandwidth_gbps(t, a, c) >= b) label[c] = next, stack.push_back(c);
    }
    ++next;
  }
  return label;
}

}  // namespace detail

/// The tiers of `t` (see the file comment). Throws std::invalid_argument when `t` has fewer than
/// two devices, an asymmetric or non-positive bandwidth between two devices, or is not a
/// hierarchy of equal cliques.
template <device_topology T>
[[nodiscard]] std::vector<network_tier> tiers_of(const T& t) {
  const std::size_t D = devplace::num_devices(t);
  if (D < 2) throw std::invalid_argument("llm tiers_of: the topology needs at least two devices");
  std::vector<double> levels;
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b) {
      if (a == b) continue;
      const double x = devplace::bandwidth_gbps(t, a, b);
      if (!(x > 0))
        throw std::invalid_argument("llm tiers_of: devices " + std::to_string(a) + " and " + std::to_string(b) +
                                    " are not linked (bandwidth " + std::to_string(x) + "): not a hierarchy of tiers");
      if (x != devplace::bandwidth_gbps(t, b, a))
        throw std::invalid_argument("llm tiers_of: bandwidth " + std::to_string(a) + " -> " + std::to_string(b) +
                                    " differs from the way back");
      levels.push_back(x);
    }
  std::sort(levels.begin(), levels.end(), std::greater<>());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  std::vector<network_tier> tiers;
  for (double b : levels) {
    const auto label = detail::groups_at(t, b);
    std::vector<std::size_t> size(D, 0);
    for (auto l : label) ++size[l];
    network_tier tier{.name = "tier" + std::to_string(tiers.size()), .size = size[0], .bandwidth_gbps = b};
    for (std::size_t a = 0; a < D; ++a) {
      if (size[label[a]] != tier.size)
        throw std::invalid_argument("llm tiers_of: at " + std::to_string(b) + " GB/s the groups differ in size (" +
                                    std::to_string(tier.size) + " and " + std::to_string(size[label[a]]) + ")");
      for (std::size_t c = 0; c < D; ++c) {
        if (c == a || label[c] != label[a]) continue;
        const double x = devplace::bandwidth_gbps(t, a, c);
        if (x < b)
          throw std::invalid_argument("llm tiers_of: devices " + std::to_string(a) + " and " + std::to_string(c) +
                                      " share a group at " + std::to_string(b) + " GB/s but are linked at " + std::to_string(x));
        if (x == b) tier.latency_us = std::max(tier.latency_us, devplace::latency_us(t, a, c));
      }
    }
    tiers.push_back(std::move(tier));
  }
  return tiers;
}

}  // namespace devplace::llm
