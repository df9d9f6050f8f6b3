// The portfolio of target oracles (map/oracle.hpp, map/detail/oracle_portfolio.hpp): a user's
// oracle that answers from a brute-force table plugged in alone and with the built-in ones
// (the result equals brute force), the order and phases taken from the data, the per-oracle
// limits, the back-off of interleaved oracles and the statistics counted for every oracle.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/map/detail/oracle_portfolio.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/mapping_search.hpp"
#include "devplace/map/oracle.hpp"
#include "map/map_support.hpp"
#include "support/checks.hpp"

namespace devplace {
namespace {

/// Answers every target from the brute-force optimum and its mapping: found at t ≥ opt, else
/// refuted with the least objective above t (which is opt). Counts its own answers.
struct table_oracle {
  double opt = 0;
  std::vector<std::size_t> arg;
  struct counts_t {
    std::atomic<std::size_t> found{0}, refuted{0};
  };
  std::shared_ptr<counts_t> counts = std::make_shared<counts_t>();
  [[nodiscard]] std::string_view name() const { return "table"; }
  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    oracle_answer a;
    a.nodes = 1;
    if (q.target >= opt) a.answer = oracle_answer::kind::found, a.dev = arg, ++counts->found;
    else a.answer = oracle_answer::kind::refuted, a.next_bound_ms = opt, ++counts->refuted;
    return a;
  }
  void forget() {}
};

/// Answers nothing; logs its name and the budget of every query into a shared log.
struct recording_oracle {
  std::string label;
  struct log_t {
    std::mutex mu;
    std::vector<std::string> names;
    std::vector<std::uint64_t> budgets;
  };
  std::shared_ptr<log_t> log;
  bool capped = false, exhausted = false;
  [[nodiscard]] std::string_view name() const { return label; }
  [[nodiscard]] oracle_answer answer(const oracle_query& q) const {
    std::lock_guard lk(log->mu);
    log->names.push_back(label);
    log->budgets.push_back(q.budget);
    oracle_answer a;
    a.capped = capped;
    a.exhausted = exhausted;
    return a;
  }
  void forget() {}
};

static_assert(target_oracle<table_oracle>);
static_assert(target_oracle<recording_oracle>);
static_assert(!target_oracle<int>);

void check_stats_consistent(const mapping_result& r) {
  std::size_t answered = 0;
  for (const auto& s : r.oracles) {
    CAPTURE(s.name);
    CHECK(s.found + s.refuted + s.unknown == s.asked);
    answered += s.answered();
  }
  CHECK(answered <= r.searches);  // the bracket's searches (the settle search is not counted)
}

}  // namespace

TEST_CASE("oracles: a user oracle from a brute-force table decides every target alone, the result equals brute force") {
  std::mt19937_64 rng(501);
  std::size_t found = 0, refuted = 0;
  for (int it = 0; it < 30; ++it) {
    const std::size_t D = 5 + rng() % 3;
    const auto [S, R] = test::small_shape(rng, D);
    const auto g = test::random_stage_graph(rng, S, R);
    const link_costs L(test::random_topology(rng, D, test::all_topo_kinds[it % 4]));
    std::vector<std::size_t> arg;
    const double opt = test::brute_force(g, L, p2p_cost{}, &arg);
    const unsigned threads = 1 + unsigned(it % 2);
    // from the sorting bound (eq. 10), below the optimum: the table has targets to refute
    mapper_options o{.threads = threads, .assignment_bound = false, .ring_component_bound = false, .copy_component_bound = false,
                     .oracles = {{.name = "table"}}, .local_search = false, .neighbourhood_search = false, .settle_nodes = 0};
    const table_oracle table{opt, arg};
    o.custom_oracles = {{"table", any_target_oracle(table)}};
    const auto r = map_devices(g, L, p2p_cost{}, o);
    CAPTURE(it);
    test::check_proved_optimum(g, D, r, opt);
    REQUIRE(r.oracles.size() == 1);
    CHECK(r.oracles[0].name == "table");
    // before the search: every target asked, every one decided by the table, no depth-first node
    CHECK(r.oracles[0].asked >= r.searches);
    CHECK(r.oracles[0].answered() == r.oracles[0].asked);
    CHECK(r.oracles[0].found == table.counts->found);  // the oracle's own count
    CHECK(r.oracles[0].refuted == table.counts->refuted);
    // a refutation jumps the bracket to opt: each worker's first answer closes it
    CHECK(r.searches <= 2 * threads);
    CHECK(r.nodes_explored == r.oracles[0].nodes);
    CHECK(r.lower_bound_ms == doctest::Approx(opt).epsilon(1e-9));  // the table's refutation is the bound
    check_stats_consistent(r);
    found += r.oracles[0].found, refuted += r.oracles[0].refuted;
  }
  CHECK(found > 10);
  CHECK(refuted > 10);
}

