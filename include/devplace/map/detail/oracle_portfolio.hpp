#pragma once
/// \file map/detail/oracle_portfolio.hpp
/// The portfolio of target oracles of `mapping_search` (map/oracle.hpp): the oracles that apply,
/// in the order and phases of `mapper_options::oracles`, each with its node limit, the targets
/// at or above which a one-shot oracle is no longer asked, the back-off of the interleaved ones
/// and the per-oracle statistics. Shared by every search of one `mapping_search` (thread-safe).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/cover_oracles.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/map/symmetry.hpp"
#include "devplace/map/mapper_options.hpp"
#include "devplace/map/oracle.hpp"

namespace devplace::detail {

/// The oracle names of `o` are built-in or custom, each once; custom oracles are set.
template <int = 0>
void check_oracles(const mapper_options& o) {
  for (const auto& c : o.custom_oracles)
    if (c.name.empty() || !c.oracle) throw std::invalid_argument("mapper_options::custom_oracles: an oracle without a name or without an oracle");
  for (std::size_t i = 0; i < o.oracles.size(); ++i) {
    const auto& name = o.oracles[i].name;
    for (std::size_t j = 0; j < i; ++j)
      if (o.oracles[j].name == name) throw std::invalid_argument("mapper_options::oracles: '" + name + "' is listed twice");
    if (std::none_of(o.custom_oracles.begin(), o.custom_oracles.end(), [&](const auto& c) { return c.name == name; }))
      (void)builtin_oracle(name);  // throws for an unknown name
  }
}

template <int = 0>
class basic_oracle_portfolio_run {
 public:
  /// Adds an oracle that applies, with its spec (limit 0: `default_limit`).
  void add(const oracle_spec& spec, any_target_oracle o, std::uint64_t default_limit) {
    entries_.push_back(std::make_unique<entry>(spec, std::move(o), spec.nodes ? spec.nodes : default_limit));
  }
  [[nodiscard]] bool has(std::string_view name) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e->spec.name == name; });
  }

  /// Asks the oracles of a one-shot phase in order at `q.target` (each with its limit), until
  /// one answers; true then, with the answer in `total` (`eval`: the objective of a mapping).
  template <class Eval>
  bool ask_phase(oracle_phase p, oracle_query q, target_search_result& total, const Eval& eval) const {
    for (auto& e : entries_) {
      if (e->spec.phase != p || q.target >= e->capped_at.load(std::memory_order_relaxed)) continue;
      q.budget = e->limit;
      const auto a = ask(*e, q, total, eval);
      if (a.answer != oracle_answer::kind::unknown) return true;
      if (a.capped) atomic_lower(e->capped_at, q.target, std::memory_order_relaxed);
      if (interrupted(q.stop, q.deadline)) return false;
    }
    return false;
  }

  /// The interleaved oracles' turns at one target: whether each takes part, and its budget.
  struct turns {
    std::vector<char> open;
    std::vector<std::uint64_t> budget;
    [[nodiscard]] bool any() const { return std::find(open.begin(), open.end(), 1) != open.end(); }
  };
  /// Which interleaved oracles take part in a new target: after k ≥ 2 targets in a row where one
  /// gave up (capped), in one target out of 2^(k−1) only (with `restarts` off: always). Their
  /// first budget is min(limit, 2^18) (with `restarts` off: the limit).
  [[nodiscard]] turns open_turns(bool restarts) const {
    turns t{std::vector<char>(entries_.size(), 0), std::vector<std::uint64_t>(entries_.size(), 0)};
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      auto& e = *entries_[i];
      if (e.spec.phase != oracle_phase::interleaved) continue;
      const unsigned misses = e.misses.load(std::memory_order_relaxed);
      const std::uint64_t n = e.targets.fetch_add(1, std::memory_order_relaxed);
      t.open[i] = !restarts || misses < 2 || n % (std::uint64_t{1} << std::min(misses - 1, 40u)) == 0;
      t.budget[i] = restarts ? std::min<std::uint64_t>(e.limit, 1u << 18) : e.limit;
    }
    return t;
  }

  /// One turn of each open interleaved oracle, at least twice `run_budget` (the depth-first run's:
  /// its nodes are cheaper), doubling after each turn up to its limit; an oracle that gives up
  /// (capped) leaves the target. True when one answered (the answer in `total`).
  template <class Eval>
  bool take_turns(turns& t, std::uint64_t run_budget, oracle_query q, target_search_result& total, const Eval& eval) const {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (!t.open[i]) continue;
      auto& e = *entries_[i];
      q.budget = t.budget[i] = std::min(e.limit, std::max(t.budget[i], 2 * run_budget));
      const auto a = ask(e, q, total, eval);
      if (a.answer != oracle_answer::kind::unknown) {
        e.misses.store(0, std::memory_order_relaxed);
        return true;
      }
      if (a.capped) {
        e.misses.fetch_add(a.exhausted ? 2 : 1, std::memory_order_relaxed);
        t.open[i] = 0;
      } else {
        t.budget[i] = std::min(e.limit, 2 * t.budget[i]);
      }
      if (interrupted(q.stop, q.deadline)) return false;
    }
    return false;
  }

  /// Forgets what earlier targets taught the oracles and the portfolio (statistics stay).
  void forget() {
    for (auto& e : entries_) {
      e->oracle.forget();
      e->capped_at.store(std::numeric_limits<double>::infinity());
      e->misses.store(0);
      e->targets.store(0);
    }
  }

  /// What each oracle did so far, in portfolio order.
  [[nodiscard]] std::vector<oracle_stats> statistics() const {
    std::vector<oracle_stats> v;
    for (auto& e : entries_)
      v.push_back({e->spec.name, e->asked.load(), e->found.load(), e->refuted.load(), e->unknown.load(), e->nodes.load()});
    return v;
  }

 private:
  struct entry {
    entry(const oracle_spec& s, any_target_oracle o, std::uint64_t l) : spec(s), oracle(std::move(o)), limit(l) {}
    oracle_spec spec;
    any_target_oracle oracle;
    std::uint64_t limit;
    std::atomic<double> capped_at{std::numeric_limits<double>::infinity()};  // one-shot phases
    std::atomic<unsigned> misses{0};          // interleaved: targets in a row where it gave up
    std::atomic<std::uint64_t> targets{0};    // interleaved: targets it was considered for
    std::atomic<std::size_t> asked{0}, found{0}, refuted{0}, unknown{0};
    std::atomic<std::uint64_t> nodes{0};
  };

  /// Asks one oracle, counts its answer and records a decision in `total`.
  template <class Eval>
  static oracle_answer ask(entry& e, const oracle_query& q, target_search_result& total, const Eval& eval) {
    auto a = e.oracle.answer(q);
    ++e.asked;
    e.nodes += a.nodes;
    total.nodes += a.nodes;
    using kind = oracle_answer::kind;
    if (a.answer == kind::unknown) {
      ++e.unknown;
      return a;
    }
    total.completed = true;
    total.oracle = e.spec.name;
    if (a.answer == kind::found) {
      ++e.found;
      total.found = true;
      total.objective_ms = eval(a.dev);
      total.dev = a.dev;
    } else {
      ++e.refuted;
      total.next_lower_bound_ms = a.next_bound_ms;
    }
    return a;
  }

  std::vector<std::unique_ptr<entry>> entries_;
};

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using oracle_portfolio_run = basic_oracle_portfolio_run<>;

