#pragma once
/// \file map/mapping_search.hpp
/// Algorithm 2 of the device mapper (see map/mapper.hpp for the whole method): `mapping_search`
/// precomputes the mapping order, the checking scheme, the per-device bounds and the symmetry
/// constraints once, then answers "is there a mapping with every stage time ≤ t?" for any number
/// of targets t, from any number of threads (`search` is const). Its options are in
/// map/mapper_options.hpp; the state of one depth-first search (allowed devices, the partial
/// mapping, the counting check) is in map/detail/search_state.hpp, the reach tables of its
/// Warnsdorff order in map/detail/warnsdorff.hpp; the target oracles asked before and between
/// its depth-first runs (`mapper_options::oracles`) in map/detail/oracle_portfolio.hpp.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/component_bounds.hpp"
#include "devplace/map/detail/oracle_portfolio.hpp"
#include "devplace/map/detail/p2p_pruning.hpp"
#include "devplace/map/detail/search_state.hpp"
#include "devplace/map/detail/warnsdorff.hpp"
#include "devplace/map/mapper_options.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/map/symmetry.hpp"
#include "devplace/status.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

/// Algorithm 2 with its precomputation (mapping order, checking scheme, per-device bounds,
/// symmetry constraints), reusable for any number of targets and threads (`search` is const).
/// Keeps references to `g` and `L`: they must outlive it.
///
/// The precomputation checks `setup_deadline` inside each of its loops (the ring-closure tables,
/// the per-device bounds, the assignment bound, the mapping order, the twins, signatures and
/// orbits); once it has passed, the rest is skipped and `ready()` is false: `search` then
/// answers at once, not completed, and `initial_lower_bound()` is the bound reached so far (0
/// before the per-device bounds are complete).
template <mapping_cost_model C>
class mapping_search {
 public:
  using clock = std::chrono::steady_clock;

  mapping_search(const stage_graph& g, const link_costs& L, C model = C{}, const mapper_options& o = {},
                 clock::time_point setup_deadline = clock::time_point::max())
      : g_(&g), L_(&L), model_(model), opt_(o), V_(g.vertices()), D_(L.devices()), W_((D_ + 63) / 64),
        setup_deadline_(setup_deadline) {
    if (V_ > D_)
      throw std::invalid_argument("mapping: " + std::to_string(g.stages()) + " stages x " +
                                  std::to_string(g.replicas()) + " replicas need " + std::to_string(V_) +
                                  " devices, the topology has " + std::to_string(D_));
    detail::check_oracles(o);
    check_mask_ = D_ >= 128 ? 15 : 1023;
    ready_ = setup();
  }

  /// Whether the precomputation finished before its deadline (else `search` does nothing).
  [[nodiscard]] bool ready() const noexcept { return ready_; }
  /// Whether the portfolio holds the oracle `name` (it applies to the model and topology).
  [[nodiscard]] bool oracle_applies(std::string_view name) const { return oracles_.has(name); }

  /// t_l0: the bottleneck-assignment bound (or eq. 10/11 with `assignment_bound = false`).
  [[nodiscard]] double initial_lower_bound() const noexcept { return lb0_; }
  /// The mapping order (G' vertices) and the per-device bounds b(v, d).
  [[nodiscard]] const std::vector<std::size_t>& order() const noexcept { return order_; }
  [[nodiscard]] const device_bound_table& device_bounds() const noexcept { return table_; }
  [[nodiscard]] const C& model() const noexcept { return model_; }