TEST_CASE("oracles: a user oracle joins the built-in ones, every oracle's statistics are counted, the result equals brute force") {
  std::mt19937_64 rng(502);
  std::size_t table_answers = 0, group_answers = 0;
  for (int it = 0; it < 60; ++it) {
    std::vector<std::size_t> sizes;
    for (std::size_t D = 0; D < 5;) sizes.push_back(2 + rng() % 2), D += sizes.back();
    const link_costs L(test::node_blocks(sizes, 10.0 + double(rng() % 3), 1.0));
    const auto [S, R] = test::small_shape(rng, L.devices());
    const auto g = test::random_stage_graph(rng, S, R);
    std::vector<std::size_t> arg;
    const double opt = test::brute_force(g, L, p2p_cost{}, &arg);
    // after the built-in ones (the group cover first): interleaved with the depth-first runs, or
    // after the short runs; or before them all
    mapper_options o{.threads = 1, .assignment_bound = false, .ring_component_bound = false, .copy_component_bound = false,
                     .restarts = it % 2 == 0, .local_search = false, .neighbourhood_search = false};
    using enum oracle_phase;
    if (it % 3 == 2) o.oracles.insert(o.oracles.begin(), {.name = "table", .phase = before_search});
    else o.oracles.push_back({.name = "table", .phase = it % 3 == 0 ? interleaved : after_short_runs});
    o.custom_oracles = {{"table", any_target_oracle(table_oracle{opt, arg})}};
    const auto r = map_devices(g, L, p2p_cost{}, o);
    CAPTURE(it);
    test::check_proved_optimum(g, L.devices(), r, opt);
    check_stats_consistent(r);
    REQUIRE(!r.oracles.empty());
    // the portfolio's order; the first oracle, before the search, answers every target
    const auto group = std::find_if(r.oracles.begin(), r.oracles.end(), [](const auto& x) { return x.name == "group_cover"; });
    REQUIRE(group != r.oracles.end());
    CHECK(r.oracles.front().name == (it % 3 == 2 ? "table" : "group_cover"));
    if (it % 3 != 2) CHECK(r.oracles.back().name == "table");
    CHECK(r.oracles.front().asked >= r.searches);
    CHECK(r.oracles.front().answered() == r.oracles.front().asked);
    if (it % 3 == 2) CHECK(group->asked == 0);
    table_answers += r.answered_by("table");
    group_answers += r.answered_by("group_cover");
  }
  CHECK(group_answers > 0);  // (most of these instances are closed by the bounds and baselines)
  CHECK(table_answers > 0);
  MESSAGE("targets answered: group cover " << group_answers << ", the table " << table_answers);
}

TEST_CASE("oracles: the order, phases and limits come from the portfolio's data") {
  std::mt19937_64 rng(503);
  const auto g = test::random_stage_graph(rng, 2, 2);
  const link_costs L(test::random_topology(rng, 5, test::topo_kind::continuous));
  auto run = [&](std::vector<oracle_spec> specs) {
    auto log = std::make_shared<recording_oracle::log_t>();
    mapper_options o{.threads = 1, .restarts = false, .oracles = std::move(specs), .copy_cover_nodes = 777,
                     .local_search = false, .neighbourhood_search = false, .settle_nodes = 0};
    o.custom_oracles = {{"a", any_target_oracle(recording_oracle{"a", log})}, {"b", any_target_oracle(recording_oracle{"b", log})},
                        {"c", any_target_oracle(recording_oracle{"c", log})}};
    const auto r = map_devices(g, L, p2p_cost{}, o);
    CHECK(r.status == status::optimal);
    return std::make_pair(log, r);
  };
  using enum oracle_phase;
  // one-shot phases in order: before the search, then after the short runs (with restarts off:
  // before the first run), then the interleaved turn; each once per target
  const auto [log, r] = run({{.name = "c", .phase = interleaved, .nodes = 55}, {.name = "b", .phase = after_short_runs},
                             {.name = "a", .phase = before_search, .nodes = 12}});
  REQUIRE(r.searches >= 1);
  REQUIRE(log->names.size() == 3 * r.searches);
  for (std::size_t k = 0; k < log->names.size(); k += 3) {
    CHECK(log->names[k] == "a");
    CHECK(log->names[k + 1] == "b");
    CHECK(log->names[k + 2] == "c");
    CHECK(log->budgets[k] == 12);    // its own limit
    CHECK(log->budgets[k + 1] == 777);  // the default limit (copy_cover_nodes)
    CHECK(log->budgets[k + 2] == 55);   // restarts off: the interleaved turn gets its whole limit
  }
  REQUIRE(r.oracles.size() == 3);  // in portfolio order
  CHECK(r.oracles[0].name == "c");
  CHECK(r.oracles[2].name == "a");
  for (const auto& s : r.oracles) CHECK(s.asked == r.searches);
  // the same phase: the listed order
  const auto [log2, r2] = run({{.name = "b"}, {.name = "a"}});
  REQUIRE(log2->names.size() == 2 * r2.searches);
  for (std::size_t k = 0; k < log2->names.size(); k += 2) CHECK((log2->names[k] == "b" && log2->names[k + 1] == "a"));
}

