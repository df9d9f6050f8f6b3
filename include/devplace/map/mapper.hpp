#pragma once
/// \file map/mapper.hpp
/// The general-topology device mapper of Parmesan (seed-parmesan.md §7.3–§7.6): a binary search
/// over the target t (Algorithm 1) whose every step is a depth-first backtracking search for a
/// mapping with all stage times ≤ t (Algorithm 2), several targets searched at once in threads.
///
///   map_devices(g, topology, {.cost = cost_choice::automatic, .threads = 2, .timeout_s = 10})
///
/// Inner search (`mapping_search::search(t)`), per target t:
///   * a fixed mapping order of the S·R stage replicas: replica-major with a BFS over the stage
///     graph from its most constrained stage under p2p; stage-major, most constrained stage first,
///     replicas in ring order under allreduce; greedy by placed dependencies for other models;
///   * the checking scheme: each vertex is checked once, exactly, when the last vertex its time
///     depends on is placed; a violation (> t) prunes the subtree;
///   * sound extra pruning (`extra_pruning`, on by default): partial sums are lower bounds
///     (`model.bound`), devices whose per-device bound b(v, d) exceeds t are never tried, and a
///     counting (Hall) check over the groups of vertices with equal device sets prunes when the
///     free devices cannot host the vertices still to place;
///   * value ordering: candidates by their resulting time, fastest first;
///   * symmetry breaking (`symmetry_breaking`, on by default), as lex-leader constraints over the
///     mapping order: replica copies ordered by the device of their first vertex (p2p); each ring
///     starts at its smallest device, reflected rings pruned on symmetric topologies, rings of
///     identical stages ordered (allreduce); of two twin devices the smaller is used first; the
///     first vertex only on the smallest device of its automorphism orbit, the second on the
///     smallest of its orbit under the stabiliser of the first.
/// A failed complete search returns the smallest value that pruned it, a proved lower bound > t
/// (every mapping is pruned on its path by a value ≤ its objective): the bracket jumps to it.
///
/// Outer search: t_l = the bottleneck-assignment bound (≥ eq. 10/11), t_r = the best of the CS,
/// p2p and seeded random maps, which is kept as the incumbent (the printed Algorithm 1 loses its
/// mapping when the last search fails, and returns nothing when the initial map is optimal).
/// Workers search targets that split the largest gap of the bracket; a success sets t_r to the
/// found objective and cancels the workers whose target is no longer inside the bracket; a
/// complete failure raises t_l. Optimal (within ε = max(epsilon_abs, epsilon·t_r)) is reported
/// only when t_r − t_l ≤ ε has been proved. A per-target timeout (the paper's heuristic) makes
/// the search move above that target without proof; the result is then `feasible`, not optimal.
/// The whole run stops at `timeout_s` with status `timed_out` and the best mapping found.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/map/symmetry.hpp"
#include "devplace/status.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

struct mapper_options {
  cost_choice cost = cost_choice::automatic;  ///< model, for the overloads that do not take one
  unsigned threads = 0;                       ///< targets searched at once; 0: hardware concurrency
  double timeout_s = std::numeric_limits<double>::infinity();         ///< whole run
  double target_timeout_s = std::numeric_limits<double>::infinity();  ///< one target (paper heuristic)
  double epsilon = 1e-9;                      ///< relative width at which the bracket is closed
  double epsilon_abs = 0;                     ///< absolute width (ms)
  bool symmetry_breaking = true;
  bool extra_pruning = true;                  ///< partial bounds, per-device bounds, counting check
  bool assignment_bound = true;               ///< start from the assignment bound (else eq. 10/11)
  bool restarts = true;                       ///< alternate two value orders with doubling budgets
  std::uint64_t seed = 1;                     ///< random baseline map
  std::uint64_t automorphism_budget = 20'000'000;  ///< link comparisons spent finding orbits
};

