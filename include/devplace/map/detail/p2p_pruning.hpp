#pragma once
/// \file map/detail/p2p_pruning.hpp
/// The p2p-only checks of `mapping_search` (Algorithm 2) with equal replica counts: the
/// arc-consistency filtering of the allowed devices (`mapper_options::domain_filtering`, with its
/// neighbour assignment bound) and the free-link checks after each placement
/// (`mapper_options::free_link_pruning`). Each records the value that pruned (`pruned_by`,
/// `above`), so a failed search still certifies a lower bound (docs/mapping.md, "Algorithm 2").
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/search_state.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

struct assignment_scratch {
  std::vector<double> cost, u, v, minv;
  std::vector<std::size_t> cols, p, way;
  std::vector<char> used;
};

/// The least Σ_{s'∈adj(s)} T(d, e_{s'}, M(s, s')) over injective choices e_{s'} ∈ A(s') \ {d}
/// (a rectangular min-cost assignment, Hungarian method, O(deg² · D)); +inf when none exists.
/// Lowered by a relative 1e-12 so that rounding keeps it below the true minimum.
template <int = 0>
[[nodiscard]] double neighbour_assignment_ms(const stage_graph& g, const link_costs& L, const std::vector<std::uint64_t>& dom,
                                                  std::size_t W, std::size_t s, std::size_t d, assignment_scratch& a) {
  const auto nb = g.neighbours(s);
  const std::size_t n = nb.size();
  a.cols.clear();
  for (std::size_t w = 0; w < W; ++w) {
    std::uint64_t any = 0;
    for (auto s2 : nb) any |= dom[s2 * W + w];
    for (; any; any &= any - 1) {
      const std::size_t e = w * 64 + static_cast<std::size_t>(std::countr_zero(any));
      if (e != d) a.cols.push_back(e);
    }
  }
  const std::size_t m = a.cols.size();
  if (m < n) return std::numeric_limits<double>::infinity();
  constexpr double big = 1e18;  // a device outside A(s'): never part of a finite answer
  a.cost.assign(n * m, big);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t s2 = nb[i];
    const double msg = g.message_bytes(s, s2);
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t e = a.cols[j];
      if ((dom[s2 * W + e / 64] >> (e % 64)) & 1u) a.cost[i * m + j] = L.transfer_ms(d, e, msg);
    }
  }
  // Hungarian method for n rows ≤ m columns (1-based potentials; p[j] = row of column j).
  const double inf = std::numeric_limits<double>::infinity();
  a.u.assign(n + 1, 0.0);
  a.v.assign(m + 1, 0.0);
  a.p.assign(m + 1, 0);
  a.way.assign(m + 1, 0);
  for (std::size_t i = 1; i <= n; ++i) {
    a.p[0] = i;
    std::size_t j0 = 0;
    a.minv.assign(m + 1, inf);
    a.used.assign(m + 1, 0);
    do {
      a.used[j0] = 1;
      const std::size_t i0 = a.p[j0];
      double delta = inf;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j <= m; ++j) {
        if (a.used[j]) continue;
        const double cur = a.cost[(i0 - 1) * m + (j - 1)] - a.u[i0] - a.v[j];
        if (cur < a.minv[j]) a.minv[j] = cur, a.way[j] = j0;
        if (a.minv[j] < delta) delta = a.minv[j], j1 = j;
      }
      for (std::size_t j = 0; j <= m; ++j) {
        if (a.used[j]) a.u[a.p[j]] += delta, a.v[j] -= delta;
        else a.minv[j] -= delta;
      }
      j0 = j1;
    } while (a.p[j0] != 0);
    do {
      const std::size_t j1 = a.way[j0];
      a.p[j0] = a.p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  double total = 0;
  for (std::size_t j = 1; j <= m; ++j)
    if (a.p[j] != 0) {
      const double c = a.cost[(a.p[j] - 1) * m + (j - 1)];
      if (c >= big) return std::numeric_limits<double>::infinity();
      total += c;
    }
  return total * (1 - 1e-12);
}

