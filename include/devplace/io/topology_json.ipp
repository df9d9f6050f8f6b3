#pragma once
/// \file io/topology_json.ipp
/// The definitions of io/topology_json.hpp's readers and writer: they parse and build JSON and
/// expand the generator form, so they are compiled where this file is included and they are called
/// (header-only mode: io/topology_json.hpp does not include it; devplace/io.hpp does) or once in
/// `devplace::core` (compiled mode; see config.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "devplace/io/atomic_write.hpp"
#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/topology_json.hpp"
#include "devplace/topology/generators.hpp"

namespace devplace::io::detail {

template <int = 0>
Eigen::MatrixXd read_square(const reader& r, const json& v, const std::string& ptr, std::size_t n,
                                   bool positive_off_diagonal) {
  r.array(v, ptr);
  if (v.size() != n)
    r.fail(ptr, "expected " + std::to_string(n) + " rows (one per device), got " + std::to_string(v.size()));
  Eigen::MatrixXd m(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const std::string rp = child(ptr, i);
    r.array(v[i], rp);
    if (v[i].size() != n)
      r.fail(rp, "expected " + std::to_string(n) + " entries (the matrix must be square), got " +
                     std::to_string(v[i].size()));
    for (std::size_t j = 0; j < n; ++j) {
      const std::string ep = child(rp, j);
      double x;
      if (i == j) x = r.number(v[i][j], ep);  // the diagonal is ignored, but must be a number
      else if (positive_off_diagonal) x = r.positive(v[i][j], ep);
      else x = r.non_negative(v[i][j], ep);
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = i == j ? 0.0 : x;
    }
  }
  return m;
}

/// One value per node of a topology document's `key`: a number for every node, or an array with
/// one entry per node (the form written for nodes that differ).
template <class Read>
auto per_node_values(const reader& r, const nlohmann::json& v, const char* key, std::size_t nodes, Read read_one) {
  using value = decltype(read_one(v, std::string()));
  const std::string ptr = child("", key);
  if (!v.is_array()) return std::vector<value>(nodes, read_one(v, ptr));
  if (v.size() != nodes)
    r.fail(ptr, "expected " + std::to_string(nodes) + " entries (one per node), got " + std::to_string(v.size()));
  std::vector<value> out;
  for (std::size_t n = 0; n < nodes; ++n) out.push_back(read_one(v[n], child(ptr, n)));
  return out;
}

/// The optional shared NICs of a topology document: `nic_gbps` (> 0) per NIC, `nics_per_node`
/// (default 1), each a number or one entry per node, and the nodes: the matrix form's per-device
/// `node` fields (`device_node`, empty when the devices carry none), else `devices_per_node`
/// (device d is on node d / G; default `per_node`, 0 = none).
template <int = 0>
void read_nics(const reader& r, const nlohmann::json& doc, matrix_topology& t, std::size_t per_node,
                      std::vector<std::size_t> device_node = {}) {
  const auto* nic = reader::optional(doc, "nic_gbps");
  if (!nic) {
    for (const char* key : {"nics_per_node", "devices_per_node"})
      if (reader::optional(doc, key)) r.fail(child("", key), "needs nic_gbps, the bandwidth of each NIC");
    if (!device_node.empty()) r.fail("/devices/0/node", "needs nic_gbps, the bandwidth of each NIC");
    return;
  }
  const std::size_t D = t.num_devices();
  std::vector<std::size_t> node_of = std::move(device_node);
  if (!node_of.empty()) {
    if (reader::optional(doc, "devices_per_node"))
      r.fail("/devices_per_node", "not with the devices' node fields (give one or the other)");
  } else {
    if (const auto* x = reader::optional(doc, "devices_per_node")) {
      per_node = static_cast<std::size_t>(r.count(*x, "/devices_per_node"));
      if (per_node < 1) r.fail("/devices_per_node", "expected an integer >= 1");
    }
    if (per_node == 0) r.fail("/devices_per_node", "missing required field (needed with nic_gbps for this topology)");
    node_of.resize(D);
    for (std::size_t d = 0; d < D; ++d) node_of[d] = d / per_node;
  }
  const std::size_t nodes = D == 0 ? 0 : *std::max_element(node_of.begin(), node_of.end()) + 1;
  const auto gbps = per_node_values(r, *nic, "nic_gbps", nodes,
                                    [&](const nlohmann::json& v, const std::string& ptr) { return r.positive(v, ptr); });
  std::vector<std::size_t> nics(nodes, 1);
  if (const auto* x = reader::optional(doc, "nics_per_node"))
    nics = per_node_values(r, *x, "nics_per_node", nodes, [&](const nlohmann::json& v, const std::string& ptr) {
      const auto k = r.count(v, ptr);
      if (k < 1 || k > 4096) r.fail(ptr, "expected an integer in 1..4096, got " + v.dump());
      return static_cast<std::size_t>(k);
    });
  t.set_nodes(std::move(node_of), std::move(nics), gbps);
}

/// The node data of `t` in the matrix form, as read_nics reads it back: `nic_gbps`,
/// `nics_per_node` and `devices_per_node` when the nodes are alike and hold consecutive devices,
/// else a `node` per device and one `nic_gbps` / `nics_per_node` entry per node. Nodes whose NICs
/// have no bandwidth limit (+inf, which JSON cannot hold) are written without node data.
template <int = 0>
void write_nics(const matrix_topology& t, nlohmann::json& doc) {
  const std::size_t D = t.num_devices();
  if (!t.has_nodes() || D == 0) return;
  std::size_t nodes = 0;
  for (std::size_t d = 0; d < D; ++d) nodes = std::max(nodes, t.node_of(d) + 1);
  std::vector<double> gbps(nodes);
  std::vector<std::size_t> nics(nodes);
  for (std::size_t n = 0; n < nodes; ++n) {
    gbps[n] = t.nic_bandwidth_gbps(n), nics[n] = t.nic_count(n);
    if (!std::isfinite(gbps[n])) return;
  }
  std::size_t G = 0;
  while (G < D && t.node_of(G) == 0) ++G;
  bool alike = std::adjacent_find(gbps.begin(), gbps.end(), std::not_equal_to<>()) == gbps.end() &&
               std::adjacent_find(nics.begin(), nics.end(), std::not_equal_to<>()) == nics.end();
  for (std::size_t d = 0; alike && d < D; ++d) alike = t.node_of(d) == d / G;
  if (alike) {
    doc["nic_gbps"] = gbps[0];
    doc["nics_per_node"] = nics[0];
    doc["devices_per_node"] = G;
    return;
  }
  for (std::size_t d = 0; d < D; ++d) doc["devices"][d]["node"] = t.node_of(d);
  doc["nic_gbps"] = gbps;
  doc["nics_per_node"] = nics;
}

/// The bodies of io/topology_json.hpp's functions (the header declares this type and calls its members).
template <int>
struct topology_json_defined_in_io_topology_json_ipp {
  static matrix_topology from_json(const nlohmann::json& doc, const std::string& file, const device_limit& limit) {
    const reader r(file);
    r.object(doc, "");
    r.format(doc, topology_format);
    r.units(doc, {{"bandwidth", "GB/s"}, {"latency", "us"}, {"memory", "bytes"}});
    if (const auto* gen = reader::optional(doc, "generator")) {
      generator_spec s;
      s.generator = r.string(*gen, "/generator");
      if (const auto* x = reader::optional(doc, "shape")) {
        r.array(*x, "/shape");
        for (std::size_t k = 0; k < x->size(); ++k) {
          const auto v = r.count((*x)[k], child("/shape", k));
          if (v == 0) r.fail(child("/shape", k), "expected an integer >= 1");
          s.shape.push_back(static_cast<std::size_t>(v));
        }
      }
      if (const auto* x = reader::optional(doc, "devices")) s.devices = static_cast<std::size_t>(r.count(*x, "/devices"));
      if (const auto* x = reader::optional(doc, "seed")) s.seed = r.count(*x, "/seed");
      if (const auto* x = reader::optional(doc, "memory_bytes")) s.memory_bytes = r.positive(*x, "/memory_bytes");
      if (const auto* x = reader::optional(doc, "latency_us")) s.latency_us = r.non_negative(*x, "/latency_us");
      if (const auto* x = reader::optional(doc, "intra_gbps")) s.intra_gbps = r.positive(*x, "/intra_gbps");
      if (const auto* x = reader::optional(doc, "inter_gbps")) s.inter_gbps = r.positive(*x, "/inter_gbps");
      try {
        auto t = generate_topology(s, limit);
        const std::size_t per_node = s.generator == "dgx1" || s.generator == "dgx1_cluster" ? 8
                                     : s.generator == "two_level" ? t.num_devices() / (s.shape.empty() ? 4 : s.shape[0])
                                                                  : 0;
        read_nics(r, doc, t, per_node);
        if (const auto* name = reader::optional(doc, "name")) t.set_name(r.string(*name, "/name"));
        return t;
      } catch (const spec_error& e) {
        r.fail("/" + e.field(), e.what());
      }
    }
    const auto& devices = r.array(r.field(doc, "devices", ""), "/devices");
    const std::size_t n = devices.size();
    if (n == 0) r.fail("/devices", "expected at least one device");
    if (n > limit.max) r.fail("/devices", limit.message(n, true));
    std::vector<double> memory(n);
    std::vector<std::string> names(n);
    std::vector<std::size_t> node(n);
    std::size_t with_node = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::string p = child("/devices", k);
      const auto& d = r.object(devices[k], p);
      const auto id = r.integer(r.field(d, "id", p), p + "/id");
      if (id != static_cast<std::int64_t>(k))
        r.fail(p + "/id", "expected id " + std::to_string(k) + " (ids are 0..D-1 in order), got " + std::to_string(id));
      memory[k] = r.positive(r.field(d, "memory_bytes", p), p + "/memory_bytes");
      if (const auto* x = reader::optional(d, "name")) names[k] = r.string(*x, p + "/name");
      if (const auto* x = reader::optional(d, "node")) {
        node[k] = static_cast<std::size_t>(r.count(*x, p + "/node"));
        if (node[k] >= n) r.fail(p + "/node", "expected a node index below the device count " + std::to_string(n));
        ++with_node;
      } else if (with_node > 0) {
        r.fail(p + "/node", "missing (device 0 has a node: every device needs one)");
      }
    }
    Eigen::MatrixXd bw = read_square(r, r.field(doc, "bandwidth_gbps", ""), "/bandwidth_gbps", n, true);
    Eigen::MatrixXd lat = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    if (const auto* x = reader::optional(doc, "latency_us"))
      lat = read_square(r, *x, "/latency_us", n, false);
    matrix_topology t(std::move(bw), std::move(lat), std::move(memory));
    if (const auto* name = reader::optional(doc, "name")) t.set_name(r.string(*name, "/name"));
    bool any_name = false;
    for (const auto& s : names) any_name = any_name || !s.empty();
    if (any_name) t.set_device_names(std::move(names));
    if (with_node > 0 && with_node < n) r.fail("/devices/0/node", "only some devices have a node: every device needs one");
    read_nics(r, doc, t, 0, with_node > 0 ? std::move(node) : std::vector<std::size_t>{});
    return t;
  }