/// Fills `portfolio` with the oracles of `opt.oracles` that apply to the model and topology, in
/// its order (docs/mapping-oracles.md has where each applies): the built-in covers set up here
/// (the copy cover's twin classes into `twins`), a custom oracle as given; false once `deadline`
/// passed.
template <mapping_cost_model C>
bool make_portfolio(oracle_portfolio_run& portfolio, const mapper_options& opt, const stage_graph& g, const link_costs& L,
                    const C& model, const device_bound_table& table, const std::vector<std::vector<std::size_t>>& deps,
                    std::vector<std::size_t>& twins, std::chrono::steady_clock::time_point deadline) {
  auto expired = [&] { return std::chrono::steady_clock::now() >= deadline; };
  std::vector<std::pair<std::string, any_target_oracle>> built;
  auto wants = [&](std::string_view name) {
    return std::any_of(opt.oracles.begin(), opt.oracles.end(), [&](const oracle_spec& s) { return s.name == name; });
  };
  auto add = [&]<class O>(O o) { built.emplace_back(std::string(o.name()), any_target_oracle(std::move(o))); };
  std::optional<std::vector<std::vector<std::size_t>>> classes;  // the link classes, found once
  auto link_classes = [&]() -> const auto& {
    if (!classes) classes = find_link_classes(L, 16, deadline);
    return *classes;
  };
  const bool equal = g.uniform_replicas();
  const std::size_t rows = opt.max_copy_embeddings;
  if constexpr (cost_model_form_v<C> == model_form::copies) {
    if (wants("group_cover") && equal)
      if (auto nodes = find_node_structure(L);
          nodes && std::any_of(nodes->nodes.begin(), nodes->nodes.end(), [](const auto& d) { return d.size() >= 2; }))
        if (auto s = std::make_shared<group_cover_search>(g, L, std::move(*nodes), std::size_t{1} << 22, deadline); s->applies())
          add(cover_oracle<group_cover_search>(std::move(s), rows));
    if (wants("quotient_copy") && built.empty() && equal && L.symmetric() && !L.has_latency() && L.devices() <= 256 &&
        link_classes().size() < L.devices())
      if (auto s = std::make_shared<quotient_copy_search>(g, L, link_classes()); s->applies())
        add(cover_oracle<quotient_copy_search>(std::move(s), rows));
  }
  if (expired()) return false;
  if (wants("copy_cover") && g.replicas() >= 2 && copy_cover_applies(model, g, L, deps)) {
    twins = device_twins(L, deadline);  // the copy cover runs on the twin classes
    if (expired()) return false;
    add(copy_cover_oracle<C>(model, table, std::make_shared<copy_cover_search<C>>(g, L, table, deps, twins), rows,
                             opt.copy_cover_nodes));
  } else if (cost_model_form_v<C> == model_form::rings && nested_rings_apply(g, L)) {
    if (wants("line_ring") && L.symmetric() && L.devices() <= 512)
      if (auto s = std::make_shared<line_ring_search>(g, L, link_classes()); s->applies())
        add(cover_oracle<line_ring_search>(std::move(s), rows));
  }
  for (const auto& spec : opt.oracles) {
    auto custom = std::find_if(opt.custom_oracles.begin(), opt.custom_oracles.end(), [&](const auto& c) { return c.name == spec.name; });
    if (custom != opt.custom_oracles.end()) {
      portfolio.add(spec, custom->oracle, opt.copy_cover_nodes);
      continue;
    }
    auto b = std::find_if(built.begin(), built.end(), [&](const auto& x) { return x.first == spec.name; });
    if (b != built.end()) portfolio.add(spec, std::move(b->second), opt.copy_cover_nodes);
  }
  return !expired();
}

}  // namespace devplace::detail
