#pragma once
// Small oracle helpers shared by several test areas.
#include <doctest/doctest.h>

#include <cstddef>
#include <set>
#include <span>
#include <vector>

#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::test {

/// Every vector of S positive replica counts summing to D (the compositions of D into S parts),
/// in lexicographic order: the replica vectors a brute force over the general DP J(2) tries.
inline std::vector<std::vector<std::size_t>> replica_compositions(std::size_t S, std::size_t D) {
  std::vector<std::vector<std::size_t>> out;
  if (S == 0 || D < S) return out;
  std::vector<std::size_t> reps(S, 1);
  auto compose = [&](auto&& self, std::size_t k, std::size_t left) -> void {
    if (k + 1 == S) {
      reps[k] = left;
      out.push_back(reps);
      return;
    }
    for (std::size_t r = 1; r + (S - k - 1) <= left; ++r) {
      reps[k] = r;
      self(self, k + 1, left - r);
    }
  };
  compose(compose, 0, D);
  return out;
}

/// A mapping result places every replica of every stage on its own device below D.
inline void check_valid_mapping(const stage_graph& g, std::size_t D, const mapping_result& r) {
  REQUIRE(r.device_of.size() == g.stages());
  std::set<std::size_t> used;
  for (const auto& row : r.device_of) {
    REQUIRE(row.size() == g.replicas());
    for (auto d : row) {
      CHECK(d < D);
      used.insert(d);
    }
  }
  CHECK(used.size() == g.vertices());
}

/// A flat mapping `dev` (device of every vertex s·R + q) that a search returned at target t:
/// one entry per vertex, distinct devices of L, objective ≤ t under `model`.
template <class C>
inline void check_mapping_within(const stage_graph& g, const link_costs& L, const C& model, const std::vector<std::size_t>& dev,
                                 double t) {
  REQUIRE(dev.size() == g.vertices());
  std::set<std::size_t> used(dev.begin(), dev.end());
  CHECK(used.size() == dev.size());
  CHECK(*used.rbegin() < L.devices());
  CHECK(evaluate_flat(g, L, model, std::span<const std::size_t>(dev)).objective_ms <= t * (1 + 1e-12));
}

/// A valid mapping proved optimal: objective `opt` (the brute-force optimum) and a lower bound
/// that does not exceed it.
inline void check_proved_optimum(const stage_graph& g, std::size_t D, const mapping_result& r, double opt) {
  check_valid_mapping(g, D, r);
  CHECK(r.status == status::optimal);
  CHECK(r.objective_ms == doctest::Approx(opt).epsilon(1e-9));
  CHECK(r.lower_bound_ms <= opt * (1 + 1e-12));
}

}  // namespace devplace::test
