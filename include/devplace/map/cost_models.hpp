#pragma once
/// \file map/cost_models.hpp
/// The stage-time models of device mapping (seed-parmesan.md §7.2, docs/formats.md "Cost
/// conventions") and the customisation point through which the mapper reads them.
///
///   p2p (eq. 6/8):       c(s_r) = c_u(s) + Σ_{s'∈adj(s)} T(p(s_r), p(s'_r), M(s, s'))
///   allreduce (eq. 7/9): c(s_r) = c_u(s) + 2(R−1) · max_{i} T(p(s_i), p(s_{i+1 mod R}), P(s)/R)
///                               = c_u(s) + max_i [ 2(R−1)/R · P(s) · w_i + 2(R−1) · ℓ_i ]
///   objective (eq. 5):   max over all S·R stage replicas
///
/// With per-stage replica counts (stage_graph.hpp) c_u(s) is the replica's share
/// `replica_compute_ms(s)`, a replica sends to every overlapping replica s'_j of each neighbour its
/// `exchange_bytes`, and the ring of stage s has R_s replicas; the declared replica symmetries
/// are then none.
///
/// where T(a, b, x) is the transfer time of cost/transfer.hpp, the one definition every component
/// uses: x / (B(a, b) · 10^6) + latency(a, b) ms for x > 0 bytes, 0 for an empty message. The
/// allreduce ring of stage s runs over its replicas in index order 0..R−1 (for R = 2 it is one
/// link used in both directions; for R = 1 the allreduce costs 0); each of its 2(R−1) steps pays
/// the latency of its slowest link, as in the simulator.
///
/// What the two models measure: the p2p model is the simulator's steady state per micro-batch when
/// a device is busy while it sends (docs/simulator.md, "Steady state"); the allreduce model is the
/// busy time of one iteration of a single micro-batch (compute, then the blocking allreduce).
///
/// `mapping_cost_model` is what the search needs of a model: the other G' vertices whose devices
/// a vertex's time reads (this fixes the checking scheme), the exact time once they are all
/// placed, and a lower bound of the time from a partial mapping (sound extra pruning; with only
/// the vertex itself placed it is the per-device bound of eq. 10/11). Any type with these members
/// works; `p2p_cost` and `allreduce_cost` are the two of the paper, `select_cost_model` applies the
/// paper's automatic choice by the allreduce-to-p2p volume ratio ρ (G13).
#include <algorithm>
#include <cmath>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstddef>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devplace/cost/transfer.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

