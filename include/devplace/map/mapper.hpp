#pragma once
/// \file map/mapper.hpp
/// The general-topology device mapper of Parmesan (seed-parmesan.md §7.3–§7.6): a binary search
/// over the target t (Algorithm 1) whose every step is a depth-first backtracking search for a
/// mapping with all stage times ≤ t (Algorithm 2), several targets searched at once in threads.
///
///   map_devices(g, topology, {.cost = cost_choice::automatic, .threads = 2, .timeout_s = 10})
///
/// The inner search (`mapping_search`, map/mapping_search.hpp: mapping order, checking scheme,
/// sound extra pruning, value ordering, symmetry breaking, target oracles) and the outer one (the
/// bracket [t_l, t_r] from the bottleneck-assignment bound and the baselines and warm starts,
/// parallel, descent and probe targets, local and large-neighbourhood search of the incumbent,
/// the shares of the time limit) are described in docs/mapping.md, "The mapper". Optimal (within
/// ε = max(epsilon_abs, epsilon·t_r)) is reported only when t_r − t_l ≤ ε has been proved; a
/// per-target timeout makes the result `feasible`, not optimal; `timeout_s` stops the whole run
/// with status `time_limit` and the best mapping found.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/executor.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/bisection_map.hpp"
#include "devplace/map/map_devices.hpp"
#include "devplace/map/mapping_result.hpp"
#include "devplace/map/mapping_search.hpp"
#include "devplace/map/bounds.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/map/local_search.hpp"
#include "devplace/map/neighbourhood_search.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/map/symmetry.hpp"
#include "devplace/status.hpp"
#include "devplace/topology/concepts.hpp"
#include "devplace/topology/device_limit.hpp"

namespace devplace {

namespace detail {

/// Algorithm 1's bracket [t_l, t_r] and the target searches running inside it.
template <mapping_cost_model C>
class bracket_search {
 public:
  using clock = std::chrono::steady_clock;

  bracket_search(const stage_graph& g, const link_costs& L, const C& model, const mapper_options& o)
      : g_(g), L_(L), model_(model), o_(o), t0_(clock::now()), threads_(resolve_threads(o.threads)) {
    deadline_ = deadline_after(t0_, o.timeout_s);
    res_.cost = std::string(model.name());
  }

