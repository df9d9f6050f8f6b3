#pragma once
/// \file io/tarnawski_instance.ipp
/// The definitions of io/tarnawski_instance.hpp's readers: they parse JSON, so they are compiled
/// where this file is included and they are called (header-only mode: io/tarnawski_instance.hpp
/// does not include it; devplace/io.hpp does) or once in `devplace::core` (compiled mode; see
/// config.hpp).
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/tarnawski_instance.hpp"

namespace devplace::io {

/// The bodies of the functions its header declares (it declares this type and calls its members).
template <int>
struct detail::tarnawski_instance_defined_in_io_tarnawski_instance_ipp {
  static tarnawski_instance from_json(const nlohmann::json& doc, const std::string& file) {
    const detail::reader r(file);
    r.object(doc, "");
    tarnawski_instance in;
    in.max_size_per_fpga = r.non_negative(r.field(doc, "maxSizePerFPGA", ""), "/maxSizePerFPGA");
    in.max_fpgas = r.count(r.field(doc, "maxFPGAs", ""), "/maxFPGAs");
    in.max_cpus = r.count(r.field(doc, "maxCPUs", ""), "/maxCPUs");
    const auto& nodes = r.array(r.field(doc, "nodes", ""), "/nodes");
    detail::node_id_index index(r);
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const std::string p = detail::child("/nodes", k);
      const auto& n = r.object(nodes[k], p);
      tarnawski_node t;
      t.id = index.add(n, p);
      if (const auto* x = detail::reader::optional(n, "name")) t.name = r.string(*x, p + "/name");
      t.supported_on_fpga = r.boolean(r.field(n, "supportedOnFpga", p), p + "/supportedOnFpga");
      t.fpga_latency = r.non_negative(r.field(n, "fpgaLatency", p), p + "/fpgaLatency");
      t.cpu_latency = r.non_negative(r.field(n, "cpuLatency", p), p + "/cpuLatency");
      if (const auto* x = detail::reader::optional(n, "size")) t.size = r.non_negative(*x, p + "/size");
      t.backward = r.boolean(r.field(n, "isBackwardNode", p), p + "/isBackwardNode");
      if (const auto* x = detail::reader::optional(n, "colorClass")) t.color_class = r.integer(*x, p + "/colorClass");
      if (detail::reader::optional(n, "containedSubnodes")) r.fail(p + "/containedSubnodes", "not supported (upstream fails too)");
      in.nodes.push_back(std::move(t));
    }
    in.output_cost.assign(in.nodes.size(), 0.0);
    std::vector<bool> has_cost(in.nodes.size(), false);
    const auto& edges = r.array(r.field(doc, "edges", ""), "/edges");
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const std::string p = detail::child("/edges", k);
      const auto& e = r.object(edges[k], p);
      const auto [src, dst, from, to] = index.edge(e, p);
      const double cost = r.non_negative(r.field(e, "cost", p), p + "/cost");
      if (in.nodes[from].backward && !in.nodes[to].backward)
        r.fail(p, "edge from a backward node to a forward node (" + std::to_string(src) + " -> " + std::to_string(dst) + ")");
      if (!has_cost[from]) {
        has_cost[from] = true;
        in.output_cost[from] = cost;
      } else if (std::abs(in.output_cost[from] - cost) > 1e-6) {
        r.fail(p + "/cost", "node " + std::to_string(src) + " has out-edges of different cost (" +
                                std::to_string(in.output_cost[from]) + " and " + std::to_string(cost) + ")");
      }
      in.edges.push_back({from, to});
    }
    return in;
  }

  static tarnawski_instance from_file(const std::filesystem::path& path) {
    const std::string file = path.string();
    return from_json(detail::parse_json(detail::read_text(path), file), file);
  }
};

}  // namespace devplace::io
