#pragma once
/// \file phaze/evaluation_cache.hpp
/// Results of PHAZE's two costly steps shared across the evaluations of many configurations
/// (docs/phaze.md, docs/sweep.md): a layer's schedule (`schedule_layer`) and a placement
/// (`place` over the micro-batch variants at one HBM size). Each entry is keyed by the exact
/// bytes of everything that step reads, so a cached answer is the one the step would compute:
///   schedule:  the layer problem (operator kinds, the four latencies' bits, the DAG), the TC
///              and VC counts, the scheduling options and the solver's type;
///   placement: every variant (t, b, the slice flags, per layer fwd_ms, bwd_ms, param_bytes,
///              memory_bytes, the edges with their bytes in the graph's order) and every field
///              of `placement_options` but `threads`.
/// Configurations that differ only in what neither step reads (PHAZE's estimator does not read
/// the global-buffer size, nor the area) then share both; any other reuse is a hit too. A
/// time-limited ILP pass is timing-dependent whether cached or not (docs/phaze.md).
///
///   phaze::evaluation_cache cache;
///   o.workload.cache = &cache;             // evaluate_architecture(g, split, c, o) now shares
///
/// Thread-safe: a miss computes outside the lock, so two threads may compute the same entry
/// (the same answer; the first stored stays). When a map holds `capacity` entries it is
/// emptied (a sweep that evaluates related configurations one after another needs only the
/// latest). Memory: about 2 KB per schedule and 5 KB per placement entry for BERT-Large.
#include <cstddef>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include "devplace/config.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/phaze/layer_schedule.hpp"
#include "devplace/phaze/stage_load.hpp"

namespace devplace::phaze {

class evaluation_cache {
 public:
  struct statistics {
    std::size_t schedule_hits = 0, schedule_misses = 0, placement_hits = 0, placement_misses = 0;
  };

  explicit evaluation_cache(std::size_t capacity = 4096) : capacity_(capacity) {
    DEVPLACE_EXPECTS(capacity >= 1, "phaze: evaluation_cache capacity must be >= 1");
  }
  evaluation_cache(const evaluation_cache&) = delete;
  evaluation_cache& operator=(const evaluation_cache&) = delete;

  /// The schedule stored under `key`, or `compute()` stored and returned.
  template <class Compute>
  layer_timing schedule(const std::string& key, Compute&& compute) {
    return find_or_add(schedules_, key, stats_.schedule_hits, stats_.schedule_misses, compute);
  }
  /// The placement stored under `key`, or `compute()` stored and returned.
  template <class Compute>
  placement place(const std::string& key, Compute&& compute) {
    return find_or_add(placements_, key, stats_.placement_hits, stats_.placement_misses, compute);
  }
  [[nodiscard]] statistics counts() const {
    std::lock_guard lk(mu_);
    return stats_;
  }

 private:
  template <class Map, class Compute>
  typename Map::mapped_type find_or_add(Map& map, const std::string& key, std::size_t& hits, std::size_t& misses,
                                        Compute& compute) {
    {
      std::lock_guard lk(mu_);
      if (const auto it = map.find(key); it != map.end()) {
        ++hits;
        return it->second;
      }
      ++misses;
    }
    auto value = compute();
    std::lock_guard lk(mu_);
    if (map.size() >= capacity_) map.clear();
    map.try_emplace(key, value);
    return value;
  }

  std::size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, layer_timing> schedules_;
  std::unordered_map<std::string, placement> placements_;
  statistics stats_;
};

namespace detail {

template <int = 0>
void append_bits(std::string& key, double x) {
  char buf[sizeof(double)];
  std::memcpy(buf, &x, sizeof x);
  key.append(buf, sizeof buf);
}

template <int = 0>
void append_count(std::string& key, std::size_t x) {
  char buf[sizeof(std::size_t)];
  std::memcpy(buf, &x, sizeof x);
  key.append(buf, sizeof buf);
}

/// A byte string that equals another iff the two layer problems are identical.
template <int = 0>
std::string problem_key(const layer_problem& p) {
  std::string key;
  for (std::size_t i = 0; i < p.forward.size(); ++i) {
    key += static_cast<char>(p.forward[i].kind);
    for (double x : {p.forward[i].latency, p.forward[i].parallel_latency, p.backward[i].latency, p.backward[i].parallel_latency})
      append_bits(key, x);
    for (int w : p.successors[i]) key += std::to_string(w) + ",";
    key += ";";
  }
  return key;
}

/// The key of `schedule_layer(p, c, solver, lo)`: the problem, what it reads of `c`, `lo` and the
/// solver's type.
template <class Solver>
std::string schedule_key(const std::string& problem, const core_config& c, const layer_schedule_options& lo) {
  std::string key = problem;
  key += '|';
  append_count(key, c.num_tc);
  append_count(key, c.num_vc);
  append_bits(key, lo.ilp_time_limit_s);
  append_count(key, lo.max_ilp_pairs);
  key += typeid(Solver).name();
  return key;
}

/// The part of a placement key that the variants give (see the file comment).
template <class G>
std::string variants_key(std::span<const workload_variant<G>> variants) {
  std::string key;
  for (const auto& w : variants) {
    const std::size_t n = devplace::num_vertices(w.graph);
    append_count(key, w.tensor_width);
    append_count(key, w.micro_batch);
    append_count(key, n);
    for (bool s : w.tensor_parallel) key += s ? '1' : '0';
    key += '|';
    for (std::size_t v = 0; v < n; ++v)
      for (double x : {devplace::forward_ms(w.graph, v), devplace::backward_ms(w.graph, v), devplace::param_bytes(w.graph, v),
                       devplace::memory_bytes(w.graph, v)})
        append_bits(key, x);
    for_each_edge(w.graph, [&](std::size_t u, std::size_t v, double bytes) {
      append_count(key, u);
      append_count(key, v);
      append_bits(key, bytes);
    });
    key += ';';
  }
  return key;
}

/// The placement key: the variants' part and every option `place` reads.
template <int = 0>
std::string placement_key(std::string key, const placement_options& o) {
  key += '|';
  append_count(key, o.devices);
  append_count(key, o.global_batch);
  for (double x : {o.bandwidth_gbps, o.device_memory_bytes, o.optimizer_bytes_per_param_byte, o.resync_factor}) append_bits(key, x);
  append_count(key, static_cast<std::size_t>(o.recompute));
  append_count(key, o.max_downsets);
  append_count(key, o.max_table_entries);
  return key;
}

}  // namespace detail

}  // namespace devplace::phaze
