#pragma once
/// \file map/oracle.hpp
/// The mapper's target oracles and their portfolio (docs/mapping-oracles.md). At a target t of
/// the binary search, an oracle answers "is there a mapping with every stage time ≤ t?" in one of
/// three ways: found (a mapping), refuted (every mapping has objective ≥ a next bound > t), or
/// unknown (a limit reached). The portfolio is data: which oracles run, in which order and phase
/// of `mapping_search::search`, with which node limit; it is chosen by name
/// (`oracle_portfolio("default")`, `parse_oracles("group_cover,copy_cover")`), and a user's own
/// oracle joins it through `mapper_options::custom_oracles`.
///
///   struct table_oracle {                        // a model of target_oracle
///     std::string_view name() const { return "table"; }
///     oracle_answer answer(const oracle_query& q) const;
///     void forget() {}
///   };
///   o.custom_oracles = {{"table", any_target_oracle(table_oracle{})}};
///   o.oracles.insert(o.oracles.begin(), {.name = "table", .phase = oracle_phase::before_search});
#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <initializer_list>
#include <utility>
#include <vector>

namespace devplace {

/// An oracle's answer at a target t.
struct oracle_answer {
  enum class kind { unknown, found, refuted };
  kind answer = kind::unknown;
  std::vector<std::size_t> dev;  ///< found: the mapping (device of vertex s·R + r), every stage time ≤ t
  /// refuted: every mapping has objective ≥ this, and it is > t
  double next_bound_ms = std::numeric_limits<double>::infinity();
  std::uint64_t nodes = 0;  ///< work done (listing steps, search nodes), added to the run's nodes
  /// unknown because a limit was reached that a larger budget at this target would reach too:
  /// the oracle is not asked again at this target (an interleaved one backs off, see oracle_phase)
  bool capped = false;
  /// capped by its row limit (`mapper_options::max_copy_embeddings`), which no budget lifts: an
  /// interleaved oracle backs off twice as fast
  bool exhausted = false;
};

/// What an oracle is asked: the target, its node budget (the spec's limit; for interleaved
/// oracles a doubling share of it), when to stop, and whether the target is the mapper's probe
/// just above the lower end (`mapper_options::probe_gap`).
struct oracle_query {
  double target = 0;
  std::uint64_t budget = 0;
  const std::atomic<bool>* stop = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool probe = false;
};

/// A target oracle.
///
/// Valid expressions (o: O, co: const O, q: oracle_query):
///   co.name()     -> convertible to std::string_view: the name in the portfolio and statistics
///   co.answer(q)  -> oracle_answer; may be called from several threads at once
///   o.forget()    -> forgets what earlier targets taught it (no answer runs meanwhile)
/// Semantic requirements: found → `dev` is a mapping with every stage time ≤ q.target under the
/// mapper's model (it is evaluated again); refuted → no mapping has objective < next_bound_ms.
template <class O>
concept target_oracle = requires(O& o, const O& co, const oracle_query& q) {
  { co.name() } -> std::convertible_to<std::string_view>;
  { co.answer(q) } -> std::same_as<oracle_answer>;
  o.forget();
};

/// Any target oracle, type-erased (copies share the oracle and what it learnt).
class any_target_oracle {
 public:
  any_target_oracle() = default;
  template <target_oracle O>
    requires(!std::same_as<std::remove_cvref_t<O>, any_target_oracle>)
  explicit any_target_oracle(O o) : self_(std::make_shared<model<O>>(std::move(o))) {}

  [[nodiscard]] explicit operator bool() const noexcept { return self_ != nullptr; }
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  [[nodiscard]] oracle_answer answer(const oracle_query& q) const { return self_->answer(q); }
  void forget() { self_->forget(); }