/// The device of a G' vertex that is not placed yet.
inline constexpr std::size_t unplaced = static_cast<std::size_t>(-1);

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
    symmetric_ = true;
    for (std::size_t a = 0; a < D_ && symmetric_; ++a)
      for (std::size_t b = a + 1; b < D_; ++b)
        if (w_[a * D_ + b] != w_[b * D_ + a] || latency_ms(a, b) != latency_ms(b, a)) {
          symmetric_ = false;
          break;
        }
    sort_links();
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
  /// Sorts every device's outgoing and incoming links by (ms per byte, device id): O(D² log D)
  /// time over contiguous (value, id) pairs. Device ids are 32 bits; a symmetric topology keeps
  /// only the outgoing rows (the incoming ones are the same); without latency there is no latency
  /// matrix and one shared row of zero sorted latencies. Memory: 28 D² bytes on a symmetric
  /// topology without latency, 64 D² on an asymmetric one with latency.
  void sort_links() {
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
    auto sorted_row = [&](std::size_t a, bool out, std::vector<double>& w, std::vector<std::uint32_t>& x) {
      std::size_t i = 0;
      for (std::size_t y = 0; y < D_; ++y)
        if (y != a) links[i++] = {out ? w_[a * D_ + y] : w_[y * D_ + a], static_cast<std::uint32_t>(y)};
      std::sort(links.begin(), links.end());
      for (i = 0; i < k; ++i) w[a * k + i] = links[i].first, x[a * k + i] = links[i].second;
    };
    for (std::size_t a = 0; a < D_; ++a) {
      sorted_row(a, true, out_w_, out_x_);
      if (!symmetric_) sorted_row(a, false, in_w_, in_x_);
      if (!has_latency_) continue;
      for (std::size_t i = 0; i < k; ++i) out_l_[a * k + i] = lat_[a * D_ + out_x_[a * k + i]];
      std::sort(out_l_.begin() + static_cast<std::ptrdiff_t>(a * k), out_l_.begin() + static_cast<std::ptrdiff_t>(a * k + k));
      if (symmetric_) continue;
      for (std::size_t i = 0; i < k; ++i) in_l_[a * k + i] = lat_[in_x_[a * k + i] * D_ + a];
      std::sort(in_l_.begin() + static_cast<std::ptrdiff_t>(a * k), in_l_.begin() + static_cast<std::ptrdiff_t>(a * k + k));
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
    complete_ = true;
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
  bool converged_ = false, complete_ = false;
};

/// Which relabellings of replicas leave a cost model's times unchanged (used for symmetry
/// breaking; `none` is always safe).
enum class replica_symmetry {
  none,    ///< no replica relabelling is known to be a symmetry
  copies,  ///< any permutation of the replica indices, applied to every stage at once (p2p)
  rings    ///< per stage, rotations of its ring (reflections too on a symmetric topology), and
           ///< swapping the rings of two stages with equal c_u and P (allreduce)
};

/// \concept mapping_cost_model
/// A stage-replica time model for the mapper. Notation: `g` a `const stage_graph&`, `L` a
/// `const link_costs&`, `dev` a `std::span<const std::size_t>` giving the device of every G'
/// vertex (`unplaced` where none), `v` a G' vertex.
///   1. `c.name()` -> string-like, e.g. "p2p".
///   2. `c.dependencies(g, v)` -> `std::vector<std::size_t>`: the other G' vertices whose devices
///      v's time reads. The checking scheme checks v once all of them and v are placed.
///   3. `c.time(g, L, dev, v)` -> double: v's time (ms); v and all its dependencies placed.
///   4. `c.bound(g, L, dev, v)` -> double: a lower bound of `time` over every completion of `dev`,
///      for v placed; equal to `time` when every dependency is placed. With v alone placed it is the
///      per-device bound of eq. 10/11.
/// Optional: `c.symmetry(g, L)` -> `replica_symmetry` (default none); `c.shared_time()` -> bool, true
/// when every replica of a stage always has the same time (checked once per stage);
/// `c.prepare(g, L)` -> C, a copy of the model with tables precomputed for this input (called
/// once by the mapper before searching; `c.prepare(g, L, deadline)` is preferred when present and
/// may leave tables shorter once the steady-clock deadline has passed);
/// `c.replica_invariant_bound(g)` -> bool, true when `bound` with one vertex alone placed is the
/// same for every replica of its stage (the mapper then computes one row of per-device bounds per
/// stage, not per replica).
/// Semantic requirements: times are finite and ≥ 0 and depend on devices only through `L`
/// (device symmetry breaking relies on it; switch it off otherwise).
template <class C>
concept mapping_cost_model =
    std::copy_constructible<C> &&
    requires(const C& c, const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) {
      { c.name() } -> std::convertible_to<std::string_view>;
      { c.dependencies(g, v) } -> std::convertible_to<std::vector<std::size_t>>;
      { c.time(g, L, dev, v) } -> std::convertible_to<double>;
      { c.bound(g, L, dev, v) } -> std::convertible_to<double>;
    };

/// The model's declared replica symmetry (none unless it says otherwise).
template <mapping_cost_model C>
[[nodiscard]] replica_symmetry model_symmetry(const C& c, const stage_graph& g, const link_costs& L) {
  if constexpr (requires { { c.symmetry(g, L) } -> std::convertible_to<replica_symmetry>; })
    return c.symmetry(g, L);
  else
    return replica_symmetry::none;
}

/// Whether the model says every replica of a stage has the same time.
template <mapping_cost_model C>
[[nodiscard]] bool model_shares_time(const C& c) {
  if constexpr (requires { { c.shared_time() } -> std::convertible_to<bool>; })
    return c.shared_time();
  else
    return false;
}

/// `c.prepare(g, L, deadline)` or `c.prepare(g, L)` when the model has it, else `c`.
template <mapping_cost_model C>
[[nodiscard]] C prepare_model(const C& c, const stage_graph& g, const link_costs& L,
                              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  if constexpr (requires { { c.prepare(g, L, deadline) } -> std::convertible_to<C>; })
    return c.prepare(g, L, deadline);
  else if constexpr (requires { { c.prepare(g, L) } -> std::convertible_to<C>; })
    return c.prepare(g, L);
  else
    return c;
}

/// Whether the model says its per-device bound (one vertex alone placed) is the same for every
/// replica of a stage.
template <mapping_cost_model C>
[[nodiscard]] bool model_replica_invariant_bound(const C& c, const stage_graph& g) {
  if constexpr (requires { { c.replica_invariant_bound(g) } -> std::convertible_to<bool>; })
    return c.replica_invariant_bound(g);
  else
    return false;
}

/// The p2p model, eq. 6/8.
struct p2p_cost {
  [[nodiscard]] std::string_view name() const noexcept { return "p2p"; }

  [[nodiscard]] std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const {
    const std::size_t s = g.stage_of_vertex(v), r = g.replica_of_vertex(v);
    std::vector<std::size_t> d;
    for (auto t : g.neighbours(s)) {
      const auto [lo, hi] = g.peers(s, r, t);
      for (std::size_t j = lo; j < hi; ++j) d.push_back(g.vertex(t, j));
    }
    return d;
  }

  [[nodiscard]] double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                            std::size_t v) const {
    return g.replica_compute_ms(g.stage_of_vertex(v)) + sends_ms(g, L, dev, v);
  }

  /// Σ_{s'∈adj(s)} T(p(s_r), p(s'_r), M(s, s')): the sends of v; every neighbour placed.
  [[nodiscard]] static double sends_ms(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                                       std::size_t v) {
    const std::size_t s = g.stage_of_vertex(v), r = g.replica_of_vertex(v), d = dev[v];
    double c = 0;
    if (g.uniform_replicas()) {
      for (auto t : g.neighbours(s)) c += L.transfer_ms(d, dev[g.vertex(t, r)], g.message_bytes(s, t));
      return c;
    }
    for (auto t : g.neighbours(s)) {
      const auto [lo, hi] = g.peers(s, r, t);
      for (std::size_t j = lo; j < hi; ++j) c += L.transfer_ms(d, dev[g.vertex(t, j)], g.exchange_bytes(s, r, t, j));
    }
    return c;
  }

  /// Placed neighbours exactly; the unplaced ones take the fastest links out of p(v), the largest
  /// message on the fastest link (rearrangement inequality; latency the smallest ones apart).
  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                             std::size_t v) const {
    return g.replica_compute_ms(g.stage_of_vertex(v)) + sends_bound_ms(g, L, dev, v);
  }

  /// A lower bound of `sends_ms` over every completion of `dev` (v placed), as in `bound`.
  [[nodiscard]] static double sends_bound_ms(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                                             std::size_t v) {
    const std::size_t s = g.stage_of_vertex(v), r = g.replica_of_vertex(v), d = dev[v];
    double c = 0;
    const auto ow = L.out_sorted(d);
    const auto ol = L.out_latency_sorted(d);
    std::size_t k = 0;
    if (!g.uniform_replicas()) {  // the unplaced messages, largest first, on the fastest links
      std::vector<double> open;
      for (auto t : g.neighbours(s)) {
        const auto [lo, hi] = g.peers(s, r, t);
        for (std::size_t j = lo; j < hi; ++j) {
          const double x = g.exchange_bytes(s, r, t, j);
          const std::size_t u = dev[g.vertex(t, j)];
          if (u != unplaced) c += L.transfer_ms(d, u, x);
          else if (x > 0) open.push_back(x);
        }
      }
      std::sort(open.begin(), open.end(), std::greater<>());
      for (; k < open.size() && k < ow.size(); ++k) c += open[k] * ow[k] + ol[k];
      return c;
    }
    for (auto t : g.neighbours(s)) {  // largest message first
      const std::size_t u = dev[g.vertex(t, r)];
      if (u != unplaced) {
        c += L.transfer_ms(d, u, g.message_bytes(s, t));
      } else if (k < ow.size()) {
        c += g.message_bytes(s, t) * ow[k] + ol[k];
        ++k;
      }
    }
    return c;
  }

  [[nodiscard]] replica_symmetry symmetry(const stage_graph& g, const link_costs&) const noexcept {
    return g.uniform_replicas() ? replica_symmetry::copies : replica_symmetry::none;
  }
  /// Alone on a device, a replica's bound reads only its stage's messages (equal for every
  /// replica with equal counts).
  [[nodiscard]] bool replica_invariant_bound(const stage_graph& g) const noexcept { return g.uniform_replicas(); }
};

