#pragma once
/// \file mcm/engine.hpp
/// `constraint_engine`: the CP-lite domain store of MCM partitioning (seed-mcm §2.6), with
/// the `get_domain` / `set_domain` interface the paper's Algorithms 1 and 2 drive.
///
/// State: a chip bitset domain per operator (`chip_mask`, one word, when C <= 64; a
/// `wide_chip_mask` of 16 words, C <= 1024, in `wide_constraint_engine`), the chip edges ED realised by two fixed
/// endpoints, the chip reachability R (closure of ED and of the implied reachability: fixed w ~> x
/// in the graph with f(w) < f(x) forces f(w) ~> f(x) in the chip graph), per operator the chips of
/// its fixed ancestors and descendants, support counters, and a trail for undo.
///
/// Propagators (all sound: a removed value has no valid completion):
///  - eq. 2: bounds consistency along every edge;
///  - eq. 3: with m = max lower bound, every chip d < m needs an operator: none left fails, one
///    left is fixed to d; in every window of chips below m, the chips no fixed operator covers
///    need as many runs of unfixed domains meeting the window (Hall, relaxed to runs); in these
///    counts a span cluster (u, the operators between, v of an edge u -> v with operators
///    between: two chips by the span rule) covers at most two chips, not one per operator;
///  - eq. 4: fail when a chip edge a -> b has another path a ~> c ~> b; forward-check an edge with
///    one fixed endpoint against (i) an existing other path, (ii) making a second path for an
///    existing chip edge, (iii) the between lemma with fixed ancestors / descendants; and when an
///    edge u -> v is fixed across chips a < b, every operator between u and v is restricted to
///    {a, b} (the between lemma).
/// `set_domain(u, mask)` pushes a decision, propagates, and on failure pops decisions (refuting
/// each popped one) until propagation succeeds; it returns the new decision depth.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/algorithm/reachability.hpp"
#include "devplace/dag/concepts.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/mcm/chip_mask.hpp"

namespace devplace::mcm {

/// The engine over chip sets of type `Mask` (`chip_mask` or `wide_chip_mask<W>`); use the aliases
/// `constraint_engine` (C <= 64), `wide_constraint_engine_t<W>` (C <= 64 W), `wide_constraint_engine`
/// (C <= 1024), or `with_engine`, which picks the narrowest that fits.
template <class Mask>
class basic_constraint_engine {
 public:
  using mask_type = Mask;
  using traits = mask_traits<Mask>;
  static constexpr std::size_t max_chips = traits::capacity;

  /// Any `dag`; C in 1 .. max_chips. Throws std::invalid_argument otherwise or on a cycle.
  template <dag G>
  basic_constraint_engine(const G& g, std::size_t chips) : g_(to_csr_dag(g)), C_(chips) {
    if (C_ == 0 || C_ > max_chips)
      throw std::invalid_argument("mcm::constraint_engine: chips must be in 1.." + std::to_string(max_chips) + ", got " +
                                  std::to_string(C_) + (C_ > max_chips && max_chips == 64 ? " (use wide_constraint_engine or with_engine)" : ""));
    if (!topological_sort(g_)) throw std::invalid_argument("mcm::constraint_engine: the graph has a cycle");
    reach_ = reachability_index(g_);
    init();
  }
  // The trail points into the engine's own arrays: moving keeps them, copying would not.
  basic_constraint_engine(const basic_constraint_engine&) = delete;
  basic_constraint_engine& operator=(const basic_constraint_engine&) = delete;
  basic_constraint_engine(basic_constraint_engine&&) noexcept = default;
  basic_constraint_engine& operator=(basic_constraint_engine&&) noexcept = default;

  [[nodiscard]] std::size_t num_vertices() const noexcept { return n_; }
  [[nodiscard]] std::size_t chips() const noexcept { return C_; }
  [[nodiscard]] const csr_dag& graph() const noexcept { return g_; }
  [[nodiscard]] Mask full_domain() const noexcept { return traits::upto(C_ - 1); }

