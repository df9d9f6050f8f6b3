#pragma once
/// \file sim/detail/plan_bounds.hpp
/// The valid iteration bounds of the (S, R) search (sim/plan_search.hpp; docs/simulator.md): the
/// partition-independent work bounds, the link bounds of a topology, the bound of a partition
/// simulated on ideal links, and the bound of a general (J(2)) configuration. Private helpers of
/// `search_plan`.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/algorithm/longest_path.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/detail/disjoint_sets.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::detail {

/// mbs · R · MB per second of an iteration of `iteration_ms`; +inf for 0.
inline double samples_per_s_of(const simulation_options& so, std::size_t R, double iteration_ms) {
  return iteration_ms > 0 ? so.micro_batch_size * double(R) * double(so.micro_batches) / (iteration_ms / 1000.0)
                          : std::numeric_limits<double>::infinity();
}

/// The partition-independent iteration bounds of a graph: CP (heaviest path of w) and W, max_v w.
struct work_bounds {
  double heaviest_path_ms = 0, total_ms = 0, largest_ms = 0;
};

inline work_bounds make_work_bounds(const op_graph& g, bool recompute) {
  auto w = [recompute](const op_graph& x, std::size_t v) {
    return x.compute_ms(v) + (recompute ? x.forward_ms(v) : 0.0);
  };
  work_bounds b;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) b.total_ms += w(g, v), b.largest_ms = std::max(b.largest_ms, w(g, v));
  b.heaviest_path_ms = longest_path(g, w).length;
  return b;
}

/// Before partitioning: iteration ≥ max(CP, MB · max(W / S, max_v w(v))).
inline double iteration_bound_before_partition(const work_bounds& b, std::size_t S, std::size_t MB) {
  return std::max(b.heaviest_path_ms, double(MB) * std::max(b.total_ms / double(S), b.largest_ms));
}

/// The link bounds of a topology: the fastest link (largest bandwidth, smallest latency), and
/// for every ring size R the smallest θ_R such that some R devices are connected by links of at
/// most θ_R ms per byte in at least one direction. A ring over R distinct devices is such a set
/// (its links connect it), so its slowest link moves a byte in ≥ θ_R ms.
struct link_bounds {
  double bandwidth_gbps = 0, latency_us = std::numeric_limits<double>::infinity();
  std::vector<double> ring_ms_per_byte;  ///< θ_R, indexed by R (0 for R ≤ 1)
};

inline link_bounds make_link_bounds(const matrix_topology& t) {
  const std::size_t D = t.num_devices();
  link_bounds f;
  struct link { double w; std::size_t a, b; };
  std::vector<link> links;
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b) {
      if (a == b) continue;
      f.bandwidth_gbps = std::max(f.bandwidth_gbps, t.bandwidth_gbps(a, b));
      f.latency_us = std::min(f.latency_us, t.latency_us(a, b));
      if (a < b) links.push_back({1.0 / (std::max(t.bandwidth_gbps(a, b), t.bandwidth_gbps(b, a)) * 1e6), a, b});
    }
  if (!std::isfinite(f.latency_us)) f.latency_us = 0;
  if (!(f.bandwidth_gbps > 0)) f.bandwidth_gbps = 1;  // one device: no transfer is ever made
  // Kruskal order: θ_R is the weight of the link that first makes a component of R devices.
  std::sort(links.begin(), links.end(), [](const link& x, const link& y) { return x.w < y.w; });
  disjoint_sets sets(D);
  f.ring_ms_per_byte.assign(D + 1, 0.0);
  std::size_t largest = 1;
  for (const auto& l : links) {
    if (sets.find(l.a) == sets.find(l.b)) continue;
    sets.unite(l.a, l.b);
    for (const std::size_t size = sets.size[sets.find(l.a)]; largest < size; ++largest) f.ring_ms_per_byte[largest + 1] = l.w;
  }
  return f;
}

/// After partitioning: the partition simulated with every p2p transfer on the fastest link, every
/// ring link at θ_{R_s} (the smallest latency everywhere) and links never waiting — no mapping's
/// simulated iteration is shorter (see the file comment). `replicas` holds R_s per stage. With
/// `so.virtual_stages` v > 1 the S stages are S / v ranks × v chunks, chunk c on the devices of
/// rank c mod S / v, as every interleaved mapping places them.
inline double iteration_bound_of_partition(const op_graph& g, const std::vector<std::size_t>& stage_of,
                                           const std::vector<std::size_t>& replicas, const link_bounds& f,
                                           simulation_options so) {
  const std::size_t S = replicas.size(), ranks = S / std::max<std::size_t>(so.virtual_stages, 1);
  std::vector<std::vector<std::size_t>> rows(S);
  std::size_t next = 0;
  for (std::size_t s = 0; s < S; ++s)
    if (s >= ranks) rows[s] = rows[s - ranks];
    else
      for (std::size_t r = 0; r < replicas[s]; ++r) rows[s].push_back(next++);
  const auto D = static_cast<Eigen::Index>(next);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(D, D, f.bandwidth_gbps);
  for (std::size_t s = 0; s < ranks; ++s) {  // the devices of one stage: its ring
    const std::size_t R = replicas[s];
    if (R >= 2 && f.ring_ms_per_byte[R] > 0) {
      const auto first = static_cast<Eigen::Index>(rows[s][0]), size = static_cast<Eigen::Index>(R);
      bw.block(first, first, size, size).setConstant(std::min(f.bandwidth_gbps, 1.0 / (f.ring_ms_per_byte[R] * 1e6)));
    }
  }
  so.serialize_links = false;
  return simulate_core(make_pipeline_model(g, stage_of, S, std::move(rows)), bw, Eigen::MatrixXd::Constant(D, D, f.latency_us), so)
      .iteration_ms;
}

/// The same with R replicas for each of the S stages.
inline double iteration_bound_of_partition(const op_graph& g, const std::vector<std::size_t>& stage_of, std::size_t S,
                                           std::size_t R, const link_bounds& f, simulation_options so) {
  return iteration_bound_of_partition(g, stage_of, std::vector<std::size_t>(S, R), f, std::move(so));
}

/// Before partitioning a general (J(2)) configuration of S stages over D devices: the devices do
/// MB · R̂ · W of work per iteration (replica i of stage s runs R̂ / R_s times the stage's
/// micro-batch), so the busiest does ≥ MB · R̂ · W / D, and micro-batch 0 runs the heaviest path
/// (every task at least its unscaled time): samples/s ≤ min(mbs · D / W, mbs · R̂ · MB / CP) with
/// R̂ ≤ D − S + 1.
inline double samples_bound_of_general(const work_bounds& b, const simulation_options& so, std::size_t S, std::size_t D) {
  const double by_work = b.total_ms > 0 ? so.micro_batch_size * double(D) / (b.total_ms / 1000.0)
                                        : std::numeric_limits<double>::infinity();
  return std::min(by_work, samples_per_s_of(so, D - S + 1, b.heaviest_path_ms));
}

}  // namespace devplace::detail
