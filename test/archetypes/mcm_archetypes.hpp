#pragma once
// Archetypes of the MCM concepts: the least a type must provide to model `mcm::evaluator` and
// `mcm::policy` (include/devplace/mcm/evaluate.hpp, policy.hpp). Used by test/mcm/search.cpp.
#include <cstddef>
#include <span>

#include "devplace/mcm/evaluate.hpp"
#include "devplace/mcm/policy.hpp"

namespace devplace::test {

/// Evaluator archetype: copyable, callable on a partition; throughput = 1 / (1 + max chip)
/// rewards using few chips (so the search has something to optimise).
struct evaluator_archetype {
  [[nodiscard]] mcm::evaluation operator()(std::span<const int> f) const {
    int K = 0;
    for (int c : f) K = c + 1 > K ? c + 1 : K;
    mcm::evaluation e;
    e.bottleneck_ms = e.compute_ms = static_cast<double>(K);
    e.throughput = 1.0 / e.bottleneck_ms;
    return e;
  }
};

/// Policy archetype: batch_size, propose, update and nothing else.
struct policy_archetype {
  std::size_t updates = 0;
  [[nodiscard]] std::size_t batch_size() const { return 2; }
  [[nodiscard]] mcm::proposal propose(mcm::random_engine&) { return {}; }
  void update(std::span<const mcm::rollout> rs, mcm::random_engine&) { updates += rs.empty() ? 0 : 1; }
};

static_assert(mcm::evaluator<evaluator_archetype>);
static_assert(mcm::policy<policy_archetype>);

}  // namespace devplace::test
