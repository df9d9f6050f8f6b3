#pragma once
/// \file phaze/architecture.hpp
/// PHAZE's accelerator template (seed-phaze.md §1.2, Table 1; docs/phaze.md): tensor cores (TC,
/// a PE_x × PE_y MAC array), vector cores (VC, a lane of PE_vc = PE_x), fused TC+VC pairs, per-core
/// L2 buffers, a global buffer (glb) with bandwidth glb_bw, and off-chip HBM. The free dimensions
/// are {num_tc, num_vc, PE_x, PE_y, glb}; the others are derived:
///   num_fc = min(num_tc, num_vc)
///   L2_tc  = max(1 KiB, 2^(log2 PE_x + log2 PE_y − 6) KiB),  L2_vc = min(4 KiB, max(1 KiB, 2^(log2 PE_vc − 6) KiB))
///   glb_bw = 4096 words/cycle, or min(max(16 · max(PE_x, PE_y), 4), 4096) with a single core
/// The feasible set keeps a configuration when f · A_max ≤ area ≤ A_max, with f = 0 when num_tc = 1
/// or num_vc = 1 and `min_fraction` (0.3) otherwise; A_max is the TPUv4-like configuration's area.
/// Area is not modelled here (PHAZE uses Accelergy at 22 nm): it is read from a table, e.g. the
/// shipped `cores.json` (phaze/cores_json.hpp).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "devplace/config.hpp"

namespace devplace::phaze {

struct core_config {
  std::size_t num_tc = 1, num_vc = 1;
  std::size_t pe_x = 2, pe_y = 2;  ///< TC array; PE_vc = PE_x
  double glb_bytes = 0;
  double area = 0;  ///< in the area table's units (Accelergy's, ≈ µm²); 0 when unknown

  [[nodiscard]] std::size_t pe_vc() const noexcept { return pe_x; }
  [[nodiscard]] std::size_t fused_cores() const noexcept { return std::min(num_tc, num_vc); }
  [[nodiscard]] std::size_t macs_per_core() const noexcept { return pe_x * pe_y; }
  friend bool operator==(const core_config&, const core_config&) = default;
};

/// L2 of a tensor core in bytes: 2^(log2 PE_x + log2 PE_y − 6) KiB, at least 1 KiB.
[[nodiscard]] inline double l2_tensor_bytes(const core_config& c) {
  const int e = std::bit_width(c.pe_x) - 1 + std::bit_width(c.pe_y) - 1 - 6;
  return e <= 0 ? 1024.0 : 1024.0 * static_cast<double>(std::uint64_t{1} << e);
}
/// L2 of a vector core in bytes: the lane's 2^(log2 PE_vc − 6) KiB within [1, 4] KiB.
[[nodiscard]] inline double l2_vector_bytes(const core_config& c) {
  const int e = std::bit_width(c.pe_vc()) - 1 - 6;
  return e <= 0 ? 1024.0 : std::min(4096.0, 1024.0 * static_cast<double>(std::uint64_t{1} << e));
}
/// Global-buffer bandwidth in words per cycle for the cores of one type: 4096 for several cores,
/// min(max(16 · max(PE_x, PE_y), 4), 4096) for one.
[[nodiscard]] inline double glb_bandwidth_words(const core_config& c, std::size_t cores) {
  if (cores != 1) return 4096.0;
  return std::min(std::max(16.0 * static_cast<double>(std::max(c.pe_x, c.pe_y)), 4.0), 4096.0);
}

/// The TPUv4-like reference: eight 128×128 TCs, two 128-wide VCs, 128 MiB glb.
[[nodiscard]] inline core_config tpu_v4_like() { return {.num_tc = 8, .num_vc = 2, .pe_x = 128, .pe_y = 128, .glb_bytes = 128.0 * (1 << 20)}; }
/// PHAZE-Common (seed §6.1): {2, 512, 256, 256, 256}, glb 32 MiB.
[[nodiscard]] inline core_config phaze_common() { return {.num_tc = 2, .num_vc = 512, .pe_x = 256, .pe_y = 256, .glb_bytes = 32.0 * (1 << 20)}; }

/// Table 1's free dimensions, as PHAZE's code enumerates them (powers of two).
struct template_space {
  std::size_t max_cores = 4096;          ///< num_tc, num_vc ∈ {1, 2, …, max_cores}
  std::size_t min_pe = 2, max_pe = 256;  ///< PE_x, PE_y
  double min_glb_bytes = 2.0 * (1 << 20), max_glb_bytes = 128.0 * (1 << 20);  ///< the code starts at 2 MiB
};

/// Every candidate of the template (13 · 13 · 8 · 8 · 7 = 75,712 with the defaults), area 0.
template <int = 0>
[[nodiscard]] std::vector<core_config> enumerate_template(const template_space& s = {}) {
  DEVPLACE_EXPECTS(s.max_cores >= 1 && s.min_pe >= 1 && s.min_pe <= s.max_pe && s.min_glb_bytes > 0 &&
                       s.min_glb_bytes <= s.max_glb_bytes,
                   "phaze: enumerate_template: empty or invalid ranges");
  std::vector<core_config> out;
  for (std::size_t tc = 1; tc <= s.max_cores; tc *= 2)
    for (std::size_t vc = 1; vc <= s.max_cores; vc *= 2)
      for (std::size_t x = s.min_pe; x <= s.max_pe; x *= 2)
        for (std::size_t y = s.min_pe; y <= s.max_pe; y *= 2)
          for (double glb = s.min_glb_bytes; glb <= s.max_glb_bytes; glb *= 2)
            out.push_back({.num_tc = tc, .num_vc = vc, .pe_x = x, .pe_y = y, .glb_bytes = glb});
  return out;
}

/// Area lookup by the free dimensions (what Accelergy computed for PHAZE).
class area_table {
 public:
  void add(const core_config& c) { areas_[key(c)] = c.area; }
  /// The area of `c`, or a negative number when the table does not have it.
  [[nodiscard]] double area_of(const core_config& c) const {
    const auto it = areas_.find(key(c));
    return it == areas_.end() ? -1.0 : it->second;
  }
  [[nodiscard]] std::size_t size() const noexcept { return areas_.size(); }

 private:
  using key_t = std::tuple<std::size_t, std::size_t, std::size_t, std::size_t, double>;
  static key_t key(const core_config& c) { return {c.num_tc, c.num_vc, c.pe_x, c.pe_y, c.glb_bytes}; }
  std::map<key_t, double> areas_;
};

/// The area window of the feasible set.
struct area_window {
  double max_area = 0;        ///< A_max (the TPUv4-like area)
  double min_fraction = 0.3;  ///< f, waived when num_tc = 1 or num_vc = 1
  [[nodiscard]] bool admits(const core_config& c) const noexcept {
    const double lower = (c.num_tc == 1 || c.num_vc == 1) ? 0.0 : min_fraction * max_area;
    return c.area >= lower && c.area <= max_area;
  }
};

/// The feasible configurations: the template's candidates whose area the table knows and the
/// window admits, with their areas, in template order.
template <int = 0>
[[nodiscard]] std::vector<core_config> feasible_configurations(const area_table& areas, const area_window& w,
                                                                      const template_space& s = {}) {
  DEVPLACE_EXPECTS(w.max_area > 0, "phaze: area_window.max_area must be > 0");
  std::vector<core_config> out;
  for (auto c : enumerate_template(s)) {
    c.area = areas.area_of(c);
    if (c.area >= 0 && w.admits(c)) out.push_back(c);
  }
  return out;
}

}  // namespace devplace::phaze
