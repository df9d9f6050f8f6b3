#pragma once
// Shared by the tests of the mapper's cover searches (test/map/copy_cover.cpp,
// test/map/line_ring.cpp): the shapes of their instances, the enumeration of row subsets that
// is the oracle of the exact cover solver, and the check of every target of a mapping_search
// against the brute-force optimum.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/exact_cover.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/mapping_search.hpp"
#include "devplace/map/stage_graph.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

namespace devplace::test {

/// The oracles of the copy cover (on the devices or on their link classes) and of the ring
/// cover (its line relaxation on link classes).
inline bool copy_oracle(std::string_view name) { return name == "copy_cover" || name == "quotient_copy"; }
inline bool ring_oracle(std::string_view name) { return name == "line_ring"; }
/// The searches of a mapper run that those oracles answered.
inline std::size_t by_copy_oracles(const mapping_result& r) { return r.answered_by("copy_cover") + r.answered_by("quotient_copy"); }
inline std::size_t by_ring_oracles(const mapping_result& r) { return r.answered_by("line_ring"); }

/// S·R = D when `exact` (a cover of all devices), else any shape with S·R ≤ D, R ≥ 2.
inline std::pair<std::size_t, std::size_t> cover_shape(std::mt19937_64& rng, std::size_t D, bool exact) {
  for (;;) {
    const std::size_t S = 1 + rng() % D;
    const std::size_t R = exact ? D / S : 2 + rng() % D;
    if (R >= 2 && S * R <= D && (!exact || S * R == D)) return {S, R};
  }
}

/// Runs `check` on both packing solvers over the same rows: the dancing links and the bit masks.
template <class F>
void with_both_packing_solvers(std::size_t columns, std::size_t width, const std::vector<std::uint32_t>& flat, F&& check) {
  detail::exact_cover_packing links(columns, width, std::span<const std::uint32_t>(flat));
  detail::bitset_cover_packing masks(columns, width, std::span<const std::uint32_t>(flat));
  check(links);
  check(masks);
}

/// Whether some R of the rows are pairwise disjoint: every R-subset tried (depth-first over
/// increasing row indices).
inline bool disjoint_rows_exist(const std::vector<std::vector<std::uint32_t>>& rows, std::size_t R, std::size_t columns) {
  if (R == 0) return true;
  std::vector<std::size_t> pick;
  std::vector<char> used(columns, 0);
  auto rec = [&](auto&& self, std::size_t from) -> bool {
    if (pick.size() == R) return true;
    for (std::size_t i = from; i < rows.size(); ++i) {
      bool ok = true;
      for (auto c : rows[i]) ok = ok && !used[c];
      if (!ok) continue;
      for (auto c : rows[i]) used[c] = 1;
      pick.push_back(i);
      if (self(self, i + 1)) return true;
      pick.pop_back();
      for (auto c : rows[i]) used[c] = 0;
    }
    return false;
  };
  return rec(rec, 0);
}

/// The answers of `check_cover_targets`.
struct target_counts {
  std::size_t by_cover = 0, infeasible = 0, packings = 0, certified_optimum = 0;
};

/// Searches `s` (restarts off) at opt·(1 − 1e-6), opt, its initial bound and four random targets
/// in (0.5, 1.3)·opt, in random order, and checks each answer against the brute-force optimum:
/// answered by the copy cover, found exactly when opt ≤ t, a found mapping within t, a failed
/// target's certified bound in (t, opt].
template <mapping_cost_model C>
void check_cover_targets(const mapping_search<C>& s, const stage_graph& g, const link_costs& L, double opt, int it,
                         std::mt19937_64& rng, target_counts& n) {
  const std::size_t S = g.stages(), R = g.replicas(), D = L.devices();
  std::uniform_real_distribution<double> frac(0.5, 1.3);
  std::vector<double> targets{opt * (1 - 1e-6), opt, s.initial_lower_bound()};
  for (int k = 0; k < 4; ++k) targets.push_back(opt * frac(rng));
  std::shuffle(targets.begin(), targets.end(), rng);
  for (const double t : targets) {
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    CAPTURE(t);
    CAPTURE(opt);
    const auto a = s.search(t);
    CHECK(a.completed);
    CHECK(copy_oracle(a.oracle));
    n.by_cover += copy_oracle(a.oracle);
    CHECK(a.found == (opt <= t));
    if (a.found) {
      CHECK(a.objective_ms <= t);
      CHECK(evaluate_flat(g, L, s.model(), std::span<const std::size_t>(a.dev)).objective_ms == doctest::Approx(a.objective_ms));
      n.packings += S * R < D;
    } else {
      CHECK(a.next_lower_bound_ms > t);
      CHECK(a.next_lower_bound_ms <= opt * (1 + 1e-12));
      ++n.infeasible;
      n.certified_optimum += a.next_lower_bound_ms == doctest::Approx(opt);
    }
  }
}

/// Maps with `o` (restarts off for the cover to answer first) and checks status, objective and
/// bound against the brute-force optimum. Every third instance (it % 3 == 2) runs with limits
/// the listing or the cover reach, so that the depth-first search answers those targets; counts
/// the targets answered by the copy cover and, on the limited instances, by the depth-first
/// search. The ring covers never answer.
template <mapping_cost_model C>
void check_mapper_with_cover(const stage_graph& g, const link_costs& L, const C& model, mapper_options o, std::mt19937_64& rng,
                             int it, std::size_t& by_cover, std::size_t& by_dfs) {
  const double opt = brute_force(g, L, model);
  const bool limited = it % 3 == 2;
  if (limited) {
    o.max_copy_embeddings = 1 + rng() % 3;
    o.copy_cover_nodes = 1 + rng() % 40;
  }
  const auto r = map_devices(g, L, model, o);
  const std::size_t S = g.stages(), R = g.replicas();  // plain variables: CAPTURE is a lambda
  CAPTURE(it);
  CAPTURE(S);
  CAPTURE(R);
  check_proved_optimum(g, L.devices(), r, opt);
  const std::size_t answered = by_copy_oracles(r);
  CHECK(by_ring_oracles(r) == 0);
  (limited ? by_dfs : by_cover) += limited ? r.searches - answered : answered;
}

}  // namespace devplace::test
