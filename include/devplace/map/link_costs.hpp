#pragma once
/// \file map/link_costs.hpp
/// The link tables of device mapping, built once per topology: `link_costs` (dense ms per byte and
/// latency of every device pair, each device's links sorted from the fastest) and
/// `bottleneck_walks` (the least possible slowest link of a walk of h links, for the ring-closure
/// bounds). Every cost model (map/cost_models.hpp), bound and search reads the topology through them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/cost/transfer.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

/// The device of a G' vertex that is not placed yet.
inline constexpr std::size_t unplaced = static_cast<std::size_t>(-1);

namespace detail {
/// `from` plus `seconds` (at least 0) on the steady clock; none (time_point::max()) when `seconds`
/// is not finite or is 1e9 or more (a time limit that the mapper treats as none).
[[nodiscard]] inline std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point from, double seconds) {
  if (!std::isfinite(seconds) || seconds >= 1e9) return std::chrono::steady_clock::time_point::max();
  return from + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(std::max(0.0, seconds)));
}
}  // namespace detail

/// Dense per-pair transfer costs of a topology, copied once from any `device_topology`: ms per
/// byte w(a, b) = 1 / (B(a, b) · 10^6) and latency in ms, with every device's outgoing and incoming
/// links sorted from the fastest (what the sorting-based bounds need). O(D² log D) to build.
class link_costs {
 public:
  link_costs() = default;

  template <device_topology T>
  explicit link_costs(const T& t) : D_(devplace::num_devices(t)) {
    w_.assign(D_ * D_, 0.0);
    for (std::size_t a = 0; a < D_; ++a)
      for (std::size_t b = 0; b < D_; ++b) {
        if (a == b) continue;
        const double bw = devplace::bandwidth_gbps(t, a, b), l = devplace::latency_us(t, a, b);
        if (!std::isfinite(bw) || bw <= 0)
          throw std::invalid_argument("link_costs: bandwidth " + std::to_string(a) + " -> " + std::to_string(b) +
                                      " must be a finite number > 0");
        if (!std::isfinite(l) || l < 0)
          throw std::invalid_argument("link_costs: latency " + std::to_string(a) + " -> " + std::to_string(b) +
                                      " must be a finite number >= 0");
        w_[a * D_ + b] = 1.0 / (bw * 1e6);
        if (l > 0) {
          if (lat_.empty()) lat_.assign(D_ * D_, 0.0);  // no latency table at all without latency
          lat_[a * D_ + b] = l * 1e-3;
          has_latency_ = true;
        }
      }
    sort_links();
  }