  /// The live domain of operator u.
  [[nodiscard]] const Mask& get_domain(std::size_t u) const noexcept { return dom_[u]; }
  /// Number of decisions on the stack.
  [[nodiscard]] std::size_t depth() const noexcept { return stack_.size(); }
  /// Decisions undone below the one that failed (the restart policy counts these).
  [[nodiscard]] std::size_t backtracks() const noexcept { return backtracks_; }
  /// Failed decisions refuted at once (the value is removed and the depth stays the same).
  [[nodiscard]] std::size_t refutations() const noexcept { return refutations_; }
  /// Failed propagations by the propagator that failed: eq. 2 bounds, a fixed operator's chip
  /// edges and between lemma, the eq. 4 check, the eq. 4 forward checks, eq. 3.
  [[nodiscard]] const std::array<std::size_t, 5>& failure_counts() const noexcept { return failures_; }
  /// True when propagation failed with no decision left to refute (cannot happen without
  /// outside restrictions: f = 0 is always valid).
  [[nodiscard]] bool root_failed() const noexcept { return root_failed_; }
  [[nodiscard]] bool all_fixed() const noexcept {
    for (auto d : dom_) if (!single(d)) return false;
    return true;
  }
  /// The chip of every operator (valid when all are fixed).
  [[nodiscard]] std::vector<int> assignment() const {
    std::vector<int> f(n_);
    for (std::size_t u = 0; u < n_; ++u) f[u] = static_cast<int>(low(dom_[u]));
    return f;
  }

  /// Restricts u's domain to `mask` as one decision and propagates; backtracks (refuting popped
  /// decisions) on failure. Returns the new depth. Throws std::invalid_argument on u >= N.
  std::size_t set_domain(std::size_t u, const Mask& mask) {
    if (u >= n_) throw std::invalid_argument("mcm::constraint_engine::set_domain: no operator " + std::to_string(u));
    stack_.push_back({u, mask, trail_.size()});
    if (restrict(u, dom_[u] & mask) && propagate()) return stack_.size();
    for (bool first = true;; first = false) {
      if (stack_.empty()) {
        root_failed_ = true;
        return 0;
      }
      const decision d = stack_.back();
      stack_.pop_back();
      undo_to(d.mark);
      ++(first ? refutations_ : backtracks_);
      if (restrict(d.u, dom_[d.u] & ~d.mask) && propagate()) return stack_.size();
    }
  }

  /// Undoes every decision (back to the root state).
  void reset() {
    stack_.clear();
    undo_to(0);
    root_failed_ = false;
  }

 private:
  struct decision {
    std::size_t u;
    Mask mask;
    std::size_t mark;
  };
  struct trail_entry {
    Mask* where;
    Mask old;
    std::uint32_t node;  // the operator when `where` is a domain, else npos
  };
  static constexpr std::uint32_t npos = 0xffffffffu;

  static bool single(const Mask& m) noexcept { return single_chip(m); }
  static std::size_t low(const Mask& m) noexcept { return lowest_chip(m); }
  static std::size_t high(const Mask& m) noexcept { return highest_chip(m); }
  static Mask bit(std::size_t c) noexcept { return traits::bit(c); }

  void init() {
    n_ = g_.num_vertices();
    dom_.assign(n_, full_domain());
    anc_chips_.assign(n_, Mask{});
    desc_chips_.assign(n_, Mask{});
    ed_.assign(C_, Mask{}), R_.assign(C_, Mask{}), RC_.assign(C_, Mask{}), F_.assign(C_, Mask{}), FC_.assign(C_, Mask{});
    cnt_.assign(C_, static_cast<std::uint32_t>(n_));
    cnt_fixed_.assign(C_, 0);
    if (C_ == 1) cnt_fixed_[0] = static_cast<std::uint32_t>(n_);
    inq_.assign(n_, 0);
    span_u_.clear(), span_v_.clear();
    incident_.assign(n_, {});
    for (std::size_t u = 0; u < n_; ++u)
      for (auto v : g_.out_edges(u))
        if (reach_.descendants(u).intersects(reach_.ancestors(v))) {
          incident_[u].push_back(span_u_.size());
          incident_[v].push_back(span_u_.size());
          span_u_.push_back(u), span_v_.push_back(v);
        }
    span_chips_.assign(span_u_.size(), Mask{});
    make_clusters();
  }