/// The allreduce model, eq. 7/9.
struct allreduce_cost {
  [[nodiscard]] std::string_view name() const noexcept { return "allreduce"; }

  [[nodiscard]] std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const {
    const std::size_t s = g.stage_of_vertex(v), r = g.replica_of_vertex(v);
    std::vector<std::size_t> d;
    if (g.allreduce_bytes(s) > 0)
      for (std::size_t q = 0; q < g.replicas(s); ++q)
        if (q != r) d.push_back(g.vertex(s, q));
    return d;
  }

  [[nodiscard]] double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                            std::size_t v) const {
    return g.replica_compute_ms(g.stage_of_vertex(v)) + ring_ms(g, L, dev, v);
  }

  /// 2(R−1) · max_i T(p(s_i), p(s_{i+1 mod R}), P(s)/R): the ring allreduce of v's stage; every
  /// replica of the stage placed.
  [[nodiscard]] static double ring_ms(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                                      std::size_t v) {
    const std::size_t s = g.stage_of_vertex(v), R = g.replicas(s);
    const double x = g.allreduce_bytes(s);
    double worst = 0;
    if (x > 0)
      for (std::size_t q = 0; q < R; ++q)
        worst = std::max(worst, L.ring_transfer_ms(dev[g.vertex(s, q)], dev[g.vertex(s, (q + 1) % R)], x, R));
    return worst;
  }

  /// Ring links with both ends placed exactly; a placed replica whose ring neighbour is not placed
  /// takes the fastest link out of (into) its device; with both ring neighbours unplaced and
  /// R ≥ 3, the best pair of distinct devices (eq. 11; exact without latency). Once prepared
  /// (`prepare`), a run of h unplaced-bounded links between two placed replicas a, b costs at
  /// least x · B_h(p(a), p(b)) (ring closure; without latency).
  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                             std::size_t v) const {
    return g.replica_compute_ms(g.stage_of_vertex(v)) + ring_bound_ms(g, L, dev, v);
  }

  /// A lower bound of `ring_ms` over every completion of `dev` (v placed), as in `bound`.
  [[nodiscard]] double ring_bound_ms(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                                     std::size_t v) const {
    const std::size_t s = g.stage_of_vertex(v), R = g.replicas(s);
    const double x = g.allreduce_bytes(s);
    double worst = 0;
    if (x > 0) {
      std::size_t first = unplaced, prev = unplaced;
      auto run = [&](std::size_t a, std::size_t b, std::size_t h) {  // h links from replica a to replica b
        if (h >= 2 && walks && !L.has_latency())
          worst = std::max(worst, x * (*walks)(h, dev[g.vertex(s, a)], dev[g.vertex(s, b)]));
      };
      for (std::size_t q = 0; q < R; ++q) {
        const std::size_t d = dev[g.vertex(s, q)];
        if (d == unplaced) continue;
        if (prev != unplaced) run(prev, q, q - prev);
        if (first == unplaced) first = q;
        prev = q;
        const std::size_t succ = dev[g.vertex(s, (q + 1) % R)], pred = dev[g.vertex(s, (q + R - 1) % R)];
        if (succ != unplaced) {
          worst = std::max(worst, L.ring_transfer_ms(d, succ, x, R));
          continue;
        }
        if (L.devices() < 2) continue;
        const double steps = ring_steps(R);
        const double out_min = x * L.out_sorted(d)[0] + steps * L.out_latency_sorted(d)[0];
        const double in_min = x * L.in_sorted(d)[0] + steps * L.in_latency_sorted(d)[0];
        double term = std::max(out_min, pred == unplaced ? in_min : 0.0);
        if (pred == unplaced && R >= 3 && L.devices() >= 3 && !L.has_latency()) {
          // min over x ≠ y of max(w(x, d), w(d, y)): the two fastest in and out links.
          const auto ow = L.out_sorted(d), iw = L.in_sorted(d);
          const auto ox = L.out_sorted_devices(d), ix = L.in_sorted_devices(d);
          const double best = ox[0] != ix[0] ? std::max(iw[0], ow[0])
                                             : std::min(std::max(iw[0], ow[1]), std::max(iw[1], ow[0]));
          term = std::max(term, x * best);
        }
        worst = std::max(worst, term);
      }
      if (first != unplaced) run(prev, first, first + R - prev);  // wrap-around run (h = R alone)
    }
    return worst;
  }

  /// A copy with the bottleneck-walk tables of `L` up to R links (ring-closure bounds), cut short
  /// at `deadline`. Tables already built from the same `L` object are kept (not rebuilt): the
  /// combined mapping builds them once for its allreduce warm start and its own search.
  [[nodiscard]] allreduce_cost prepare(const stage_graph& g, const link_costs& L,
                                       std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) const {
    allreduce_cost c = *this;
    if (walks && walks->source() == &L) return c;
    if (g.replicas() >= 2 && !L.has_latency())
      c.walks = std::make_shared<const bottleneck_walks>(L, g.replicas(), 4e8, deadline);
    return c;
  }

  /// Ring-closure tables (set by `prepare`; none by default).
  std::shared_ptr<const bottleneck_walks> walks;

  [[nodiscard]] replica_symmetry symmetry(const stage_graph& g, const link_costs&) const noexcept {
    return g.uniform_replicas() ? replica_symmetry::rings : replica_symmetry::none;
  }
  [[nodiscard]] bool shared_time() const noexcept { return true; }
  /// Alone on a device, a replica's ring bound does not read its position in the ring.
  [[nodiscard]] bool replica_invariant_bound(const stage_graph&) const noexcept { return true; }
};