  /// The links among `devices` (distinct ids < devices()), renumbered 0..n−1 in that order: the
  /// same values, not recomputed from bandwidths. O(n² log n). Throws std::invalid_argument for an
  /// id out of range or repeated.
  [[nodiscard]] link_costs subset(std::span<const std::size_t> devices) const {
    const std::size_t n = devices.size();
    std::vector<char> seen(D_, 0);
    for (auto d : devices) {
      if (d >= D_ || seen[d]) throw std::invalid_argument("link_costs::subset: device ids must be distinct and < " + std::to_string(D_));
      seen[d] = 1;
    }
    link_costs s;
    s.D_ = n;
    s.w_.assign(n * n, 0.0);
    s.lat_.assign(has_latency_ ? n * n : 0, 0.0);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) {
        if (a == b) continue;
        s.w_[a * n + b] = w_[devices[a] * D_ + devices[b]];
        if (has_latency_ && (s.lat_[a * n + b] = lat_[devices[a] * D_ + devices[b]]) > 0) s.has_latency_ = true;
      }
    if (!s.has_latency_) s.lat_.clear();
    s.sort_links();
    return s;
  }

  [[nodiscard]] std::size_t devices() const noexcept { return D_; }
  /// w(a, b): ms to move one byte from a to b.
  [[nodiscard]] double ms_per_byte(std::size_t a, std::size_t b) const noexcept { return w_[a * D_ + b]; }
  /// Per-message latency a -> b in ms.
  [[nodiscard]] double latency_ms(std::size_t a, std::size_t b) const noexcept {
    return has_latency_ ? lat_[a * D_ + b] : 0.0;
  }
  /// T(a, b, bytes) in ms; 0 for an empty message.
  [[nodiscard]] double transfer_ms(std::size_t a, std::size_t b, double bytes) const noexcept {
    return transfer_time_ms_w(bytes, w_[a * D_ + b], latency_ms(a, b));
  }
  /// The share of link a -> b in a ring allreduce over `replicas` whose replicas each move
  /// `ring_bytes` = 2(R−1)/R · P bytes in all: 2(R−1) · T(a, b, P/R) = ring_bytes · w + 2(R−1) · ℓ.
  [[nodiscard]] double ring_transfer_ms(std::size_t a, std::size_t b, double ring_bytes, std::size_t replicas) const noexcept {
    return ring_bytes > 0 ? ring_bytes * w_[a * D_ + b] + ring_steps(replicas) * latency_ms(a, b) : 0.0;
  }
  /// True when w and latency are symmetric matrices.
  [[nodiscard]] bool symmetric() const noexcept { return symmetric_; }
  [[nodiscard]] bool has_latency() const noexcept { return has_latency_; }

  /// w(a, x) over x ≠ a, ascending (D − 1 entries), and the devices x in that order (ties by
  /// device id).
  [[nodiscard]] std::span<const double> out_sorted(std::size_t a) const noexcept { return row(out_w_, a); }
  [[nodiscard]] std::span<const std::uint32_t> out_sorted_devices(std::size_t a) const noexcept { return row(out_x_, a); }
  /// w(x, a) over x ≠ a, ascending, and the devices x in that order (the outgoing rows on a
  /// symmetric topology).
  [[nodiscard]] std::span<const double> in_sorted(std::size_t a) const noexcept { return row(symmetric_ ? out_w_ : in_w_, a); }
  [[nodiscard]] std::span<const std::uint32_t> in_sorted_devices(std::size_t a) const noexcept {
    return row(symmetric_ ? out_x_ : in_x_, a);
  }
  /// latency(a, x) over x ≠ a, ascending; latency(x, a) ascending (one shared row of zeros
  /// without latency).
  [[nodiscard]] std::span<const double> out_latency_sorted(std::size_t a) const noexcept {
    return has_latency_ ? row(out_l_, a) : row(out_l_, 0);
  }
  [[nodiscard]] std::span<const double> in_latency_sorted(std::size_t a) const noexcept {
    return !has_latency_ ? row(out_l_, 0) : symmetric_ ? row(out_l_, a) : row(in_l_, a);
  }

 private:
  template <class V>
  [[nodiscard]] std::span<const typename V::value_type> row(const V& v, std::size_t a) const noexcept {
    const std::size_t k = D_ ? D_ - 1 : 0;
    return {v.data() + a * k, k};
  }
  /// Finds whether the tables are symmetric, then sorts every device's outgoing and incoming links
  /// by (ms per byte, device id): O(D² log D) time over contiguous (value, id) pairs. Device ids
  /// are 32 bits; a symmetric topology keeps only the outgoing rows (the incoming ones are the
  /// same); without latency there is no latency matrix and one shared row of zero sorted
  /// latencies. Memory: 28 D² bytes on a symmetric topology without latency, 64 D² on an
  /// asymmetric one with latency.
  void sort_links() {
    symmetric_ = true;
    for (std::size_t a = 0; a < D_ && symmetric_; ++a)
      for (std::size_t b = a + 1; b < D_; ++b)
        if (w_[a * D_ + b] != w_[b * D_ + a] || latency_ms(a, b) != latency_ms(b, a)) {
          symmetric_ = false;
          break;
        }
    const std::size_t k = D_ ? D_ - 1 : 0;
    const std::size_t in_rows = symmetric_ ? 0 : D_;
    out_w_.resize(D_ * k);
    in_w_.resize(in_rows * k);
    out_x_.resize(D_ * k);
    in_x_.resize(in_rows * k);
    const std::size_t latency_rows = has_latency_ ? D_ : std::min<std::size_t>(D_, 1);
    out_l_.assign(latency_rows * k, 0.0);
    in_l_.assign(has_latency_ ? in_rows * k : 0, 0.0);
    std::vector<std::pair<double, std::uint32_t>> links(k);
    // device a's links out (or in) by (ms per byte, id), and their latencies ascending
    auto sorted_row = [&](std::size_t a, bool out, std::vector<double>& w, std::vector<std::uint32_t>& x, std::vector<double>& l) {
      std::size_t i = 0;
      for (std::size_t y = 0; y < D_; ++y)
        if (y != a) links[i++] = {out ? w_[a * D_ + y] : w_[y * D_ + a], static_cast<std::uint32_t>(y)};
      std::sort(links.begin(), links.end());
      for (i = 0; i < k; ++i) w[a * k + i] = links[i].first, x[a * k + i] = links[i].second;
      if (!has_latency_) return;
      for (i = 0; i < k; ++i) l[a * k + i] = out ? lat_[a * D_ + x[a * k + i]] : lat_[x[a * k + i] * D_ + a];
      std::sort(l.begin() + static_cast<std::ptrdiff_t>(a * k), l.begin() + static_cast<std::ptrdiff_t>(a * k + k));
    };
    for (std::size_t a = 0; a < D_; ++a) {
      sorted_row(a, true, out_w_, out_x_, out_l_);
      if (!symmetric_) sorted_row(a, false, in_w_, in_x_, in_l_);
    }
  }

  std::size_t D_ = 0;
  std::vector<double> w_, lat_;
  bool symmetric_ = true, has_latency_ = false;
  std::vector<double> out_w_, in_w_, out_l_, in_l_;
  std::vector<std::uint32_t> out_x_, in_x_;
};