TEST_CASE("oracles: a one-shot oracle capped at t is not asked at t or above, interleaved ones back off") {
  auto log = std::make_shared<recording_oracle::log_t>();
  detail::oracle_portfolio_run p;
  p.add({.name = "once", .phase = oracle_phase::before_search}, any_target_oracle(recording_oracle{"once", log, true}), 10);
  p.add({.name = "turns", .phase = oracle_phase::interleaved}, any_target_oracle(recording_oracle{"turns", log, true}), 10);
  target_search_result total;
  auto eval = [](const std::vector<std::size_t>&) { return 0.0; };
  CHECK(!p.ask_phase(oracle_phase::before_search, {.target = 5}, total, eval));
  CHECK(!p.ask_phase(oracle_phase::before_search, {.target = 6}, total, eval));
  CHECK(!p.ask_phase(oracle_phase::before_search, {.target = 4}, total, eval));
  CHECK(log->names == std::vector<std::string>{"once", "once"});  // not at 6 ≥ 5
  // each target where it gives up is a miss: after k ≥ 2 misses in a row, one target in 2^(k−1)
  std::vector<int> open;
  for (int k = 0; k < 9; ++k) {
    auto t = p.open_turns(true);
    open.push_back(t.any());
    if (t.any()) CHECK(!p.take_turns(t, 4096, {.target = 1}, total, eval));
  }
  CHECK(open == std::vector<int>{1, 1, 1, 0, 1, 0, 0, 0, 1});
  // capped by its row limit (exhausted): twice as fast, 2 misses per target
  detail::oracle_portfolio_run fast;
  fast.add({.name = "rows", .phase = oracle_phase::interleaved}, any_target_oracle(recording_oracle{"rows", log, true, true}), 10);
  std::vector<int> open_fast;
  for (int k = 0; k < 9; ++k) {
    auto t = fast.open_turns(true);
    open_fast.push_back(t.any());
    if (t.any()) CHECK(!fast.take_turns(t, 4096, {.target = 1}, total, eval));
  }
  CHECK(open_fast == std::vector<int>{1, 0, 1, 0, 0, 0, 0, 0, 1});
  const auto st = p.statistics();
  REQUIRE(st.size() == 2);
  CHECK(st[0].asked == 2);
  CHECK(st[0].unknown == 2);
  CHECK(st[1].asked == 5);
  p.forget();  // forgets the misses and the capped target
  CHECK(!p.ask_phase(oracle_phase::before_search, {.target = 6}, total, eval));
  CHECK(p.statistics()[0].asked == 3);
  CHECK(p.open_turns(true).any());
  CHECK(!total.completed);
}

TEST_CASE("oracles: portfolios by name and list, bad names are errors") {
  CHECK(parse_oracles("default").size() == 4);
  CHECK(parse_oracles("none").empty());
  const auto v = parse_oracles("line_ring,copy_cover");
  REQUIRE(v.size() == 2);
  CHECK(v[0].name == "line_ring");
  CHECK(v[0].phase == oracle_phase::before_search);
  CHECK(v[1].phase == oracle_phase::interleaved);
  CHECK(oracle_portfolio("rings").size() == 1);
  CHECK(oracles_without({"copy_cover", "line_ring"}).size() == 2);
  CHECK_THROWS_AS((void)parse_oracles("copy_cover,nope"), std::invalid_argument);
  CHECK_THROWS_AS((void)parse_oracles("copy_cover,copy_cover"), std::invalid_argument);
  CHECK_THROWS_AS((void)parse_oracles("copy_cover,,line_ring"), std::invalid_argument);
  CHECK_THROWS_AS((void)oracle_portfolio("fast"), std::invalid_argument);
  std::mt19937_64 rng(504);
  const auto g = test::random_stage_graph(rng, 2, 2);
  const link_costs L(test::random_topology(rng, 4, test::topo_kind::continuous));
  CHECK_THROWS_AS((void)map_devices(g, L, p2p_cost{}, {.oracles = {{.name = "unknown"}}}), std::invalid_argument);
  mapper_options o{.oracles = {{.name = "mine"}}};
  o.custom_oracles = {{"mine", any_target_oracle{}}};  // named but empty
  CHECK_THROWS_AS((void)map_devices(g, L, p2p_cost{}, o), std::invalid_argument);
}

}  // namespace devplace
