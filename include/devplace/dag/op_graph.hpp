#pragma once
/// \file dag/op_graph.hpp
/// `op_graph`: an owning operator graph with profiled attributes (the `devplace.graph/1` data),
/// and `op_graph_builder`, which validates as it builds. `op_graph` models `profiled_dag`.
///
/// Vertices are dense ids 0 .. n-1 in the order operators were added; each keeps the external
/// id it was given (e.g. the `id` field of a graph file) in `op(v).id`.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/dag/edges.hpp"
#include "devplace/dag/properties.hpp"

namespace devplace {

/// The profiled attributes of one operator (times in ms per micro-batch, sizes in bytes).
struct op_attributes {
  std::int64_t id = 0;         ///< external id (the file's `id`)
  std::string name;            ///< label
  std::string op;              ///< operator kind label
  double fwd_ms = 0;           ///< forward time
  double bwd_ms = 0;           ///< backward time
  double fwd_mem_bytes = 0;    ///< peak extra memory in forward
  double bwd_mem_bytes = 0;    ///< peak extra memory in backward
  double param_bytes = 0;      ///< trainable parameter bytes owned by the operator
  double out_bytes = -1;       ///< output bytes, < 0 when unknown
  std::int64_t layer = -1;     ///< the model layer (module) the operator belongs to (the file's `layer`), < 0 when unknown
  /// c_u(v) when it is not fwd_ms + bwd_ms (a user type's own `compute_ms`, kept by `to_op_graph`);
  /// < 0: fwd_ms + bwd_ms.
  double compute_ms = -1;
  /// Co-location class (the file's `group`; Tarnawski's `colorClass`): operators with the same
  /// group >= 0 must share a stage (transform/class_quotient.hpp contracts them); < 0: none.
  std::int64_t group = -1;
  /// A backward operator stored as its own node (the file's `backward`; Tarnawski's
  /// `isBackwardNode`): its time is backward time of its group (transform/class_quotient.hpp).
  bool backward = false;
};

/// The error thrown by `op_graph_builder::build` on a structurally invalid graph.
class graph_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Every value is finite but a total over the graph is not (values near DBL_MAX): the sums that
/// every cost model forms would be infinite. `part` is "nodes" or "edges".
class graph_total_error : public graph_error {
 public:
  graph_total_error(std::string part, const std::string& what) : graph_error(what), part_(std::move(part)) {}
  [[nodiscard]] const std::string& part() const noexcept { return part_; }

 private:
  std::string part_;
};

class op_graph {
 public:
  using vertex_type = csr_dag::vertex_type;
  using edge_type = csr_dag::edge_type;

  op_graph() = default;

  // -- dag / bidirectional_dag
  [[nodiscard]] std::size_t num_vertices() const noexcept { return dag_.num_vertices(); }
  [[nodiscard]] std::size_t num_edges() const noexcept { return dag_.num_edges(); }
  [[nodiscard]] std::span<const vertex_type> out_edges(std::size_t u) const noexcept { return dag_.out_edges(u); }
  [[nodiscard]] std::span<const vertex_type> in_edges(std::size_t v) const noexcept { return dag_.in_edges(v); }

  // -- profiled_dag
  [[nodiscard]] double forward_ms(std::size_t v) const noexcept { return ops_[v].fwd_ms; }
  [[nodiscard]] double backward_ms(std::size_t v) const noexcept { return ops_[v].bwd_ms; }
  [[nodiscard]] double compute_ms(std::size_t v) const noexcept {
    return ops_[v].compute_ms >= 0 ? ops_[v].compute_ms : ops_[v].fwd_ms + ops_[v].bwd_ms;
  }
  [[nodiscard]] double memory_bytes(std::size_t v) const noexcept {
    return ops_[v].fwd_mem_bytes > ops_[v].bwd_mem_bytes ? ops_[v].fwd_mem_bytes : ops_[v].bwd_mem_bytes;
  }
  [[nodiscard]] double param_bytes(std::size_t v) const noexcept { return ops_[v].param_bytes; }
  /// Bytes on edge u -> v; 0 when there is no such edge. O(log out_degree(u)).
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const noexcept {
    const auto e = dag_.find_edge(u, v);
    return e ? edge_bytes_[*e] : 0.0;
  }

