#pragma once
/// \file map/neighbourhood_search.hpp
/// Large-neighbourhood search on a complete device mapping: free a few independent *blocks* of the
/// mapping, the slowest among them, and map them again exactly on the devices they held.
///
///   auto r = improve_by_blocks(g, L, p2p_cost{}, flatten(g, m), {.blocks = 3, .deadline = until});
///   // r.dev: never worse than the input (objective, then blocks at the objective)
///
/// Blocks (`block_kind`): one replica copy under a model whose every dependency stays inside its
/// copy and that declares copy symmetry (p2p, equal replica counts), one stage's ring under a model
/// whose every dependency stays inside its stage (allreduce, equal replica counts); a block's
/// times depend on its own devices only. Each step frees the slowest block and K − 1 others drawn
/// at random (seeded), solves that sub-problem exactly on the devices they held (`mapping_search`,
/// one thread, `step_timeout_s`, bisecting below the freed blocks' largest time) and accepts a
/// sub-mapping that lowers that time, so the objective never rises; closed sub-problems grow the
/// next one by a block. The steps, the stopping rule and cost: docs/mapping.md,
/// "Large-neighbourhood search".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/mapper_options.hpp"
#include "devplace/map/mapping_search.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

/// What a block of the large-neighbourhood search is (see the file comment).
enum class block_kind { none, copies, rings };

struct neighbourhood_options {
  std::size_t blocks = 3;        ///< blocks freed per step (≥ 2), the slowest one included
  double step_timeout_s = 0.05;  ///< the exact search of one sub-problem
  std::size_t max_failures = 0;  ///< steps in a row without a change before stopping (0: 2 × the blocks)
  std::uint64_t seed = 1;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* stop = nullptr;
  /// Options of the sub-problems' exact search (threads, time limits and local search are not
  /// read: one thread, `step_timeout_s`).
  mapper_options search = {};
};

struct neighbourhood_result {
  std::vector<std::size_t> dev;    ///< device of vertex s·R + r
  double objective_ms = 0;
  double initial_objective_ms = 0;
  std::size_t steps = 0;           ///< sub-problems solved
  std::size_t accepted = 0;        ///< sub-mappings that replaced their blocks
};

/// The blocks of `model` on `g` (none when the search does not apply: unequal replica counts,
/// fewer than two blocks, or dependencies that cross blocks).
template <mapping_cost_model C>
[[nodiscard]] block_kind neighbourhood_blocks(const C& model, const stage_graph& g, const link_costs& L) {
  if (!g.uniform_replicas()) return block_kind::none;
  bool in_copy = true, in_stage = true;
  for (std::size_t v = 0; v < g.vertices(); ++v)
    for (auto u : model.dependencies(g, v)) {
      if (u >= g.vertices()) return block_kind::none;
      in_copy = in_copy && g.replica_of_vertex(u) == g.replica_of_vertex(v);
      in_stage = in_stage && g.stage_of_vertex(u) == g.stage_of_vertex(v);
    }
  if (in_copy && g.replicas() >= 2 && model_symmetry(model, g, L) == replica_symmetry::copies) return block_kind::copies;
  if (in_stage && g.stages() >= 2) return block_kind::rings;
  return block_kind::none;
}

namespace detail {

/// The stage graph of the blocks `pick` (K copies of g, or g's stages `pick` on every replica),
/// and in `verts` the G' vertex of each of its vertices.
inline stage_graph block_sub_problem(const stage_graph& g, block_kind kind, const std::vector<std::size_t>& pick,
                                     std::vector<std::size_t>& verts) {
  const bool copies = kind == block_kind::copies;
  const std::size_t R = copies ? pick.size() : g.replicas();
  // its stages: every stage of g (copies) or the stages picked (rings); its replica r: copy
  // pick[r] (copies) or replica r (rings)
  std::vector<std::size_t> st(copies ? g.stages() : 0);
  std::iota(st.begin(), st.end(), std::size_t{0});
  if (!copies) st = pick;
  std::vector<double> c(st.size()), p(st.size());
  std::vector<std::vector<double>> m(st.size(), std::vector<double>(st.size(), 0.0));
  for (std::size_t i = 0; i < st.size(); ++i) {
    c[i] = g.compute_ms(st[i]), p[i] = g.param_bytes(st[i]);
    for (std::size_t j = 0; j < st.size(); ++j) m[i][j] = i == j ? 0.0 : g.message_bytes(st[i], st[j]);
  }
  verts.clear();
  for (const auto s : st)
    for (std::size_t r = 0; r < R; ++r) verts.push_back(g.vertex(s, copies ? pick[r] : r));
  return stage_graph(R, c, p, m);
}

/// Bisects the sub-problem's objective below `freed` (its blocks' time now) until the bounds
/// meet, `step_end`, or `*stop`; `best` gets the best sub-mapping found (empty: none). Whether the
/// bounds met.
template <class Search>
bool bisect_sub_problem(Search& search, double freed, const mapper_options& so, const std::atomic<bool>* stop,
                        std::chrono::steady_clock::time_point step_end, std::vector<std::size_t>& best) {
  using clock = std::chrono::steady_clock;
  double lo = search.initial_lower_bound(), hi = freed;
  const double eps = std::max(so.epsilon_abs, so.epsilon * hi);
  double target = hi - eps;
  while (target > lo && hi - lo > eps && clock::now() < step_end && !(stop && stop->load(std::memory_order_relaxed))) {
    const auto r = search.search(target, stop, step_end);
    if (r.found) {
      hi = r.objective_ms, best = r.dev;
    } else if (r.completed) {
      lo = std::max(lo, r.next_lower_bound_ms);
    } else {
      break;
    }
    target = 0.5 * (lo + hi);
    if (hi - target <= eps) target = hi - eps;
  }
  return !(hi - lo > eps) || !(target > lo);
}

}  // namespace detail

