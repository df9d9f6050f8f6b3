// Cost-model forms (map/cost_models.hpp, `model_form`): a user's model that declares the form of
// its times gets every cover and component bound of that form. User models that compute the
// built-in times under their own types are checked against brute force, target by target through
// the covers and through the whole mapper, and against the built-in models themselves (the same
// initial bound, the same answers, the same searches); a model with the same times and no form
// gets none of the covers.
#include <doctest/doctest.h>

#include <cstddef>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "devplace/map/mapper.hpp"
#include "map/cover_support.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

using namespace devplace;

namespace {

/// The times of a built-in model B under another type: form F declared (or none).
template <class B, model_form F>
struct wrapped_model {
  static constexpr model_form form = F;
  B base{};
  [[nodiscard]] std::string_view name() const noexcept { return "user"; }
  [[nodiscard]] std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const { return base.dependencies(g, v); }
  [[nodiscard]] double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    return base.time(g, L, dev, v);
  }
  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    return base.bound(g, L, dev, v);
  }
};

using user_copies = wrapped_model<p2p_cost, model_form::copies>;
using user_rings = wrapped_model<allreduce_cost, model_form::rings>;
using user_formless = wrapped_model<p2p_cost, model_form::none>;

/// The combined times (MB = 2) under another type, with the `micro_batches` member the form needs.
struct user_combined {
  static constexpr model_form form = model_form::copies_and_rings;
  std::size_t micro_batches = 2;
  [[nodiscard]] std::string_view name() const noexcept { return "user combined"; }
  [[nodiscard]] combined_cost base() const { return {.micro_batches = micro_batches}; }
  [[nodiscard]] std::vector<std::size_t> dependencies(const stage_graph& g, std::size_t v) const { return base().dependencies(g, v); }
  [[nodiscard]] double time(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    return base().time(g, L, dev, v);
  }
  [[nodiscard]] double bound(const stage_graph& g, const link_costs& L, std::span<const std::size_t> dev, std::size_t v) const {
    return base().bound(g, L, dev, v);
  }
};

/// The model a user model imitates (same times).
template <class U>
auto built_in(const U& u) {
  if constexpr (std::is_same_v<U, user_combined>) return combined_cost{.micro_batches = u.micro_batches};
  else return u.base;
}

static_assert(mapping_cost_model<user_copies> && mapping_cost_model<user_rings> && mapping_cost_model<user_combined>);
static_assert(cost_model_form_v<p2p_cost> == model_form::copies);
static_assert(cost_model_form_v<allreduce_cost> == model_form::rings);
static_assert(cost_model_form_v<combined_cost> == model_form::copies_and_rings);
static_assert(cost_model_form_v<user_formless> == model_form::none);
static_assert(cost_model_form_v<const user_rings&> == model_form::rings);

}  // namespace

TEST_CASE("model forms: a user model without symmetry members takes those of its form") {
  std::mt19937_64 rng(301);
  const auto g = test::random_stage_graph(rng, 2, 3);
  const link_costs L(test::random_topology(rng, 6, test::topo_kind::discrete));
  CHECK(model_symmetry(user_copies{}, g, L) == replica_symmetry::copies);
  CHECK(model_symmetry(user_rings{}, g, L) == replica_symmetry::rings);
  CHECK(model_symmetry(user_formless{}, g, L) == replica_symmetry::none);
  CHECK(model_shares_time(user_rings{}));
  CHECK_FALSE(model_shares_time(user_copies{}));
  CHECK(model_replica_invariant_bound(user_rings{}, g));
  CHECK_FALSE(model_replica_invariant_bound(user_formless{}, g));
}