  // -- direct access
  [[nodiscard]] const csr_dag& structure() const noexcept { return dag_; }
  [[nodiscard]] const op_attributes& op(std::size_t v) const noexcept { return ops_[v]; }
  [[nodiscard]] std::span<const op_attributes> ops() const noexcept { return ops_; }
  /// Bytes of edge `e` (ids as in `structure()`).
  [[nodiscard]] double edge_bytes_of(edge_type e) const noexcept { return edge_bytes_[e]; }
  [[nodiscard]] std::span<const double> edge_bytes_by_id() const noexcept { return edge_bytes_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  /// Samples per micro-batch the graph was profiled with; 0 when unknown (then 1 is assumed for
  /// samples per second).
  [[nodiscard]] double micro_batch_size() const noexcept { return micro_batch_size_; }
  void set_micro_batch_size(double n) {
    if (!(n >= 0) || !std::isfinite(n)) throw std::invalid_argument("micro_batch_size must be a finite number >= 0");
    micro_batch_size_ = n;
  }
  /// Dense vertex of an external id, or `num_vertices()` if there is none.
  [[nodiscard]] std::size_t vertex_of_id(std::int64_t id) const {
    const auto it = index_of_id_.find(id);
    return it == index_of_id_.end() ? num_vertices() : it->second;
  }

 private:
  friend class op_graph_builder;
  csr_dag dag_;
  std::vector<op_attributes> ops_;
  std::vector<double> edge_bytes_;
  std::unordered_map<std::int64_t, std::size_t> index_of_id_;
  std::string name_;
  double micro_batch_size_ = 0;
};

/// Collects operators and edges, then validates and freezes them into an `op_graph`.
///
///   op_graph_builder b;
///   auto a = b.add_op({.id = 0, .fwd_ms = 1, .bwd_ms = 2});
///   auto c = b.add_op({.id = 1, .fwd_ms = 1, .bwd_ms = 2});
///   b.add_edge(a, c, 4096);
///   op_graph g = std::move(b).build();   // throws graph_error on a self-loop or a cycle
class op_graph_builder {
 public:
  /// Adds an operator; returns its dense vertex id. Throws `graph_error` on a duplicate external
  /// id or a negative / non-finite attribute.
  template <int = 0>
  std::size_t add_op(op_attributes a) {
    check_attr(a.fwd_ms, "fwd_ms", a.id);
    check_attr(a.bwd_ms, "bwd_ms", a.id);
    check_attr(a.fwd_mem_bytes, "fwd_mem_bytes", a.id);
    check_attr(a.bwd_mem_bytes, "bwd_mem_bytes", a.id);
    check_attr(a.param_bytes, "param_bytes", a.id);
    if (!std::isfinite(a.compute_ms))
      throw graph_error("operator " + std::to_string(a.id) + ": compute_ms is not finite");
    if (a.compute_ms >= 0 && a.compute_ms < a.fwd_ms)
      throw graph_error("operator " + std::to_string(a.id) + ": compute_ms (" + std::to_string(a.compute_ms) +
                        ") is less than fwd_ms (" + std::to_string(a.fwd_ms) + "); the backward part would be negative");
    if (!std::isfinite(a.out_bytes)) throw graph_error("operator " + std::to_string(a.id) + ": out_bytes is not finite");
    const std::size_t v = ops_.size();
    if (!index_of_id_.emplace(a.id, v).second)
      throw graph_error("duplicate operator id " + std::to_string(a.id));
    ops_.push_back(std::move(a));
    return v;
  }
  /// Adds the data dependency u -> v (dense ids) carrying `bytes`; parallel edges add their bytes.
  template <int = 0>
  void add_edge(std::size_t u, std::size_t v, double bytes) {
    if (u >= ops_.size() || v >= ops_.size())
      throw graph_error("edge " + std::to_string(u) + " -> " + std::to_string(v) + ": no such operator");
    if (u == v) throw graph_error("self-loop on operator " + std::to_string(ops_[u].id));
    if (!(bytes >= 0) || !std::isfinite(bytes))
      throw graph_error("edge " + std::to_string(ops_[u].id) + " -> " + std::to_string(ops_[v].id) +
                        ": bytes must be a finite number >= 0");
    edges_.emplace_back(static_cast<csr_dag::vertex_type>(u), static_cast<csr_dag::vertex_type>(v));
    bytes_.push_back(bytes);
  }
  [[nodiscard]] std::size_t num_ops() const noexcept { return ops_.size(); }
  [[nodiscard]] std::size_t vertex_of_id(std::int64_t id) const {
    const auto it = index_of_id_.find(id);
    return it == index_of_id_.end() ? ops_.size() : it->second;
  }
  void set_name(std::string n) { name_ = std::move(n); }

