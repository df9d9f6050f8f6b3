#pragma once
/// \file dfmodel/network.hpp
/// DFModel's compositional networks (seed-dfmodel.md §1.5): a system topology is a list of
/// one-dimensional dimensions (ring, fully connected, switch), each with a size, a link bandwidth
/// and the one parallelism it carries (TP, PP or DP; a dimension is never subdivided). Named
/// compositions: 2-D / 3-D torus (R × R [× R]), dragonfly (FC × FC), DGX-1 (R × SW), DGX-2
/// (SW × SW), ZionEX (R × FC). Also: the per-byte collective factors ρ, the link and switch counts
/// of the cost model. The library's bandwidth matrix of a network (`to_matrix_topology`) is in
/// dfmodel/network_topology.hpp.
///
/// Units follow the authors' model: bandwidths in GB/s = bytes/ns, so bytes · ρ is in ns.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace devplace::dfmodel {

enum class dim_kind { ring, fully_connected, switched };
enum class parallelism { none, tp, pp, dp };
enum class collective { all_reduce, all_gather, all_to_all, all_reduce_periodic, point_to_point };

struct dimension {
  dim_kind kind = dim_kind::ring;
  std::size_t size = 1;                    ///< chips along this dimension
  double link_gbps = 1;                    ///< bandwidth of one link of this dimension
  parallelism par = parallelism::none;     ///< the parallelism this dimension carries
};

/// A composed network: dimension 0 is the innermost (x), then y, z.
struct network {
  std::vector<dimension> dims;
};

[[nodiscard]] inline std::string_view to_string(dim_kind k) noexcept {
  switch (k) {
    case dim_kind::ring: return "ring";
    case dim_kind::fully_connected: return "fully_connected";
    case dim_kind::switched: return "switch";
  }
  return "?";
}
[[nodiscard]] inline std::string_view to_string(parallelism p) noexcept {
  switch (p) {
    case parallelism::none: return "none";
    case parallelism::tp: return "TP";
    case parallelism::pp: return "PP";
    case parallelism::dp: return "DP";
  }
  return "?";
}

/// Throws std::invalid_argument unless every dimension has a size >= 1, a finite positive link
/// bandwidth, and no parallelism is carried by two dimensions.
inline void check_network(const network& net) {
  if (net.dims.empty() || net.dims.size() > 3) throw std::invalid_argument("dfmodel network: 1 to 3 dimensions");
  int seen[4] = {0, 0, 0, 0};
  for (std::size_t d = 0; d < net.dims.size(); ++d) {
    const auto& x = net.dims[d];
    if (x.size == 0) throw std::invalid_argument("dfmodel network: dimension " + std::to_string(d) + " has size 0");
    if (!(x.link_gbps > 0) || x.link_gbps > 1e300)
      throw std::invalid_argument("dfmodel network: dimension " + std::to_string(d) + " needs a link bandwidth > 0");
    if (x.par != parallelism::none && seen[static_cast<int>(x.par)]++)
      throw std::invalid_argument("dfmodel network: " + std::string(to_string(x.par)) +
                                  " is carried by two dimensions (a dimension carries one parallelism)");
  }
}

[[nodiscard]] inline std::size_t num_chips(const network& net) {
  std::size_t n = 1;
  for (const auto& d : net.dims) n *= d.size;
  return n;
}

/// The dimension carrying `p`, or nullptr (degree 1).
[[nodiscard]] inline const dimension* carrier(const network& net, parallelism p) {
  for (const auto& d : net.dims)
    if (d.par == p) return &d;
  return nullptr;
}
/// The degree of parallelism `p`: the size of the dimension carrying it, 1 when none does.
[[nodiscard]] inline std::size_t degree(const network& net, parallelism p) {
  const dimension* d = carrier(net, p);
  return d ? d->size : 1;
}

