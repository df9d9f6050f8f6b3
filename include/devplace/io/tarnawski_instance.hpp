#pragma once
/// \file io/tarnawski_instance.hpp
/// Reads a Tarnawski et al. 2020 throughput instance (msr-fiddle/dnn-partitioning JSON) keeping
/// every field the authors' max-load DP uses (`throughput-dp/dp.cpp`), unlike `io::read_tarnawski`,
/// which maps the graph onto an `op_graph`:
///
/// | field | kept as |
/// |---|---|
/// | `maxSizePerFPGA`, `maxFPGAs`, `maxCPUs` | memory cap per accelerator (bytes), F, C |
/// | `nodes[].id`, `name` | id (any integer, unique), name (optional) |
/// | `fpgaLatency`, `cpuLatency` | times on an accelerator / a CPU (one time unit, ms in all shipped files) |
/// | `supportedOnFpga` | bool or 0/1 |
/// | `isBackwardNode` | bool or 0/1, required |
/// | `size` | bytes, optional (0) |
/// | `colorClass` | integer, optional: absent = a class of its own |
/// | `edges[].sourceId`, `destId`, `cost` | the edge and the transfer *time* of the source's output |
///
/// The `cost` of a node's output is the first `cost` of its out-edges; another out-edge of the
/// same node with a cost differing by more than 1e-6 is an error (as upstream). Edge `size` is
/// not used by the model and not read. Errors name the file, the JSON pointer and the reason.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io {

struct tarnawski_node {
  std::int64_t id = 0;
  std::string name;
  double fpga_latency = 0, cpu_latency = 0, size = 0;
  bool supported_on_fpga = true, backward = false;
  std::optional<std::int64_t> color_class;  ///< absent: a class of its own
};

struct tarnawski_edge {
  std::size_t from = 0, to = 0;  ///< indices into `nodes`
};

struct tarnawski_instance {
  double max_size_per_fpga = 0;  ///< bytes
  std::size_t max_fpgas = 0, max_cpus = 0;
  std::vector<tarnawski_node> nodes;
  std::vector<tarnawski_edge> edges;  ///< in file order, duplicates kept
  std::vector<double> output_cost;    ///< per node: transfer time of its output (0 without out-edges)
};

inline tarnawski_instance tarnawski_instance_from_json(const nlohmann::json& doc, const std::string& file) {
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

inline tarnawski_instance read_tarnawski_instance(const std::filesystem::path& path) {
  const std::string file = path.string();
  return tarnawski_instance_from_json(detail::parse_json(detail::read_text(path), file), file);
}

}  // namespace devplace::io
