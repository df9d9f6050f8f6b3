#pragma once
/// \file dfmodel/system.hpp
/// A DFModel system (seed-dfmodel.md §1.1, §1.5): identical accelerators (cores of a systolic
/// array, SRAM), their DRAM, the composed network, and the unit prices and powers of the cost
/// model. `system_cost` and `system_power` follow the authors' formulas: DRAM and accelerators per
/// chip, links (free for one chip) and switches (free up to four chips) per dimension, each
/// priced per GB/s of the dimension's link bandwidth.
#include <array>
#include <cstddef>
#include <stdexcept>

#include "devplace/dfmodel/concepts.hpp"
#include "devplace/dfmodel/network.hpp"

namespace devplace::dfmodel {

struct accelerator {
  double cores = 640;                  ///< compute tiles (PCUs)
  double systolic_width = 32, systolic_height = 6;
  double freq_ghz = 1.25;
  double sram_bytes = 335544320;       ///< on-chip SRAM
  /// Peak GFLOP/s: 2 · width · height · cores · freq.
  [[nodiscard]] double gflops() const noexcept { return 2 * systolic_width * systolic_height * cores * freq_ghz; }
};

struct memory_spec {
  double dram_gbps = 100;              ///< DRAM bandwidth (GB/s = bytes/ns)
  double dram_bytes = 0;               ///< DRAM capacity; 0 = unbounded
};

struct cost_model {
  double link_unit_price = 2, switch_unit_price = 24, dram_unit_price = 1, accelerator_price = 0;
  std::array<double, 3> link_unit_power{0.052, 0.052, 0.052};  ///< per dimension x, y, z
  double switch_unit_power = 0.052, dram_unit_power = 0, accelerator_power = 0;
};

struct system {
  accelerator acc;
  memory_spec mem;
  network net;
  cost_model cost;
};

/// A system on any `network_model` (dfmodel/concepts.hpp): its `to_network` copy, checked with
/// `check_system`.
template <network_model N>
[[nodiscard]] system make_system(const N& net, const accelerator& acc = {}, const memory_spec& mem = {},
                                 const cost_model& cost = {});

/// Throws std::invalid_argument on non-positive sizes, bandwidths or frequency, negative prices.
inline void check_system(const system& s) {
  auto pos = [](double x) { return x > 0 && x < 1e300; };
  if (!pos(s.acc.cores) || !pos(s.acc.systolic_width) || !pos(s.acc.systolic_height) || !pos(s.acc.freq_ghz) ||
      !pos(s.acc.sram_bytes))
    throw std::invalid_argument("dfmodel system: accelerator cores, systolic sizes, frequency and SRAM must be > 0");
  if (!pos(s.mem.dram_gbps) || !(s.mem.dram_bytes >= 0))
    throw std::invalid_argument("dfmodel system: DRAM bandwidth > 0 and capacity >= 0");
  const auto& c = s.cost;
  for (double x : {c.link_unit_price, c.switch_unit_price, c.dram_unit_price, c.accelerator_price, c.switch_unit_power,
                   c.dram_unit_power, c.accelerator_power, c.link_unit_power[0], c.link_unit_power[1], c.link_unit_power[2]})
    if (!(x >= 0)) throw std::invalid_argument("dfmodel system: prices and powers must be >= 0");
  check_network(s.net);
}

template <network_model N>
system make_system(const N& net, const accelerator& acc, const memory_spec& mem, const cost_model& cost) {
  system s{acc, mem, to_network(net), cost};
  check_system(s);
  return s;
}

namespace detail {
inline double network_term(const system& s, bool power) {
  const auto u = cost_units(s.net);
  const double N = static_cast<double>(num_chips(s.net));
  double links = 0, switches = 0;
  for (std::size_t d = 0; d < s.net.dims.size(); ++d) {
    const double bw = s.net.dims[d].link_gbps;
    links += u.links[d] * bw * (power ? s.cost.link_unit_power[d] : s.cost.link_unit_price);
    switches += u.switches[d] * bw * (power ? s.cost.switch_unit_power : s.cost.switch_unit_price);
  }
  return (N >= 2 ? links : 0.0) + (N >= 5 ? switches : 0.0);
}
}  // namespace detail

/// Dollars: chips · (DRAM GB/s · dram price + accelerator price) + links + switches.
[[nodiscard]] inline double system_cost(const system& s) {
  check_system(s);
  const double N = static_cast<double>(num_chips(s.net));
  return N * s.mem.dram_gbps * s.cost.dram_unit_price + N * s.cost.accelerator_price + detail::network_term(s, false);
}

/// Watts, the same way with the unit powers.
[[nodiscard]] inline double system_power(const system& s) {
  check_system(s);
  const double N = static_cast<double>(num_chips(s.net));
  return N * s.mem.dram_gbps * s.cost.dram_unit_power + N * s.cost.accelerator_power + detail::network_term(s, true);
}

}  // namespace devplace::dfmodel