  /// Searches for a mapping whose every stage time is ≤ `target`. Stops (completed = false) when
  /// `*stop` becomes true or at `deadline`, and at once when the set-up is not `ready()`. `probe`:
  /// the target is the mapper's probe just above the lower end (`mapper_options::probe_gap`),
  /// where the cover turns list with 32 times their budget (map/detail/cover_oracles.hpp).
  /// `node_limit` (0: none) stops it, unanswered, once the runs and cover turns so far have
  /// explored that many nodes (checked between them, so a run may overshoot it by its own budget).
  ///
  /// The answer depends on the target and on what earlier targets taught the covers (the targets
  /// where their listings reached a limit, the cached listings), shared by concurrent searches;
  /// after `forget()` it depends on the target alone, as long as no deadline or stop interrupts.
  [[nodiscard]] target_search_result search(double target, const std::atomic<bool>* stop = nullptr,
                                            clock::time_point deadline = clock::time_point::max(), bool probe = false,
                                            std::uint64_t node_limit = 0) const {
    target_search_result total;
    if (!ready_) return total;
    const oracle_query q{.target = target, .stop = stop, .deadline = deadline, .probe = probe};
    auto eval = [&](const std::vector<std::size_t>& dev) {
      return evaluate_flat(*g_, *L_, model_, std::span<const std::size_t>(dev)).objective_ms;
    };
    auto halted = [&] { return (stop && stop->load()) || clock::now() >= deadline || (node_limit && total.nodes >= node_limit); };
    if (oracles_.ask_phase(oracle_phase::before_search, q, total, eval)) return total;
    // The per-target data (allowed devices, their groups; the reach tables of the Warnsdorff
    // order when first needed) is built once for all restarts.
    search_state st;
    st.t = target;
    init_allowed_devices(st);
    // Complete depth-first runs cycling through three value orders (by time, Warnsdorff's,
    // randomised by the round) under doubling node budgets: the first run that finishes answers
    // (docs/mapping.md, "Value ordering").
    std::uint64_t budget = 4096;
    // The interleaved oracles take turns with the runs from the third on (easy targets stay with
    // the first two short runs); the after-short-runs ones are asked once, before the third.
    auto turns = oracles_.open_turns(opt_.restarts);
    for (unsigned round = 0;; ++round) {
      if (round == (opt_.restarts ? 2u : 0u) && oracles_.ask_phase(oracle_phase::after_short_runs, q, total, eval)) return total;
      if (turns.any() && (round >= 2 || !opt_.restarts) && round % 2 == 0) {
        if (oracles_.take_turns(turns, budget, q, total, eval) || halted()) return total;
      }
      const bool last = !opt_.restarts || budget > (std::uint64_t{1} << 62);
      const unsigned kind = round % 3;
      const bool warnsdorff = kind == 1;
      if (warnsdorff && !st.reach_ready && !detail::init_reach<C>(st, *g_, *L_, D_, W_, stop, deadline)) return total;
      st.shuffle = kind == 2 ? 0x9E3779B97F4A7C15ull * (round + 1) : 0;
      auto r = dfs(st, stop, deadline, warnsdorff, last ? 0 : budget);
      total.nodes += r.nodes;
      if (r.completed || halted()) {
        r.nodes = total.nodes;
        return r;
      }
      if (kind == 2) budget *= 2;
    }
  }

  /// Forgets what earlier targets taught the oracles (`search`), so that the next search answers
  /// as a first one would. No search may run meanwhile.
  void forget() { oracles_.forget(); }

  /// What each oracle of the portfolio did so far (the oracles that apply, in portfolio order).
  [[nodiscard]] std::vector<oracle_stats> oracle_statistics() const { return oracles_.statistics(); }

 private:
  // ---------------------------------------------------------------- precomputation
  [[nodiscard]] bool expired() const { return clock::now() >= setup_deadline_; }

  /// The whole precomputation, step by step; false as soon as the set-up deadline has passed.
  bool setup() {
    const auto& g = *g_;
    const auto& L = *L_;
    // The model's own tables (the ring-closure walks, up to R · D³) get a quarter of the time
    // left: cut short they only weaken a bound, and the bound table and symmetries still follow.
    const auto now = clock::now();
    const auto prepare_deadline =
        setup_deadline_ == clock::time_point::max() || setup_deadline_ <= now ? setup_deadline_ : now + (setup_deadline_ - now) / 4;
    model_ = prepare_model(model_, g, L, prepare_deadline);
    if (expired()) return false;
    table_ = make_device_bound_table(g, L, model_, setup_deadline_);
    if (!table_.complete) return false;
    lb0_ = opt_.assignment_bound ? assignment_lower_bound(table_, setup_deadline_) : sorting_lower_bound(table_);
    if (expired()) return false;
    if (opt_.ring_component_bound) lb0_ = detail::raise_by_ring_components(g, L, model_, lb0_, setup_deadline_);
    if (opt_.copy_component_bound) lb0_ = detail::raise_by_copy_components(g, L, model_, lb0_, setup_deadline_);
    shared_ = model_shares_time(model_);
    // The replica symmetries are those of equal counts (copies, rings of one length).
    sym_ = opt_.symmetry_breaking && g.uniform_replicas() ? model_symmetry(model_, g, L) : replica_symmetry::none;
    deps_.resize(V_);
    related_.resize(V_);
    for (std::size_t v = 0; v < V_; ++v) {
      deps_[v] = model_.dependencies(g, v);
      for (auto u : deps_[v]) related_[v].push_back(u), related_[u].push_back(v);
    }
    for (auto& r : related_) {
      std::sort(r.begin(), r.end());
      r.erase(std::unique(r.begin(), r.end()), r.end());
    }
    if (expired()) return false;
    pressure_.assign(V_, std::numeric_limits<double>::infinity());  // min_d b(v, d)
    for (std::size_t v = 0; v < V_; ++v)
      for (std::size_t d = 0; d < D_; ++d) pressure_[v] = std::min(pressure_[v], table_(v, d));
    if (!make_order()) return false;
    make_checking_scheme();
    if (expired()) return false;
    // the oracles of `opt_.oracles` that apply (the copy cover's twin classes into `twins_`)
    if (!detail::make_portfolio(oracles_, opt_, g, L, model_, table_, deps_, twins_, setup_deadline_)) return false;
    if (expired()) return false;
    return make_symmetry();
  }