/// The answer of one inner search (Algorithm 2) at a target t.
struct target_search_result {
  bool found = false;      ///< a mapping with every stage time ≤ t
  bool completed = false;  ///< found, or the whole tree searched (false when stopped)
  std::vector<std::size_t> dev;  ///< the mapping when found (device of every vertex s·R + r)
  double objective_ms = 0;       ///< its objective t_p ≤ t
  /// When completed without finding: every mapping has objective ≥ this (and it is > t).
  double next_lower_bound_ms = std::numeric_limits<double>::infinity();
  std::uint64_t nodes = 0;       ///< placements tried
};

struct mapping_result {
  devplace::status status = status::infeasible;  ///< optimal / feasible / timed_out
  device_mapping device_of;                      ///< S rows of R device ids
  double objective_ms = 0;
  double lower_bound_ms = 0;                     ///< proved: no mapping is faster
  double initial_lower_bound_ms = 0;             ///< t_l0
  double initial_upper_bound_ms = 0;             ///< t_r0 (best baseline)
  std::string initial_mapping;                   ///< the baseline that gave t_r0: cs, p2p, random
  bool optimal = false;                          ///< proved optimal (within ε)
  std::uint64_t nodes_explored = 0;
  std::size_t searches = 0;                      ///< inner searches started
  std::size_t searches_timed_out = 0;            ///< stopped by target_timeout_s
  double time_s = 0;
  std::string cost;                              ///< the model's name
};

/// Algorithm 2 with its precomputation (mapping order, checking scheme, per-device bounds,
/// symmetry constraints), reusable for any number of targets and threads (`search` is const).
/// Keeps references to `g` and `L`: they must outlive it.
template <mapping_cost_model C>
class mapping_search {
 public:
  using clock = std::chrono::steady_clock;

  mapping_search(const stage_graph& g, const link_costs& L, C model = C{}, const mapper_options& o = {})
      : g_(&g), L_(&L), model_(prepare_model(model, g, L)), opt_(o), V_(g.vertices()), D_(L.devices()), W_((D_ + 63) / 64) {
    if (V_ > D_)
      throw std::invalid_argument("mapping: " + std::to_string(g.stages()) + " stages x " +
                                  std::to_string(g.replicas()) + " replicas need " + std::to_string(V_) +
                                  " devices, the topology has " + std::to_string(D_));
    table_ = make_device_bound_table(g, L, model_);
    lb0_ = opt_.assignment_bound ? assignment_lower_bound(table_) : sorting_lower_bound(table_);
    shared_ = model_shares_time(model_);
    sym_ = opt_.symmetry_breaking ? model_symmetry(model_, g, L) : replica_symmetry::none;
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
    pressure_.resize(V_);
    for (std::size_t v = 0; v < V_; ++v) {
      double m = std::numeric_limits<double>::infinity();
      for (std::size_t d = 0; d < D_; ++d) m = std::min(m, table_(v, d));
      pressure_[v] = m;
    }
    make_order();
    make_checking_scheme();
    make_symmetry();
  }

  /// t_l0: the bottleneck-assignment bound (or eq. 10/11 with `assignment_bound = false`).
  [[nodiscard]] double initial_lower_bound() const noexcept { return lb0_; }
  /// The mapping order (G' vertices) and the per-device bounds b(v, d).
  [[nodiscard]] const std::vector<std::size_t>& order() const noexcept { return order_; }
  [[nodiscard]] const device_bound_table& device_bounds() const noexcept { return table_; }
  [[nodiscard]] const C& model() const noexcept { return model_; }

  /// Searches for a mapping whose every stage time is ≤ `target`. Stops (completed = false) when
  /// `*stop` becomes true or at `deadline`.
  [[nodiscard]] target_search_result search(double target, const std::atomic<bool>* stop = nullptr,
                                            clock::time_point deadline = clock::time_point::max()) const {
    // Restarts that alternate two value orders with doubling node budgets: each run is a complete
    // depth-first search, so the first one that finishes (a mapping, or the whole tree pruned)
    // answers; the wasted work of the abandoned runs is bounded by the geometric budgets.
    target_search_result total;
    std::uint64_t budget = 4096;
    for (unsigned round = 0;; ++round) {
      const bool last = !opt_.restarts || budget > (std::uint64_t{1} << 62);
      auto r = dfs(target, stop, deadline, round % 2 == 1, last ? 0 : budget);
      total.nodes += r.nodes;
      if (r.completed || (stop && stop->load()) || clock::now() >= deadline) {
        r.nodes = total.nodes;
        return r;
      }
      if (round % 2 == 1) budget *= 2;
    }
  }