  mapping_result run() {
    // The baselines first (O(S·R·deg) each; the bisection map O(D² log D)): a mapping to return
    // whatever the set-up costs. The best of the CS, p2p, random and bisection maps (and the warm
    // starts) is the incumbent t_r0.
    auto offer = [&](std::vector<std::size_t> dev, std::string name) {
      const double x = evaluate_flat(g_, L_, model_, std::span<const std::size_t>(dev)).objective_ms;
      if (x < t_r_) t_r_ = x, best_ = dev, res_.initial_mapping = std::move(name);
      starts_.emplace_back(x, std::move(dev));
    };
    for (auto b : {baseline::cs, baseline::p2p, baseline::random})
      offer(flatten(g_, baseline_map(g_, L_.devices(), b, o_.seed)), std::string(to_string(b)));
    if (L_.devices() <= detail::bisection_start_max_devices) {  // its ring searches within a sixteenth of the limit
      const auto until = deadline_ == clock::time_point::max() ? deadline_ : t0_ + (deadline_ - t0_) / 16;
      offer(flatten(g_, bisection_map(g_, L_, o_.micro_batches, until)), "bisection");
    }
    for (const auto& dev : o_.warm_starts) offer(dev, "warm start");
    res_.initial_upper_bound_ms = t_r_;
    // Local search on the best of them, within a bounded share of the limit; a share is kept
    // back at the end to polish the incumbent when the time limit stops the exact search.
    const auto limit = deadline_ == clock::time_point::max() ? clock::duration::max() : deadline_ - t0_;
    const auto end = deadline_;
    if (o_.local_search && limit != clock::duration::max()) deadline_ = t0_ + limit - limit / 16;
    const bool lns = o_.neighbourhood_search && limit != clock::duration::max() &&
                     neighbourhood_blocks(model_, g_, L_) != block_kind::none;
    if (lns) deadline_ = t0_ + limit - limit / 4;
    if (lns) exact_end_ = o_.local_search ? t0_ + limit - limit / 16 : end;
    if (limit != clock::duration::max() && threads_ >= 2) descent_at_ = t0_ + limit / 2;
    if (o_.local_search) {  // from every baseline and warm start, the best first, within a quarter
      const auto until = limit == clock::duration::max() ? clock::time_point::max() : std::min(deadline_, t0_ + limit / 4);
      std::stable_sort(starts_.begin(), starts_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& s : starts_) polish(s.second, until);
    }
    search_.emplace(g_, L_, model_, o_, deadline_);
    t_l_ = search_->initial_lower_bound();  // 0 when the set-up stopped before the bound table was complete
    res_.initial_lower_bound_ms = t_l_;
    heuristic_lower_ = t_l_;
    if (!search_->ready()) {  // the time limit passed during the set-up: the best baseline, no search
      timed_out_ = true;
      deadline_ = end;
      if (o_.local_search) polish(best_, end);
      return finish();
    }
    {
      executor pool(threads_);  // at most `threads_` searches run at once, so each starts at once
      search_loop(pool);
      pool.wait();  // every search has finished; no worker touches the jobs any more
    }
    for (auto& j : jobs_) absorb(*j, /*final=*/true);
    if (failure_) std::rethrow_exception(failure_);
    if (!timed_out_ && clock::now() >= deadline_ && t_r_ - t_l_ > eps()) timed_out_ = true;
    deadline_ = end;
    res_.oracles = search_->oracle_statistics();  // the bracket's searches (not the settle search)
    if (t_r_ - t_l_ <= eps() && std::isfinite(t_r_) && o_.settle_nodes > 0) settle();
    if (lns && t_r_ - t_l_ > eps()) neighbourhood(o_.local_search ? end - limit / 16 : end);  // unproved
    if (o_.local_search && t_r_ - t_l_ > eps()) polish(best_, end);  // unproved: improve the incumbent
    return finish();
  }

 private:
  struct job {
    double target = 0;
    std::atomic<bool> stop{false};
    bool done = false, cancelled = false;
    bool probe = false;  ///< the probe just above the lower end (next_target)
    target_search_result out;
    std::exception_ptr error;  ///< what the search threw, if anything
  };

  /// Proved optimal: the mapping of one more search at t_r + ε, the earlier targets forgotten, a
  /// function of the input alone (docs/mapping.md, "Determinism").
  void settle() {
    search_->forget();
    auto r = search_->search(t_r_ + eps(), nullptr, deadline_, false, o_.settle_nodes);
    res_.nodes_explored += r.nodes;
    if (!r.found) return;
    best_ = std::move(r.dev);
    res_.settled = true;
  }

  /// Local search (map/local_search.hpp) from `dev` until `until`; its result becomes the
  /// incumbent when its objective is lower. Skipped from a mapping it already left unchanged.
  void polish(const std::vector<std::size_t>& dev, clock::time_point until) {
    if (dev.empty() || dev == polished_ || clock::now() >= until) return;
    auto r = improve_mapping_flat(g_, L_, model_, std::span<const std::size_t>(dev), {.deadline = until});
    res_.local_search_changes += r.moves + r.swaps;
    if (r.objective_ms < t_r_) {
      t_r_ = r.objective_ms, best_ = std::move(r.dev);
      if (r.local_optimum) polished_ = best_;
    } else if (r.local_optimum && dev == best_) {
      polished_ = best_;  // the incumbent: no move or swap lowers its objective
    }
  }