  bool make_order() {
    const auto& g = *g_;
    const std::size_t S = g.stages(), R = g.replicas();
    order_.clear();
    std::vector<double> stage_pressure(S);
    for (std::size_t s = 0; s < S; ++s) stage_pressure[s] = pressure_[g.vertex(s, 0)];
    if (sym_ == replica_symmetry::copies || (sym_ == replica_symmetry::none && cost_model_form_v<C> == model_form::copies)) {
      // replica-major, BFS over the stage graph from the most constrained stage
      const auto seq = g.breadth_first_stages(stage_pressure);
      for (std::size_t r = 0; r < R; ++r)
        for (auto s : seq)
          if (r < g.replicas(s)) order_.push_back(g.vertex(s, r));
    } else if (sym_ == replica_symmetry::rings || (sym_ == replica_symmetry::none && shared_)) {
      std::vector<std::size_t> seq(S);
      std::iota(seq.begin(), seq.end(), std::size_t{0});
      std::stable_sort(seq.begin(), seq.end(), [&](std::size_t a, std::size_t b) {
        if (stage_pressure[a] != stage_pressure[b]) return stage_pressure[a] > stage_pressure[b];
        return g.param_bytes(a) > g.param_bytes(b);
      });
      for (auto s : seq)
        for (std::size_t r = 0; r < g.replicas(s); ++r) order_.push_back(g.vertex(s, r));
    } else {
      // greedy: next is the vertex with the most placed related vertices, then the most constrained
      std::vector<std::size_t> placed_related(V_, 0);
      std::vector<char> done(V_, 0);
      for (std::size_t k = 0; k < V_; ++k) {
        if (expired()) return false;
        std::size_t best = unplaced;
        for (std::size_t v = 0; v < V_; ++v) {
          if (done[v]) continue;
          if (best == unplaced || placed_related[v] > placed_related[best] ||
              (placed_related[v] == placed_related[best] && pressure_[v] > pressure_[best]))
            best = v;
        }
        done[best] = 1;
        order_.push_back(best);
        for (auto u : related_[best]) ++placed_related[u];
      }
    }
    pos_.assign(V_, 0);
    for (std::size_t i = 0; i < V_; ++i) pos_[order_[i]] = i;
    return true;
  }

  void make_checking_scheme() {
    const auto& g = *g_;
    std::vector<std::size_t> comp(V_);  // position at which a vertex's time becomes exact
    for (std::size_t v = 0; v < V_; ++v) {
      comp[v] = pos_[v];
      for (auto u : deps_[v]) comp[v] = std::max(comp[v], pos_[u]);
    }
    if (shared_)
      for (std::size_t s = 0; s < g.stages(); ++s) {
        std::size_t c = 0;
        for (std::size_t r = 0; r < g.replicas(s); ++r) c = std::max(c, comp[g.vertex(s, r)]);
        for (std::size_t r = 0; r < g.replicas(s); ++r) comp[g.vertex(s, r)] = c;
      }
    fresh_.assign(V_, 1);
    for (std::size_t i = 0; i < V_; ++i)
      for (auto u : related_[order_[i]])
        if (pos_[u] < i) fresh_[i] = 0;
    own_exact_.assign(V_, 0);
    exact_.assign(V_, {});
    partial_.assign(V_, {});
    std::vector<std::vector<std::size_t>> sorted_deps;  // for the lookups below: O(log) each, not O(R)
    if (!shared_) {
      sorted_deps = deps_;
      for (auto& d : sorted_deps) std::sort(d.begin(), d.end());
    }
    for (std::size_t i = 0; i < V_; ++i) {
      const std::size_t v = order_[i];
      own_exact_[i] = comp[v] == i;
      if (shared_) continue;  // the stage's time is v's own
      for (auto u : related_[v]) {
        if (pos_[u] > i || !std::binary_search(sorted_deps[u].begin(), sorted_deps[u].end(), v)) continue;  // u placed, its time reads v
        if (comp[u] == i) exact_[i].push_back(u);
        else partial_[i].push_back(u);
      }
    }
  }