/// The combined model: a stage replica's load per micro-batch in an iteration of MB micro-batches,
/// its p2p sends and its stage's ring allreduce (amortised over the MB micro-batches) together:
///   c(s_r) = c_u(s) + Σ_{s'∈adj(s)} T(p(s_r), p(s'_r), M(s, s')) + AR(s) / MB
///   AR(s)  = 2(R−1) · max_i T(p(s_i), p(s_{i+1 mod R}), P(s)/R)
/// MB · c(s_r) is the busy time of device p(s_r) in one simulated iteration with blocking sends
/// and a blocking allreduce (docs/simulator.md, "Steady state"): the objective is the busiest
/// device's share per micro-batch, a lower bound of iteration / MB that back-to-back iterations
/// approach. p2p is the case R = 1 (or MB → ∞), allreduce the case of no messages and MB = 1.
/// Bounds: the sum of the p2p and allreduce bounds of the two terms (each valid for every
/// completion, so their sum is).
struct combined_cost {
  std::size_t micro_batches = 1;  ///< MB (≥ 1)
  allreduce_cost ring;            ///< the allreduce term (ring-closure tables once prepared)

  [[nodiscard]] std::string_view name() const noexcept { return "combined"; }

  [[nodiscard]] std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const {
    auto d = p2p_cost{}.dependencies(g, v);
    for (auto u : ring.dependencies(g, v))
      if (std::find(d.begin(), d.end(), u) == d.end()) d.push_back(u);
    return d;
  }