 private:
  struct concept_t {
    virtual ~concept_t() = default;
    [[nodiscard]] virtual std::string_view name() const = 0;
    [[nodiscard]] virtual oracle_answer answer(const oracle_query& q) const = 0;
    virtual void forget() = 0;
  };
  template <class O>
  struct model final : concept_t {
    explicit model(O x) : o(std::move(x)) {}
    [[nodiscard]] std::string_view name() const override { return o.name(); }
    [[nodiscard]] oracle_answer answer(const oracle_query& q) const override { return o.answer(q); }
    void forget() override { o.forget(); }
    O o;
  };
  std::shared_ptr<concept_t> self_;
};

/// Where in `mapping_search::search` an oracle is asked:
///   before_search:    once, before any depth-first run;
///   after_short_runs: once, after the first two short runs failed (with `restarts` off: first);
///   interleaved:      taking turns with the depth-first runs from the third on, with doubling
///                     budgets up to its limit; after k ≥ 2 targets in a row where it gave up
///                     (capped), it takes part in one target out of 2^(k−1) only.
enum class oracle_phase { before_search, after_short_runs, interleaved };

/// One oracle of a portfolio: its name (a built-in, or one of `mapper_options::custom_oracles`),
/// its phase, and its node limit per target (0: its default, derived from
/// `mapper_options::copy_cover_nodes`).
struct oracle_spec {
  std::string name;
  oracle_phase phase = oracle_phase::before_search;
  std::uint64_t nodes = 0;
};

/// A user's oracle, named for `mapper_options::oracles`.
struct custom_oracle {
  std::string name;
  any_target_oracle oracle;
};

/// What one oracle did in a run: targets asked (each interleaved turn counts), answered found,
/// refuted, unknown, and its nodes.
struct oracle_stats {
  std::string name;
  std::size_t asked = 0, found = 0, refuted = 0, unknown = 0;
  std::uint64_t nodes = 0;
  [[nodiscard]] std::size_t answered() const noexcept { return found + refuted; }
};

/// Adds the statistics `from` into `into`, oracle by oracle (by name; new names appended).
inline void add_oracle_stats(std::vector<oracle_stats>& into, const std::vector<oracle_stats>& from) {
  for (const auto& f : from) {
    auto it = std::find_if(into.begin(), into.end(), [&](const oracle_stats& x) { return x.name == f.name; });
    if (it == into.end()) {
      into.push_back(f);
      continue;
    }
    it->asked += f.asked, it->found += f.found, it->refuted += f.refuted, it->unknown += f.unknown, it->nodes += f.nodes;
  }
}

/// The built-in oracles in the default order, each in its phase (docs/mapping-oracles.md): the
/// node-group, quotient copy and line ring covers before the search, the copy cover interleaved
/// with the depth-first runs. Each applies only where its model
/// form and topology allow; the others are left out at set-up.
[[nodiscard]] inline std::vector<oracle_spec> default_oracles() {
  using enum oracle_phase;
  return {{"group_cover", before_search}, {"quotient_copy", before_search}, {"line_ring", before_search}, {"copy_cover", interleaved}};
}

/// The spec of a built-in oracle by name (its default phase); throws std::invalid_argument for
/// an unknown name.
[[nodiscard]] inline oracle_spec builtin_oracle(std::string_view name) {
  for (auto& s : default_oracles())
    if (s.name == name) return s;
  throw std::invalid_argument("oracles: unknown oracle '" + std::string(name) +
                              "' (built-in: group_cover, quotient_copy, line_ring, copy_cover)");
}

/// A named portfolio: "default" (every built-in oracle), "none" (the depth-first search alone),
/// "copies" (group_cover, quotient_copy, copy_cover), "rings" (line_ring). Throws
/// std::invalid_argument for another name.
[[nodiscard]] inline std::vector<oracle_spec> oracle_portfolio(std::string_view name) {
  auto pick = [](std::initializer_list<std::string_view> names) {
    std::vector<oracle_spec> v;
    for (auto n : names) v.push_back(builtin_oracle(n));
    return v;
  };
  if (name == "default") return default_oracles();
  if (name == "none") return {};
  if (name == "copies") return pick({"group_cover", "quotient_copy", "copy_cover"});
  if (name == "rings") return pick({"line_ring"});
  throw std::invalid_argument("oracles: unknown portfolio '" + std::string(name) + "' (default, none, copies, rings)");
}

/// A portfolio from text: a named portfolio, or comma-separated built-in oracle names in the order
/// they are asked (each in its default phase). Throws std::invalid_argument naming what is wrong.
[[nodiscard]] inline std::vector<oracle_spec> parse_oracles(std::string_view text) {
  for (std::string_view named : {"default", "none", "copies", "rings"})
    if (text == named) return oracle_portfolio(text);
  std::vector<oracle_spec> v;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto name = text.substr(0, comma);
    if (name.empty()) throw std::invalid_argument("oracles: empty name in the list");
    for (auto& s : v)
      if (s.name == name) throw std::invalid_argument("oracles: '" + std::string(name) + "' is listed twice");
    v.push_back(builtin_oracle(name));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return v;
}

/// The portfolio `all` without the oracles named in `names` (for options written inline).
[[nodiscard]] inline std::vector<oracle_spec> oracles_without(std::initializer_list<std::string_view> names,
                                                              std::vector<oracle_spec> all = default_oracles()) {
  std::erase_if(all, [&](const oracle_spec& s) { return std::find(names.begin(), names.end(), s.name) != names.end(); });
  return all;
}

}  // namespace devplace
