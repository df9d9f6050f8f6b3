#pragma once
/// \file transform/class_quotient.hpp
/// Co-location classes in devplace's own model: the graph of forward supernodes that the exact
/// DPs (partition/pipeline_dp.hpp, general_dp, ...) can run on, for graphs whose parameters,
/// saved statistics, masks or backward operators are separate nodes (Tarnawski et al. 2020's
/// operator graphs: BERT-L-3's 235 nodes and ~10^21 down-sets become 128 supernodes with 1,428).
///
/// Input: any `profiled_dag` plus, per vertex, a class (an integer; < 0: a class of its own) and
/// a backward flag. The classes are contracted by `contract_classes` (transform/class_contraction.hpp:
/// orphaned backward classes, forward-SCC fusion; the trivial-node merge is off by default, it
/// narrows the search space). The result is an `op_graph` with one vertex per forward supernode:
///   fwd_ms        Σ forward_ms of its forward vertices
///   bwd_ms        Σ backward_ms of its forward vertices + Σ compute_ms of its backward vertices
///                 (a backward vertex's whole time is backward time of its class)
///   memory        Σ memory_bytes (fwd_mem_bytes = bwd_mem_bytes = that sum: the eq. 14 internal
///                 term Σ max(m_fwd, m_bwd) of the members), param_bytes summed
///   edges         the bytes of the forward → forward input edges between two supernodes, summed
///                 (views::quotient's folding); edges that touch a backward vertex carry gradients,
///                 which devplace's model already charges on the forward edge, and are dropped;
///                 precedence edges of the contraction that no forward edge backs (mirror edges of
///                 orphaned backward classes) carry 0 bytes.
/// A stage assignment over the supernodes is mapped back with `expand_stage_of`: every input
/// vertex goes to its supernode's stage, so every class (forward and backward vertices) lies in
/// one stage and no forward edge runs backwards.
///
/// Exactness: the partitions of the quotient into S ordered convex stages are exactly the
/// partitions of the input in which every class lies in one stage and every forward → forward
/// edge goes forwards or stays (the forward-SCC fusion only merges classes that such a partition
/// must keep together); the stage costs agree under the folding above. test/partition/class_quotient.cpp
/// checks this against a brute force over the input graph.
///
/// Complexity: O((n + m) log m) (the contraction and the quotient).
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "devplace/dag/edges.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/transform/class_contraction.hpp"
#include "devplace/views/quotient.hpp"

namespace devplace::transform {

struct class_quotient_options {
  /// The contraction steps; the trivial-node merge (a Tarnawski heuristic that joins zero-time
  /// supernodes to their only neighbour) is off: it removes partitions from the search space.
  class_contraction_options contraction{.orphaned_backward = true, .fuse_forward_sccs = true, .merge_trivial = false};
};

struct class_quotient {
  op_graph graph;                         ///< one vertex per forward supernode
  std::vector<std::size_t> supernode_of;  ///< per input vertex: its vertex in `graph`
  std::size_t classes = 0;                ///< distinct classes of the input (ungrouped vertices count one each)
  std::size_t zero_byte_edges = 0;        ///< precedence edges of `graph` that no forward input edge backs
  class_contraction contraction;          ///< the contraction's own counts (orphans, fused classes, ...)
};

/// Contracts the classes of `g`: `group[v]` (< 0: none) and `backward[v]` per vertex. Throws
/// `std::invalid_argument` when the ranges do not have one entry per vertex.
template <profiled_dag G, std::ranges::random_access_range C, std::ranges::random_access_range B>
[[nodiscard]] class_quotient contract_class_quotient(const G& g, const C& group, const B& backward,
                                                     const class_quotient_options& opt = {}) {
  const std::size_t n = devplace::num_vertices(g);
  if (static_cast<std::size_t>(std::ranges::size(group)) != n || static_cast<std::size_t>(std::ranges::size(backward)) != n)
    throw std::invalid_argument("contract_class_quotient: group and backward need one entry per vertex");
  class_quotient r;
  class_graph cg;
  std::unordered_map<std::int64_t, std::size_t> dense;
  std::size_t next = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const auto c = static_cast<std::int64_t>(group[v]);
    if (c >= 0) {
      const auto it = dense.emplace(c, next).first;
      if (it->second == next) ++next;
      cg.cls.push_back(it->second);
    } else {
      cg.cls.push_back(next++);
    }
    const bool b = static_cast<bool>(backward[v]);
    cg.backward.push_back(b);
    cg.latency.push_back({devplace::forward_ms(g, v), devplace::backward_ms(g, v)});
  }
  r.classes = next;
  for_each_edge(g, [&](std::size_t u, std::size_t w, double) { cg.edges.emplace_back(u, w); });
  r.contraction = contract_classes(cg, opt.contraction);
  const auto& con = r.contraction;
  r.supernode_of = con.supernode_of;