  /// Validates acyclicity and returns the graph. Throws `graph_error` naming the external ids of
  /// one cycle, `graph_total_error` when a total (of fwd_ms + bwd_ms, a memory or parameter
  /// field, or the edge bytes) is not finite.
  template <int = 0>
  [[nodiscard]] op_graph build() && {
    check_totals();
    op_graph g;
    std::vector<csr_dag::edge_type> merged;
    g.dag_ = csr_dag(ops_.size(), edges_, &merged);
    g.edge_bytes_.assign(g.dag_.num_edges(), 0.0);
    for (std::size_t i = 0; i < merged.size(); ++i) g.edge_bytes_[merged[i]] += bytes_[i];
    const auto topo = topological_sort(g.dag_);
    if (!topo) {
      std::string msg = "the graph has a cycle:";
      // append piece by piece: GCC 12 warns (-Wrestrict, a false positive) on `" " + to_string(..)`
      for (auto v : topo.cycle) msg.append(" ").append(std::to_string(ops_[v].id)).append(" ->");
      msg.append(" ").append(std::to_string(ops_[topo.cycle.front()].id));
      throw graph_error(msg);
    }
    g.ops_ = std::move(ops_);
    g.index_of_id_ = std::move(index_of_id_);
    g.name_ = std::move(name_);
    return g;
  }

 private:
  template <int = 0>
  void check_totals() const {
    double compute = 0, fwd_mem = 0, bwd_mem = 0, params = 0, bytes = 0;
    for (const auto& a : ops_) {
      compute += a.fwd_ms + a.bwd_ms;
      fwd_mem += a.fwd_mem_bytes;
      bwd_mem += a.bwd_mem_bytes;
      params += a.param_bytes;
    }
    for (double b : bytes_) bytes += b;
    auto check = [](double total, const char* part, const char* what) {
      if (!std::isfinite(total))
        throw graph_total_error(part, std::string("the total of ") + what + " over the graph is not finite (values too large)");
    };
    check(compute, "nodes", "fwd_ms + bwd_ms");
    check(fwd_mem, "nodes", "fwd_mem_bytes");
    check(bwd_mem, "nodes", "bwd_mem_bytes");
    check(params, "nodes", "param_bytes");
    check(bytes, "edges", "edge bytes");
  }
  template <int = 0>
  static void check_attr(double x, const char* field, std::int64_t id) {
    if (!std::isfinite(x) || x < 0)
      throw graph_error("operator " + std::to_string(id) + ": " + field + " must be a finite number >= 0");
  }
  std::vector<op_attributes> ops_;
  std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> edges_;
  std::vector<double> bytes_;
  std::unordered_map<std::int64_t, std::size_t> index_of_id_;
  std::string name_;
};

/// Copies any `profiled_dag` into an `op_graph` (the concrete core of the heavy passes), reading
/// every cost through the customisation points: forward_ms, backward_ms, compute_ms (kept when it
/// is not their sum), memory_bytes, param_bytes and edge_bytes.
///
/// Parallel edges: `edge_bytes(g, u, v)` is the total number of bytes sent from u to v, however
/// many times v appears among u's successors; a repeated successor is one more statement of the
/// same dependency and is copied once (docs/concepts.md, "Parallel edges").
/// Throws `graph_error` on a cycle, a self-loop or a negative / non-finite cost.
template <profiled_dag G>
[[nodiscard]] op_graph to_op_graph(const G& g) {
  if constexpr (std::is_same_v<G, op_graph>) {
    return g;
  } else {
    op_graph_builder b;
    const std::size_t n = devplace::num_vertices(g);
    for (std::size_t v = 0; v < n; ++v) {
      op_attributes a;
      a.id = static_cast<std::int64_t>(v);
      a.fwd_ms = devplace::forward_ms(g, v);
      a.bwd_ms = devplace::backward_ms(g, v);
      const double c = devplace::compute_ms(g, v);
      if (c != a.fwd_ms + a.bwd_ms) a.compute_ms = c;
      a.fwd_mem_bytes = devplace::memory_bytes(g, v);
      a.bwd_mem_bytes = a.fwd_mem_bytes;
      a.param_bytes = devplace::param_bytes(g, v);
      b.add_op(std::move(a));
    }
    for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) { b.add_edge(u, v, bytes); });
    return std::move(b).build();
  }
}

}  // namespace devplace