  /// Disjoint clusters of operators that share at most two chips in every valid partition: by
  /// the span rule an edge u -> v with operators between uses two chips on u, v and everything
  /// between, so any subset does too. Spans are taken largest first; each keeps the operators no
  /// larger span took (a cluster of fewer than three operators would not tighten the counting).
  void make_clusters() {
    cluster_of_.assign(n_, npos);
    cluster_start_.assign(1, 0);
    cluster_members_.clear();
    std::vector<std::size_t> size(span_u_.size()), by_size(span_u_.size());
    for (std::size_t k = 0; k < span_u_.size(); ++k) {
      const auto& d = reach_.descendants(span_u_[k]);
      const auto& a = reach_.ancestors(span_v_[k]);
      for (std::size_t w = 0; w < d.num_words(); ++w) size[k] += static_cast<std::size_t>(std::popcount(d.words()[w] & a.words()[w]));
      by_size[k] = k;
    }
    std::stable_sort(by_size.begin(), by_size.end(), [&](std::size_t x, std::size_t y) { return size[x] > size[y]; });
    std::vector<std::size_t> free;
    for (auto k : by_size) {
      free.clear();
      const auto& d = reach_.descendants(span_u_[k]);
      const auto& a = reach_.ancestors(span_v_[k]);
      for (std::size_t w = 0; w < d.num_words(); ++w)
        for (std::uint64_t x = d.words()[w] & a.words()[w]; x; x &= x - 1) {
          const std::size_t o = w * 64 + static_cast<std::size_t>(std::countr_zero(x));
          if (cluster_of_[o] == npos) free.push_back(o);
        }
      for (auto o : {span_u_[k], span_v_[k]})
        if (cluster_of_[o] == npos) free.push_back(o);
      if (free.size() < 3) continue;
      const auto id = static_cast<std::uint32_t>(cluster_start_.size() - 1);
      for (auto o : free) cluster_of_[o] = id, cluster_members_.push_back(o);
      cluster_start_.push_back(cluster_members_.size());
    }
  }

  void save(Mask& w, std::uint32_t node = npos) { trail_.push_back({&w, w, node}); }
  void set_word(Mask& w, const Mask& v) {
    if (w == v) return;
    save(w);
    w = v;
  }

  void undo_to(std::size_t mark) {
    while (trail_.size() > mark) {
      const trail_entry e = trail_.back();
      trail_.pop_back();
      if (e.node != npos) count_change(*e.where, e.old);
      *e.where = e.old;
    }
    queue_.clear(), fixq_.clear(), spanq_.clear();
    std::fill(inq_.begin(), inq_.end(), 0);
    chips_dirty_ = true, sweep_ = false;
  }

  void count_change(const Mask& from, const Mask& to) {
    for_each_chip(from & ~to, [&](std::size_t c) { --cnt_[c]; });
    for_each_chip(to & ~from, [&](std::size_t c) { ++cnt_[c]; });
    if (single(from)) --cnt_fixed_[low(from)];
    if (single(to)) ++cnt_fixed_[low(to)];
  }

  /// dom[u] := m (a subset); false when empty.
  bool restrict(std::size_t u, const Mask& m) {
    const Mask old = dom_[u];
    if (m == old) return true;
    if (!any_chip(m)) return false;
    save(dom_[u], static_cast<std::uint32_t>(u));
    count_change(old, m);
    dom_[u] = m;
    if (!inq_[u]) inq_[u] = 1, queue_.push_back(u);
    if (single(m)) fixq_.push_back(u);
    return true;
  }