/// Bottleneck walks of a topology: B_h(a, b) = the least possible largest ms-per-byte over the
/// links of a walk from a to b with at most h links (h ≥ 1). Any h consecutive ring links from a
/// to b cost at least x · B_h(a, b) for x bytes (without latency), which bounds how cheaply a
/// partly placed ring can still be closed. Tables are built up to `max_hops` or until they stop
/// changing; when the work limit (≈ D³ per hop) or `deadline` cuts them short, longer walks are
/// unknown (0).
class bottleneck_walks {
 public:
  using clock = std::chrono::steady_clock;
  bottleneck_walks() = default;
  bottleneck_walks(const link_costs& L, std::size_t max_hops, double work_limit = 4e8,
                   clock::time_point deadline = clock::time_point::max())
      : D_(L.devices()), source_(&L) {
    const std::size_t D = D_;
    if (D < 2 || max_hops == 0) return;
    std::vector<double> cur(D * D);
    for (std::size_t a = 0; a < D; ++a)
      for (std::size_t b = 0; b < D; ++b) cur[a * D + b] = a == b ? std::numeric_limits<double>::infinity() : L.ms_per_byte(a, b);
    tables_.push_back(cur);
    double work = 0;
    while (tables_.size() < max_hops) {
      work += static_cast<double>(D) * static_cast<double>(D) * static_cast<double>(D);
      if (work > work_limit) return;  // truncated: longer walks unknown
      std::vector<double> next = cur;
      bool changed = false;
      for (std::size_t a = 0; a < D; ++a) {
        if (clock::now() >= deadline) return;  // truncated: longer walks unknown
        for (std::size_t x = 0; x < D; ++x) {
          const double ax = cur[a * D + x];
          if (!std::isfinite(ax)) continue;
          for (std::size_t b = 0; b < D; ++b) {
            if (x == b) continue;
            const double v = std::max(ax, L.ms_per_byte(x, b));
            if (v < next[a * D + b]) next[a * D + b] = v, changed = true;
          }
        }
      }
      if (!changed) {
        converged_ = true;
        return;
      }
      tables_.push_back(next);
      cur = std::move(next);
    }
  }
  /// B_h(a, b); 0 when not known.
  [[nodiscard]] double operator()(std::size_t h, std::size_t a, std::size_t b) const noexcept {
    if (tables_.empty() || h == 0) return 0.0;
    if (h > tables_.size() && !converged_) return 0.0;
    const auto& t = tables_[std::min(h, tables_.size()) - 1];
    const double v = t[a * D_ + b];
    return std::isfinite(v) ? v : 0.0;
  }
  /// The link tables these walks were built from (to reuse them only on the same object).
  [[nodiscard]] const link_costs* source() const noexcept { return source_; }

 private:
  std::size_t D_ = 0;
  const link_costs* source_ = nullptr;
  std::vector<std::vector<double>> tables_;  // tables_[h-1] = B_h
  bool converged_ = false;
};

}  // namespace devplace
