#pragma once
// Seeded random stage graphs and topologies, and the brute-force oracle of the mapping tests.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::test {

/// S stages, R replicas: a chain with random skip edges (some pairs exchange nothing), random
/// compute and parameters. Small integer values keep sums exact.
inline stage_graph random_stage_graph(std::mt19937_64& rng, std::size_t S, std::size_t R) {
  std::vector<double> c(S), p(S);
  std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
  for (std::size_t s = 0; s < S; ++s) {
    c[s] = double(rng() % 6);
    p[s] = double(rng() % 8) * 5e5;
  }
  for (std::size_t a = 0; a < S; ++a)
    for (std::size_t b = a + 1; b < S; ++b)
      if (b == a + 1 ? rng() % 10 < 9 : rng() % 10 < 2) m[a][b] = m[b][a] = double(1 + rng() % 9) * 1e6;
  return stage_graph(R, c, p, m);
}

/// S ∈ [1, 3] stages of R ∈ [2, 4] replicas with S · R ≤ D (D ≥ 2), drawn until they fit.
inline std::pair<std::size_t, std::size_t> small_shape(std::mt19937_64& rng, std::size_t D) {
  std::size_t S = 0, R = 0;
  do {
    S = 1 + rng() % 3, R = 2 + rng() % 3;
  } while (S * R > D);
  return {S, R};
}

/// A random chain of stages whose every stage has parameters (where the ring covers apply).
inline stage_graph ring_stage_graph(std::mt19937_64& rng, std::size_t S, std::size_t R) {
  std::vector<double> c(S), p(S);
  std::vector<std::vector<double>> m(S, std::vector<double>(S, 0.0));
  for (std::size_t s = 0; s < S; ++s) {
    c[s] = double(rng() % 6);
    p[s] = double(1 + rng() % 8) * 5e5;
  }
  for (std::size_t a = 0; a + 1 < S; ++a) m[a][a + 1] = m[a + 1][a] = double(1 + rng() % 9) * 1e6;
  return stage_graph(R, c, p, m);
}

enum class topo_kind { discrete, continuous, asymmetric, latency };
inline constexpr topo_kind all_topo_kinds[] = {topo_kind::discrete, topo_kind::continuous, topo_kind::asymmetric,
                                              topo_kind::latency};

/// D devices; `discrete` draws bandwidths from {1, 2, 5, 10} GB/s (ties, symmetries), the others
/// from U[0.5, 20]; `asymmetric` draws both directions; `latency` adds per-pair latencies.
inline matrix_topology random_topology(std::mt19937_64& rng, std::size_t D, topo_kind k) {
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  Eigen::MatrixXd lat = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  std::uniform_real_distribution<double> u(0.5, 20.0), l(0.0, 500.0);
  const double levels[] = {1, 2, 5, 10};
  for (Eigen::Index i = 0; i < bw.rows(); ++i)
    for (Eigen::Index j = i + 1; j < bw.rows(); ++j) {
      const double x = k == topo_kind::discrete ? levels[rng() % 4] : u(rng);
      bw(i, j) = bw(j, i) = x;
      if (k == topo_kind::asymmetric) bw(j, i) = u(rng);
      if (k == topo_kind::latency) lat(i, j) = lat(j, i) = l(rng);
    }
  return matrix_topology(bw, lat, std::vector<double>(D, 1e9));
}

/// Nodes of the given sizes: `fast` GB/s inside a node, `slow` GB/s between nodes.
inline matrix_topology node_blocks(const std::vector<std::size_t>& sizes, double fast, double slow) {
  std::size_t D = 0;
  for (const auto n : sizes) D += n;
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D), slow);
  std::size_t first = 0;
  for (const auto n : sizes) {
    for (std::size_t a = first; a < first + n; ++a)
      for (std::size_t b = first; b < first + n; ++b) bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = fast;
    first += n;
  }
  return matrix_topology(bw);
}

/// The same topology with device d renamed perm[d].
inline matrix_topology relabel(const matrix_topology& t, const std::vector<std::size_t>& perm) {
  const auto n = static_cast<Eigen::Index>(t.num_devices());
  Eigen::MatrixXd bw(n, n), lat(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      bw(static_cast<Eigen::Index>(perm[static_cast<std::size_t>(i)]), static_cast<Eigen::Index>(perm[static_cast<std::size_t>(j)])) = t.bandwidth_matrix()(i, j);
      lat(static_cast<Eigen::Index>(perm[static_cast<std::size_t>(i)]), static_cast<Eigen::Index>(perm[static_cast<std::size_t>(j)])) = t.latency_matrix()(i, j);
    }
  return matrix_topology(bw, lat, t.memory());
}

/// A line of nodes of 1–3 devices: its own random bandwidths inside each node (a pair may be
/// slower than the links out), `base / distance` between nodes; the devices shuffled.
inline matrix_topology line_of_nodes(std::mt19937_64& rng, std::size_t D) {
  std::vector<std::size_t> node;
  for (std::size_t k = 0; node.size() < D; ++k)
    for (std::size_t n = 1 + rng() % 3; n > 0 && node.size() < D; --n) node.push_back(k);
  const double base = 4.0;
  const double inside[] = {1.0, 8.0, 16.0, 30.0};
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = a + 1; b < D; ++b) {
      const double v = node[a] == node[b] ? inside[rng() % 4] : base / static_cast<double>(node[b] - node[a]);
      bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = bw(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(a)) = v;
    }
  std::vector<std::size_t> perm(D);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  return relabel(matrix_topology(bw), perm);
}

/// min over every injective mapping of the S·R stage replicas into the D devices (all D!
/// orderings of the devices, the first S·R taken).
template <mapping_cost_model C>
double brute_force(const stage_graph& g, const link_costs& L, const C& model, std::vector<std::size_t>* arg = nullptr) {
  std::vector<std::size_t> perm(L.devices());
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  double best = std::numeric_limits<double>::infinity();
  const std::size_t V = g.vertices();
  std::vector<std::size_t> dev(V);
  do {
    std::copy_n(perm.begin(), V, dev.begin());
    double obj = 0;
    for (std::size_t v = 0; v < V && obj < best; ++v) obj = std::max(obj, static_cast<double>(model.time(g, L, std::span<const std::size_t>(dev), v)));
    if (obj < best) {
      best = obj;
      if (arg) *arg = dev;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

}  // namespace devplace::test