  [[nodiscard]] double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                            std::size_t v) const {
    return g.replica_compute_ms(g.stage_of_vertex(v)) + p2p_cost::sends_ms(g, L, dev, v) +
           allreduce_cost::ring_ms(g, L, dev, v) / mb();
  }

  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev,
                             std::size_t v) const {
    return g.replica_compute_ms(g.stage_of_vertex(v)) + p2p_cost::sends_bound_ms(g, L, dev, v) +
           ring.ring_bound_ms(g, L, dev, v) / mb();
  }

  [[nodiscard]] combined_cost prepare(const stage_graph& g, const link_costs& L,
                                      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) const {
    return {micro_batches, ring.prepare(g, L, deadline)};
  }
  [[nodiscard]] bool replica_invariant_bound(const stage_graph& g) const noexcept { return g.uniform_replicas(); }

 private:
  [[nodiscard]] double mb() const noexcept { return static_cast<double>(std::max<std::size_t>(micro_batches, 1)); }
};

/// Which model to map with.
enum class cost_choice {
  automatic,  ///< the paper's rule: allreduce iff R > 1 and ρ > 1 (stage_graph::allreduce_to_p2p_ratio)
  p2p,
  allreduce,
  combined    ///< p2p and allreduce together (`combined_cost`)
};