  bool fail(int k) { ++failures_[k]; return false; }
  bool propagate() {
    for (;;) {
      if (!queue_.empty()) {
        const std::size_t u = queue_.back();
        queue_.pop_back();
        inq_[u] = 0;
        const Mask ge = traits::from(low(dom_[u])), le = traits::upto(high(dom_[u]));
        for (auto v : g_.out_edges(u)) if (!restrict(v, dom_[v] & ge)) return fail(0);
        for (auto w : g_.in_edges(u)) if (!restrict(w, dom_[w] & le)) return fail(0);
        continue;
      }
      if (!fixq_.empty()) {
        const std::size_t u = fixq_.back();
        fixq_.pop_back();
        if (!single(dom_[u])) return fail(1);
        if (!on_fixed(u)) return fail(1);
        continue;
      }
      if (!spanq_.empty()) {
        const std::size_t k = spanq_.back();
        spanq_.pop_back();
        if (!span_rule(k)) return fail(1);
        continue;
      }
      if (chips_dirty_) {
        chips_dirty_ = false;
        if (!triangle_free()) return fail(2);
        forbidden_edges();
        sweep_ = true;
      }
      if (sweep_) {
        sweep_ = false;
        if (!forward_check()) return fail(3);
        if (!queue_.empty() || !fixq_.empty()) continue;
      }
      if (!no_skip()) return fail(4);
      if (queue_.empty() && fixq_.empty() && !chips_dirty_) return true;
    }
  }

  // ---- eq. 4 bookkeeping
  void add_reach(std::size_t a, std::size_t b) {
    if (has_chip(R_[a], b)) return;
    const Mask to = R_[b] | bit(b), from = RC_[a] | bit(a);
    for_each_chip(from, [&](std::size_t x) { set_word(R_[x], R_[x] | to); });
    for_each_chip(to, [&](std::size_t y) { set_word(RC_[y], RC_[y] | from); });
    chips_dirty_ = true;
  }
  bool add_chip_edge(std::size_t a, std::size_t b, std::size_t u, std::size_t v) {
    if (!has_chip(ed_[a], b)) {
      set_word(ed_[a], ed_[a] | bit(b));
      add_reach(a, b);
      chips_dirty_ = true;
    }
    // between lemma: every operator on a path u ~> w ~> v sits on a or b
    const Mask ab = bit(a) | bit(b);
    const auto& d = reach_.descendants(u);
    const auto& an = reach_.ancestors(v);
    const auto* dw = d.words();
    const auto* aw = an.words();
    for (std::size_t k = 0; k < d.num_words(); ++k)
      for (std::uint64_t x = dw[k] & aw[k]; x; x &= x - 1) {
        const std::size_t w = k * 64 + static_cast<std::size_t>(std::countr_zero(x));
        if (!restrict(w, dom_[w] & ab)) return false;
      }
    return true;
  }

  bool on_fixed(std::size_t u) {
    const std::size_t a = low(dom_[u]);
    const Mask ba = bit(a);
    for (auto v : g_.out_edges(u))
      if (single(dom_[v]) && dom_[v] != ba && !add_chip_edge(a, low(dom_[v]), u, v)) return false;
    for (auto w : g_.in_edges(u))
      if (single(dom_[w]) && dom_[w] != ba && !add_chip_edge(low(dom_[w]), a, w, u)) return false;
    for_each_chip(anc_chips_[u] & ~ba, [&](std::size_t x) { add_reach(x, a); });
    for_each_chip(desc_chips_[u] & ~ba, [&](std::size_t x) { add_reach(a, x); });
    const auto& an = reach_.ancestors(u);
    const auto& de = reach_.descendants(u);
    for (std::size_t k = 0; k < span_u_.size(); ++k)
      if (!has_chip(span_chips_[k], a) && an.test(span_u_[k]) && de.test(span_v_[k])) {
        set_word(span_chips_[k], span_chips_[k] | ba);
        spanq_.push_back(k);
      }
    for (auto k : incident_[u]) spanq_.push_back(k);
    reach_.descendants(u).for_each([&](std::size_t x) {
      if (!has_chip(anc_chips_[x], a)) set_word(anc_chips_[x], anc_chips_[x] | ba);
    });
    reach_.ancestors(u).for_each([&](std::size_t x) {
      if (!has_chip(desc_chips_[x], a)) set_word(desc_chips_[x], desc_chips_[x] | ba);
    });
    sweep_ = true;
    return true;
  }