/// p2p with equal replica counts: arc-consistency filtering of the allowed devices at target t.
/// Replica r of stage s on d sends to replica r of each neighbour s' on a device of the
/// allowed set A(s') other than d, so its time is at least
///   x(s, d) = c_u(s) + Σ_{s'∈adj(s)} min_{e∈A(s'), e≠d} T(d, e, M(s, s'))
/// (summed in the order of `p2p_cost::time`, so rounding keeps x ≤ the time); d leaves A(s)
/// when x(s, d) > t, and passes repeat until nothing changes. Every mapping with objective ≤ t
/// keeps each vertex inside its set (induction over the removals), so this only prunes
/// mappings above t. The value recorded for a removal (`above`, the pruning value a failed
/// search reports) is max(b(v, d), min(x, min_{s'} above(s'))): a mapping with s on d either
/// keeps every neighbour inside its set of that moment (time ≥ x) or puts one outside it
/// (objective ≥ its above) — a proved bound whatever the target. One pass costs Σ_s deg(s)·D²
/// link reads; skipped above 4·10^7.
template <int = 0>
void filter_p2p_domains(mapping_search_state& st, const stage_graph& g, const link_costs& L,
                               const device_bound_table& table, std::size_t D, std::size_t W) {
  if (!g.uniform_replicas()) return;
  const std::size_t S = g.stages(), R = g.replicas();
  double work = 0;
  for (std::size_t s = 0; s < S; ++s) work += static_cast<double>(g.neighbours(s).size());
  if (work * static_cast<double>(D) * static_cast<double>(D) > 4e7) return;
  std::vector<std::uint64_t> dom(S * W);
  std::vector<double> above(S, std::numeric_limits<double>::infinity());
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < R; ++r) {  // equal rows for every replica; the min keeps it safe
      const std::size_t v = g.vertex(s, r);
      above[s] = std::min(above[s], st.above[v]);
      for (std::size_t w = 0; w < W; ++w) dom[s * W + w] = r == 0 ? st.allowed[v * W + w] : dom[s * W + w] & st.allowed[v * W + w];
    }
  bool removed_any = false;
  assignment_scratch scratch;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t s = 0; s < S; ++s) {
      const auto nb = g.neighbours(s);
      double out = std::numeric_limits<double>::infinity();
      for (auto s2 : nb) out = std::min(out, above[s2]);
      const double cu = g.replica_compute_ms(s);
      for (std::size_t w = 0; w < W; ++w)
        for (std::uint64_t bits = dom[s * W + w]; bits; bits &= bits - 1) {
          const std::size_t d = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
          double c = 0;
          for (auto s2 : nb) {
            const double m = g.message_bytes(s, s2);
            double best = std::numeric_limits<double>::infinity();
            for (std::size_t w2 = 0; w2 < W; ++w2)
              for (std::uint64_t b2 = dom[s2 * W + w2]; b2; b2 &= b2 - 1) {
                const std::size_t e = w2 * 64 + static_cast<std::size_t>(std::countr_zero(b2));
                if (e != d) best = std::min(best, L.transfer_ms(d, e, m));
              }
            c += best;
            if (cu + c > st.t) break;
          }
          double x = cu + c;
          if (x <= st.t && nb.size() > 1) x = std::max(x, cu + neighbour_assignment_ms(g, L, dom, W, s, d, scratch));
          if (x <= st.t) continue;
          dom[s * W + w] &= ~(std::uint64_t{1} << (d % 64));
          above[s] = std::min(above[s], std::max(table(g.vertex(s, 0), d), std::min(x, out)));
          changed = removed_any = true;
        }
    }
  }
  if (!removed_any) return;
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t v = g.vertex(s, r);
      std::copy_n(dom.begin() + static_cast<std::ptrdiff_t>(s * W), W, st.allowed.begin() + static_cast<std::ptrdiff_t>(v * W));
      st.above[v] = above[s];
    }
}

/// p2p: a lower bound of v's time on device f over every completion of the partial mapping:
/// the placed neighbours exactly, the unplaced ones on the fastest links from f to devices free
/// now (≠ f), largest message on the fastest (rearrangement; latency: the smallest ones out of f
/// apart). +inf when the free devices cannot host the unplaced neighbours.
template <int = 0>
[[nodiscard]] double p2p_free_bound(const mapping_search_state& st, const stage_graph& g, const link_costs& L,
                                           std::size_t v, std::size_t f) {
  const std::size_t s = g.stage_of_vertex(v), r = g.replica_of_vertex(v);
  const auto ow = L.out_sorted(f);
  const auto ox = L.out_sorted_devices(f);
  const auto ol = L.out_latency_sorted(f);
  std::size_t k = 0, j = 0;
  double c = 0;
  for (auto t : g.neighbours(s)) {
    const std::size_t u = st.dev[g.vertex(t, r)];
    if (u != unplaced) {
      c += L.transfer_ms(f, u, g.message_bytes(s, t));
      continue;
    }
    while (k < ox.size() && (ox[k] == f || st.is_used(ox[k]))) ++k;
    if (k == ox.size()) return std::numeric_limits<double>::infinity();
    c += g.message_bytes(s, t) * ow[k] + ol[j];
    ++k, ++j;
  }
  return g.replica_compute_ms(s) + c;
}

