#pragma once
/// \file sim/detail/network.hpp
/// The shared resources of the pipeline simulator (sim/pipeline_simulator.hpp): directed links,
/// the NICs of the nodes and the data-parallel communicators. Each is a FIFO server: a task waits
/// until every resource it needs is free, then holds them all for its duration. A point-to-point
/// transfer between nodes holds one egress and one ingress NIC; a ring allreduce across nodes
/// holds its communicator and, per node, min(n, k) egress (ingress) NICs for the k ring links
/// leaving (entering) it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace devplace::detail {

/// The nodes of a topology as the simulator reads them: `node_of[d]`, and per node its NIC count
/// and per-NIC bandwidth (GB/s). Empty: every device pair has its own link.
struct network_nodes {
  std::vector<std::size_t> node_of;
  std::vector<std::size_t> nics;
  std::vector<double> nic_gbps;

  [[nodiscard]] bool empty() const noexcept { return node_of.empty(); }
  /// Whether a → b leaves one node for another through NICs of finite bandwidth.
  [[nodiscard]] bool crosses(std::size_t a, std::size_t b) const noexcept {
    if (empty() || node_of[a] == node_of[b]) return false;
    return std::isfinite(nic_gbps[node_of[a]]) || std::isfinite(nic_gbps[node_of[b]]);
  }
  /// The bandwidth of a → b: the link's, capped by the NICs it crosses.
  [[nodiscard]] double limit(std::size_t a, std::size_t b, double link_gbps) const noexcept {
    if (!crosses(a, b)) return link_gbps;
    return std::min({link_gbps, nic_gbps[node_of[a]], nic_gbps[node_of[b]]});
  }
};

/// The links of a ring allreduce ring[0] → ring[1] → … → ring[0] that cross nodes
/// (`network_nodes::crosses`), counted per node: `out[n]` leave node n, `in[n]` enter it. Both
/// empty without nodes.
struct ring_crossings {
  std::vector<std::size_t> out, in;

  ring_crossings() = default;
  ring_crossings(const network_nodes& net, const std::vector<std::size_t>& ring) {
    if (net.empty()) return;
    out.assign(net.nics.size(), 0);
    in.assign(net.nics.size(), 0);
    const std::size_t n = ring.size();
    for (std::size_t r = 0; r < n; ++r)
      if (net.crosses(ring[r], ring[(r + 1) % n])) ++out[net.node_of[ring[r]]], ++in[net.node_of[ring[(r + 1) % n]]];
  }
};

/// One FIFO server: free from `free_at`, last held by task `last`.
struct server {
  double free_at = 0;
  std::size_t last = std::numeric_limits<std::size_t>::max();
};

/// The servers of one simulation: links (a, b), communicators (keyed by a device of the group)
/// and per node the egress and ingress NICs (one server per NIC; a transfer takes the first free).
class resources {
 public:
  explicit resources(const network_nodes& net) : net_(&net) {
    if (net.empty()) return;
    egress_.resize(net.nics.size());
    ingress_.resize(net.nics.size());
    for (std::size_t n = 0; n < net.nics.size(); ++n) {
      egress_[n].resize(std::max<std::size_t>(net.nics[n], 1));
      ingress_[n].resize(std::max<std::size_t>(net.nics[n], 1));
    }
  }
  server& link(std::size_t a, std::size_t b) { return links_[{a, b}]; }
  server& communicator(std::size_t key) { return comms_[key]; }
  /// The first free egress NIC of a's node and ingress NIC of b's node (for a crossing transfer).
  std::pair<server*, server*> nics(std::size_t a, std::size_t b) {
    auto first = [](std::vector<server>& lanes) {
      return &*std::min_element(lanes.begin(), lanes.end(), [](const server& x, const server& y) { return x.free_at < y.free_at; });
    };
    return {first(egress_[net_->node_of[a]]), first(ingress_[net_->node_of[b]])};
  }
  /// Appends to `out` the `count` egress (or ingress) NICs of `node` that are free first (ties:
  /// the lower NIC index), for a ring allreduce whose links leave (enter) the node.
  void nics(std::size_t node, bool egress, std::size_t count, std::vector<server*>& out) {
    auto& lanes = (egress ? egress_ : ingress_)[node];
    std::vector<std::size_t> order(lanes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    count = std::min(count, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(), [&](std::size_t x, std::size_t y) {
      return lanes[x].free_at < lanes[y].free_at || (lanes[x].free_at == lanes[y].free_at && x < y);
    });
    for (std::size_t i = 0; i < count; ++i) out.push_back(&lanes[order[i]]);
  }

 private:
  const network_nodes* net_;
  std::map<std::pair<std::size_t, std::size_t>, server> links_;
  std::map<std::size_t, server> comms_;
  std::vector<std::vector<server>> egress_, ingress_;
};

}  // namespace devplace::detail
