#pragma once
/// \file map/bisection_map.hpp
/// The dual recursive bisection map: the static mapping method of Scotch (Pellegrini, "Static
/// mapping by dual recursive bipartitioning of process and architecture graphs", SHPCC 1994),
/// built on the mapper's own inputs, as a start for the searches that improve a mapping. Every
/// domain (devices and the stage replicas placed in them) is split breadth first: its devices into
/// halves of least affinity cut, its replicas to match; then each stage's ring is reordered through
/// its devices. A heuristic mapping, no bound claimed. The process graph, the splits and the cost:
/// docs/mapping.md, "The dual recursive bisection map".
///
///   const device_mapping m = bisection_map(g, link_costs(topology), 4);
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {
namespace detail {

/// The largest topology on which the mapper and `map_for_iteration` start from the bisection map
/// (its device splits read every pair of devices once per level: about 0.1 s at 1,024 devices).
inline constexpr std::size_t bisection_start_max_devices = 1024;

/// One run of `bisect`: every item starts on side 1 − `grow`; `count` items join side `grow` one
/// by one, the one that raises the cost least first; then pair swaps. `cost` gets the final cost.
template <class Items>
[[nodiscard]] std::vector<char> bisect_from(std::size_t n, std::size_t count, char grow, const Items& items, double& cost) {
  std::vector<char> side(n, static_cast<char>(1 - grow));
  std::vector<double> conn[2] = {std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};  // Σ w to side 0, to side 1
  for (std::size_t i = 0; i < n; ++i) items.for_each(i, [&](std::size_t, double w) { conn[1 - grow][i] += w; });
  // The change of the cost when i leaves its side.
  auto delta = [&](std::size_t i) {
    const int s = side[i];
    return conn[s][i] - conn[1 - s][i] + items.ext(i, 1 - s) - items.ext(i, s);
  };
  auto move = [&](std::size_t i) {
    const int from = side[i];
    side[i] = static_cast<char>(1 - from);
    items.for_each(i, [&](std::size_t j, double w) { conn[1 - from][j] += w, conn[from][j] -= w; });
  };
  for (std::size_t k = 0; k < count; ++k) {  // greedy growth
    std::size_t best = n;
    double best_d = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      if (side[i] != grow) {
        const double d = delta(i);
        if (d < best_d) best_d = d, best = i;
      }
    move(best);
  }
  constexpr std::size_t top = 6;  // the best-gaining items of each side tried in pairs
  for (std::size_t round = 0; round < 2 * n && count > 0 && count < n; ++round) {
    std::vector<std::pair<double, std::size_t>> c[2];
    for (std::size_t i = 0; i < n; ++i) c[static_cast<int>(side[i])].emplace_back(delta(i), i);
    const std::size_t m0 = std::min(top, c[0].size()), m1 = std::min(top, c[1].size());
    std::partial_sort(c[0].begin(), c[0].begin() + std::ptrdiff_t(m0), c[0].end());
    std::partial_sort(c[1].begin(), c[1].begin() + std::ptrdiff_t(m1), c[1].end());
    double best = 0, scale = 0;
    std::pair<std::size_t, std::size_t> swap{n, n};
    for (std::size_t x = 0; x < m0; ++x)
      for (std::size_t y = 0; y < m1; ++y) {
        const double change = c[0][x].first + c[1][y].first + 2 * items.weight(c[0][x].second, c[1][y].second);
        scale = std::max({scale, std::abs(c[0][x].first), std::abs(c[1][y].first)});
        if (change < best) best = change, swap = {c[0][x].second, c[1][y].second};
      }
    if (swap.first == n || best > -1e-12 * scale) break;  // no pair lowers the cost beyond rounding
    move(swap.first);
    move(swap.second);
  }
  cost = 0;
  for (std::size_t i = 0; i < n; ++i) cost += items.ext(i, side[i]) + conn[1 - side[i]][i] / 2;
  return side;
}

/// Splits items 0..n−1 into side 0 (k0 items) and side 1, lowering
///   Σ_{i, j on different sides} w(i, j) + Σ_i ext(i, side(i)).
/// `items.for_each(i, f)` calls f(j, w) for every j ≠ i with w(i, j) > 0 (each pair seen from both
/// ends, with the same w); `items.weight(i, j)` is w(i, j); `items.ext(i, side)` the outside cost.
/// Returns side(i) ∈ {0, 1}.
template <class Items>
[[nodiscard]] std::vector<char> bisect(std::size_t n, std::size_t k0, const Items& items) {
  // Grows side 0 from empty, or side 1 from empty, refines each and keeps the cheaper.
  std::vector<char> best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (const char grow : {char{0}, char{1}}) {
    double cost = 0;
    auto side = bisect_from(n, grow == 0 ? k0 : n - k0, grow, items, cost);
    if (cost < best_cost) best_cost = cost, best = std::move(side);
  }
  return best;
}

/// Per-byte distances between devices and between device sets (file comment). A template only
/// so that a file compiles it where a bisection map is made (docs/compile-time.md).
template <int = 0>
class basic_device_distances {
 public:
  explicit basic_device_distances(const link_costs& L) : L_(&L) {
    const std::size_t D = L.devices();
    for (std::size_t a = 0; a < D; ++a)
      for (std::size_t b = 0; b < D; ++b)
        if (a != b && std::isfinite(L.ms_per_byte(a, b))) cap_ = std::max(cap_, L.ms_per_byte(a, b));
    cap_ = cap_ > 0 ? 100 * cap_ : 1.0;  // an unreachable pair: far beyond every link
  }
  [[nodiscard]] double operator()(std::size_t a, std::size_t b) const {
    auto w = [&](std::size_t x, std::size_t y) { return std::isfinite(L_->ms_per_byte(x, y)) ? L_->ms_per_byte(x, y) : cap_; };
    return a == b ? 0.0 : (w(a, b) + w(b, a)) / 2;
  }
  [[nodiscard]] double mean(const std::vector<std::size_t>& A, const std::vector<std::size_t>& B) const {
    double s = 0;
    for (auto a : A)
      for (auto b : B) s += (*this)(a, b);
    return A.empty() || B.empty() ? 0.0 : s / (static_cast<double>(A.size()) * static_cast<double>(B.size()));
  }
  /// Affinity 1/d, the weight of the device splits (a pair at distance 0: 10⁹ times the cap's).
  [[nodiscard]] double affinity(std::size_t a, std::size_t b) const {
    const double d = (*this)(a, b);
    return d > 0 ? 1.0 / d : 1e9 / cap_;
  }

 private:
  const link_costs* L_;
  double cap_ = 0;
};
using device_distances = basic_device_distances<>;

/// Lowers the largest link of a ring (cyclic order of devices) by 2-opt moves: a segment
/// reversal is kept when it lowers (largest d(a, b) on the ring, number of links at it)
/// lexicographically, so every kept move makes progress and the loop ends; at most 64 passes.
template <int = 0>
void two_opt_ring(std::vector<std::size_t>& ring, const device_distances& dist) {
  const std::size_t n = ring.size();
  if (n < 4) return;
  auto link = [&](std::size_t i) { return dist(ring[i], ring[(i + 1) % n]); };  // ring[i] -> ring[i + 1]
  double top = 0;
  std::size_t at_top = 0;
  auto recount = [&] {
    top = 0, at_top = 0;
    for (std::size_t i = 0; i < n; ++i) top = std::max(top, link(i));
    for (std::size_t i = 0; i < n; ++i) at_top += link(i) == top;
  };
  recount();
  for (int pass = 0; pass < 64 && top > 0; ++pass) {
    bool moved = false;
    for (std::size_t i = 1; i + 1 < n; ++i)  // reverse ring[i..j]: links (i−1, i), (j, j+1) replaced
      for (std::size_t j = i + 1; j < n; ++j) {
        const double e1 = link(i - 1), e2 = link(j);
        if (e1 != top && e2 != top) continue;  // only a move that removes a largest link can help
        const double f1 = dist(ring[i - 1], ring[j]), f2 = dist(ring[i], ring[(j + 1) % n]);
        if (f1 > top || f2 > top) continue;
        const std::size_t now = at_top - (e1 == top) - (e2 == top) + (f1 == top) + (f2 == top);
        if (now >= at_top) continue;
        std::reverse(ring.begin() + std::ptrdiff_t(i), ring.begin() + std::ptrdiff_t(j) + 1);
        at_top = now, moved = true;
        if (at_top == 0) recount();
      }
    if (!moved) break;
  }
}

/// What the ring searches of one bisection map may still spend: extensions of a depth-first
/// search in all, and a deadline (read every 1,024 extensions).
struct ring_work {
  std::size_t left;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::size_t since_clock = 0;
  /// Counts one extension; false when the work or the time is spent.
  bool take() {
    if (left == 0) return false;
    --left;
    if (++since_clock < 1024) return true;
    since_clock = 0;
    if (std::chrono::steady_clock::now() >= deadline) left = 0;
    return left > 0;
  }
};

/// A Hamiltonian cycle of the vertices 0..n−1 of the graph `nb` (adjacency lists) through
/// `start`, by depth-first search (fewest free neighbours first, as Warnsdorff's rule, then the
/// farthest from the start by `far`; the start's last free neighbour kept for the return) within
/// `budget` extensions; empty when none is found.
template <class Far>
[[nodiscard]] std::vector<std::size_t> cycle_from(const std::vector<std::vector<std::size_t>>& nb, std::size_t start, std::size_t budget,
                                                  const Far& far, ring_work& work) {
  const std::size_t n = nb.size();
  std::vector<char> used(n, 0), near_start(n, 0);
  for (auto b : nb[start]) near_start[b] = 1;
  std::vector<std::size_t> free(n), path{start};
  for (std::size_t a = 0; a < n; ++a) free[a] = nb[a].size();
  auto visit = [&](std::size_t a, bool in) {
    used[a] = in;
    for (auto b : nb[a]) free[b] = in ? free[b] - 1 : free[b] + 1;
  };
  auto expand = [&](std::size_t a) {  // the untried successors of a, best last
    std::vector<std::size_t> c;
    for (auto b : nb[a])
      if (!used[b] && (free[start] > 1 || path.size() + 1 == n || !near_start[b])) c.push_back(b);
    std::sort(c.begin(), c.end(), [&](std::size_t p, std::size_t q) {
      if (free[p] != free[q]) return free[p] > free[q];
      const double dp = far(p), dq = far(q);
      return dp != dq ? dp < dq : p > q;
    });
    return c;
  };
  visit(start, true);
  std::vector<std::vector<std::size_t>> choices{expand(start)};
  for (std::size_t steps = 0; steps < budget && work.left > 0;) {
    if (path.size() == n) {
      if (near_start[path.back()]) return path;
    } else if (!choices.back().empty()) {
      const std::size_t b = choices.back().back();
      choices.back().pop_back();
      ++steps;
      if (!work.take()) break;
      path.push_back(b);
      visit(b, true);
      choices.push_back(expand(b));
      continue;
    }
    if (path.size() == 1) break;
    visit(path.back(), false);
    path.pop_back();
    choices.pop_back();
  }
  return {};
}

/// A Hamiltonian cycle of the devices `x` using only pairs with d ≤ `tau` (`cycle_from`), tried
/// from up to four starts (the vertex of fewest neighbours first, then three spread over `x`), each
/// within `budget` extensions; empty when none is found.
template <int = 0>
[[nodiscard]] std::vector<std::size_t> cycle_within(const std::vector<std::size_t>& x, const device_distances& dist, double tau,
                                                    std::size_t budget, ring_work& work) {
  const std::size_t n = x.size();
  std::vector<std::vector<std::size_t>> nb(n);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (a != b && dist(x[a], x[b]) <= tau) nb[a].push_back(b);
  for (const auto& l : nb)
    if (l.size() < 2) return {};
  std::size_t first = 0;
  for (std::size_t a = 1; a < n; ++a)
    if (nb[a].size() < nb[first].size()) first = a;
  for (std::size_t k = 0; k < 4; ++k) {
    const std::size_t start = (first + k * n / 4) % n;
    if (k > 0 && start == first) break;
    std::vector<double> far(n);
    for (std::size_t a = 0; a < n; ++a) far[a] = dist(x[a], x[start]);
    auto c = cycle_from(nb, start, budget, [&](std::size_t a) { return far[a]; }, work);
    if (!c.empty()) {
      for (auto& a : c) a = x[a];
      return c;
    }
  }
  return {};
}

/// The ring through the devices of `ring` with the least largest link that `cycle_within` finds
/// (binary search over the pair distances, from the current order's largest link down), then
/// 2-opt (`two_opt_ring`).
template <int = 0>
void best_ring_order(std::vector<std::size_t>& ring, const device_distances& dist, ring_work& work) {
  const std::size_t n = ring.size();
  if (n < 4) return;
  double top = 0, floor = 0;
  for (std::size_t i = 0; i < n; ++i) top = std::max(top, dist(ring[i], ring[(i + 1) % n]));
  std::vector<double> values;
  for (std::size_t a = 0; a < n; ++a) {
    std::vector<double> row;
    for (std::size_t b = 0; b < n; ++b)
      if (a != b) row.push_back(dist(ring[a], ring[b])), values.push_back(row.back());
    std::nth_element(row.begin(), row.begin() + 1, row.end());
    floor = std::max(floor, row[1]);  // every device needs two ring neighbours
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  auto lo = std::lower_bound(values.begin(), values.end(), floor), hi = std::lower_bound(values.begin(), values.end(), top);
  std::vector<std::size_t> best;
  while (lo < hi && work.left > 0) {  // the least value within reach lies in [lo, hi]; hi is the current order's
    const auto mid = lo + (hi - lo) / 2;
    auto c = cycle_within(ring, dist, *mid, 512 * n, work);
    if (c.empty()) lo = mid + 1;
    else best = std::move(c), hi = mid;
  }
  if (!best.empty()) ring = std::move(best);
  two_opt_ring(ring, dist);
}

/// The process graph of the file comment: weighted adjacency of the stage replicas.
template <int = 0>
[[nodiscard]] std::vector<std::vector<std::pair<std::size_t, double>>> bisection_process_graph(const stage_graph& g,
                                                                                                     std::size_t micro_batches) {
  std::vector<std::vector<std::pair<std::size_t, double>>> adj(g.vertices());
  auto add = [&](std::size_t u, std::size_t v, double w) {
    if (u == v || !(w > 0)) return;
    adj[u].emplace_back(v, w);
    adj[v].emplace_back(u, w);
  };
  const double mb = static_cast<double>(micro_batches);
  for (std::size_t s = 0; s < g.stages(); ++s) {
    for (std::size_t i = 0; i < g.replicas(s); ++i)
      for (auto t : g.neighbours(s)) {
        const auto [j0, j1] = g.peers(s, i, t);
        for (std::size_t j = j0; j < j1; ++j) add(g.vertex(s, i), g.vertex(t, j), mb * g.exchange_bytes(s, i, t, j));
      }
    if (g.replicas(s) >= 2)
      for (std::size_t q = 0; q < g.replicas(s); ++q)
        add(g.vertex(s, q), g.vertex(s, (q + 1) % g.replicas(s)), g.allreduce_bytes(s));
  }
  for (auto& a : adj) {  // merge parallel edges
    std::sort(a.begin(), a.end());
    std::size_t k = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (k > 0 && a[k - 1].first == a[i].first) a[k - 1].second += a[i].second;
      else a[k++] = a[i];
    a.resize(k);
  }
  return adj;
}

/// The devices of a domain as bisection items: weight = affinity.
struct device_items {
  const std::vector<std::size_t>* x;
  const device_distances* d;
  template <class F>
  void for_each(std::size_t i, F&& f) const {
    for (std::size_t j = 0; j < x->size(); ++j)
      if (j != i) f(j, d->affinity((*x)[i], (*x)[j]));
  }
  [[nodiscard]] double weight(std::size_t i, std::size_t j) const { return d->affinity((*x)[i], (*x)[j]); }
  [[nodiscard]] double ext(std::size_t, int) const { return 0.0; }
};

/// The stage replicas of a domain as bisection items: weight = traffic · d(D0, D1), the outside
/// cost precomputed per side.
struct replica_items {
  using graph = std::vector<std::vector<std::pair<std::size_t, double>>>;
  const graph* adj;
  const std::vector<std::size_t>* reps;
  const std::vector<std::size_t>* local;  ///< index in reps, or more for a replica outside
  const std::vector<double>* e[2];
  double between;
  template <class F>
  void for_each(std::size_t i, F&& f) const {
    for (const auto& [u, w] : (*adj)[(*reps)[i]])
      if ((*local)[u] < reps->size()) f((*local)[u], w * between);
  }
  [[nodiscard]] double weight(std::size_t i, std::size_t j) const {
    for (const auto& [u, w] : (*adj)[(*reps)[i]])
      if (u == (*reps)[j]) return w * between;
    return 0.0;
  }
  [[nodiscard]] double ext(std::size_t i, int s) const { return (*e[s])[i]; }
};

/// A domain of the recursion: its devices and the stage replicas placed in it.
struct bisection_domain {
  std::vector<std::size_t> devices, replicas;
};

/// Splits domain k of `doms` (step 1 and 2 of the file comment): half 0 stays domain k, half 1 is
/// appended; `dom_of` follows the replicas.
template <int = 0>
void split_domain(std::vector<bisection_domain>& doms, std::size_t k, std::vector<std::size_t>& dom_of,
                         const replica_items::graph& adj, const device_distances& dist) {
  const auto devs = std::move(doms[k].devices);
  const auto reps = std::move(doms[k].replicas);
  const auto dside = bisect(devs.size(), devs.size() / 2, device_items{&devs, &dist});
  bisection_domain h[2];
  for (std::size_t i = 0; i < devs.size(); ++i) h[dside[i] ? 1 : 0].devices.push_back(devs[i]);
  const std::size_t n0 = h[0].devices.size(), n1 = h[1].devices.size(), P = reps.size(), V = dom_of.size();
  const double share = static_cast<double>(P) * static_cast<double>(n0) / static_cast<double>(devs.size());
  const std::size_t k0 = std::clamp(static_cast<std::size_t>(std::llround(share)), P > n1 ? P - n1 : std::size_t{0}, std::min(n0, P));
  std::vector<std::size_t> local(V, V);
  for (std::size_t i = 0; i < P; ++i) local[reps[i]] = i;
  std::vector<double> to_dom[2];  // mean distance of each half to every domain, when needed
  for (auto& t : to_dom) t.assign(doms.size(), -1.0);
  auto far = [&](int s, std::size_t d) {
    double& x = to_dom[s][d];
    if (x < 0) x = dist.mean(h[s].devices, doms[d].devices);
    return x;
  };
  std::vector<double> ext0(P, 0.0), ext1(P, 0.0);
  for (std::size_t i = 0; i < P; ++i)
    for (const auto& [u, w] : adj[reps[i]])
      if (local[u] == V) ext0[i] += w * far(0, dom_of[u]), ext1[i] += w * far(1, dom_of[u]);
  const double between = dist.mean(h[0].devices, h[1].devices);
  const auto rside = bisect(P, k0, replica_items{&adj, &reps, &local, {&ext0, &ext1}, between});
  for (std::size_t i = 0; i < P; ++i) h[rside[i] ? 1 : 0].replicas.push_back(reps[i]);
  for (auto v : h[1].replicas) dom_of[v] = doms.size();
  doms[k] = std::move(h[0]);
  doms.push_back(std::move(h[1]));
}

}  // namespace detail

/// The dual recursive bisection map of `g` onto the devices of `L` (file comment), MB =
/// `micro_batches` weighting the point-to-point traffic against the allreduce. The ring searches
/// spend at most 1,024·S·R extensions in all and stop at `deadline` (the rings keep the order
/// they have then). Deterministic without a deadline. Throws std::invalid_argument when S·R
/// exceeds the devices or `micro_batches` is 0.
template <int = 0>
[[nodiscard]] device_mapping bisection_map(const stage_graph& g, const link_costs& L, std::size_t micro_batches = 1,
                                           std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  const std::size_t V = g.vertices(), D = L.devices();
  if (V > D)
    throw std::invalid_argument("bisection_map: " + std::to_string(V) + " stage replicas need as many devices, the topology has " +
                                std::to_string(D));
  if (micro_batches == 0) throw std::invalid_argument("bisection_map: micro_batches must be >= 1");
  const detail::device_distances dist(L);
  const auto adj = detail::bisection_process_graph(g, micro_batches);
  std::vector<detail::bisection_domain> doms(1);
  for (std::size_t d = 0; d < D; ++d) doms[0].devices.push_back(d);
  for (std::size_t v = 0; v < V; ++v) doms[0].replicas.push_back(v);
  std::vector<std::size_t> dom_of(V, 0);
  std::deque<std::size_t> queue{0};  // breadth first: a level's domains see their neighbours' last split
  while (!queue.empty()) {
    const std::size_t k = queue.front();
    queue.pop_front();
    if (doms[k].devices.size() < 2 || doms[k].replicas.empty()) continue;
    detail::split_domain(doms, k, dom_of, adj, dist);
    queue.push_back(k);
    queue.push_back(doms.size() - 1);
  }
  std::vector<std::size_t> dev(V);
  for (std::size_t v = 0; v < V; ++v) dev[v] = doms[dom_of[v]].devices.front();
  auto m = unflatten(g, dev);
  detail::ring_work work{.left = 4096 * V, .deadline = deadline};
  for (std::size_t s = 0; s < g.stages(); ++s)
    if (g.allreduce_bytes(s) > 0) detail::best_ring_order(m[s], dist, work);
  return m;
}

}  // namespace devplace