  /// The large-neighbourhood search (map/neighbourhood_search.hpp) from the incumbent until
  /// `until`; its result becomes the incumbent when it changed something without a higher objective.
  void neighbourhood(clock::time_point until) {
    if (best_.empty() || clock::now() >= until) return;
    const auto r = improve_by_blocks(g_, L_, model_, std::span<const std::size_t>(best_),
                                     {.blocks = std::max<std::size_t>(o_.neighbourhood_blocks, 2),
                                      .step_timeout_s = o_.neighbourhood_step_s,
                                      .seed = o_.seed,
                                      .deadline = until,
                                      .search = o_});
    res_.neighbourhood_changes += r.accepted;
    if (r.accepted > 0 && r.objective_ms <= t_r_) t_r_ = r.objective_ms, best_ = r.dev;
  }

  [[nodiscard]] double eps() const { return std::max(o_.epsilon_abs, o_.epsilon * std::abs(t_r_)); }

  /// The end of the exact search: before the large-neighbourhood search's share while the bracket
  /// is wider than 1 % of the incumbent, else the final polish (docs/mapping.md,
  /// "Large-neighbourhood search").
  [[nodiscard]] clock::time_point exact_deadline() const {
    const bool narrow = std::isfinite(t_r_) && t_r_ - std::max(t_l_, heuristic_lower_) <= 0.01 * std::abs(t_r_);
    return narrow ? std::max(deadline_, exact_end_) : deadline_;
  }

