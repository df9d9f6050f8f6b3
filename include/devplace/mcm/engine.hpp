#pragma once
/// \file mcm/engine.hpp
/// `constraint_engine`: the CP-lite domain store of MCM partitioning (seed-mcm §2.6), with
/// the `get_domain` / `set_domain` interface the paper's Algorithms 1 and 2 drive.
///
/// State: a chip bitset domain per operator (C <= 64), the chip edges ED realised by two fixed
/// endpoints, the chip reachability R (closure of ED and of the implied reachability: fixed w ~> x
/// in the graph with f(w) < f(x) forces f(w) ~> f(x) in the chip graph), per operator the chips of
/// its fixed ancestors and descendants, support counters, and a trail for undo.
///
/// Propagators (all sound: a removed value has no valid completion):
///  - eq. 2: bounds consistency along every edge;
///  - eq. 3: with m = max lower bound, every chip d < m needs an operator: none left fails, one
///    left is fixed to d;
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

namespace devplace::mcm {

using chip_mask = std::uint64_t;

[[nodiscard]] constexpr chip_mask chip_bit(std::size_t c) noexcept { return chip_mask{1} << c; }
/// Chips >= c.
[[nodiscard]] constexpr chip_mask chips_from(std::size_t c) noexcept { return c >= 64 ? 0 : ~chip_mask{0} << c; }
/// Chips <= c.
[[nodiscard]] constexpr chip_mask chips_upto(std::size_t c) noexcept {
  return c >= 63 ? ~chip_mask{0} : (chip_mask{1} << (c + 1)) - 1;
}

class constraint_engine {
 public:
  /// Any `dag`; C in 1 .. 64. Throws std::invalid_argument otherwise or on a cycle.
  template <dag G>
  constraint_engine(const G& g, std::size_t chips) : g_(to_csr_dag(g)), C_(chips) {
    if (C_ == 0 || C_ > 64) throw std::invalid_argument("mcm::constraint_engine: chips must be in 1..64, got " + std::to_string(C_));
    if (!topological_sort(g_)) throw std::invalid_argument("mcm::constraint_engine: the graph has a cycle");
    reach_ = reachability_index(g_);
    init();
  }
  // The trail points into the engine's own arrays: moving keeps them, copying would not.
  constraint_engine(const constraint_engine&) = delete;
  constraint_engine& operator=(const constraint_engine&) = delete;
  constraint_engine(constraint_engine&&) noexcept = default;
  constraint_engine& operator=(constraint_engine&&) noexcept = default;

  [[nodiscard]] std::size_t num_vertices() const noexcept { return n_; }
  [[nodiscard]] std::size_t chips() const noexcept { return C_; }
  [[nodiscard]] const csr_dag& graph() const noexcept { return g_; }
  [[nodiscard]] chip_mask full_domain() const noexcept { return chips_upto(C_ - 1); }

  /// The live domain of operator u.
  [[nodiscard]] chip_mask get_domain(std::size_t u) const noexcept { return dom_[u]; }
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
    for (std::size_t u = 0; u < n_; ++u) f[u] = std::countr_zero(dom_[u]);
    return f;
  }

  /// Restricts u's domain to `mask` as one decision and propagates; backtracks (refuting popped
  /// decisions) on failure. Returns the new depth. Throws std::invalid_argument on u >= N.
  std::size_t set_domain(std::size_t u, chip_mask mask) {
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
    chip_mask mask;
    std::size_t mark;
  };
  struct trail_entry {
    chip_mask* where;
    chip_mask old;
    std::uint32_t node;  // the operator when `where` is a domain, else npos
  };
  static constexpr std::uint32_t npos = 0xffffffffu;

  static bool single(chip_mask m) noexcept { return m && !(m & (m - 1)); }
  static std::size_t low(chip_mask m) noexcept { return static_cast<std::size_t>(std::countr_zero(m)); }
  static std::size_t high(chip_mask m) noexcept { return 63 - static_cast<std::size_t>(std::countl_zero(m)); }

  void init() {
    n_ = g_.num_vertices();
    dom_.assign(n_, full_domain());
    anc_chips_.assign(n_, 0);
    desc_chips_.assign(n_, 0);
    ed_.assign(C_, 0), R_.assign(C_, 0), RC_.assign(C_, 0), F_.assign(C_, 0), FC_.assign(C_, 0);
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
    span_chips_.assign(span_u_.size(), 0);
  }