 private:
  // ---------------------------------------------------------------- precomputation
  void make_order() {
    const auto& g = *g_;
    const std::size_t S = g.stages(), R = g.replicas();
    order_.clear();
    auto stage_pressure = [&](std::size_t s) { return pressure_[g.vertex(s, 0)]; };
    if (sym_ == replica_symmetry::copies || (sym_ == replica_symmetry::none && is_p2p())) {
      // replica-major, BFS over the stage graph from the most constrained stage
      std::vector<std::size_t> seq;
      std::vector<char> seen(S, 0);
      while (seq.size() < S) {
        std::size_t start = unplaced;
        for (std::size_t s = 0; s < S; ++s)
          if (!seen[s] && (start == unplaced || stage_pressure(s) > stage_pressure(start))) start = s;
        seen[start] = 1;
        std::size_t head = seq.size();
        seq.push_back(start);
        while (head < seq.size()) {
          const std::size_t s = seq[head++];
          for (auto t : g.neighbours(s))
            if (!seen[t]) seen[t] = 1, seq.push_back(t);
        }
      }
      for (std::size_t r = 0; r < R; ++r)
        for (auto s : seq) order_.push_back(g.vertex(s, r));
    } else if (sym_ == replica_symmetry::rings || (sym_ == replica_symmetry::none && shared_)) {
      std::vector<std::size_t> seq(S);
      std::iota(seq.begin(), seq.end(), std::size_t{0});
      std::stable_sort(seq.begin(), seq.end(), [&](std::size_t a, std::size_t b) {
        if (stage_pressure(a) != stage_pressure(b)) return stage_pressure(a) > stage_pressure(b);
        return g.param_bytes(a) > g.param_bytes(b);
      });
      for (auto s : seq)
        for (std::size_t r = 0; r < R; ++r) order_.push_back(g.vertex(s, r));
    } else {
      // greedy: next is the vertex with the most placed related vertices, then the most constrained
      std::vector<std::size_t> placed_related(V_, 0);
      std::vector<char> done(V_, 0);
      for (std::size_t k = 0; k < V_; ++k) {
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
  }

  [[nodiscard]] bool is_p2p() const noexcept { return std::is_same_v<C, p2p_cost>; }

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
        for (std::size_t r = 0; r < g.replicas(); ++r) c = std::max(c, comp[g.vertex(s, r)]);
        for (std::size_t r = 0; r < g.replicas(); ++r) comp[g.vertex(s, r)] = c;
      }
    fresh_.assign(V_, 1);
    for (std::size_t i = 0; i < V_; ++i)
      for (auto u : related_[order_[i]])
        if (pos_[u] < i) fresh_[i] = 0;
    own_exact_.assign(V_, 0);
    exact_.assign(V_, {});
    partial_.assign(V_, {});
    for (std::size_t i = 0; i < V_; ++i) {
      const std::size_t v = order_[i];
      own_exact_[i] = comp[v] == i;
      if (shared_) continue;  // the stage's time is v's own
      for (auto u : related_[v]) {
        if (pos_[u] > i || !contains(deps_[u], v)) continue;  // u placed, its time reads v
        if (comp[u] == i) exact_[i].push_back(u);
        else partial_[i].push_back(u);
      }
    }
  }

  static bool contains(const std::vector<std::size_t>& v, std::size_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }

