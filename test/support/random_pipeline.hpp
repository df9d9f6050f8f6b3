#pragma once
// Seeded random mapped pipelines and simulation settings for property tests of the simulator's
// outputs (critical path, pictures, trace): S stages with equal or ragged replica rows, chain and
// skip edges (some of 0 bytes), devices drawn from a random topology with latencies; and the
// fixed ones the hand-computed timelines use.
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::test {

/// S stages of R replicas on devices s·R + r, equal forward / backward times, chain edges of
/// `bytes`, `params` parameter bytes per stage.
inline pipeline_model uniform_chain(std::size_t S, std::size_t R, double f, double b, double bytes = 0, double params = 0) {
  pipeline_model m;
  m.stages = S;
  m.replicas = R;
  m.forward_ms.assign(S, f);
  m.backward_ms.assign(S, b);
  m.param_bytes.assign(S, params);
  m.message_bytes.assign(S, std::vector<double>(S, -1.0));
  for (std::size_t s = 0; s + 1 < S; ++s) m.message_bytes[s][s + 1] = bytes;
  for (std::size_t s = 0; s < S; ++s) {
    m.device_of.emplace_back();
    for (std::size_t r = 0; r < R; ++r) m.device_of.back().push_back(s * R + r);
  }
  return m;
}

/// D devices, every pair linked at `gbps`.
inline matrix_topology flat_topology(std::size_t D, double gbps) {
  return matrix_topology(Eigen::MatrixXd::Constant(Eigen::Index(D), Eigen::Index(D), gbps));
}

struct random_pipeline {
  pipeline_model model;
  matrix_topology topology;
  simulation_options options;
};

inline random_pipeline make_random_pipeline(std::mt19937_64& rng, bool ragged) {
  auto pick = [&](std::size_t lo, std::size_t hi) { return lo + static_cast<std::size_t>(rng() % (hi - lo + 1)); };
  random_pipeline p;
  pipeline_model& m = p.model;
  m.stages = pick(1, 4);
  const std::size_t R = pick(1, 3);
  std::vector<std::size_t> reps(m.stages, R);
  if (ragged)
    for (auto& r : reps) r = pick(1, 3);
  m.replicas = *std::max_element(reps.begin(), reps.end());
  const std::size_t used = std::accumulate(reps.begin(), reps.end(), std::size_t{0});
  const std::size_t D = used + pick(0, 2);
  std::vector<std::size_t> devices(D);
  std::iota(devices.begin(), devices.end(), std::size_t{0});
  std::shuffle(devices.begin(), devices.end(), rng);
  std::size_t next = 0;
  for (std::size_t s = 0; s < m.stages; ++s) {
    m.forward_ms.push_back(double(pick(1, 6)));
    m.backward_ms.push_back(double(pick(0, 9)));
    m.param_bytes.push_back(rng() % 3 == 0 ? 0.0 : 1e6 * double(pick(1, 50)));
    m.device_of.emplace_back(devices.begin() + static_cast<std::ptrdiff_t>(next),
                             devices.begin() + static_cast<std::ptrdiff_t>(next + reps[s]));
    next += reps[s];
  }
  m.message_bytes.assign(m.stages, std::vector<double>(m.stages, -1.0));
  for (std::size_t s = 0; s + 1 < m.stages; ++s)
    for (std::size_t t = s + 1; t < m.stages; ++t)
      if (t == s + 1 || rng() % 4 == 0) m.message_bytes[s][t] = rng() % 5 == 0 ? 0.0 : 1e6 * double(pick(1, 40));
  Eigen::MatrixXd bw(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  Eigen::MatrixXd lat = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  for (Eigen::Index a = 0; a < bw.rows(); ++a)
    for (Eigen::Index b = 0; b < bw.cols(); ++b) {
      bw(a, b) = a == b ? 0.0 : double(pick(1, 4)) * 5;
      if (a != b) lat(a, b) = double(pick(0, 20));
    }
  p.topology = matrix_topology(bw, lat, std::vector<double>(D, 1e10));
  p.options.micro_batches = pick(1, 5);
  p.options.schedule = rng() % 2 ? pipeline_schedule::gpipe : pipeline_schedule::one_f_one_b;
  p.options.recompute = rng() % 2;
  p.options.serialize_links = rng() % 4 != 0;
  p.options.blocking_sends = rng() % 3 == 0;
  p.options.blocking_allreduce = rng() % 3 == 0;
  p.options.update_ms = rng() % 3 == 0 ? double(pick(1, 5)) : 0.0;
  return p;
}

}  // namespace devplace::test