/// Per-byte time (ns per byte) of `c` among `p` chips on one dimension of kind `k` and link
/// bandwidth `gbps` (the repo's table, §1.5). `all_reduce_factor` scales the all-reduce and the
/// periodic all-reduce: 2 = the ring reduce-scatter + all-gather of the code version behind the
/// paper's Table VI, 1 = the current code (A7). A group of one chip costs nothing.
[[nodiscard]] inline double rho(dim_kind k, collective c, std::size_t p, double gbps, double all_reduce_factor = 2.0) {
  if (p == 0 || !(gbps > 0)) throw std::invalid_argument("dfmodel rho: p >= 1 and bandwidth > 0");
  if (p == 1) return 0.0;
  const double P = static_cast<double>(p), B = gbps;
  const double ring_like = (P - 1) / (P * B), fc = 1.0 / (P * B);
  switch (c) {
    case collective::all_reduce:
    case collective::all_reduce_periodic: return all_reduce_factor * (k == dim_kind::fully_connected ? fc : ring_like);
    case collective::all_gather: return k == dim_kind::fully_connected ? fc : ring_like;
    case collective::all_to_all:
      return k == dim_kind::ring ? P * P / (8 * B) : k == dim_kind::fully_connected ? 1.0 / B : P / (4 * B);
    case collective::point_to_point: return 1.0 / B;
  }
  return 0.0;
}

/// ρ of collective `c` for parallelism `p` on `net` (0 when no dimension carries `p`).
[[nodiscard]] inline double rho(const network& net, parallelism p, collective c, double all_reduce_factor = 2.0) {
  const dimension* d = carrier(net, p);
  return d ? rho(d->kind, c, d->size, d->link_gbps, all_reduce_factor) : 0.0;
}

/// Link and switch counts per dimension of the authors' cost model (§1.5, repo table), for the
/// compositions it knows: R, FC, SW, R×R, FC×FC, R×FC, R×SW, SW×SW, R×R×R, R×SW×SW, SW×SW×SW.
struct unit_counts {
  std::vector<double> links, switches;
};

[[nodiscard]] inline unit_counts cost_units(const network& net) {
  check_network(net);
  using K = dim_kind;
  const auto& D = net.dims;
  const double N = static_cast<double>(num_chips(net));
  const double x = static_cast<double>(D[0].size);
  const double y = D.size() > 1 ? static_cast<double>(D[1].size) : 1;
  const double z = D.size() > 2 ? static_cast<double>(D[2].size) : 1;
  auto is = [&](std::initializer_list<K> ks) {
    if (ks.size() != D.size()) return false;
    std::size_t i = 0;
    for (K k : ks)
      if (D[i++].kind != k) return false;
    return true;
  };
  if (is({K::switched})) return {{x}, {x}};
  if (is({K::fully_connected})) return {{x * (x - 1)}, {0}};
  if (is({K::ring})) return {{x}, {2}};
  if (is({K::ring, K::ring})) return {{N, N}, {2 * y, 2 * x}};
  if (is({K::fully_connected, K::fully_connected})) return {{x * (x - 1) * y, y * (y - 1)}, {0, y * y}};
  if (is({K::ring, K::fully_connected})) return {{N, y * (y - 1)}, {2 * y, y * y}};
  if (is({K::ring, K::switched})) return {{N, y}, {2 * y, y}};
  if (is({K::switched, K::switched})) return {{N, y}, {N, y}};
  if (is({K::ring, K::ring, K::ring})) return {{N, N, N}, {2 * y * z, 2 * x * z, 2 * x * y}};
  if (is({K::ring, K::switched, K::switched})) return {{N, y * z, z}, {2 * y * z, y * z, z}};
  if (is({K::switched, K::switched, K::switched})) return {{N, y * z, z}, {N, y * z, z}};
  throw std::invalid_argument("dfmodel cost: no link/switch counts for this composition of dimensions");
}