/// The free-link checks of `free_link_pruning` after v was placed on d (p2p, equal replica
/// counts; docs/mapping.md, "Algorithm 2"): false, with the pruning value recorded, when a placed
/// vertex of v's copy has a free-link bound above t, or more free devices near d are dead than
/// there are spare ones. On each device examined, the unplaced vertices of the started copies and
/// one copy not started. O(V + K · (started copies + 1) · S · deg) per placement.
template <int = 0>
[[nodiscard]] bool p2p_free_links_suffice(mapping_search_state& st, const stage_graph& g, const link_costs& L,
                                                 const device_bound_table& table, std::size_t D, std::size_t W,
                                                 std::size_t v, std::size_t d) {
  if (!g.uniform_replicas()) return true;
  const std::size_t S = g.stages(), r = g.replica_of_vertex(v);
  for (std::size_t s2 = 0; s2 < S; ++s2) {
    const std::size_t u = g.vertex(s2, r);
    if (st.dev[u] == unplaced) continue;
    bool open = false;
    for (auto t2 : g.neighbours(s2)) open = open || st.dev[g.vertex(t2, r)] == unplaced;
    if (!open) continue;
    const double y = p2p_free_bound(st, g, L, u, st.dev[u]);
    if (y > st.t) {
      st.pruned_by(y);
      return false;
    }
  }
  std::size_t free = 0, unplaced_left = 0;
  for (std::size_t w = 0; w < W; ++w) free += static_cast<std::size_t>(std::popcount(~st.used[w]));
  free -= W * 64 - D;
  for (std::size_t k = 0; k < st.left.size(); ++k) unplaced_left += st.left[k];
  if (unplaced_left == 0) return true;
  const std::size_t spare = free > unplaced_left ? free - unplaced_left : 0;
  std::size_t max_deg = 0;
  for (std::size_t s2 = 0; s2 < S; ++s2) max_deg = std::max(max_deg, g.neighbours(s2).size());
  const auto ox = L.out_sorted_devices(d);
  const std::size_t K = std::min<std::size_t>({ox.size(), 2 * max_deg + 2, 8});
  std::size_t dead = 0;
  double dead_value = std::numeric_limits<double>::infinity();
  // The vertices to try on each device: every unplaced vertex of a started copy, and of the
  // copies not started (all alike: nothing of theirs is placed) the first one's. O(V) once.
  auto& cand = st.free_cands;
  cand.clear();
  std::size_t unstarted = unplaced;
  for (std::size_t rr = 0; rr < g.replicas(); ++rr) {
    bool started = false;
    for (std::size_t s2 = 0; s2 < S && !started; ++s2) started = st.dev[g.vertex(s2, rr)] != unplaced;
    if (!started) {
      if (unstarted == unplaced) unstarted = rr;
      continue;
    }
    for (std::size_t s2 = 0; s2 < S; ++s2)
      if (st.dev[g.vertex(s2, rr)] == unplaced) cand.push_back(g.vertex(s2, rr));
  }
  if (unstarted != unplaced)
    for (std::size_t s2 = 0; s2 < S; ++s2) cand.push_back(g.vertex(s2, unstarted));
  for (std::size_t k = 0; k < K; ++k) {
    const std::size_t f = ox[k];
    if (st.is_used(f)) continue;
    bool alive = false;
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t ci = 0; ci < cand.size() && !alive; ++ci) {
      const std::size_t u = cand[ci];
      const double b = table(u, f);
      const double y = b > st.t ? b : std::max(b, p2p_free_bound(st, g, L, u, f));
      if (y <= st.t) alive = true;
      else least = std::min(least, y);
    }
    if (alive) continue;
    ++dead;
    dead_value = std::min(dead_value, least);
    if (dead > spare) {
      st.pruned_by(dead_value);
      return false;
    }
  }
  return true;
}

}  // namespace devplace::detail
