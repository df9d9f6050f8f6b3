#pragma once
/// \file io/detail/graph_reading.hpp
/// The steps that every reader of an operator-graph document shares (private to io/): adding an
/// edge given by node ids, and building the graph with its structural errors reported at /edges.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "devplace/dag/op_graph.hpp"
#include "devplace/io/detail/json_reader.hpp"

namespace devplace::io::detail {

/// Adds the edge `src` -> `dst` (node ids) of the document's edge at pointer `p`. Fails at
/// `p + "/" + src_field` (or `dst_field`) naming an id no node has, and at `p` on a self-loop.
template <int = 0>
void add_edge_by_id(const reader& r, op_graph_builder& b, const std::string& p, std::int64_t src,
                           std::int64_t dst, double bytes, std::string_view src_field, std::string_view dst_field) {
  const std::size_t u = b.vertex_of_id(src), v = b.vertex_of_id(dst);
  if (u == b.num_ops()) r.fail(p + "/" + std::string(src_field), "no node has id " + std::to_string(src));
  if (v == b.num_ops()) r.fail(p + "/" + std::string(dst_field), "no node has id " + std::to_string(dst));
  if (u == v) r.fail(p, "self-loop on node " + std::to_string(src));
  b.add_edge(u, v, bytes);
}

/// Builds the graph; a structural error (a cycle, listing its nodes) fails at /edges, an
/// overflowing total at /nodes or /edges.
template <int = 0>
op_graph build_graph(const reader& r, op_graph_builder&& b) {
  try {
    return std::move(b).build();
  } catch (const graph_total_error& e) {
    r.fail("/" + e.part(), e.what());
  } catch (const graph_error& e) {
    r.fail("/edges", e.what());
  }
}

}  // namespace devplace::io::detail
