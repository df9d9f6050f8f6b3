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
/// `mapping_cost_model` (below) is what the search needs of a model; `p2p_cost` and
/// `allreduce_cost` are the two of the paper, `combined_cost` both together, and
/// `select_cost_model` applies the paper's automatic choice by the volume ratio ρ (G13).
#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "devplace/cost/transfer.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

/// Which relabellings of replicas leave a cost model's times unchanged (used for symmetry
/// breaking; `none` is always safe).
enum class replica_symmetry {
  none,    ///< no replica relabelling is known to be a symmetry
  copies,  ///< any permutation of the replica indices, applied to every stage at once (p2p)
  rings    ///< per stage, rotations of its ring (reflections too on a symmetric topology), and
           ///< swapping the rings of two stages with equal c_u and P (allreduce)
};

/// The form of a model's times, which decides the covers and component bounds the mapper runs
/// for it (docs/mapping.md, "Cost-model forms"). A model declares it as a static member
/// `static constexpr model_form form = ...;` or by specialising `cost_model_form`; without
/// either it is `none`, and the mapper searches it depth-first with its own bounds only.
enum class model_form {
  none,              ///< nothing known beyond `mapping_cost_model`
  copies,            ///< `time` and `bound` are those of `p2p_cost` (eq. 6/8): stage time plus sends
  rings,             ///< `time` and `bound` are those of `allreduce_cost` (eq. 7/9), ring tables aside
  copies_and_rings   ///< `time` and `bound` are those of `combined_cost` with the model's
                     ///< `micro_batches` (a member the form requires); ring tables from its
                     ///< `ring` member when it has one
};

/// The declared form of C: `C::form` when it has one, else `model_form::none`.
template <class C>
struct cost_model_form : std::integral_constant<model_form, model_form::none> {};
template <class C>
  requires requires { { C::form } -> std::convertible_to<model_form>; }
struct cost_model_form<C> : std::integral_constant<model_form, C::form> {};
template <class C>
inline constexpr model_form cost_model_form_v = cost_model_form<std::remove_cvref_t<C>>::value;

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

/// The model's declared replica symmetry; without a `symmetry` member, the one of its form
/// (copies or rings with equal replica counts), else none.
template <mapping_cost_model C>
[[nodiscard]] replica_symmetry model_symmetry(const C& c, const stage_graph& g, const link_costs& L) {
  if constexpr (requires { { c.symmetry(g, L) } -> std::convertible_to<replica_symmetry>; })
    return c.symmetry(g, L);
  else if constexpr (cost_model_form_v<C> == model_form::copies)
    return g.uniform_replicas() ? replica_symmetry::copies : replica_symmetry::none;
  else if constexpr (cost_model_form_v<C> == model_form::rings)
    return g.uniform_replicas() ? replica_symmetry::rings : replica_symmetry::none;
  else
    return replica_symmetry::none;
}

/// Whether the model says every replica of a stage has the same time (without a `shared_time`
/// member: true for the rings form).
template <mapping_cost_model C>
[[nodiscard]] bool model_shares_time(const C& c) {
  if constexpr (requires { { c.shared_time() } -> std::convertible_to<bool>; })
    return c.shared_time();
  else
    return cost_model_form_v<C> == model_form::rings;
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
  else if constexpr (cost_model_form_v<C> == model_form::rings)
    return true;
  else if constexpr (cost_model_form_v<C> != model_form::none)
    return g.uniform_replicas();
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

/// The built-in models declare their forms for themselves alone: a type derived from one (with
/// other times or bounds) gets no cover unless it declares a form of its own.
template <>
struct cost_model_form<p2p_cost> : std::integral_constant<model_form, model_form::copies> {};
template <>
struct cost_model_form<allreduce_cost> : std::integral_constant<model_form, model_form::rings> {};
template <>
struct cost_model_form<combined_cost> : std::integral_constant<model_form, model_form::copies_and_rings> {};

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