[[nodiscard]] constexpr std::string_view to_string(cost_choice c) noexcept {
  switch (c) {
    case cost_choice::automatic: return "auto";
    case cost_choice::p2p: return "p2p";
    case cost_choice::allreduce: return "allreduce";
    case cost_choice::combined: return "combined";
  }
  return "unknown";
}

/// Resolves `automatic` by the allreduce-to-p2p volume ratio ρ: allreduce when R > 1 and ρ > 1.
[[nodiscard]] inline cost_choice select_cost_model(const stage_graph& g, cost_choice c = cost_choice::automatic) {
  if (c != cost_choice::automatic) return c;
  return g.replicas() > 1 && g.allreduce_to_p2p_ratio() > 1.0 ? cost_choice::allreduce : cost_choice::p2p;
}

/// The time of every G' vertex and the objective (eq. 5) of a complete mapping `dev` (device of
/// every vertex v = s·R + r) under `model`.
struct mapping_evaluation {
  double objective_ms = 0;            ///< max over all stage replicas
  std::vector<double> vertex_time_ms; ///< time of vertex s·R + r
  std::size_t bottleneck = 0;         ///< a vertex whose time is the objective
};

/// Throws std::invalid_argument if `dev` is not an injective mapping of the S·R vertices onto
/// devices < L.devices().
template <mapping_cost_model C>
[[nodiscard]] mapping_evaluation evaluate_flat(const stage_graph& g, const link_costs& L, const C& model,
                                               std::span<const std::size_t> dev) {
  const std::size_t V = g.vertices(), D = L.devices();
  if (dev.size() != V) throw std::invalid_argument("mapping: one device per stage replica (S*R entries)");
  std::vector<char> used(D, 0);
  for (std::size_t v = 0; v < V; ++v) {
    if (dev[v] >= D)
      throw std::invalid_argument("mapping: device " + (dev[v] == unplaced ? std::string("(none)") : std::to_string(dev[v])) +
                                  " of stage " + std::to_string(g.stage_of_vertex(v)) + " replica " +
                                  std::to_string(g.replica_of_vertex(v)) + " is not a device of the topology");
    if (used[dev[v]]) throw std::invalid_argument("mapping: device " + std::to_string(dev[v]) + " is used twice");
    used[dev[v]] = 1;
  }
  mapping_evaluation e;
  e.vertex_time_ms.resize(V);
  for (std::size_t v = 0; v < V; ++v) {
    e.vertex_time_ms[v] = static_cast<double>(model.time(g, L, dev, v));
    if (v == 0 || e.vertex_time_ms[v] > e.objective_ms) e.objective_ms = e.vertex_time_ms[v], e.bottleneck = v;
  }
  return e;
}

}  // namespace devplace
