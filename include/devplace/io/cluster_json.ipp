#pragma once
/// \file io/cluster_json.ipp
/// The definitions of io/cluster_json.hpp's readers: they parse JSON (and nvidia-smi output), so
/// they are compiled where this file is included and they are called (header-only mode:
/// io/cluster_json.hpp does not include it; devplace/io.hpp does) or once in `devplace::core`
/// (compiled mode; see config.hpp).
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "devplace/io/cluster_json.hpp"
#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/nvidia_smi.hpp"
#include "devplace/topology/generators.hpp"

namespace devplace::io {

/// The bodies of the functions its header declares (it declares this type and calls its members).
template <int>
struct detail::cluster_json_defined_in_io_cluster_json_ipp {
  static matrix_topology from_json(const nlohmann::json& doc, const std::string& file, const std::filesystem::path& base_dir,
                                   const device_limit& limit) {
    const detail::reader r(file);
    r.object(doc, "");
    r.format(doc, cluster_format);
    r.units(doc, {{"bandwidth", "GB/s"}, {"latency", "us"}, {"memory", "bytes"}});
    auto opt_positive = [&](const char* key, double dflt) {
      const auto* x = detail::reader::optional(doc, key);
      return x ? r.positive(*x, detail::child("", key)) : dflt;
    };
    auto opt_non_negative = [&](const char* key, double dflt) {
      const auto* x = detail::reader::optional(doc, key);
      return x ? r.non_negative(*x, detail::child("", key)) : dflt;
    };
    const auto nodes = r.count(r.field(doc, "nodes", ""), "/nodes");
    if (nodes < 1) r.fail("/nodes", "expected an integer >= 1, got 0");
    if (nodes > 4096) r.fail("/nodes", "at most 4096 nodes, got " + std::to_string(nodes));
    nvidia_smi_options o;
    o.nvlink_gbps = opt_positive("nvlink_gbps", o.nvlink_gbps);
    o.pcie_gbps = opt_positive("pcie_gbps", o.pcie_gbps);
    o.memory_bytes = opt_positive("memory_bytes", o.memory_bytes);
    o.latency_us = opt_non_negative("intra_latency_us", 0.0);
    const double inter = r.positive(r.field(doc, "inter_gbps", ""), "/inter_gbps");
    const double inter_latency = opt_non_negative("inter_latency_us", 0.0);

    const auto& intra = r.object(r.field(doc, "intra", ""), "/intra");
    if (intra.size() != 1) r.fail("/intra", "expected exactly one of nvidia_smi, link, gbps");
    const auto* per_node = detail::reader::optional(doc, "devices_per_node");
    matrix_topology node;
    if (const auto* f = detail::reader::optional(intra, "nvidia_smi")) {
      std::filesystem::path p = r.string(*f, "/intra/nvidia_smi");
      if (p.is_relative()) p = base_dir / p;
      node = read_nvidia_smi_topo(p, o);
      if (per_node && r.count(*per_node, "/devices_per_node") != node.num_devices())
        r.fail("/devices_per_node", "is " + per_node->dump() + " but " + p.string() + " lists " +
                                        std::to_string(node.num_devices()) + " GPUs");
    } else {
      if (!per_node) r.fail("/devices_per_node", "missing required field (needed unless intra.nvidia_smi is given)");
      const auto g = r.count(*per_node, "/devices_per_node");
      if (g < 1 || g > 4096) r.fail("/devices_per_node", "expected an integer in 1..4096, got " + per_node->dump());
      if (nodes * g > limit.max) r.fail("/nodes", limit.message(static_cast<std::size_t>(nodes * g), true));
      double gbps = 0;
      if (const auto* k = detail::reader::optional(intra, "link")) {
        const std::string kind = r.string(*k, "/intra/link");
        const auto b = nvidia_smi_link_gbps(kind, o);
        if (!b) r.fail("/intra/link", "unknown link kind '" + kind + "' (expected NV#, PIX, PXB, PHB, NODE or SYS)");
        gbps = *b;
      } else if (const auto* b = detail::reader::optional(intra, "gbps")) {
        gbps = r.positive(*b, "/intra/gbps");
      } else {
        r.fail("/intra", "expected one of nvidia_smi, link, gbps, got '" + intra.begin().key() + "'");
      }
      const auto n = static_cast<Eigen::Index>(g);
      Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(n, n, gbps), lat = Eigen::MatrixXd::Constant(n, n, o.latency_us);
      for (Eigen::Index i = 0; i < n; ++i) bw(i, i) = lat(i, i) = 0;
      node = matrix_topology(std::move(bw), std::move(lat), std::vector<double>(g, o.memory_bytes));
      std::vector<std::string> names;
      for (std::size_t i = 0; i < g; ++i) names.push_back("gpu" + std::to_string(i));
      node.set_device_names(std::move(names));
      node.set_name("node");
    }
    if (nodes * node.num_devices() > limit.max) r.fail("/nodes", limit.message(static_cast<std::size_t>(nodes * node.num_devices()), true));
    auto t = replicate_nodes(node, nodes, inter, inter_latency);
    if (const auto* nic = detail::reader::optional(doc, "nic_gbps")) {
      const double gbps = r.positive(*nic, "/nic_gbps");
      std::size_t k = 1;
      if (const auto* c = detail::reader::optional(doc, "nics_per_node")) {
        k = static_cast<std::size_t>(r.count(*c, "/nics_per_node"));
        if (k < 1 || k > 4096) r.fail("/nics_per_node", "expected an integer in 1..4096, got " + c->dump());
      }
      std::vector<std::size_t> node_of(t.num_devices());
      for (std::size_t d = 0; d < node_of.size(); ++d) node_of[d] = d / node.num_devices();
      t.set_nodes(std::move(node_of), std::vector<std::size_t>(nodes, k), std::vector<double>(nodes, gbps));
    } else if (detail::reader::optional(doc, "nics_per_node")) {
      r.fail("/nics_per_node", "needs nic_gbps, the bandwidth of each NIC");
    }
    if (const auto* name = detail::reader::optional(doc, "name")) t.set_name(r.string(*name, "/name"));
    return t;
  }

  static matrix_topology from_text(const std::string& text, const std::string& file, const std::filesystem::path& base_dir,
                                   const device_limit& limit) {
    return from_json(detail::parse_json(text, file), file, base_dir, limit);
  }

  static matrix_topology from_file(const std::filesystem::path& path) {
    return from_text(detail::read_text(path), path.string(), path.parent_path(), {});
  }
};

}  // namespace devplace::io