  /// Edge u -> v with operators between them (another path u ~> w ~> v): u, v and everything
  /// between use at most two chips, u the lower and v the higher (the between lemma).
  bool span_rule(std::size_t k) {
    const std::size_t u = span_u_[k], v = span_v_[k];
    Mask S = span_chips_[k];
    if (single(dom_[u])) S |= dom_[u];
    if (single(dom_[v])) S |= dom_[v];
    const std::size_t used = chip_count(S);
    if (used >= 3) return false;
    if (used == 2) return restrict(u, dom_[u] & bit(low(S))) && restrict(v, dom_[v] & bit(high(S)));
    const Mask inner = span_chips_[k];
    if (chip_count(inner) == 1) {  // u or v sits on the inner chip
      if (!any_chip(dom_[u] & inner)) return restrict(v, dom_[v] & inner);
      if (!any_chip(dom_[v] & inner)) return restrict(u, dom_[u] & inner);
    }
    return true;
  }

  /// Fails when a chip edge a -> b has another path a -> c ~> b.
  bool triangle_free() const {
    for (std::size_t a = 0; a < C_; ++a) {
      bool bad = false;
      for_each_chip(ed_[a], [&](std::size_t b) { bad = bad || any_chip(R_[a] & RC_[b]); });
      if (bad) return false;
    }
    return true;
  }

  /// F[a] bit b: a new chip edge a -> b (a < b, not yet in ED) would break eq. 4.
  void forbidden_edges() {
    std::fill(F_.begin(), F_.end(), Mask{});
    std::fill(FC_.begin(), FC_.end(), Mask{});
    for (std::size_t a = 0; a < C_; ++a) {
      // heads of the chip edges leaving a or a chip that reaches a: a new edge a -> b makes a
      // second path x ~> a -> b ~> y for each such edge x -> y with y in {b} + R[b] (ed[a] has
      // no b here, so the edge a -> b itself is never among them)
      Mask heads = ed_[a];
      for_each_chip(RC_[a], [&](std::size_t x) { heads |= ed_[x]; });
      for (std::size_t b = a + 1; b < C_; ++b) {
        if (has_chip(ed_[a], b)) continue;
        const bool bad = any_chip(R_[a] & RC_[b])                // (i) another path a ~> c ~> b exists
                         || any_chip(heads & (R_[b] | bit(b)));  // (ii) second path for an edge x -> y
        if (bad) F_[a] |= bit(b), FC_[b] |= bit(a);
      }
    }
  }

  /// Forward checks of every edge with exactly one fixed endpoint.
  bool forward_check() {
    for (std::size_t u = 0; u < n_; ++u) {
      const Mask du = dom_[u];
      if (!single(du)) continue;
      const std::size_t a = low(du);
      for (auto v : g_.out_edges(u)) {
        if (single(dom_[v])) continue;
        Mask keep = ~F_[a];
        if (const Mask cs = anc_chips_[v] & R_[a]; any_chip(cs)) keep &= traits::upto(low(cs));  // (iii)
        if (!restrict(v, dom_[v] & keep)) return false;
      }
      for (auto w : g_.in_edges(u)) {
        if (single(dom_[w])) continue;
        Mask keep = ~FC_[a];
        if (const Mask cs = desc_chips_[w] & RC_[a]; any_chip(cs)) keep &= traits::from(high(cs));  // (iii)
        if (!restrict(w, dom_[w] & keep)) return false;
      }
    }
    return true;
  }