TEST_CASE("model forms: a user model of the copies form gets the copy cover, every target exact against brute force") {
  std::mt19937_64 rng(302);
  test::target_counts n;
  std::size_t formless_by_cover = 0;
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 4 + rng() % 4;  // 4..7
    const auto sr = test::cover_shape(rng, D, it % 2 == 0);
    const auto g = test::random_stage_graph(rng, sr.first, sr.second);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    const double opt = test::brute_force(g, L, p2p_cost{});
    const mapping_search<user_copies> s(g, L, user_copies{}, {.restarts = false});
    test::check_cover_targets(s, g, L, opt, it, rng, n);
    const mapping_search<user_formless> f(g, L, user_formless{}, {.restarts = false});
    const auto a = f.search(opt);
    CHECK(a.found);
    formless_by_cover += !a.oracle.empty();
  }
  CHECK(n.by_cover > 250);
  CHECK(n.infeasible > 80);
  CHECK(formless_by_cover == 0);
}

namespace {

/// One target's answer of a mapping search against the brute-force optimum `opt`: found exactly
/// when opt ≤ t, a found mapping within t under `model`, a refutation's next bound in (t, opt].
template <class Answer, class Model>
void check_answer(const Answer& a, const stage_graph& g, const link_costs& L, const Model& model, double t, double opt,
                  std::size_t& found, std::size_t& refuted) {
  CHECK(a.found == (opt <= t));
  if (a.found) {
    ++found;
    CHECK(evaluate_flat(g, L, model, std::span<const std::size_t>(a.dev)).objective_ms <= t);
  } else {
    ++refuted;
    CHECK(a.next_lower_bound_ms > t);
    CHECK(a.next_lower_bound_ms <= opt * (1 + 1e-12));
  }
}

}  // namespace

TEST_CASE("model forms: a user model of the rings form gets the line ring cover, every target exact against brute force") {
  std::mt19937_64 rng(303);
  std::size_t by_line = 0, found = 0, refuted = 0;
  for (int it = 0; it < 60; ++it) {
    const std::size_t D = 5 + rng() % 3;
    const link_costs L(test::line_of_nodes(rng, D));
    const auto sr = test::cover_shape(rng, D, it % 2 == 0);
    const auto g = test::ring_stage_graph(rng, sr.first, sr.second);
    const double opt = test::brute_force(g, L, allreduce_cost{});
    const mapping_search<user_rings> s(g, L, user_rings{}, {.restarts = false});
    const mapping_search<allreduce_cost> b(g, L, allreduce_cost{}, {.restarts = false});
    CAPTURE(it);
    for (const double t : {opt, opt * (1 - 1e-6), opt * 0.9, opt * 1.2, s.initial_lower_bound()}) {
      CAPTURE(t);
      const auto a = s.search(t);
      REQUIRE(a.completed);
      CHECK(a.oracle == b.search(t).oracle);  // the oracles of the built-in model of the form
      by_line += a.oracle == "line_ring";
      check_answer(a, g, L, allreduce_cost{}, t, opt, found, refuted);
    }
  }
  CHECK(by_line > 100);
  MESSAGE("line ring cover: " << by_line << " of " << found + refuted << " targets");
  CHECK(found > 50);
  CHECK(refuted > 50);
}

TEST_CASE("model forms: a user model of the copies form gets the node-group cover on a topology of nodes") {
  std::mt19937_64 rng(304);
  std::size_t by_groups = 0, found = 0, refuted = 0, mapper_by_groups = 0, mapper_searches = 0;
  for (int it = 0; it < 40; ++it) {
    std::vector<std::size_t> sizes;
    for (std::size_t D = 0; D < 6;) sizes.push_back(2 + rng() % 2), D += sizes.back();
    const link_costs L(test::node_blocks(sizes, 10.0 + double(rng() % 3), 1.0));
    const auto sr = test::cover_shape(rng, L.devices(), it % 2 == 0);
    const auto g = test::random_stage_graph(rng, sr.first, sr.second);
    const double opt = test::brute_force(g, L, p2p_cost{});
    const mapping_search<user_copies> s(g, L, user_copies{}, {.restarts = false});
    CAPTURE(it);
    // restarts off: the covers answer before any depth-first run; the mapper counts their answers
    // (the bounds off, so that the mapper has targets to ask: its starts often meet the bound)
    const auto r = map_devices(g, L, user_copies{},
                               {.threads = 1, .assignment_bound = false, .ring_component_bound = false,
                                .copy_component_bound = false, .restarts = false});
    test::check_proved_optimum(g, L.devices(), r, opt);
    mapper_by_groups += r.answered_by("group_cover");
    mapper_searches += r.searches;
    for (const double t : {opt, opt * (1 - 1e-9), opt * 0.9, opt * 1.2}) {
      CAPTURE(t);
      const auto a = s.search(t);
      REQUIRE(a.completed);
      by_groups += a.oracle == "group_cover";
      check_answer(a, g, L, p2p_cost{}, t, opt, found, refuted);
    }
  }
  CHECK(by_groups > 100);
  CHECK(mapper_by_groups > 0);
  MESSAGE("node-group cover: " << by_groups << " targets of mapping_search, " << mapper_by_groups << " of the mapper's " << mapper_searches);
  CHECK(found > 50);
  CHECK(refuted > 50);
}

