#pragma once
/// \file map/local_search.hpp
/// Local search on a complete device mapping under any `mapping_cost_model`: the incumbent
/// improvement that `map_devices` runs on its best baseline / warm start before the exact search
/// and on the incumbent when a time limit ends the run.
///
///   auto r = improve_mapping(g, L, combined_cost{.micro_batches = 4}, cs_map(g), {.timeout_s = 0.1});
///   // r.device_of: never worse than the input; r.local_optimum: no single move or swap improves
///
/// Neighbourhood: moving one G' vertex to a free device, and swapping the devices of two vertices;
/// a change is accepted when it lowers (objective, vertices at the objective) lexicographically,
/// first improvement. Which changes are scanned, why the local optimum reported is exact for the
/// whole neighbourhood, and the incremental evaluation: docs/mapping.md, "Local search".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "devplace/map/baselines.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace {

struct local_search_options {
  double timeout_s = std::numeric_limits<double>::infinity();  ///< from the call
  /// Also stops at this steady-clock time (the earlier of the two applies).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* stop = nullptr;  ///< stops when it becomes true
  bool moves = true;                        ///< one vertex to a free device
  bool swaps = true;                        ///< two vertices exchange their devices
};

struct local_search_result {
  device_mapping device_of;         ///< S rows of R device ids
  std::vector<std::size_t> dev;     ///< the same, flat (device of vertex s·R + r)
  double objective_ms = 0;
  std::size_t at_objective = 0;     ///< vertices whose time is the objective
  double initial_objective_ms = 0;  ///< of the input
  std::size_t moves = 0;            ///< accepted moves to a free device
  std::size_t swaps = 0;            ///< accepted swaps
  std::uint64_t evaluations = 0;    ///< changes tried
  bool local_optimum = false;       ///< no move or swap improves the key (false: stopped by time)
};

namespace detail {

template <mapping_cost_model C>
class local_search {
 public:
  using clock = std::chrono::steady_clock;

  local_search(const stage_graph& g, const link_costs& L, const C& model, std::span<const std::size_t> dev)
      : g_(g), L_(L), model_(model), V_(g.vertices()), D_(L.devices()), dev_(dev.begin(), dev.end()) {
    const auto e = evaluate_flat(g, L, model, dev);  // checks injectivity and the device range
    t_ = e.vertex_time_ms;
    pos_.assign(D_, unplaced);
    for (std::size_t v = 0; v < V_; ++v) pos_[dev_[v]] = v;
    deps_.resize(V_);
    readers_.resize(V_);
    for (std::size_t v = 0; v < V_; ++v) {
      readers_[v].push_back(v);
      for (auto u : model.dependencies(g, v))
        if (u != v && u < V_) deps_[v].push_back(u);
      std::sort(deps_[v].begin(), deps_[v].end());
      deps_[v].erase(std::unique(deps_[v].begin(), deps_[v].end()), deps_[v].end());
      for (auto u : deps_[v]) readers_[u].push_back(v);
    }
    stamp_.assign(V_, 0);
    buf_.assign(V_, 0.0);
    recount();
  }

  local_search_result run(const local_search_options& o) {
    local_search_result res;
    res.initial_objective_ms = M_;
    const auto dl = std::min(o.deadline, deadline_after(clock::now(), o.timeout_s));
    auto stopped = [&] {
      return (o.stop && o.stop->load(std::memory_order_relaxed)) || (dl != clock::time_point::max() && clock::now() >= dl);
    };
    std::vector<char> mark(V_, 0);
    std::vector<std::size_t> cand;
    // The scan resumes after the last accepted change (its first vertex, the next device), and
    // a local optimum is a whole round over the first vertices and all devices without one.
    std::size_t start_v = unplaced, start_d = 0;
    bool halted = stopped();
    while (!halted && V_ > 0) {
      // The first vertex of a change: a vertex at the objective or one of its dependencies.
      cand.clear();
      std::fill(mark.begin(), mark.end(), 0);
      for (std::size_t m = 0; m < V_; ++m)
        if (t_[m] == M_) mark[m] = 1, cand.push_back(m);
      const std::size_t maxima = cand.size();
      for (std::size_t i = 0; i < maxima; ++i)
        for (auto u : deps_[cand[i]])
          if (!mark[u]) mark[u] = 1, cand.push_back(u);
      const auto it = std::find(cand.begin(), cand.end(), start_v);
      const std::size_t i0 = it == cand.end() ? 0 : static_cast<std::size_t>(it - cand.begin());
      bool improved = false;
      for (std::size_t k = 0; k < cand.size() && !improved && !halted; ++k) {
        const std::size_t v = cand[(i0 + k) % cand.size()];
        const std::size_t d0 = k == 0 && v == start_v ? start_d : 0;
        // The second part of the change: a free device (a move) or another vertex's (a swap).
        for (std::size_t j = 0; j < D_ && !improved && !halted; ++j) {
          const std::size_t d = (d0 + j) % D_, w = pos_[d];
          if (d == dev_[v] || (w == unplaced ? !o.moves : !o.swaps)) continue;
          improved = try_change(v, d, w, w == unplaced ? unplaced : dev_[v], res);
          if (improved) {
            ++(w == unplaced ? res.moves : res.swaps);
            start_v = v, start_d = d + 1;
          } else if ((res.evaluations & 63u) == 0) {
            halted = stopped();
          }
        }
      }
      if (!improved && !halted) {
        res.local_optimum = true;
        break;
      }
      if (improved) halted = stopped();
    }
    res.dev = dev_;
    res.device_of = unflatten(g_, dev_);
    res.objective_ms = M_;
    res.at_objective = c_;
    return res;
  }