  void make_symmetry() {
    const auto& g = *g_;
    const auto& L = *L_;
    const std::size_t S = g.stages(), R = g.replicas();
    lex_after_.assign(V_, {});
    auto add = [&](std::size_t earlier_vertex, std::size_t later_vertex) {
      lex_after_[pos_[later_vertex]].push_back(pos_[earlier_vertex]);
    };
    if (sym_ == replica_symmetry::copies) {
      for (std::size_t r = 0; r + 1 < R; ++r) {
        std::size_t first = unplaced;
        for (std::size_t s = 0; s < S; ++s)
          for (std::size_t c : {r, r + 1})
            if (first == unplaced || pos_[g.vertex(s, c)] < pos_[first]) first = g.vertex(s, c);
        const std::size_t s = g.stage_of_vertex(first), c = g.replica_of_vertex(first);
        add(first, g.vertex(s, c == r ? r + 1 : r));
      }
    } else if (sym_ == replica_symmetry::rings) {
      std::vector<std::size_t> first_replica(S);
      for (std::size_t s = 0; s < S; ++s) {
        std::size_t a = 0;
        for (std::size_t q = 1; q < R; ++q)
          if (pos_[g.vertex(s, q)] < pos_[g.vertex(s, a)]) a = q;
        first_replica[s] = a;
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
          std::size_t first = unplaced;
          for (std::size_t q = 0; q < R; ++q)
            for (std::size_t s : {s1, s2})
              if (first == unplaced || pos_[g.vertex(s, q)] < pos_[first]) first = g.vertex(s, q);
          const std::size_t fs = g.stage_of_vertex(first), q = g.replica_of_vertex(first);
          add(first, g.vertex(fs == s1 ? s2 : s1, q));
          break;  // chain consecutive members of the class
        }
      }
    }
    twin_prev_.assign(D_, unplaced);
    orbit0_.clear();
    orbit1_.assign(D_, {});
    if (!opt_.symmetry_breaking) return;
    twin_prev_ = device_twins(L);
    std::uint64_t budget = opt_.automorphism_budget;
    const auto sig = detail::device_signatures(L);
    orbit0_ = device_orbit_minima(L, sig, {}, budget);
    if (V_ >= 2)
      for (std::size_t d = 0; d < D_ && budget > 0; ++d)
        if (orbit0_[d] == d) orbit1_[d] = device_orbit_minima(L, sig, {d}, budget);
  }

  // ---------------------------------------------------------------- search
  struct candidate {
    double key;  // ordering: onward moves (allreduce), then the own time, then the device
    double x;    // the own time (or bound) of the vertex on d
    std::size_t d;
    bool operator<(const candidate& o) const noexcept {
      return key != o.key ? key < o.key : x != o.x ? x < o.x : d < o.d;
    }
  };
  struct state {
    std::vector<std::size_t> dev;
    std::vector<std::uint64_t> used;
    std::vector<double> tp;  // t_p after each level
    std::vector<std::vector<candidate>> cands;
    std::vector<std::size_t> next;
    std::vector<std::size_t> left;  // vertices of each group still to place
  };

  [[nodiscard]] bool is_used(const state& st, std::size_t d) const noexcept { return (st.used[d / 64] >> (d % 64)) & 1u; }

  /// One depth-first search; `warnsdorff` orders candidates by their free onward devices first;
  /// stops (not completed) after `budget` nodes when budget > 0.
  target_search_result dfs(double t, const std::atomic<bool>* stop, clock::time_point deadline, bool warnsdorff,
                           std::uint64_t budget) const {
    const auto& g = *g_;
    const auto& L = *L_;
    const bool extra = opt_.extra_pruning;
    target_search_result res;
    double vmin = std::numeric_limits<double>::infinity();
    auto note = [&](double x) {
      if (x < vmin) vmin = x;
    };

    // per-target static data: allowed devices (b(v, d) ≤ t), groups of equal allowed sets
    std::vector<std::uint64_t> allowed(V_ * W_, 0);
    std::vector<double> above(V_, std::numeric_limits<double>::infinity());  // min b(v, d) > t
    for (std::size_t v = 0; v < V_; ++v)
      for (std::size_t d = 0; d < D_; ++d) {
        const double b = table_(v, d);
        if (!extra || b <= t) allowed[v * W_ + d / 64] |= std::uint64_t{1} << (d % 64);
        else above[v] = std::min(above[v], b);
      }
    std::vector<std::size_t> group(V_, unplaced), group_rep;
    std::vector<std::size_t> group_size;
    std::vector<double> group_above;
    for (std::size_t v = 0; v < V_; ++v) {
      for (std::size_t k = 0; k < group_rep.size(); ++k)
        if (std::equal(allowed.begin() + static_cast<std::ptrdiff_t>(v * W_),
                       allowed.begin() + static_cast<std::ptrdiff_t>(v * W_ + W_),
                       allowed.begin() + static_cast<std::ptrdiff_t>(group_rep[k] * W_))) {
          group[v] = k;
          ++group_size[k];
          group_above[k] = std::min(group_above[k], above[v]);
          break;
        }
      if (group[v] == unplaced) {
        group[v] = group_rep.size();
        group_rep.push_back(v);
        group_size.push_back(1);
        group_above.push_back(above[v]);
      }
    }
    std::vector<std::size_t> hall(group_rep.size());  // groups by allowed-set size, smallest first
    std::iota(hall.begin(), hall.end(), std::size_t{0});
    auto allowed_count = [&](std::size_t k) {
      std::size_t c = 0;
      for (std::size_t w = 0; w < W_; ++w) c += static_cast<std::size_t>(std::popcount(allowed[group_rep[k] * W_ + w]));
      return c;
    };
    std::stable_sort(hall.begin(), hall.end(), [&](std::size_t a, std::size_t b) { return allowed_count(a) < allowed_count(b); });

    state st;
    st.dev.assign(V_, unplaced);
    st.used.assign(W_, 0);
    st.tp.assign(V_ + 1, 0.0);
    st.cands.resize(V_);
    st.next.assign(V_, 0);
    st.left = group_size;
    std::vector<std::uint64_t> uni(W_);
    // For the two built-in models: the devices a device can reach within a stage's budget
    // (allreduce: the ring volume; p2p: its smallest message), to order candidates by how few
    // free onward devices they leave (Warnsdorff's rule), which finds rings and tilings sooner.
    constexpr bool builtin = std::is_same_v<C, allreduce_cost> || std::is_same_v<C, p2p_cost>;
    std::vector<std::uint64_t> reach;
    if constexpr (builtin) {
      const std::size_t S = g.stages();
      reach.assign(S * D_ * W_, 0);
      for (std::size_t s = 0; s < S; ++s) {
        double x = 0;
        if constexpr (std::is_same_v<C, allreduce_cost>) {
          x = g.allreduce_bytes(s);
        } else {
          for (auto n : g.neighbours(s)) x = g.message_bytes(s, n);  // the last is the smallest
        }
        for (std::size_t a = 0; a < D_; ++a)
          for (std::size_t b = 0; b < D_; ++b)
            if (a != b && g.compute_ms(s) + L.transfer_ms(a, b, x) <= t)
              reach[(s * D_ + a) * W_ + b / 64] |= std::uint64_t{1} << (b % 64);
      }
    }
    auto onward = [&](std::size_t v, std::size_t d) -> double {
      if constexpr (builtin) {
        const std::size_t s = g.stage_of_vertex(v), q = g.replica_of_vertex(v), R = g.replicas();
        bool open = false;
        if constexpr (std::is_same_v<C, allreduce_cost>) {
          open = R >= 3 && st.dev[g.vertex(s, (q + 1) % R)] == unplaced;
        } else {
          for (auto n : g.neighbours(s))
            if (st.dev[g.vertex(n, q)] == unplaced) open = true;
        }
        if (!open) return 0;
        std::size_t n = 0;
        const std::uint64_t* r = &reach[(s * D_ + d) * W_];
        for (std::size_t w = 0; w < W_; ++w) n += static_cast<std::size_t>(std::popcount(r[w] & ~st.used[w]));
        return static_cast<double>(n);
      } else {
        (void)v, (void)d;
        return 0;
      }
    };

    auto counting_ok = [&]() -> bool {
      std::fill(uni.begin(), uni.end(), 0);
      std::size_t need = 0;
      double worst = std::numeric_limits<double>::infinity();
      for (auto k : hall) {
        if (st.left[k] == 0) continue;
        need += st.left[k];
        worst = std::min(worst, group_above[k]);
        std::size_t own = 0, all = 0;
        const std::uint64_t* a = &allowed[group_rep[k] * W_];
        for (std::size_t w = 0; w < W_; ++w) {
          const std::uint64_t f = a[w] & ~st.used[w];
          own += static_cast<std::size_t>(std::popcount(f));
          uni[w] |= f;
          all += static_cast<std::size_t>(std::popcount(uni[w]));
        }
        if (own < st.left[k]) {
          note(group_above[k]);
          return false;
        }
        if (all < need) {
          note(worst);
          return false;
        }
      }
      return true;
    };

    auto own_value = [&](std::size_t i, std::size_t v) -> double {
      const std::span<const std::size_t> dv(st.dev);
      return own_exact_[i] ? static_cast<double>(model_.time(g, L, dv, v))
                           : static_cast<double>(model_.bound(g, L, dv, v));
    };

    // candidate devices of level i, sorted by the resulting own time
    auto expand = [&](std::size_t i) {
      auto& c = st.cands[i];
      c.clear();
      st.next[i] = 0;
      const std::size_t v = order_[i];
      std::size_t min_dev = 0;
      for (auto j : lex_after_[i]) min_dev = std::max(min_dev, st.dev[order_[j]] + 1);
      const std::vector<std::size_t>* orbit = nullptr;
      if (i == 0 && !orbit0_.empty()) orbit = &orbit0_;
      if (i == 1 && !orbit1_[st.dev[order_[0]]].empty()) orbit = &orbit1_[st.dev[order_[0]]];
      const std::uint64_t* a = &allowed[v * W_];
      bool excluded = false;
      for (std::size_t w = 0; w < W_; ++w) {
        const std::uint64_t free_all = ~st.used[w] & (w + 1 < W_ || D_ % 64 == 0 ? ~std::uint64_t{0}
                                                                                  : (std::uint64_t{1} << (D_ % 64)) - 1);
        if (free_all & ~a[w]) excluded = true;
        std::uint64_t bits = a[w] & ~st.used[w];
        while (bits) {
          const std::size_t d = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
          bits &= bits - 1;
          if (d < min_dev) continue;
          if (twin_prev_[d] != unplaced && !is_used(st, twin_prev_[d])) continue;
          if (orbit && (*orbit)[d] != d) continue;
          st.dev[v] = d;
          const double x = own_value(i, v);
          st.dev[v] = unplaced;
          if (x > t && (extra || own_exact_[i])) {
            note(x);
            continue;
          }
          c.push_back({warnsdorff ? onward(v, d) : 0.0, x, d});
        }
      }
      if (excluded) note(above[v]);
      if (!fresh_[i]) std::sort(c.begin(), c.end());  // a fresh vertex: lowest free device first
    };

    const std::span<const std::size_t> dv(st.dev);
    std::size_t i = 0;
    expand(0);
    std::uint64_t nodes = 0;
    for (;;) {
      if (st.next[i] == st.cands[i].size()) {  // exhausted: backtrack
        if (i == 0) break;
        --i;
        const std::size_t v = order_[i], d = st.dev[v];
        st.dev[v] = unplaced;
        st.used[d / 64] &= ~(std::uint64_t{1} << (d % 64));
        ++st.left[group[v]];
        continue;
      }
      const auto [key, x, d] = st.cands[i][st.next[i]++];
      (void)key;
      const std::size_t v = order_[i];
      if (++nodes == budget) {
        res.nodes = nodes;
        return res;
      }
      if ((nodes & 1023u) == 0) {
        if ((stop && stop->load(std::memory_order_relaxed)) || clock::now() >= deadline) {
          res.nodes = nodes;
          return res;
        }
      }
      st.dev[v] = d;
      double tp = st.tp[i];
      if (own_exact_[i]) tp = std::max(tp, x);
      bool ok = true;
      for (auto u : exact_[i]) {
        const double y = static_cast<double>(model_.time(g, L, dv, u));
        if (y > t) {
          note(y);
          ok = false;
          break;
        }
        tp = std::max(tp, y);
      }
      if (ok && extra)
        for (auto u : partial_[i]) {
          const double y = static_cast<double>(model_.bound(g, L, dv, u));
          if (y > t) {
            note(y);
            ok = false;
            break;
          }
        }
      st.used[d / 64] |= std::uint64_t{1} << (d % 64);
      --st.left[group[v]];
      if (ok && extra && !counting_ok()) ok = false;
      if (!ok) {
        st.dev[v] = unplaced;
        st.used[d / 64] &= ~(std::uint64_t{1} << (d % 64));
        ++st.left[group[v]];
        continue;
      }
      st.tp[i + 1] = tp;
      if (i + 1 == V_) {
        res.found = res.completed = true;
        res.dev = st.dev;
        res.objective_ms = tp;
        res.nodes = nodes;
        return res;
      }
      ++i;
      expand(i);
    }
    res.completed = true;
    res.next_lower_bound_ms = vmin;
    res.nodes = nodes;
    return res;
  }

  const stage_graph* g_;
  const link_costs* L_;
  C model_;
  mapper_options opt_;
  std::size_t V_, D_, W_;
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
};