namespace {

/// Maps with the user model and with the built-in one it imitates (one thread: deterministic;
/// restarts off: the covers answer first) and checks both against brute force and each other.
template <class U>
void check_like_built_in(const stage_graph& g, const link_costs& L, const U& user, std::size_t& covered,
                         mapper_options o = {.threads = 1, .restarts = false}) {
  const auto b = built_in(user);
  const double opt = test::brute_force(g, L, b);
  const auto ru = map_devices(g, L, user, o);
  const auto rb = map_devices(g, L, b, o);
  test::check_proved_optimum(g, L.devices(), ru, opt);
  CHECK(ru.initial_lower_bound_ms == rb.initial_lower_bound_ms);  // the component bounds of the form
  REQUIRE(ru.oracles.size() == rb.oracles.size());  // the same oracles apply, and answer the same targets
  for (std::size_t i = 0; i < ru.oracles.size(); ++i) {
    CHECK(ru.oracles[i].name == rb.oracles[i].name);
    CHECK(ru.oracles[i].found == rb.oracles[i].found);
    CHECK(ru.oracles[i].refuted == rb.oracles[i].refuted);
  }
  CHECK(ru.searches == rb.searches);
  covered += test::by_copy_oracles(ru) + test::by_ring_oracles(ru);
  CHECK(test::by_copy_oracles(ru) == test::by_copy_oracles(rb));
  CHECK(test::by_ring_oracles(ru) == test::by_ring_oracles(rb));
}

}  // namespace

TEST_CASE("mapper: user models of each form are searched as the built-in models of that form, against brute force") {
  std::mt19937_64 rng(305);
  std::size_t copies = 0, rings = 0, combined = 0;  // mapper targets answered by a cover, per form
  for (int it = 0; it < 45; ++it) {
    const std::size_t D = 4 + rng() % 4;
    const auto sr = test::cover_shape(rng, D, it % 2 == 0);
    const std::size_t S = sr.first, R = sr.second;
    CAPTURE(it);
    CAPTURE(S);
    CAPTURE(R);
    switch (it % 3) {
      case 0: {
        const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
        check_like_built_in(test::random_stage_graph(rng, S, R), L, user_copies{}, copies);
        break;
      }
      case 1: {  // nodes on a line, where the line ring cover applies; the bounds off, so that the
                 // mapper has targets to ask (its starts often meet them)
        const link_costs L(test::line_of_nodes(rng, D));
        check_like_built_in(test::ring_stage_graph(rng, S, R), L, user_rings{}, rings,
                            {.threads = 1, .assignment_bound = false, .ring_component_bound = false, .copy_component_bound = false,
                             .restarts = false});
        break;
      }
      default: {
        const link_costs L(test::random_topology(rng, D, test::topo_kind::discrete));
        check_like_built_in(test::ring_stage_graph(rng, S, R), L, user_combined{.micro_batches = 1 + rng() % 4}, combined);
      }
    }
  }
  CHECK(copies > 0);  // each form with covers gets them
  CHECK(rings > 0);
  CHECK(combined == 0);  // the combined form has none
  MESSAGE("mapper targets answered by a cover: copies " << copies << ", rings " << rings);
}