  bool make_symmetry() {
    const auto& g = *g_;
    const auto& L = *L_;
    const std::size_t S = g.stages(), R = g.replicas();
    lex_after_.assign(V_, {});
    auto add = [&](std::size_t earlier_vertex, std::size_t later_vertex) {
      lex_after_[pos_[later_vertex]].push_back(pos_[earlier_vertex]);
    };
    auto first_of = [&](auto&& in) {  // the vertex placed first among those `in` holds
      std::size_t first = unplaced;
      for (std::size_t v = 0; v < V_; ++v)
        if (in(v) && (first == unplaced || pos_[v] < pos_[first])) first = v;
      return first;
    };
    if (sym_ == replica_symmetry::copies) {
      for (std::size_t r = 0; r + 1 < R; ++r) {
        const std::size_t first = first_of([&](std::size_t v) { return g.replica_of_vertex(v) == r || g.replica_of_vertex(v) == r + 1; });
        const std::size_t s = g.stage_of_vertex(first), c = g.replica_of_vertex(first);
        add(first, g.vertex(s, c == r ? r + 1 : r));
      }
    } else if (sym_ == replica_symmetry::rings) {
      for (std::size_t s = 0; s < S; ++s) {
        std::size_t a = 0;
        for (std::size_t q = 1; q < R; ++q)
          if (pos_[g.vertex(s, q)] < pos_[g.vertex(s, a)]) a = q;
        for (std::size_t q = 0; q < R; ++q)
          if (q != a) add(g.vertex(s, a), g.vertex(s, q));  // rotations: the ring starts at its minimum
        if (L.symmetric() && R >= 3) {                       // reflection fixing a
          std::size_t b = unplaced;
          for (std::size_t q = 0; q < R; ++q) {
            const std::size_t mirror = (2 * a + 2 * R - q) % R;
            if (q == a || q == mirror) continue;
            if (b == unplaced || pos_[g.vertex(s, q)] < pos_[g.vertex(s, b)]) b = q;
          }
          if (b != unplaced) add(g.vertex(s, b), g.vertex(s, (2 * a + 2 * R - b) % R));
        }
      }
      // rings of stages with equal compute and parameters are interchangeable
      std::vector<std::size_t> seq(S);
      std::iota(seq.begin(), seq.end(), std::size_t{0});
      auto first_pos = [&](std::size_t s) {
        std::size_t p = V_;
        for (std::size_t q = 0; q < R; ++q) p = std::min(p, pos_[g.vertex(s, q)]);
        return p;
      };
      std::sort(seq.begin(), seq.end(), [&](std::size_t a, std::size_t b) { return first_pos(a) < first_pos(b); });
      for (std::size_t i = 0; i < S; ++i) {
        const std::size_t s1 = seq[i];
        for (std::size_t j = i + 1; j < S; ++j) {
          const std::size_t s2 = seq[j];
          if (g.compute_ms(s1) != g.compute_ms(s2) || g.param_bytes(s1) != g.param_bytes(s2)) continue;
          // the first position among both rings, and its partner in the other ring
          const std::size_t first = first_of([&](std::size_t v) { return g.stage_of_vertex(v) == s1 || g.stage_of_vertex(v) == s2; });
          const std::size_t fs = g.stage_of_vertex(first), q = g.replica_of_vertex(first);
          add(first, g.vertex(fs == s1 ? s2 : s1, q));
          break;  // chain consecutive members of the class
        }
      }
    }
    twin_prev_.assign(D_, unplaced);
    orbit0_.clear();
    orbit1_.assign(D_, {});
    if (!opt_.symmetry_breaking) return !expired();
    twin_prev_ = twins_.empty() ? device_twins(L, setup_deadline_) : twins_;
    if (expired()) return false;
    std::uint64_t budget = opt_.automorphism_budget;
    const auto cls = device_signature_classes(L, setup_deadline_);
    if (expired()) return false;
    orbit0_ = device_orbit_minima(L, cls, {}, budget, setup_deadline_);
    if (expired()) return false;
    // With budget left and every orbit a single device, the search found that only the identity
    // is an automorphism: every stabiliser is trivial too, nothing to look for.
    bool trivial = true;
    for (std::size_t d = 0; d < D_ && trivial; ++d) trivial = orbit0_[d] == d;
    if (V_ >= 2 && !(trivial && budget > 0))
      for (std::size_t d = 0; d < D_ && budget > 0; ++d) {
        if (expired()) return false;
        if (orbit0_[d] == d) orbit1_[d] = device_orbit_minima(L, cls, {d}, budget, setup_deadline_);
      }
    return !expired();
  }

