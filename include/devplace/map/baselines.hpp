#pragma once
/// \file map/baselines.hpp
/// The baseline device maps of the Parmesan experiments (seed-parmesan.md §7.7) and the
/// evaluation of any mapping under either cost model.
///
///   CS map  ("consecutive stages on consecutive devices", allreduce-first):  device(s, r) = s·R + r
///   p2p map (each replica pipeline on a contiguous block, p2p-first):         device(s, r) = r·S + s
///   random map: a uniformly random injection of the S·R stage replicas into the D devices
///
/// Devices are taken in the topology's index order (row-major for mesh/torus, node-major for the
/// hierarchical systems). With R = 1 the CS and p2p maps coincide. A mapping is written as S rows
/// of R device ids (`device_of[s][r]`), as in the plan document.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

/// S rows of device ids, R_s in row s (R in every row with equal counts).
using device_mapping = std::vector<std::vector<std::size_t>>;

/// The flat form: device of every G' vertex v = s·R + r. Throws std::invalid_argument on a
/// shape mismatch.
[[nodiscard]] inline std::vector<std::size_t> flatten(const stage_graph& g, const device_mapping& m) {
  if (m.size() != g.stages()) throw std::invalid_argument("mapping: one row per stage expected");
  std::vector<std::size_t> dev(g.vertices());
  for (std::size_t s = 0; s < g.stages(); ++s) {
    if (m[s].size() != g.replicas(s))
      throw std::invalid_argument("mapping: stage " + std::to_string(s) + " needs " + std::to_string(g.replicas(s)) +
                                  " devices");
    for (std::size_t r = 0; r < g.replicas(s); ++r) dev[g.vertex(s, r)] = m[s][r];
  }
  return dev;
}

[[nodiscard]] inline device_mapping unflatten(const stage_graph& g, std::span<const std::size_t> dev) {
  device_mapping m(g.stages());
  for (std::size_t s = 0; s < g.stages(); ++s)
    for (std::size_t r = 0; r < g.replicas(s); ++r) m[s].push_back(dev[g.vertex(s, r)]);
  return m;
}

/// CS map: device(s, r) = s·R + r (the G' vertex id: consecutive per stage).
[[nodiscard]] inline device_mapping cs_map(const stage_graph& g) {
  device_mapping m(g.stages());
  for (std::size_t s = 0; s < g.stages(); ++s)
    for (std::size_t r = 0; r < g.replicas(s); ++r) m[s].push_back(g.vertex(s, r));
  return m;
}

/// p2p map: device(s, r) = r·S + s (replica-major: replica 0 of every stage, then replica 1, ...,
/// skipping the stages with fewer replicas).
[[nodiscard]] inline device_mapping p2p_map(const stage_graph& g) {
  device_mapping m(g.stages());
  std::size_t next = 0;
  for (std::size_t r = 0; r < g.replicas(); ++r)
    for (std::size_t s = 0; s < g.stages(); ++s)
      if (r < g.replicas(s)) m[s].push_back(next++);
  return m;
}

namespace detail {
/// SplitMix64's finaliser of z + the golden-ratio increment: a well-mixed 64-bit value.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// splitmix64: fully specified, so a seed gives the same map on every platform.
struct map_rng {
  std::uint64_t s;
  std::uint64_t next() { return mix64(std::exchange(s, s + 0x9E3779B97F4A7C15ull)); }
  /// Uniform in [0, n) without modulo bias.
  std::size_t below(std::size_t n) {
    const std::uint64_t span = n, limit = ~std::uint64_t{0} - (~std::uint64_t{0} % span);
    std::uint64_t x;
    do x = next(); while (x >= limit);
    return static_cast<std::size_t>(x % span);
  }
};
}  // namespace detail

/// A uniformly random injection of the S·R stage replicas into `devices` devices (a partial
/// Fisher–Yates shuffle driven by `seed`). Throws std::invalid_argument if S·R > devices.
[[nodiscard]] inline device_mapping random_map(const stage_graph& g, std::size_t devices, std::uint64_t seed) {
  if (g.vertices() > devices)
    throw std::invalid_argument("random_map: " + std::to_string(g.vertices()) + " stage replicas need as many devices, " +
                                "the topology has " + std::to_string(devices));
  std::vector<std::size_t> perm(devices);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  detail::map_rng rng{seed};
  for (std::size_t i = 0; i < g.vertices(); ++i) std::swap(perm[i], perm[i + rng.below(devices - i)]);
  perm.resize(g.vertices());
  return unflatten(g, perm);
}

/// The baseline maps by name.
enum class baseline { cs, p2p, random };

[[nodiscard]] constexpr std::string_view to_string(baseline b) noexcept {
  switch (b) {
    case baseline::cs: return "cs";
    case baseline::p2p: return "p2p";
    case baseline::random: return "random";
  }
  return "unknown";
}

[[nodiscard]] inline device_mapping baseline_map(const stage_graph& g, std::size_t devices, baseline b,
                                                 std::uint64_t seed = 1) {
  if (g.vertices() > devices)
    throw std::invalid_argument("baseline_map: " + std::to_string(g.vertices()) +
                                " stage replicas need as many devices, the topology has " + std::to_string(devices));
  switch (b) {
    case baseline::cs: return cs_map(g);
    case baseline::p2p: return p2p_map(g);
    case baseline::random: return random_map(g, devices, seed);
  }
  return cs_map(g);
}

/// Evaluates `m` under any cost model (objective and the time of every stage replica).
/// Throws std::invalid_argument if `m` is not an injective S × R mapping onto the devices.
template <mapping_cost_model C>
[[nodiscard]] mapping_evaluation evaluate(const stage_graph& g, const link_costs& L, const device_mapping& m,
                                          const C& model) {
  const auto dev = flatten(g, m);
  return evaluate_flat(g, L, model, std::span<const std::size_t>(dev));
}

/// Evaluates `m` under the model `c` (automatic: the paper's ratio rule; combined over
/// `micro_batches`).
[[nodiscard]] inline mapping_evaluation evaluate(const stage_graph& g, const link_costs& L, const device_mapping& m,
                                                 cost_choice c, std::size_t micro_batches = 1) {
  switch (select_cost_model(g, c)) {
    case cost_choice::allreduce: return evaluate(g, L, m, allreduce_cost{});
    case cost_choice::combined: return evaluate(g, L, m, combined_cost{.micro_batches = micro_batches});
    default: return evaluate(g, L, m, p2p_cost{});
  }
}

/// Same, on any `device_topology`.
template <device_topology T>
[[nodiscard]] mapping_evaluation evaluate(const stage_graph& g, const T& topology, const device_mapping& m,
                                          cost_choice c, std::size_t micro_batches = 1) {
  return evaluate(g, link_costs(topology), m, c, micro_batches);
}

}  // namespace devplace
