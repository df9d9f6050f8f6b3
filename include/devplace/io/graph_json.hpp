#pragma once
/// \file io/graph_json.hpp
/// Reads and writes operator graphs in the `devplace.graph/1` JSON format (docs/formats.md).
///
///   op_graph g = io::read_graph_json("model.json");         // throws io::input_error
///   io::write_graph_json(g, "copy.json");                    // atomic; throws io::output_error
///
/// Node order is file order: vertex v is `nodes[v]`, and plans refer to operators by it.
/// Parallel edges are merged by adding their bytes. Every rejection names file, JSON pointer
/// and reason; a cycle lists the ids on one cycle.
#include <cstdint>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "devplace/dag/op_graph.hpp"
#include "devplace/io/atomic_write.hpp"
#include "devplace/io/detail/graph_reading.hpp"
#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io {

inline constexpr const char* graph_format = "devplace.graph/1";

/// Builds an op_graph from a parsed `devplace.graph/1` document; `file` names it in errors.
inline op_graph graph_from_json(const nlohmann::json& doc, const std::string& file) {
  const detail::reader r(file);
  r.object(doc, "");
  r.format(doc, graph_format);
  r.units(doc, {{"time", "ms"}, {"memory", "bytes"}, {"size", "bytes"}});
  op_graph_builder b;
  if (const auto* name = detail::reader::optional(doc, "name")) b.set_name(r.string(*name, "/name"));
  const auto& nodes = r.array(r.field(doc, "nodes", ""), "/nodes");
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const std::string p = detail::child("/nodes", k);
    const auto& n = r.object(nodes[k], p);
    op_attributes a;
    a.id = r.integer(r.field(n, "id", p), p + "/id");
    a.fwd_ms = r.non_negative(r.field(n, "fwd_ms", p), p + "/fwd_ms");
    a.bwd_ms = r.non_negative(r.field(n, "bwd_ms", p), p + "/bwd_ms");
    if (const auto* x = detail::reader::optional(n, "fwd_mem_bytes")) a.fwd_mem_bytes = r.non_negative(*x, p + "/fwd_mem_bytes");
    if (const auto* x = detail::reader::optional(n, "bwd_mem_bytes")) a.bwd_mem_bytes = r.non_negative(*x, p + "/bwd_mem_bytes");
    if (const auto* x = detail::reader::optional(n, "param_bytes")) a.param_bytes = r.non_negative(*x, p + "/param_bytes");
    if (const auto* x = detail::reader::optional(n, "out_bytes")) a.out_bytes = r.non_negative(*x, p + "/out_bytes");
    if (const auto* x = detail::reader::optional(n, "layer")) {
      const auto layer = r.count(*x, p + "/layer");
      if (layer > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) r.fail(p + "/layer", "integer out of range");
      a.layer = static_cast<std::int64_t>(layer);
    }
    if (const auto* x = detail::reader::optional(n, "group")) {
      const auto group = r.count(*x, p + "/group");
      if (group > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) r.fail(p + "/group", "integer out of range");
      a.group = static_cast<std::int64_t>(group);
    }
    if (const auto* x = detail::reader::optional(n, "backward")) a.backward = r.boolean(*x, p + "/backward");
    if (const auto* x = detail::reader::optional(n, "name")) a.name = r.string(*x, p + "/name");
    if (const auto* x = detail::reader::optional(n, "op")) a.op = r.string(*x, p + "/op");
    if (b.vertex_of_id(a.id) != b.num_ops())
      r.fail(p + "/id", "duplicate node id " + std::to_string(a.id) + " (first at /nodes/" +
                            std::to_string(b.vertex_of_id(a.id)) + ")");
    b.add_op(std::move(a));
  }
  const auto& edges = r.array(r.field(doc, "edges", ""), "/edges");
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const std::string p = detail::child("/edges", k);
    const auto& e = r.object(edges[k], p);
    const auto src = r.integer(r.field(e, "src", p), p + "/src");
    const auto dst = r.integer(r.field(e, "dst", p), p + "/dst");
    const double bytes = r.non_negative(r.field(e, "bytes", p), p + "/bytes");
    detail::add_edge_by_id(r, b, p, src, dst, bytes, "src", "dst");
  }
  op_graph g = detail::build_graph(r, std::move(b));
  // The micro-batch size it was profiled with: `micro_batch_size`, else `source.micro_batch`.
  if (const auto* x = detail::reader::optional(doc, "micro_batch_size")) {
    const double mbs = r.number(*x, "/micro_batch_size");
    if (!(mbs > 0)) r.fail("/micro_batch_size", "expected a number > 0");
    g.set_micro_batch_size(mbs);
  } else if (const auto* src = detail::reader::optional(doc, "source"); src && src->is_object()) {
    if (const auto* y = detail::reader::optional(*src, "micro_batch"); y && y->is_number() && y->get<double>() > 0 &&
                                                                        std::isfinite(y->get<double>()))
      g.set_micro_batch_size(y->get<double>());
  }
  return g;
}

inline op_graph read_graph_json_text(const std::string& text, const std::string& file) {
  return graph_from_json(detail::parse_json(text, file), file);
}

inline op_graph read_graph_json(const std::filesystem::path& path) {
  return read_graph_json_text(detail::read_text(path), path.string());
}

/// The `devplace.graph/1` document of `g` (nodes in vertex order, merged edges).
inline nlohmann::json graph_to_json(const op_graph& g) {
  nlohmann::json doc;
  doc["format"] = graph_format;
  doc["name"] = g.name();
  doc["units"] = {{"time", "ms"}, {"memory", "bytes"}, {"size", "bytes"}};
  if (g.micro_batch_size() > 0) doc["micro_batch_size"] = g.micro_batch_size();
  auto& nodes = doc["nodes"] = nlohmann::json::array();
  for (const auto& a : g.ops()) {
    nlohmann::json n{{"id", a.id}, {"name", a.name}, {"op", a.op}, {"fwd_ms", a.fwd_ms}, {"bwd_ms", a.bwd_ms},
                     {"fwd_mem_bytes", a.fwd_mem_bytes}, {"bwd_mem_bytes", a.bwd_mem_bytes},
                     {"param_bytes", a.param_bytes}};
    if (a.out_bytes >= 0) n["out_bytes"] = a.out_bytes;
    if (a.layer >= 0) n["layer"] = a.layer;
    if (a.group >= 0) n["group"] = a.group;
    if (a.backward) n["backward"] = true;
    nodes.push_back(std::move(n));
  }
  auto& edges = doc["edges"] = nlohmann::json::array();
  const auto& s = g.structure();
  for (csr_dag::edge_type e = 0; e < s.num_edges(); ++e)
    edges.push_back({{"src", g.op(s.source(e)).id}, {"dst", g.op(s.target(e)).id}, {"bytes", g.edge_bytes_of(e)}});
  return doc;
}

inline void write_graph_json(const op_graph& g, const std::filesystem::path& path) {
  atomic_write(path, graph_to_json(g).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace devplace::io
