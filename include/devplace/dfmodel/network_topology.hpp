#pragma once
/// \file dfmodel/network_topology.hpp
/// A DFModel network (dfmodel/network.hpp) as the library's device topology: the bandwidth
/// matrix between its chips, for the mapper and the simulator. Apart from network.hpp because it
/// needs Eigen (matrix_topology), which the cost model does not.
#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "devplace/dfmodel/network.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::dfmodel {

/// The bandwidth matrix of `net` for the mapper and simulator. Chip ids are row-major over the
/// dimensions with x fastest (chip = x + X·(y + Y·z)). Two chips that differ in one dimension
/// talk over that dimension: a switch or a fully connected dimension gives one link's bandwidth,
/// a ring gives link / hops (hops = the shorter way round). Chips that differ in several
/// dimensions route dimension by dimension and get the smallest of those bandwidths.
[[nodiscard]] inline matrix_topology to_matrix_topology(const network& net, double mem_bytes = 32.0 * (1ull << 30)) {
  check_network(net);
  const std::size_t n = num_chips(net);
  if (n < 2) throw std::invalid_argument("dfmodel to_matrix_topology: needs at least 2 chips");
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      double best = 1e300;
      std::size_t ra = a, rb = b;
      for (const auto& d : net.dims) {
        const std::size_t ca = ra % d.size, cb = rb % d.size;
        ra /= d.size;
        rb /= d.size;
        if (ca == cb) continue;
        double x = d.link_gbps;
        if (d.kind == dim_kind::ring) {
          const std::size_t diff = ca > cb ? ca - cb : cb - ca;
          x /= static_cast<double>(std::min(diff, d.size - diff));
        }
        best = std::min(best, x);
      }
      bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = best;
    }
  matrix_topology t(std::move(bw), mem_bytes);
  std::string name;
  for (const auto& d : net.dims) name += (name.empty() ? "" : "x") + std::string(to_string(d.kind)) + std::to_string(d.size);
  t.set_name("dfmodel_" + name);
  return t;
}

}  // namespace devplace::dfmodel