  /// Per cluster: the chips its unfixed operators can still add (two less the chips of its
  /// fixed ones), the two lowest lowest chips and the highest chip of its unfixed operators.
  void update_clusters() {
    cluster_now_.resize(cluster_start_.size() - 1);
    for (std::size_t k = 0; k + 1 < cluster_start_.size(); ++k) {
      Mask used{};
      cluster_state ci{0, C_, C_, 0};
      bool any = false;
      for (std::size_t i = cluster_start_[k]; i < cluster_start_[k + 1]; ++i) {
        const Mask& d = dom_[cluster_members_[i]];
        if (single(d)) {
          used |= d;
          continue;
        }
        any = true;
        const std::size_t l = low(d);
        if (l < ci.lo) ci.lo2 = ci.lo, ci.lo = l;
        else if (l < ci.lo2) ci.lo2 = l;
        ci.hi = std::max(ci.hi, high(d));
      }
      const std::size_t u_n = chip_count(used);
      ci.free = any && u_n < 2 ? 2 - u_n : 0;
      cluster_now_[k] = ci;
    }
  }

  /// eq. 3 by windows: chips 0 .. m-1 must all be used (an operator sits at >= m). In every
  /// window [x, y] of them, the chips no fixed operator covers need distinct unfixed operators
  /// whose domain meets the window; the maximal runs of consecutive chips of the unfixed domains
  /// that meet it are at least as many (Hall's condition, relaxed to runs: sound).
  bool windows_coverable(std::size_t m) {
    start_gt_.assign(m + 1, 0), end_lt_.assign(m + 1, 0);
    std::size_t runs = 0;
    for (std::size_t u = 0; u < n_; ++u) {
      const Mask& d = dom_[u];
      if (single(d) || low(d) >= m || cluster_of_[u] != npos) continue;
      for_each_chip(d, [&](std::size_t c) {
        const bool starts = c == 0 || !has_chip(d, c - 1), ends = !has_chip(d, c + 1);
        if (starts) ++runs, ++start_gt_[std::min(c, m)];  // histogram of run starts (capped at m)
        if (ends && c + 1 < m) ++end_lt_[c + 1];          // histogram of run ends + 1
      });
    }
    // a cluster covers at most `free` chips, all within [lo, hi] of its unfixed operators: as
    // many runs [lo, hi] (a relaxation of its operators' domains)
    for (const auto& ci : cluster_now_) {
      if (ci.free == 0 || ci.lo >= m) continue;
      runs += ci.free, start_gt_[ci.lo] += ci.free;
      if (ci.hi + 1 < m) end_lt_[ci.hi + 1] += ci.free;
    }
    // start_gt_[y]: runs starting after y; end_lt_[x]: runs ending before x
    std::size_t acc = 0;
    for (std::size_t y = m + 1; y-- > 0;) {
      const std::size_t here = start_gt_[y];
      start_gt_[y] = acc;
      acc += here;
    }
    for (std::size_t x = 1; x <= m; ++x) end_lt_[x] += end_lt_[x - 1];
    for (std::size_t x = 0; x < m; ++x) {
      std::size_t need = 0;
      for (std::size_t y = x; y < m; ++y) {
        need += cnt_fixed_[y] == 0;
        if (need > runs - start_gt_[y] - end_lt_[x]) return false;
      }
    }
    return true;
  }

