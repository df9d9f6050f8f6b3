#pragma once
/// \file io/tarnawski.hpp
/// Reads the JSON operator and layer graphs of Tarnawski et al. 2020 ("Efficient Algorithms for
/// Device Placement of DNN Graph Operators", msr-fiddle/dnn-partitioning) into an `op_graph`.
///
/// Format: `maxSizePerFPGA`, `maxFPGAs`, `maxCPUs`, `nodes[]` (`id`, `fpgaLatency`, `cpuLatency`,
/// `isBackwardNode`, `supportedOnFpga` as bool or 0/1, optional `colorClass`, `size`, `name`),
/// `edges[]` (`sourceId`, `destId`, `cost` (a transfer time), `size` (bytes)).
///
/// Mapping: fwd_ms = fpgaLatency, bwd_ms = 0 (training graphs carry their backward operators as
/// separate nodes), fwd_mem_bytes = size, edge bytes = the edge's `size`; `cost` is a time in
/// that paper's own model and is not used. Ids may be sparse or 1-based; they are kept.
/// `colorClass` becomes `op_attributes::group` (nodes without one: -1, a class of their own) and
/// `isBackwardNode` `op_attributes::backward` (and the `op` label "backward" / "forward"); the
/// contraction of transform/class_quotient.hpp turns them into devplace's own model (forward
/// supernodes carrying the backward time), as `devplace partition` does by default for such files.
#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "devplace/dag/op_graph.hpp"
#include "devplace/io/detail/graph_reading.hpp"
#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io {

template <int = 0>
op_graph tarnawski_from_json(const nlohmann::json& doc, const std::string& file) {
  const detail::reader r(file);
  r.object(doc, "");
  op_graph_builder b;
  const auto& nodes = r.array(r.field(doc, "nodes", ""), "/nodes");
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const std::string p = detail::child("/nodes", k);
    const auto& n = r.object(nodes[k], p);
    op_attributes a;
    a.id = r.integer(r.field(n, "id", p), p + "/id");
    a.fwd_ms = r.non_negative(r.field(n, "fpgaLatency", p), p + "/fpgaLatency");
    if (const auto* x = detail::reader::optional(n, "size")) a.fwd_mem_bytes = r.non_negative(*x, p + "/size");
    if (const auto* x = detail::reader::optional(n, "name")) a.name = r.string(*x, p + "/name");
    if (const auto* x = detail::reader::optional(n, "isBackwardNode")) {
      a.backward = r.boolean(*x, p + "/isBackwardNode");
      a.op = a.backward ? "backward" : "forward";
    }
    if (const auto* x = detail::reader::optional(n, "colorClass")) a.group = r.integer(*x, p + "/colorClass");
    if (const auto* x = detail::reader::optional(n, "supportedOnFpga")) (void)r.boolean(*x, p + "/supportedOnFpga");
    if (b.vertex_of_id(a.id) != b.num_ops()) r.fail(p + "/id", "duplicate node id " + std::to_string(a.id));
    b.add_op(std::move(a));
  }
  const auto& edges = r.array(r.field(doc, "edges", ""), "/edges");
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const std::string p = detail::child("/edges", k);
    const auto& e = r.object(edges[k], p);
    const auto src = r.integer(r.field(e, "sourceId", p), p + "/sourceId");
    const auto dst = r.integer(r.field(e, "destId", p), p + "/destId");
    double bytes = 0;
    if (const auto* x = detail::reader::optional(e, "size")) bytes = r.non_negative(*x, p + "/size");
    if (const auto* x = detail::reader::optional(e, "cost")) (void)r.non_negative(*x, p + "/cost");
    detail::add_edge_by_id(r, b, p, src, dst, bytes, "sourceId", "destId");
  }
  return detail::build_graph(r, std::move(b));
}

template <int = 0>
op_graph read_tarnawski(const std::filesystem::path& path) {
  const std::string file = path.string();
  return tarnawski_from_json(detail::parse_json(detail::read_text(path), file), file);
}

}  // namespace devplace::io