 private:
  /// The objective M_ and the number c_ of vertices at it.
  void recount() {
    M_ = -std::numeric_limits<double>::infinity();
    c_ = 0;
    for (std::size_t v = 0; v < V_; ++v) {
      if (t_[v] > M_) M_ = t_[v], c_ = 0;
      if (t_[v] == M_) ++c_;
    }
    if (V_ == 0) M_ = 0;
  }

  /// Puts a on device da and, when b is a vertex, b on db; keeps the change when the key
  /// (objective, vertices at it) falls, else undoes it.
  bool try_change(std::size_t a, std::size_t da, std::size_t b, std::size_t db, local_search_result& res) {
    ++res.evaluations;
    // The affected vertices, those at the objective first.
    ++epoch_;
    aff_.clear();
    auto add = [&](std::size_t v) {
      for (auto x : readers_[v])
        if (stamp_[x] != epoch_) stamp_[x] = epoch_, aff_.push_back(x);
    };
    add(a);
    if (b != unplaced) add(b);
    std::size_t at_max = 0;
    for (std::size_t i = 0; i < aff_.size(); ++i)
      if (t_[aff_[i]] == M_) std::swap(aff_[i], aff_[at_max++]);
    const std::size_t old_a = dev_[a];
    dev_[a] = da;
    if (b != unplaced) dev_[b] = db;
    std::size_t known = c_ - at_max;  // vertices at the objective after the change, so far
    bool ok = true;
    const std::span<const std::size_t> dev(dev_);
    for (auto x : aff_) {
      const double nt = static_cast<double>(model_.time(g_, L_, dev, x));
      if (nt > M_ || (nt == M_ && ++known >= c_)) {
        ok = false;
        break;
      }
      buf_[x] = nt;
    }
    if (!ok) {
      if (b != unplaced) dev_[b] = da;
      dev_[a] = old_a;
      return false;
    }
    // Accepted: the key (M, c) fell.
    pos_[old_a] = unplaced;
    if (b != unplaced) pos_[db] = b;
    pos_[da] = a;
    for (auto x : aff_) t_[x] = buf_[x];
    recount();
    return true;
  }

  const stage_graph& g_;
  const link_costs& L_;
  const C& model_;
  std::size_t V_, D_;
  std::vector<std::size_t> dev_, pos_;
  std::vector<double> t_, buf_;
  std::vector<std::vector<std::size_t>> deps_, readers_;
  std::vector<std::uint64_t> stamp_;
  std::uint64_t epoch_ = 0;
  std::vector<std::size_t> aff_;
  double M_ = 0;
  std::size_t c_ = 0;
};

}  // namespace detail

/// Improves a complete mapping `dev` (device of every vertex s·R + r) by moves and swaps under
/// `model` until no single change lowers (objective, vertices at the objective) or the time runs
/// out; never worse than the input. Throws std::invalid_argument when `dev` is not an injective
/// mapping onto the devices of `L`.
template <mapping_cost_model C>
[[nodiscard]] local_search_result improve_mapping_flat(const stage_graph& g, const link_costs& L, const C& model,
                                                       std::span<const std::size_t> dev,
                                                       const local_search_options& o = {}) {
  return detail::local_search<C>(g, L, model, dev).run(o);
}

/// Same on S rows of R device ids.
template <mapping_cost_model C>
[[nodiscard]] local_search_result improve_mapping(const stage_graph& g, const link_costs& L, const C& model,
                                                  const device_mapping& device_of, const local_search_options& o = {}) {
  const auto dev = flatten(g, device_of);
  return improve_mapping_flat(g, L, model, std::span<const std::size_t>(dev), o);
}

}  // namespace devplace