  /// The descent target just below the incumbent, else the end game's target at the incumbent
  /// less ε, else the probe just above the lower end, else the middle of the largest gap between
  /// the bracket's ends and the targets being searched (docs/mapping.md, "Algorithm 1"); -1 when
  /// no gap is wider than ε.
  [[nodiscard]] double next_target(bool* is_probe = nullptr) {
    if (is_probe) *is_probe = false;
    const double lo = std::max(t_l_, heuristic_lower_);
    if (clock::now() >= descent_at_ && t_r_ - lo > eps()) {
      const double near = t_r_ - (t_r_ - lo) / 16;
      const bool covered = std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) {
        return !j->cancelled && !j->done && j->target >= t_r_ - (t_r_ - lo) / 4;
      });
      if (!covered && near > lo && t_r_ - near > eps()) return near;
    }
    // The end game: once the bracket is within a probe width (or within 1 % while refutations
    // only raise t_l to their own target), one worker searches just below the incumbent, once per
    // incumbent: its refutation closes the bracket, its mapping lowers the incumbent.
    const bool end_game = t_r_ - lo <= o_.probe_gap * std::abs(lo) || (flat_ && t_r_ - lo <= 0.01 * std::abs(t_r_));
    if (o_.probe_gap > 0 && threads_ >= 2 && std::isfinite(t_r_) && t_r_ != top_tried_ && end_game) {
      const double top = t_r_ - eps();
      const bool taken = std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) {
        return !j->cancelled && !j->done && j->target >= top;
      });
      if (!taken && top > lo) {
        top_tried_ = t_r_;
        return top;
      }
    }
    if (o_.probe_gap > 0 && threads_ >= 2 && std::isfinite(t_r_)) {  // the probe just above the lower end
      const double probe = lo + std::max(eps(), o_.probe_gap * std::abs(lo));
      const bool taken = std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) {
        return !j->cancelled && !j->done && j->target >= lo && j->target <= probe;
      });
      // within 16 probe widths; within 64 while the last refutation raised t_l by at least a
      // quarter of what is left (the lower end moves by large steps: the probe may close the gap)
      const double widths = last_raise_ >= (t_r_ - lo) / 4 ? 64 : 16;
      if (!taken && probe < t_r_ && t_r_ - lo <= widths * (probe - lo)) {
        if (is_probe) *is_probe = true;
        return probe;
      }
    }
    std::vector<double> pts{lo, t_r_};
    for (auto& j : jobs_)
      if (!j->cancelled) pts.push_back(j->target);
    std::sort(pts.begin(), pts.end());
    double best_gap = 0, target = -1;
    // The middle of the widest gap; its lower quarter when the quotient copy cover decides the
    // targets (map/detail/quotient_copy.hpp): its cost grows steeply with the target (the
    // listing grows, the relaxation weakens) and it refutes low targets cheaply, while mappings
    // near the incumbent come from the depth-first runs, the descent and the local search.
    const double at = search_->oracle_applies("quotient_copy") ? 0.25 : 0.5;
    for (std::size_t i = 0; i + 1 < pts.size(); ++i)
      if (pts[i + 1] - pts[i] > best_gap) best_gap = pts[i + 1] - pts[i], target = pts[i] + at * (pts[i + 1] - pts[i]);
    return best_gap > eps() && target > pts.front() ? target : -1;
  }

  void launch(executor& pool, double target, bool probe) {
    auto j = std::make_unique<job>();
    j->target = target;
    j->probe = probe;
    job* jp = j.get();
    const auto dl = std::min(exact_deadline(), deadline_after(clock::now(), o_.target_timeout_s));
    ++res_.searches;
    jobs_.push_back(std::move(j));
    pool.submit([this, jp, dl] {
      target_search_result out;
      std::exception_ptr err;
      try {
        out = search_->search(jp->target, &jp->stop, dl, jp->probe);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard lk(mu_);
      jp->out = std::move(out);
      jp->error = err;
      jp->done = true;
      cv_.notify_all();
    });
  }

  /// What a finished search tells: a mapping lowers t_r, a complete failure raises t_l, a
  /// per-target timeout (not `final`) moves the heuristic lower end above its target.
  void absorb(job& j, bool final) {
    if (j.error && !failure_) failure_ = j.error;
    res_.nodes_explored += j.out.nodes;
    if (j.out.found) {
      if (j.out.objective_ms < t_r_) t_r_ = j.out.objective_ms, best_ = j.out.dev;
    } else if (j.out.completed) {
      const double raised = std::min(j.out.next_lower_bound_ms, t_r_);
      if (raised > t_l_) last_raise_ = raised - t_l_, t_l_ = raised;
      flat_ = j.out.next_lower_bound_ms - j.target <= eps();  // no value skipped above the target
    } else if (!final && !j.cancelled && !j.stop.load() && clock::now() < deadline_) {
      ++res_.searches_timed_out;  // per-target timeout: move on above it, unproved
      heuristic_lower_ = std::max(heuristic_lower_, j.target);
    }
  }

  void search_loop(executor& pool) {
    std::unique_lock lk(mu_);
    auto any_done = [&] { return std::any_of(jobs_.begin(), jobs_.end(), [](auto& j) { return j->done; }); };
    for (;;) {
      if (failure_ || t_r_ - t_l_ <= eps() || t_r_ - std::max(t_l_, heuristic_lower_) <= eps()) break;
      std::size_t active = 0;
      for (auto& j : jobs_)
        if (!j->done && !j->cancelled) ++active;
      bool probe = false;
      for (double t; active < threads_ && (t = next_target(&probe)) >= 0; ++active) launch(pool, t, probe);
      if (active == 0 && std::none_of(jobs_.begin(), jobs_.end(), [](auto& j) { return !j->done; })) break;
      if (clock::now() >= exact_deadline()) {
        timed_out_ = true;
        break;
      }
      const auto wake = descent_started_ ? exact_deadline() : std::min(exact_deadline(), descent_at_);
      if (wake == clock::time_point::max()) cv_.wait(lk, any_done);
      else cv_.wait_until(lk, wake, any_done);
      if (!descent_started_ && clock::now() >= descent_at_) {
        // Half the limit gone unproved: the newest search of a full set of workers (the least
        // work given up) makes room for the descent (next_target), unless a worker already
        // searches near the incumbent.
        descent_started_ = true;
        job* newest = nullptr;
        std::size_t busy = 0;
        bool near = false;
        const double lo = std::max(t_l_, heuristic_lower_);
        for (auto& j : jobs_)
          if (!j->done && !j->cancelled) {
            ++busy;
            near = near || j->target >= t_r_ - (t_r_ - lo) / 4;
            if (!j->probe) newest = j.get();  // jobs_ is in launch order
          }
        if (newest && busy >= threads_ && !near) newest->cancelled = true, newest->stop = true;
      }
      for (auto it = jobs_.begin(); it != jobs_.end();) {
        if ((*it)->done) {
          absorb(**it, false);
          it = jobs_.erase(it);
        } else {
          ++it;
        }
      }
      heuristic_lower_ = std::min(heuristic_lower_, t_r_);
      for (auto& j : jobs_)  // targets outside the bracket are no longer worth searching
        if (!j->done && (j->target >= t_r_ || j->target < t_l_)) j->cancelled = true, j->stop = true;
    }
    for (auto& j : jobs_) j->stop = true;
  }

  mapping_result finish() {
    const auto e = evaluate_flat(g_, L_, model_, std::span<const std::size_t>(best_));
    res_.device_of = unflatten(g_, best_);
    res_.objective_ms = e.objective_ms;
    res_.lower_bound_ms = std::min(t_l_, e.objective_ms);
    res_.optimal = e.objective_ms - t_l_ <= std::max(o_.epsilon_abs, o_.epsilon * std::abs(e.objective_ms));
    res_.status = res_.optimal ? status::optimal : timed_out_ ? status::time_limit : status::feasible;
    res_.time_s = std::chrono::duration<double>(clock::now() - t0_).count();
    if (search_ && res_.oracles.empty()) res_.oracles = search_->oracle_statistics();
    return res_;
  }

  const stage_graph& g_;
  const link_costs& L_;
  const C& model_;
  const mapper_options& o_;
  clock::time_point t0_, deadline_;
  std::optional<mapping_search<C>> search_;  // built in run(), after the baselines, under the deadline
  unsigned threads_;
  mapping_result res_;
  double t_l_ = 0, t_r_ = std::numeric_limits<double>::infinity();
  double last_raise_ = 0;  // how far the last complete failure raised t_l
  double top_tried_ = -1;  // the incumbent below which the end game searched
  bool flat_ = false;      // the last refutation raised t_l only to its own target
  double heuristic_lower_ = 0;  // raised by per-target timeouts, not proved
  std::vector<std::size_t> best_;
  std::vector<std::size_t> polished_;  // a mapping from which the local search found nothing lower
  std::vector<std::pair<double, std::vector<std::size_t>>> starts_;  // baselines, warm starts: objective, mapping
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<std::unique_ptr<job>> jobs_;
  bool timed_out_ = false;
  clock::time_point descent_at_ = clock::time_point::max();  // when the descent target starts
  clock::time_point exact_end_ = clock::time_point::min();   // exact_deadline() with a narrow bracket
  bool descent_started_ = false;
  std::exception_ptr failure_;  // the first exception of a search: stops the rest, reaches the caller
};

}  // namespace detail

