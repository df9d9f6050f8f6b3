#pragma once
/// \file io/piper.ipp
/// The definitions of io/piper.hpp's readers: they parse JSON, so they are compiled where this
/// file is included and they are called (header-only mode: io/piper.hpp does not include it;
/// devplace/io.hpp does) or once in `devplace::core` (compiled mode; see config.hpp).
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/piper.hpp"

namespace devplace::io {

namespace detail {

template <int = 0>
std::vector<double> piper_sync(const reader& r, const json& obj, const std::string& p,
                                      const std::vector<std::size_t>& edge_ids, bool incoming,
                                      const piper_instance& in) {
  r.object(obj, p);
  std::vector<double> out(edge_ids.size(), 0.0);
  std::size_t seen = 0;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string kp = child(p, it.key());
    std::int64_t nb = 0;
    try {
      std::size_t used = 0;
      nb = std::stoll(it.key(), &used);
      if (used != it.key().size()) throw std::invalid_argument("");
    } catch (const std::exception&) {
      r.fail(kp, "expected a node id as the key");
    }
    bool found = false;
    for (std::size_t k = 0; k < edge_ids.size(); ++k) {
      const auto [u, v] = in.edges[edge_ids[k]];
      if (in.nodes[incoming ? u : v].id == nb) { out[k] = r.non_negative(*it, kp); found = true; }
    }
    if (!found) r.fail(kp, std::string("node ") + it.key() + " is not an " + (incoming ? "in" : "out") + "-neighbour");
    ++seen;
  }
  if (seen != edge_ids.size())
    r.fail(p, "expected one entry per " + std::string(incoming ? "in" : "out") + "-neighbour (" +
                  std::to_string(edge_ids.size()) + "), got " + std::to_string(seen));
  return out;
}

}  // namespace detail

/// The bodies of the functions its header declares (it declares this type and calls its members).
template <int>
struct detail::piper_defined_in_io_piper_ipp {
  static piper_instance from_json(const nlohmann::json& doc, const std::string& file) {
    const detail::reader r(file);
    r.object(doc, "");
    piper_instance in;
    in.max_memory_per_device = r.number(r.field(doc, "maxMemoryPerDevice", ""), "/maxMemoryPerDevice");
    if (!(in.max_memory_per_device > 1e-9)) r.fail("/maxMemoryPerDevice", "expected a number > 1e-9");
    in.max_devices = r.count(r.field(doc, "maxDevices", ""), "/maxDevices");
    if (in.max_devices < 1 || in.max_devices > 10000) r.fail("/maxDevices", "expected an integer in [1, 10000]");
    in.bandwidth = r.number(r.field(doc, "bandwidth", ""), "/bandwidth");
    if (!(in.bandwidth > 1e-9)) r.fail("/bandwidth", "expected a number > 1e-9");
    in.mbs_in_batch = r.count(r.field(doc, "mbsInBatch", ""), "/mbsInBatch");
    if (in.mbs_in_batch < 1) r.fail("/mbsInBatch", "expected an integer >= 1");
    const auto& nodes = r.array(r.field(doc, "nodes", ""), "/nodes");
    if (nodes.empty()) r.fail("/nodes", "expected at least one node");
    detail::node_id_index index(r);
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const std::string p = detail::child("/nodes", k);
      piper_node n;
      n.id = index.add(r.object(nodes[k], p), p);
      if (const auto* x = detail::reader::optional(nodes[k], "name")) n.name = r.string(*x, p + "/name");
      in.nodes.push_back(std::move(n));
    }
    const auto& edges = r.array(r.field(doc, "edges", ""), "/edges");
    if (edges.empty()) r.fail("/edges", "expected at least one edge");
    in.in_edges.assign(in.nodes.size(), {});
    in.out_edges.assign(in.nodes.size(), {});
    std::set<std::pair<std::size_t, std::size_t>> seen;
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const std::string p = detail::child("/edges", k);
      const auto& e = r.object(edges[k], p);
      const auto ends = index.edge(e, p);
      const double bytes = r.non_negative(r.field(e, "communicationCost", p), p + "/communicationCost");
      if (!seen.emplace(ends.from, ends.to).second)
        r.fail(p, "duplicate edge " + std::to_string(ends.source_id) + " -> " + std::to_string(ends.dest_id));
      in.out_edges[ends.from].push_back(in.edges.size());
      in.in_edges[ends.to].push_back(in.edges.size());
      in.edges.emplace_back(ends.from, ends.to);
      in.edge_bytes.push_back(bytes);
    }
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const std::string p = detail::child("/nodes", k) + "/TMPCs";
      const auto& t = r.object(r.field(nodes[k], "TMPCs", detail::child("/nodes", k)), p);
      for (auto it = t.begin(); it != t.end(); ++it) {
        const std::string tp = detail::child(p, it.key());
        int deg = 0;
        try {
          std::size_t used = 0;
          deg = std::stoi(it.key(), &used);
          if (used != it.key().size()) throw std::invalid_argument("");
        } catch (const std::exception&) {
          r.fail(tp, "expected a tensor-parallel degree (an integer) as the key");
        }
        if (deg < 1 || deg > 10000) r.fail(tp, "tensor-parallel degree out of [1, 10000]");
        const auto& opts = r.array(*it, tp);
        if (opts.size() > 2) r.fail(tp, "at most 2 options per degree (upstream's fast knapsack heuristic)");
        auto& list = in.nodes[k].tmpcs[deg];
        for (std::size_t o = 0; o < opts.size(); ++o) {
          const std::string op = detail::child(tp, o);
          const auto& x = r.object(opts[o], op);
          piper_option po;
          po.id = r.string(r.field(x, "id", op), op + "/id");
          for (const auto& q : list)
            if (q.id == po.id) r.fail(op + "/id", "duplicate option id '" + po.id + "'");
          po.time_per_sample = r.non_negative(r.field(x, "timePerSample", op), op + "/timePerSample");
          po.parameter_size = r.non_negative(r.field(x, "parameterSize", op), op + "/parameterSize");
          po.memory_a = r.non_negative(r.field(x, "memoryUsageA", op), op + "/memoryUsageA");
          po.memory_b = r.non_negative(r.field(x, "memoryUsageB", op), op + "/memoryUsageB");
          po.sync_fw = detail::piper_sync(r, r.field(x, "syncTimeFw", op), op + "/syncTimeFw", in.in_edges[k], true, in);
          po.sync_bw = detail::piper_sync(r, r.field(x, "syncTimeBw", op), op + "/syncTimeBw", in.out_edges[k], false, in);
          list.push_back(std::move(po));
        }
      }
    }
    return in;
  }

  static piper_instance from_file(const std::filesystem::path& path) {
    const std::string file = path.string();
    return from_json(detail::parse_json(detail::read_text(path), file), file);
  }
};

}  // namespace devplace::io