/// The large-neighbourhood search from the injective mapping `dev` (see the file comment).
/// Throws std::invalid_argument when `dev` is not an injection or `blocks` < 2.
template <mapping_cost_model C>
[[nodiscard]] neighbourhood_result improve_by_blocks(const stage_graph& g, const link_costs& L, const C& model,
                                                     std::span<const std::size_t> dev, const neighbourhood_options& o = {}) {
  using clock = std::chrono::steady_clock;
  if (o.blocks < 2) throw std::invalid_argument("improve_by_blocks: blocks must be >= 2");
  neighbourhood_result res;
  auto e = evaluate_flat(g, L, model, dev);  // checks the mapping
  res.dev.assign(dev.begin(), dev.end());
  res.objective_ms = res.initial_objective_ms = e.objective_ms;
  const block_kind kind = neighbourhood_blocks(model, g, L);
  if (kind == block_kind::none) return res;
  const std::size_t nblocks = kind == block_kind::copies ? g.replicas() : g.stages();
  std::size_t K = std::min(o.blocks, nblocks);
  detail::map_rng rng{o.seed};
  const std::size_t max_failures = o.max_failures ? o.max_failures : 2 * nblocks;
  std::size_t failures = 0;
  auto stopped = [&] { return (o.stop && o.stop->load(std::memory_order_relaxed)) || clock::now() >= o.deadline; };
  while (!stopped() && failures < max_failures) {
    // block times, the slowest block and K − 1 others
    std::vector<double> bt(nblocks, 0.0);
    for (std::size_t v = 0; v < g.vertices(); ++v) {
      const std::size_t b = kind == block_kind::copies ? g.replica_of_vertex(v) : g.stage_of_vertex(v);
      bt[b] = std::max(bt[b], e.vertex_time_ms[v]);
    }
    std::vector<std::size_t> pick{static_cast<std::size_t>(std::max_element(bt.begin(), bt.end()) - bt.begin())};
    while (pick.size() < K) {
      const std::size_t b = rng.below(nblocks);
      if (std::find(pick.begin(), pick.end(), b) == pick.end()) pick.push_back(b);
    }
    if (kind == block_kind::rings) std::sort(pick.begin(), pick.end());
    double freed = 0;
    for (auto b : pick) freed = std::max(freed, bt[b]);
    // the sub-problem: its vertices in stage-major order, the devices they hold
    std::vector<std::size_t> verts;  // G' vertex of each sub vertex
    const stage_graph sub = detail::block_sub_problem(g, kind, pick, verts);
    std::vector<std::size_t> devs(verts.size());
    for (std::size_t i = 0; i < verts.size(); ++i) devs[i] = res.dev[verts[i]];
    const link_costs sub_links = L.subset(std::span<const std::size_t>(devs));
    const auto step_end = std::min(o.deadline, detail::deadline_after(clock::now(), o.step_timeout_s));
    ++res.steps;
    mapper_options so = o.search;
    so.threads = 1;
    mapping_search<C> search(sub, sub_links, model, so, step_end);
    bool changed = false, closed = false;
    const auto step_start = clock::now();
    if (search.ready()) {
      std::vector<std::size_t> best;
      closed = detail::bisect_sub_problem(search, freed, so, o.stop, step_end, best);
      if (!best.empty()) {
        auto next = res.dev;
        for (std::size_t i = 0; i < verts.size(); ++i) next[verts[i]] = devs[best[i]];
        auto ne = evaluate_flat(g, L, model, std::span<const std::size_t>(next));
        double now = 0;  // the freed blocks' largest time
        for (auto v : verts) now = std::max(now, ne.vertex_time_ms[v]);
        if (now < freed) {
          res.dev = std::move(next), e = std::move(ne), changed = true;
          ++res.accepted;
        }
      }
    }
    failures = changed ? 0 : failures + 1;
    // adaptive size: a sub-problem closed within a quarter of its time grows the next one by a
    // block (and restarts the failure count); one that ran out of time shrinks it
    if (closed && clock::now() - step_start < (step_end - step_start) / 4 && K < nblocks) ++K, failures = 0;
    else if (!closed && K > std::min(o.blocks, nblocks)) --K;
  }
  res.objective_ms = e.objective_ms;
  return res;
}

}  // namespace devplace