  /// eq. 3: chips below the highest lower bound must all keep an operator; and counting: the
  /// chips below the highest fixed chip that no fixed operator covers need distinct unfixed
  /// operators, and an unfixed operator on chip c needs the others to cover what is empty below c.
  bool no_skip() {
    std::size_t m = 0;
    for (auto d : dom_) m = std::max(m, low(d));
    for (std::size_t d = 0; d < m; ++d) {
      if (cnt_[d] == 0) return false;
      if (cnt_[d] == 1 && cnt_fixed_[d] == 0)
        for (std::size_t u = 0; u < n_; ++u)
          if (has_chip(dom_[u], d)) return restrict(u, bit(d));
    }
    update_clusters();
    if (m >= 2 && !windows_coverable(m)) return false;
    std::size_t fixed = 0, top = 0;
    Mask covered{};
    for (std::size_t d = 0; d < C_; ++d)
      if (cnt_fixed_[d]) fixed += cnt_fixed_[d], covered |= bit(d), top = d;
    if (fixed == n_) return true;
    // avail[c]: an upper bound on the chips below c that unfixed operators can newly cover (an
    // operator outside the clusters covers one at most, below c when its lowest chip is; a
    // cluster's unfixed operators at most two less the chips its fixed operators use, so its
    // r lowest lowest-chips count); need(c): chips below c no fixed one covers
    avail_.assign(C_ + 1, 0);
    for (std::size_t u = 0; u < n_; ++u)
      if (cluster_of_[u] == npos && !single(dom_[u])) ++avail_[low(dom_[u]) + 1];
    for (const auto& ci : cluster_now_) {
      if (ci.free >= 1 && ci.lo < C_) ++avail_[ci.lo + 1];
      if (ci.free >= 2 && ci.lo2 < C_) ++avail_[ci.lo2 + 1];
    }
    for (std::size_t c = 1; c <= C_; ++c) avail_[c] += avail_[c - 1];
    std::size_t need = 0, cmax = C_ - 1;
    bool capped = false;
    for (std::size_t c = 0; c < C_; ++c) {
      if (c <= top && need > avail_[c]) return false;             // Hall: chips below top
      if (!capped && c > top && need + 1 > avail_[c] + 1) {        // u on c: the others cover [0, c)
        cmax = c - 1, capped = true;
      }
      if (!has_chip(covered, c)) ++need;
    }
    const Mask keep = traits::upto(cmax);
    for (std::size_t u = 0; u < n_; ++u)
      if (!single(dom_[u]) && !restrict(u, dom_[u] & keep)) return false;
    return true;
  }

  csr_dag g_;
  std::size_t C_ = 0, n_ = 0;
  reachability_index reach_;
  std::vector<Mask> dom_, anc_chips_, desc_chips_;
  std::vector<Mask> ed_, R_, RC_, F_, FC_;
  std::vector<std::uint32_t> cnt_, cnt_fixed_;
  std::vector<std::size_t> avail_, start_gt_, end_lt_;
  std::vector<std::size_t> span_u_, span_v_, spanq_;       // edges with operators between
  std::vector<Mask> span_chips_;                     // chips of fixed operators between
  std::vector<std::vector<std::size_t>> incident_;        // span edges by endpoint
  std::vector<std::uint32_t> cluster_of_;                 // two-chip cluster of an operator, or npos
  std::vector<std::size_t> cluster_start_, cluster_members_;
  struct cluster_state {
    std::size_t free, lo, lo2, hi;
  };
  std::vector<cluster_state> cluster_now_;
  std::vector<trail_entry> trail_;
  std::vector<decision> stack_;
  std::vector<std::size_t> queue_, fixq_;
  std::vector<char> inq_;
  bool chips_dirty_ = false, sweep_ = false, root_failed_ = false;
  std::size_t backtracks_ = 0, refutations_ = 0;
  std::array<std::size_t, 5> failures_{};
};

/// Chip sets of one word: C <= 64 (the paper's 36).
using constraint_engine = basic_constraint_engine<chip_mask>;
/// Chip sets of W words: C <= 64 W.
template <std::size_t W>
using wide_constraint_engine_t = basic_constraint_engine<wide_chip_mask<W>>;
/// Chip sets of 16 words: C <= 1024.
using wide_constraint_engine = wide_constraint_engine_t<16>;
/// The largest chip count an engine supports.
inline constexpr std::size_t max_engine_chips = wide_constraint_engine::max_chips;

/// Builds the engine that fits C (chip sets of one word when C <= 64, two when C <= 128, else
/// sixteen: every mask operation costs a pass over its words) and calls `f(engine)`; returns what
/// `f` returns. Throws std::invalid_argument on C outside 1 .. max_engine_chips.
template <dag G, class F>
decltype(auto) with_engine(const G& g, std::size_t chips, F&& f) {
  if (chips <= constraint_engine::max_chips) {
    constraint_engine e(g, chips);
    return f(e);
  }
  if (chips <= wide_constraint_engine_t<2>::max_chips) {
    wide_constraint_engine_t<2> e(g, chips);
    return f(e);
  }
  wide_constraint_engine e(g, chips);
  return f(e);
}

}  // namespace devplace::mcm
