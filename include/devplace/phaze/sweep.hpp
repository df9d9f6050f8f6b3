#pragma once
/// \file phaze/sweep.hpp
/// PHAZE's architecture search (seed-phaze.md §1.4 Algorithm 1, §1.5; docs/phaze.md). The feasible
/// configurations are explored by decreasing area (ties: input order) in *area buckets*
/// ⌊area / w⌋ (w = 10,000 area units). After each bucket the best throughput seen in it is appended
/// to the list of bucket maxima; the search has converged when at least h buckets were explored and
/// the last h maxima are non-increasing (h = hysteresis; h = 1 stops after the first bucket). The
/// result is the explored configuration of highest throughput (ties: the first explored).
///
/// `evaluate(const core_config&) -> double` must be a pure function of the configuration (it is
/// called concurrently, and a distributed driver may shard the configurations). Evaluation runs on
/// the executor in chunks of whole buckets (at least 4 configurations per thread), one slot per
/// configuration; the convergence test then walks the chunk's buckets in order, so the result does
/// not depend on the number of threads (evaluations past the converged bucket are discarded and
/// counted in `evaluations`).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/executor.hpp"
#include "devplace/phaze/architecture.hpp"
#include "devplace/status.hpp"

namespace devplace::phaze {

struct sweep_options {
  std::size_t hysteresis = 6;    ///< h (the seed's Algorithm 1; PHAZE's code uses 5)
  double bucket_width = 10000;   ///< w in area units; 0: every distinct area is a bucket
  unsigned threads = 1;          ///< executor workers (0: one per hardware thread)
  std::size_t max_configurations = std::numeric_limits<std::size_t>::max();  ///< stop with work_limit
  std::function<void(std::size_t explored, std::size_t total)> progress;     ///< called after each chunk
};

struct sweep_entry {
  std::size_t config = 0;   ///< index into the input
  double throughput = 0;
};

struct sweep_result {
  devplace::status status = status::infeasible;  ///< optimal = converged; feasible = ran out of configurations
  std::vector<sweep_entry> explored;             ///< in exploration order
  std::vector<double> bucket_maxima;             ///< one per explored bucket
  std::size_t best = 0;                          ///< index into the input (valid when explored is not empty)
  double best_throughput = 0;
  std::size_t evaluations = 0;                   ///< evaluate calls, discarded speculative ones included
  [[nodiscard]] bool has_solution() const noexcept { return !explored.empty(); }
};

namespace detail {

/// Input indices by decreasing area, and where each bucket starts in that order (plus the end).
struct bucket_order {
  std::vector<std::size_t> order, starts;
};

template <int = 0>
bucket_order make_buckets(std::span<const core_config> configs, double width) {
  bucket_order b;
  b.order.resize(configs.size());
  std::iota(b.order.begin(), b.order.end(), std::size_t{0});
  std::stable_sort(b.order.begin(), b.order.end(), [&](std::size_t i, std::size_t j) { return configs[i].area > configs[j].area; });
  auto bucket = [&](std::size_t i) { return width > 0 ? std::floor(configs[i].area / width) : configs[i].area; };
  for (std::size_t k = 0; k < b.order.size(); ++k)
    if (k == 0 || bucket(b.order[k]) != bucket(b.order[k - 1])) b.starts.push_back(k);
  b.starts.push_back(b.order.size());
  return b;
}

/// The hysteresis test on the bucket maxima so far.
template <int = 0>
bool converged(const std::vector<double>& maxima, std::size_t h) {
  if (maxima.size() < h) return false;
  for (std::size_t k = maxima.size() - h + 1; k < maxima.size(); ++k)
    if (maxima[k - 1] < maxima[k]) return false;
  return true;
}

}  // namespace detail

template <class Evaluate>
[[nodiscard]] sweep_result sweep_architectures(std::span<const core_config> configs, Evaluate&& evaluate,
                                               const sweep_options& o = {}) {
  DEVPLACE_EXPECTS(o.hysteresis >= 1, "phaze: sweep hysteresis must be >= 1");
  DEVPLACE_EXPECTS(o.bucket_width >= 0, "phaze: sweep bucket_width must be >= 0");
  sweep_result r;
  const auto b = detail::make_buckets(configs, o.bucket_width);
  const std::size_t buckets = b.starts.size() - 1;
  const std::size_t chunk_min = 4 * static_cast<std::size_t>(resolve_threads(o.threads));
  std::vector<double> slot;
  std::size_t next = 0;  // the next bucket to evaluate
  bool done = false;
  while (!done && next < buckets) {
    std::size_t last = next;  // the chunk is buckets [next, last)
    while (last < buckets && b.starts[last] - b.starts[next] < chunk_min) ++last;
    const std::size_t lo = b.starts[next];
    const std::size_t hi = lo + std::min(b.starts[last] - lo, o.max_configurations - r.explored.size());
    slot.assign(hi - lo, 0.0);
    parallel_for(hi - lo, o.threads, [&](std::size_t i) { slot[i] = evaluate(configs[b.order[lo + i]]); });
    r.evaluations += hi - lo;
    for (std::size_t k = next; k < last && !done; ++k) {
      const std::size_t from = b.starts[k], to = std::min(b.starts[k + 1], hi);
      double m = -std::numeric_limits<double>::infinity();
      for (std::size_t i = from; i < to; ++i) {
        r.explored.push_back({b.order[i], slot[i - lo]});
        m = std::max(m, slot[i - lo]);
      }
      if (to < b.starts[k + 1]) {  // the configuration cap cut the bucket
        r.status = status::work_limit;
        done = true;
        break;
      }
      r.bucket_maxima.push_back(m);
      done = detail::converged(r.bucket_maxima, o.hysteresis);
      if (done) r.status = status::optimal;
    }
    next = last;
    if (o.progress) o.progress(r.explored.size(), configs.size());
  }
  if (!done) r.status = status::feasible;
  if (r.explored.empty()) {
    r.status = configs.empty() ? status::infeasible : r.status;
    return r;
  }
  const auto best = std::max_element(r.explored.begin(), r.explored.end(),
                                     [](const sweep_entry& a, const sweep_entry& c) { return a.throughput < c.throughput; });
  r.best = best->config;
  r.best_throughput = best->throughput;
  return r;
}

}  // namespace devplace::phaze