  static matrix_topology from_text(const std::string& text, const std::string& file, const device_limit& limit) {
    return from_json(parse_json(text, file), file, limit);
  }

  static matrix_topology from_file(const std::filesystem::path& path, const device_limit& limit) {
    return from_text(read_text(path), path.string(), limit);
  }

  static nlohmann::json to_json(const matrix_topology& t) {
    nlohmann::json doc;
    doc["format"] = topology_format;
    doc["name"] = t.name();
    doc["units"] = {{"bandwidth", "GB/s"}, {"latency", "us"}, {"memory", "bytes"}};
    const std::size_t n = t.num_devices();
    auto& devices = doc["devices"] = nlohmann::json::array();
    for (std::size_t d = 0; d < n; ++d) {
      nlohmann::json dev{{"id", d}, {"memory_bytes", t.device_memory_bytes(d)}};
      if (!t.device_names().empty()) dev["name"] = t.device_names()[d];
      devices.push_back(std::move(dev));
    }
    auto& bw = doc["bandwidth_gbps"] = nlohmann::json::array();
    auto& lat = doc["latency_us"] = nlohmann::json::array();
    for (std::size_t a = 0; a < n; ++a) {
      nlohmann::json brow = nlohmann::json::array(), lrow = nlohmann::json::array();
      for (std::size_t b = 0; b < n; ++b) {
        brow.push_back(a == b ? 0.0 : t.bandwidth_gbps(a, b));
        lrow.push_back(a == b ? 0.0 : t.latency_us(a, b));
      }
      bw.push_back(std::move(brow));
      lat.push_back(std::move(lrow));
    }
    write_nics(t, doc);
    return doc;
  }

  static void write(const matrix_topology& t, const std::filesystem::path& path) {
    atomic_write(path, to_json(t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
};

}  // namespace devplace::io::detail