  // ---------------------------------------------------------------- search
  using candidate = detail::mapping_candidate;
  using search_state = detail::mapping_search_state;

  /// The allowed devices of every vertex at target t, and the groups of equal allowed sets.
  void init_allowed_devices(search_state& st) const {
    detail::compute_allowed_devices(st, table_, V_, D_, W_, opt_.extra_pruning);
    if constexpr (cost_model_form_v<C> == model_form::copies)
      if (opt_.extra_pruning && opt_.domain_filtering) detail::filter_p2p_domains(st, *g_, *L_, table_, D_, W_);
    detail::group_allowed_devices(st, V_, W_);
  }

  /// The time of vertex v when `exact`, else its bound (before its dependencies are placed).
  [[nodiscard]] double value(const search_state& st, std::size_t v, bool exact) const {
    const std::span<const std::size_t> dv(st.dev);
    return exact ? static_cast<double>(model_.time(*g_, *L_, dv, v)) : static_cast<double>(model_.bound(*g_, *L_, dv, v));
  }

  /// The candidate devices of level i, sorted by the resulting own time.
  void expand(search_state& st, std::size_t i) const {
    auto& c = st.cands[i];
    c.clear();
    st.next[i] = 0;
    const std::size_t v = order_[i];
    // the first device symmetry breaking still allows, and the orbit filter, if any
    std::size_t min_dev = 0;
    for (auto j : lex_after_[i]) min_dev = std::max(min_dev, st.dev[order_[j]] + 1);
    const std::vector<std::size_t>* orbit = i == 0 && !orbit0_.empty()                        ? &orbit0_
                                            : i == 1 && !orbit1_[st.dev[order_[0]]].empty() ? &orbit1_[st.dev[order_[0]]]
                                                                                            : nullptr;
    const std::uint64_t* a = &st.allowed[v * W_];
    bool excluded = false;
    for (std::size_t w = 0; w < W_; ++w) {
      const std::uint64_t all_devices = w + 1 < W_ || D_ % 64 == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << (D_ % 64)) - 1;
      if (~st.used[w] & all_devices & ~a[w]) excluded = true;
      for (std::uint64_t bits = a[w] & ~st.used[w]; bits; bits &= bits - 1) {
        const std::size_t d = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        if (d < min_dev) continue;
        if (twin_prev_[d] != unplaced && !st.is_used(twin_prev_[d])) continue;
        if (orbit && (*orbit)[d] != d) continue;
        st.dev[v] = d;
        const double x = value(st, v, own_exact_[i]);
        st.dev[v] = unplaced;
        if (x > st.t && (opt_.extra_pruning || own_exact_[i])) {
          st.pruned_by(x);
          continue;
        }
        c.push_back({st.warnsdorff ? detail::onward_devices<C>(st, *g_, D_, W_, v, d) : 0.0, x, d});
      }
    }
    if (excluded) st.pruned_by(st.above[v]);
    if (st.shuffle) {  // a randomised restart: own times scaled by factors in [1, 2)
      for (auto& [key, x, d] : c) {
        st.shuffle ^= st.shuffle << 13, st.shuffle ^= st.shuffle >> 7, st.shuffle ^= st.shuffle << 17;
        key = x * (1.0 + static_cast<double>(st.shuffle >> 11) * 0x1.0p-53);
      }
      std::sort(c.begin(), c.end());
    } else if (!fresh_[i]) {
      std::sort(c.begin(), c.end());  // a fresh vertex: lowest free device first
    }
  }

  /// Places vertex v of level i on d (its own value x) and checks every vertex the checking
  /// scheme checks there; on success `tp` is the new partial objective. Undoes it on failure.
  [[nodiscard]] bool try_place(search_state& st, std::size_t i, std::size_t v, std::size_t d, double x, double& tp) const {
    st.occupy(v, d, st.group[v]);
    tp = st.tp[i];
    if (own_exact_[i]) tp = std::max(tp, x);
    // the vertices whose times become exact here, then (extra pruning) the bounds of the others
    auto within = [&](const std::vector<std::size_t>& us, bool exact) {
      for (auto u : us) {
        const double y = value(st, u, exact);
        if (y > st.t) {
          st.pruned_by(y);
          return false;
        }
        if (exact) tp = std::max(tp, y);
      }
      return true;
    };
    bool ok = within(exact_[i], true) && (!opt_.extra_pruning || within(partial_[i], false));
    if (ok && opt_.extra_pruning && !detail::free_devices_suffice(st, W_)) ok = false;
    if constexpr (cost_model_form_v<C> == model_form::copies)
      if (ok && opt_.extra_pruning && opt_.free_link_pruning && !detail::p2p_free_links_suffice(st, *g_, *L_, table_, D_, W_, v, d))
        ok = false;
    if (!ok) st.release(v, st.group[v]);
    return ok;
  }

  /// One depth-first search; `warnsdorff` orders candidates by their free onward devices first;
  /// stops (not completed) after `budget` nodes when budget > 0.
  /// `st` holds the per-target data (`init_allowed_devices`, and `init_reach` for Warnsdorff);
  /// the partial mapping is reset here.
  target_search_result dfs(search_state& st, const std::atomic<bool>* stop, clock::time_point deadline, bool warnsdorff,
                           std::uint64_t budget) const {
    target_search_result res;
    st.warnsdorff = warnsdorff;
    st.smallest_pruning_value = std::numeric_limits<double>::infinity();
    st.dev.assign(V_, unplaced);
    st.used.assign(W_, 0);
    st.tp.assign(V_ + 1, 0.0);
    st.cands.resize(V_);
    st.next.assign(V_, 0);
    st.left = st.group_size;
    std::size_t i = 0;
    expand(st, 0);
    std::uint64_t nodes = 0;
    for (;;) {
      if (st.next[i] == st.cands[i].size()) {  // exhausted: backtrack
        if (i == 0) break;
        --i;
        st.release(order_[i], st.group[order_[i]]);
        continue;
      }
      const auto [key, x, d] = st.cands[i][st.next[i]++];
      (void)key;
      const bool interrupted = ++nodes == budget ||
                               ((nodes & check_mask_) == 0 && ((stop && stop->load(std::memory_order_relaxed)) || clock::now() >= deadline));
      if (interrupted) {
        res.nodes = nodes;
        return res;
      }
      double tp = 0;
      if (!try_place(st, i, order_[i], d, x, tp)) continue;
      st.tp[i + 1] = tp;
      if (i + 1 == V_) {
        res.found = res.completed = true;
        res.dev = st.dev;
        res.objective_ms = tp;
        res.nodes = nodes;
        return res;
      }
      expand(st, ++i);
    }
    res.completed = true;
    res.next_lower_bound_ms = st.smallest_pruning_value;
    res.nodes = nodes;
    return res;
  }

  const stage_graph* g_;
  const link_costs* L_;
  C model_;
  mapper_options opt_;
  std::size_t V_, D_, W_;
  clock::time_point setup_deadline_;
  std::uint64_t check_mask_ = 1023;  // the clock is read every check_mask_ + 1 nodes (fewer on large topologies)
  bool ready_ = false;
  device_bound_table table_;
  double lb0_ = 0;
  bool shared_ = false;
  replica_symmetry sym_ = replica_symmetry::none;
  std::vector<std::vector<std::size_t>> deps_, related_;
  std::vector<double> pressure_;
  std::vector<std::size_t> order_, pos_;
  std::vector<char> own_exact_, fresh_;
  std::vector<std::vector<std::size_t>> exact_, partial_, lex_after_;
  std::vector<std::size_t> twin_prev_, orbit0_;
  std::vector<std::vector<std::size_t>> orbit1_;
  std::vector<std::size_t> twins_;  // device_twins, when the copy cover applies
  detail::oracle_portfolio_run oracles_;  // the oracles of `opt_.oracles` that apply
};

}  // namespace devplace