  void save(chip_mask& w, std::uint32_t node = npos) { trail_.push_back({&w, w, node}); }
  void set_word(chip_mask& w, chip_mask v) {
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

  void count_change(chip_mask from, chip_mask to) {
    for (chip_mask x = from & ~to; x; x &= x - 1) --cnt_[low(x)];
    for (chip_mask x = to & ~from; x; x &= x - 1) ++cnt_[low(x)];
    if (single(from)) --cnt_fixed_[low(from)];
    if (single(to)) ++cnt_fixed_[low(to)];
  }

  /// dom[u] := m (a subset); false when empty.
  bool restrict(std::size_t u, chip_mask m) {
    const chip_mask old = dom_[u];
    if (m == old) return true;
    if (!m) return false;
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
        const chip_mask ge = chips_from(low(dom_[u])), le = chips_upto(high(dom_[u]));
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
    if (R_[a] & chip_bit(b)) return;
    const chip_mask to = R_[b] | chip_bit(b), from = RC_[a] | chip_bit(a);
    for (chip_mask x = from; x; x &= x - 1) set_word(R_[low(x)], R_[low(x)] | to);
    for (chip_mask y = to; y; y &= y - 1) set_word(RC_[low(y)], RC_[low(y)] | from);
    chips_dirty_ = true;
  }
  bool add_chip_edge(std::size_t a, std::size_t b, std::size_t u, std::size_t v) {
    if (!(ed_[a] & chip_bit(b))) {
      set_word(ed_[a], ed_[a] | chip_bit(b));
      add_reach(a, b);
      chips_dirty_ = true;
    }
    // between lemma: every operator on a path u ~> w ~> v sits on a or b
    const chip_mask ab = chip_bit(a) | chip_bit(b);
    const auto& d = reach_.descendants(u);
    const auto& an = reach_.ancestors(v);
    const auto* dw = d.words();
    const auto* aw = an.words();
    for (std::size_t k = 0; k < d.num_words(); ++k)
      for (std::uint64_t x = dw[k] & aw[k]; x; x &= x - 1)
        if (!restrict(k * 64 + low(x), dom_[k * 64 + low(x)] & ab)) return false;
    return true;
  }

  bool on_fixed(std::size_t u) {
    const std::size_t a = low(dom_[u]);
    const chip_mask bit = chip_bit(a);
    for (auto v : g_.out_edges(u))
      if (single(dom_[v]) && dom_[v] != bit && !add_chip_edge(a, low(dom_[v]), u, v)) return false;
    for (auto w : g_.in_edges(u))
      if (single(dom_[w]) && dom_[w] != bit && !add_chip_edge(low(dom_[w]), a, w, u)) return false;
    for (chip_mask x = anc_chips_[u] & ~bit; x; x &= x - 1) add_reach(low(x), a);
    for (chip_mask x = desc_chips_[u] & ~bit; x; x &= x - 1) add_reach(a, low(x));
    const auto& an = reach_.ancestors(u);
    const auto& de = reach_.descendants(u);
    for (std::size_t k = 0; k < span_u_.size(); ++k)
      if (!(span_chips_[k] & bit) && an.test(span_u_[k]) && de.test(span_v_[k])) {
        set_word(span_chips_[k], span_chips_[k] | bit);
        spanq_.push_back(k);
      }
    for (auto k : incident_[u]) spanq_.push_back(k);
    reach_.descendants(u).for_each([&](std::size_t x) {
      if (!(anc_chips_[x] & bit)) set_word(anc_chips_[x], anc_chips_[x] | bit);
    });
    reach_.ancestors(u).for_each([&](std::size_t x) {
      if (!(desc_chips_[x] & bit)) set_word(desc_chips_[x], desc_chips_[x] | bit);
    });
    sweep_ = true;
    return true;
  }

  /// Edge u -> v with operators between them (another path u ~> w ~> v): u, v and everything
  /// between use at most two chips, u the lower and v the higher (the between lemma).
  bool span_rule(std::size_t k) {
    const std::size_t u = span_u_[k], v = span_v_[k];
    chip_mask S = span_chips_[k];
    if (single(dom_[u])) S |= dom_[u];
    if (single(dom_[v])) S |= dom_[v];
    const int used = std::popcount(S);
    if (used >= 3) return false;
    if (used == 2) return restrict(u, dom_[u] & chip_bit(low(S))) && restrict(v, dom_[v] & chip_bit(high(S)));
    const chip_mask inner = span_chips_[k];
    if (std::popcount(inner) == 1) {  // u or v sits on the inner chip
      if (!(dom_[u] & inner)) return restrict(v, dom_[v] & inner);
      if (!(dom_[v] & inner)) return restrict(u, dom_[u] & inner);
    }
    return true;
  }

  /// Fails when a chip edge a -> b has another path a -> c ~> b.
  bool triangle_free() const {
    for (std::size_t a = 0; a < C_; ++a)
      for (chip_mask y = ed_[a]; y; y &= y - 1)
        if (R_[a] & RC_[low(y)]) return false;
    return true;
  }

  /// F[a] bit b: a new chip edge a -> b (a < b, not yet in ED) would break eq. 4.
  void forbidden_edges() {
    std::fill(F_.begin(), F_.end(), 0);
    std::fill(FC_.begin(), FC_.end(), 0);
    for (std::size_t a = 0; a < C_; ++a) {
      const chip_mask X = RC_[a] | chip_bit(a);
      for (std::size_t b = a + 1; b < C_; ++b) {
        if (ed_[a] & chip_bit(b)) continue;
        bool bad = (R_[a] & RC_[b]) != 0;  // (i) another path a ~> c ~> b exists
        const chip_mask Y = R_[b] | chip_bit(b);
        for (chip_mask x = X; x && !bad; x &= x - 1) {  // (ii) second path for an edge x -> y
          const std::size_t xi = low(x);
          bad = (ed_[xi] & Y & ~(xi == a ? chip_bit(b) : 0)) != 0;
        }
        if (bad) F_[a] |= chip_bit(b), FC_[b] |= chip_bit(a);
      }
    }
  }

  /// Forward checks of every edge with exactly one fixed endpoint.
  bool forward_check() {
    for (std::size_t u = 0; u < n_; ++u) {
      const chip_mask du = dom_[u];
      if (!single(du)) continue;
      const std::size_t a = low(du);
      for (auto v : g_.out_edges(u)) {
        if (single(dom_[v])) continue;
        chip_mask keep = ~F_[a];
        if (const chip_mask cs = anc_chips_[v] & R_[a]) keep &= chips_upto(low(cs));  // (iii)
        if (!restrict(v, dom_[v] & keep)) return false;
      }
      for (auto w : g_.in_edges(u)) {
        if (single(dom_[w])) continue;
        chip_mask keep = ~FC_[a];
        if (const chip_mask cs = desc_chips_[w] & RC_[a]) keep &= chips_from(high(cs));  // (iii)
        if (!restrict(w, dom_[w] & keep)) return false;
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
          if (dom_[u] & chip_bit(d)) return restrict(u, chip_bit(d));
    }
    std::size_t fixed = 0, top = 0;
    chip_mask covered = 0;
    for (std::size_t d = 0; d < C_; ++d)
      if (cnt_fixed_[d]) fixed += cnt_fixed_[d], covered |= chip_bit(d), top = d;
    if (fixed == n_) return true;
    // avail[c]: unfixed operators with a chip below c; need(c): chips below c no fixed one covers
    avail_.assign(C_ + 1, 0);
    for (auto d : dom_)
      if (!single(d)) ++avail_[low(d) + 1];
    for (std::size_t c = 1; c <= C_; ++c) avail_[c] += avail_[c - 1];
    std::size_t need = 0, cmax = C_ - 1;
    bool capped = false;
    for (std::size_t c = 0; c < C_; ++c) {
      if (c <= top && need > avail_[c]) return false;             // Hall: chips below top
      if (!capped && c > top && need + 1 > avail_[c] + 1) {        // u on c: the others cover [0, c)
        cmax = c - 1, capped = true;
      }
      if (!(covered & chip_bit(c))) ++need;
    }
    const chip_mask keep = chips_upto(cmax);
    for (std::size_t u = 0; u < n_; ++u)
      if (!single(dom_[u]) && !restrict(u, dom_[u] & keep)) return false;
    return true;
  }

  csr_dag g_;
  std::size_t C_ = 0, n_ = 0;
  reachability_index reach_;
  std::vector<chip_mask> dom_, anc_chips_, desc_chips_;
  std::vector<chip_mask> ed_, R_, RC_, F_, FC_;
  std::vector<std::uint32_t> cnt_, cnt_fixed_;
  std::vector<std::size_t> avail_;
  std::vector<std::size_t> span_u_, span_v_, spanq_;       // edges with operators between
  std::vector<chip_mask> span_chips_;                     // chips of fixed operators between
  std::vector<std::vector<std::size_t>> incident_;        // span edges by endpoint
  std::vector<trail_entry> trail_;
  std::vector<decision> stack_;
  std::vector<std::size_t> queue_, fixq_;
  std::vector<char> inq_;
  bool chips_dirty_ = false, sweep_ = false, root_failed_ = false;
  std::size_t backtracks_ = 0, refutations_ = 0;
  std::array<std::size_t, 5> failures_{};
};

}  // namespace devplace::mcm