/// Algorithm 1 over `mapping_search`, with parallel targets, under any cost model.
template <mapping_cost_model C>
[[nodiscard]] mapping_result map_devices(const stage_graph& g, const link_costs& L, const C& model,
                                         const mapper_options& o = {}) {
  detail::check_mapper_devices(L.devices());
  detail::check_mapping_fits(g, L.devices());
  detail::check_oracles(o);
  return detail::bracket_search<C>(g, L, model, o).run();
}

// map_devices(g, L, o), the cost model chosen by `o.cost`: map/map_devices.hpp (declared) and
// map/mapper.ipp (defined, included below in header-only mode).

/// Same, on any `device_topology` (copied once into dense link costs).
template <device_topology T>
[[nodiscard]] mapping_result map_devices(const stage_graph& g, const T& topology, const mapper_options& o = {}) {
  detail::check_mapper_devices(devplace::num_devices(topology));
  const link_costs L(topology);
  return map_devices(g, L, o);
}

template <device_topology T, mapping_cost_model C>
[[nodiscard]] mapping_result map_devices(const stage_graph& g, const T& topology, const C& model,
                                         const mapper_options& o = {}) {
  detail::check_mapper_devices(devplace::num_devices(topology));
  const link_costs L(topology);
  return map_devices(g, L, model, o);
}

}  // namespace devplace

#if DEVPLACE_HEADER_ONLY
#include "devplace/map/mapper.ipp"
#endif