  // The input in devplace's model: backward vertices' time is backward time, edges touching a
  // backward vertex dropped. Its quotient by supernode folds times, memory and bytes.
  op_graph_builder hb;
  for (std::size_t v = 0; v < n; ++v) {
    op_attributes a;
    a.id = static_cast<std::int64_t>(v);
    if (cg.backward[v]) {
      a.bwd_ms = devplace::compute_ms(g, v);
    } else {
      a.fwd_ms = devplace::forward_ms(g, v);
      a.bwd_ms = devplace::backward_ms(g, v);
      const double c = devplace::compute_ms(g, v);
      if (c != a.fwd_ms + a.bwd_ms) a.bwd_ms = c - a.fwd_ms;  // keep c_u(v) in the sum
    }
    a.fwd_mem_bytes = a.bwd_mem_bytes = devplace::memory_bytes(g, v);
    a.param_bytes = devplace::param_bytes(g, v);
    hb.add_op(std::move(a));
  }
  for_each_edge(g, [&](std::size_t u, std::size_t w, double bytes) {
    if (!cg.backward[u] && !cg.backward[w]) hb.add_edge(u, w, bytes);
  });
  const op_graph h = std::move(hb).build();
  const auto q = views::quotient(h, r.supernode_of);
  if (q.num_vertices() != con.num_forward)
    throw std::logic_error("contract_class_quotient: a supernode without members");

  op_graph_builder b;
  for (std::size_t k = 0; k < con.num_forward; ++k) {
    op_attributes a;
    a.id = static_cast<std::int64_t>(k);
    a.op = con.artificial[k] ? "supernode (backward only)" : "supernode";
    a.fwd_ms = q.forward_ms(k);
    a.bwd_ms = q.backward_ms(k);
    a.fwd_mem_bytes = a.bwd_mem_bytes = q.memory_bytes(k);
    a.param_bytes = q.param_bytes(k);
    b.add_op(std::move(a));
  }
  for (std::size_t k = 0; k < con.num_forward; ++k) {
    for (auto w : q.out_edges(k)) b.add_edge(k, static_cast<std::size_t>(w), q.edge_bytes(k, static_cast<std::size_t>(w)));
    for (int w : con.successors[k]) {
      const auto ws = static_cast<std::size_t>(w);
      if (!q.structure().find_edge(k, ws)) {
        b.add_edge(k, ws, 0.0);
        ++r.zero_byte_edges;
      }
    }
  }
  r.graph = std::move(b).build();
  return r;
}

/// The same over an `op_graph`, reading `op(v).group` and `op(v).backward`; the result keeps the
/// graph's name and micro-batch size.
[[nodiscard]] inline class_quotient contract_class_quotient(const op_graph& g, const class_quotient_options& opt = {}) {
  std::vector<std::int64_t> group(g.num_vertices());
  std::vector<char> backward(g.num_vertices());
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    group[v] = g.op(v).group;
    backward[v] = g.op(v).backward ? 1 : 0;
  }
  class_quotient r = contract_class_quotient(g, group, backward, opt);
  r.graph.set_name(g.name());
  r.graph.set_micro_batch_size(g.micro_batch_size());
  return r;
}

/// Whether `g` carries classes or backward vertices (some `op(v).group >= 0` or `op(v).backward`).
[[nodiscard]] inline bool has_classes(const op_graph& g) {
  for (const auto& a : g.ops())
    if (a.group >= 0 || a.backward) return true;
  return false;
}

/// Maps a stage per supernode back to a stage per input vertex. Throws `std::invalid_argument`
/// when `stage_of` does not have one entry per supernode.
[[nodiscard]] inline std::vector<std::size_t> expand_stage_of(const class_quotient& q, std::span<const std::size_t> stage_of) {
  if (stage_of.size() != q.graph.num_vertices())
    throw std::invalid_argument("expand_stage_of: stage_of needs one entry per supernode (" +
                                std::to_string(q.graph.num_vertices()) + "), got " + std::to_string(stage_of.size()));
  std::vector<std::size_t> r(q.supernode_of.size());
  for (std::size_t v = 0; v < r.size(); ++v) r[v] = stage_of[q.supernode_of[v]];
  return r;
}

}  // namespace devplace::transform
