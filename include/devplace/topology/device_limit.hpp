#pragma once
/// \file topology/device_limit.hpp
/// The cap on the devices of a topology being generated or read (`generate_topology`,
/// `read_topology_json`) and the mapper's own, lower one: a value type with no dependency, so that
/// algorithm headers name it without including the generators.
#include <cstddef>
#include <string>
#include <string_view>

namespace devplace {

/// The most devices `generate_topology` builds (its matrices take 16 D^2 bytes: 4 GiB at the cap);
/// a larger shape or device count is a `spec_error`, never an overflowing product or a huge allocation.
inline constexpr std::size_t max_generated_devices = 16384;

/// A lower cap on the devices of a topology being generated or read, and what imposes it (said in
/// the error): `devplace map` and `plan` read with the mapper's limit (map/mapper.hpp), so that a
/// topology too large for them is rejected before its D x D matrices are built.
struct device_limit {
  std::size_t max = max_generated_devices;
  std::string_view reason;  ///< appended to the error, e.g. "the limit of devplace map"

  /// "N devices, more than the limit of M (reason)"; without an exact N (an overflowing shape),
  /// "more than the limit of M devices (reason)".
  [[nodiscard]] std::string message(std::size_t devices, bool exact) const {
    std::string m = exact ? std::to_string(devices) + " devices, more than the limit of " + std::to_string(max)
                          : "more than the limit of " + std::to_string(max) + " devices";
    if (!reason.empty()) m += " (" + std::string(reason) + ")";
    return m;
  }
};

}  // namespace devplace