/// Algorithm 1 over `mapping_search`, with parallel targets, under any cost model.
template <mapping_cost_model C>
[[nodiscard]] mapping_result map_devices(const stage_graph& g, const link_costs& L, const C& model,
                                         const mapper_options& o = {}) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  const auto deadline = std::isfinite(o.timeout_s) && o.timeout_s < 1e9
                            ? t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(std::max(0.0, o.timeout_s)))
                            : clock::time_point::max();

  mapping_search<C> search(g, L, model, o);
  mapping_result res;
  res.cost = std::string(model.name());

  // initial bracket: t_l0 and the best baseline as incumbent
  double t_l = search.initial_lower_bound();
  std::vector<std::size_t> best;
  double t_r = std::numeric_limits<double>::infinity();
  for (auto b : {baseline::cs, baseline::p2p, baseline::random}) {
    const auto m = baseline_map(g, L.devices(), b, o.seed);
    const auto dev = flatten(g, m);
    const double x = evaluate_flat(g, L, model, std::span<const std::size_t>(dev)).objective_ms;
    if (x < t_r) t_r = x, best = dev, res.initial_mapping = std::string(to_string(b));
  }
  res.initial_lower_bound_ms = t_l;
  res.initial_upper_bound_ms = t_r;
  auto eps = [&] { return std::max(o.epsilon_abs, o.epsilon * std::abs(t_r)); };
  double h_l = t_l;  // heuristic lower end (raised by per-target timeouts, not proved)

  struct job {
    double target = 0;
    std::atomic<bool> stop{false};
    bool done = false, cancelled = false;
    target_search_result out;
    std::thread th;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::list<std::unique_ptr<job>> jobs;
  const unsigned k = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  bool timed_out = false;

  auto launch = [&](double target) {
    auto j = std::make_unique<job>();
    j->target = target;
    job* jp = j.get();
    const auto dl = std::isfinite(o.target_timeout_s) && o.target_timeout_s < 1e9
                        ? std::min(deadline, clock::now() + std::chrono::duration_cast<clock::duration>(
                                                                std::chrono::duration<double>(o.target_timeout_s)))
                        : deadline;
    ++res.searches;
    jobs.push_back(std::move(j));
    jp->th = std::thread([&, jp, dl] {
      auto out = search.search(jp->target, &jp->stop, dl);
      std::lock_guard lk(mu);
      jp->out = std::move(out);
      jp->done = true;
      cv.notify_all();
    });
  };
  auto next_target = [&]() -> double {
    std::vector<double> pts{std::max(t_l, h_l), t_r};
    for (auto& j : jobs)
      if (!j->cancelled) pts.push_back(j->target);
    std::sort(pts.begin(), pts.end());
    double best_gap = 0, target = -1;
    for (std::size_t i = 0; i + 1 < pts.size(); ++i)
      if (pts[i + 1] - pts[i] > best_gap) best_gap = pts[i + 1] - pts[i], target = 0.5 * (pts[i] + pts[i + 1]);
    return best_gap > eps() && target > pts.front() ? target : -1;
  };

  {
    std::unique_lock lk(mu);
    for (;;) {
      if (t_r - t_l <= eps() || t_r - std::max(t_l, h_l) <= eps()) break;
      std::size_t active = 0;
      for (auto& j : jobs)
        if (!j->done && !j->cancelled) ++active;
      while (active < k) {
        const double t = next_target();
        if (t < 0) break;
        launch(t);
        ++active;
      }
      if (active == 0 && std::none_of(jobs.begin(), jobs.end(), [](auto& j) { return !j->done; })) break;
      if (clock::now() >= deadline) {
        timed_out = true;
        break;
      }
      auto any_done = [&] { return std::any_of(jobs.begin(), jobs.end(), [](auto& j) { return j->done; }); };
      if (deadline == clock::time_point::max()) cv.wait(lk, any_done);
      else cv.wait_until(lk, deadline, any_done);
      // collect finished jobs
      for (auto it = jobs.begin(); it != jobs.end();) {
        job& j = **it;
        if (!j.done) {
          ++it;
          continue;
        }
        res.nodes_explored += j.out.nodes;
        if (j.out.found) {
          if (j.out.objective_ms < t_r) t_r = j.out.objective_ms, best = j.out.dev;
        } else if (j.out.completed) {
          t_l = std::max(t_l, std::min(j.out.next_lower_bound_ms, t_r));
        } else if (!j.cancelled && !j.stop.load() && clock::now() < deadline) {
          ++res.searches_timed_out;  // per-target timeout: move on above it, unproved
          h_l = std::max(h_l, j.target);
        }
        lk.unlock();
        j.th.join();
        lk.lock();
        it = jobs.erase(it);
      }
      h_l = std::min(h_l, t_r);
      for (auto& j : jobs)
        if (!j->done && (j->target >= t_r || j->target < t_l)) j->cancelled = true, j->stop = true;
    }
    for (auto& j : jobs) j->stop = true;
  }
  for (auto& j : jobs) {
    j->th.join();
    res.nodes_explored += j->out.nodes;
    if (j->out.found && j->out.objective_ms < t_r) t_r = j->out.objective_ms, best = j->out.dev;
    else if (!j->out.found && j->out.completed) t_l = std::max(t_l, std::min(j->out.next_lower_bound_ms, t_r));
  }
  if (!timed_out && clock::now() >= deadline && t_r - t_l > eps()) timed_out = true;

  const auto e = evaluate_flat(g, L, model, std::span<const std::size_t>(best));
  res.device_of = unflatten(g, best);
  res.objective_ms = e.objective_ms;
  res.lower_bound_ms = std::min(t_l, e.objective_ms);
  res.optimal = e.objective_ms - t_l <= std::max(o.epsilon_abs, o.epsilon * std::abs(e.objective_ms));
  res.status = res.optimal ? status::optimal : timed_out ? status::timed_out : status::feasible;
  res.time_s = elapsed();
  return res;
}

/// Maps with the model chosen by `o.cost` (automatic: the paper's ratio rule).
[[nodiscard]] inline mapping_result map_devices(const stage_graph& g, const link_costs& L, const mapper_options& o = {}) {
  return select_cost_model(g, o.cost) == cost_choice::allreduce ? map_devices(g, L, allreduce_cost{}, o)
                                                                : map_devices(g, L, p2p_cost{}, o);
}

/// Same, on any `device_topology` (copied once into dense link costs).
template <device_topology T>
[[nodiscard]] mapping_result map_devices(const stage_graph& g, const T& topology, const mapper_options& o = {}) {
  const link_costs L(topology);
  return map_devices(g, L, o);
}

template <device_topology T, mapping_cost_model C>
[[nodiscard]] mapping_result map_devices(const stage_graph& g, const T& topology, const C& model,
                                         const mapper_options& o = {}) {
  const link_costs L(topology);
  return map_devices(g, L, model, o);
}

}  // namespace devplace