// Named compositions. Sizes and bandwidths per dimension; `par` tags in x, y, z order.
[[nodiscard]] inline network ring(std::size_t n, double gbps, parallelism par = parallelism::tp) {
  return {{{dim_kind::ring, n, gbps, par}}};
}
[[nodiscard]] inline network fully_connected(std::size_t n, double gbps, parallelism par = parallelism::tp) {
  return {{{dim_kind::fully_connected, n, gbps, par}}};
}
[[nodiscard]] inline network switched(std::size_t n, double gbps, parallelism par = parallelism::tp) {
  return {{{dim_kind::switched, n, gbps, par}}};
}
[[nodiscard]] inline network two_dim(dim_kind kx, dim_kind ky, std::size_t x, std::size_t y, double bx, double by,
                                     parallelism px, parallelism py) {
  network n{{{kx, x, bx, px}, {ky, y, by, py}}};
  check_network(n);
  return n;
}
[[nodiscard]] inline network torus2d(std::size_t x, std::size_t y, double bx, double by,
                                     parallelism px = parallelism::tp, parallelism py = parallelism::pp) {
  return two_dim(dim_kind::ring, dim_kind::ring, x, y, bx, by, px, py);
}
[[nodiscard]] inline network dragonfly(std::size_t x, std::size_t y, double bx, double by,
                                       parallelism px = parallelism::tp, parallelism py = parallelism::pp) {
  return two_dim(dim_kind::fully_connected, dim_kind::fully_connected, x, y, bx, by, px, py);
}
[[nodiscard]] inline network dgx1(std::size_t x, std::size_t y, double bx, double by,
                                  parallelism px = parallelism::tp, parallelism py = parallelism::pp) {
  return two_dim(dim_kind::ring, dim_kind::switched, x, y, bx, by, px, py);
}
[[nodiscard]] inline network dgx2(std::size_t x, std::size_t y, double bx, double by,
                                  parallelism px = parallelism::tp, parallelism py = parallelism::pp) {
  return two_dim(dim_kind::switched, dim_kind::switched, x, y, bx, by, px, py);
}
[[nodiscard]] inline network torus3d(std::size_t x, std::size_t y, std::size_t z, double bx, double by, double bz,
                                     parallelism px = parallelism::tp, parallelism py = parallelism::pp,
                                     parallelism pz = parallelism::dp) {
  network n{{{dim_kind::ring, x, bx, px}, {dim_kind::ring, y, by, py}, {dim_kind::ring, z, bz, pz}}};
  check_network(n);
  return n;
}

/// Every way to give the dimensions of `templ` whose size is 0 ("free") sizes so that the chips
/// multiply to `chips` (fixed sizes are kept), in lexicographic order of the free sizes: the
/// TP / PP / DP degrees to try. Empty when no assignment exists. Throws std::invalid_argument
/// when `chips` is 0 or a fixed dimension is otherwise invalid.
[[nodiscard]] inline std::vector<network> size_assignments(const network& templ, std::size_t chips) {
  if (chips == 0) throw std::invalid_argument("dfmodel size_assignments: chips >= 1");
  std::size_t fixed = 1;
  std::vector<std::size_t> free;
  for (std::size_t d = 0; d < templ.dims.size(); ++d) {
    if (templ.dims[d].size == 0) free.push_back(d);
    else fixed *= templ.dims[d].size;
  }
  std::vector<network> out;
  if (chips % fixed != 0) return out;
  network cur = templ;
  // depth-first over the free dimensions: each takes a divisor of what is left
  std::vector<std::size_t> left(free.size() + 1, chips / fixed), pick(free.size(), 0);
  std::size_t i = 0;
  while (true) {
    if (i == free.size()) {
      if (left[i] == 1) {
        check_network(cur);
        out.push_back(cur);
      }
      if (i == 0) break;
      --i;
      continue;
    }
    std::size_t next = pick[i] + 1;
    while (next <= left[i] && left[i] % next != 0) ++next;
    if (next > left[i]) {
      pick[i] = 0;
      if (i == 0) break;
      --i;
      continue;
    }
    pick[i] = next;
    cur.dims[free[i]].size = next;
    left[i + 1] = left[i] / next;
    ++i;
  }
  return out;
}

}  // namespace devplace::dfmodel
