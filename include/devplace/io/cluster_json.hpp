#pragma once
/// \file io/cluster_json.hpp
/// Reads a cluster description, `devplace.cluster/1`: N nodes x G devices, the intra-node links
/// (one bandwidth, one `nvidia-smi topo -m` link kind, or a whole `nvidia-smi topo -m` file) and
/// the inter-node bandwidth; expands it to a `matrix_topology` (device i = device i mod G of
/// node i / G).
///
///   { "format": "devplace.cluster/1", "name": "4x DGX-A100", "nodes": 4,
///     "intra": { "nvidia_smi": "dgx_a100.topo.txt" },     // or {"link": "NV12"}, {"gbps": 300}
///     "devices_per_node": 8,                             // required unless intra.nvidia_smi
///     "inter_gbps": 25, "inter_latency_us": 5, "intra_latency_us": 0,
///     "nvlink_gbps": 25, "pcie_gbps": 31.5, "memory_bytes": 85899345920,
///     "nic_gbps": 25, "nics_per_node": 1 }                 // optional: the nodes' shared NICs
///
/// With `nic_gbps` every node gets `nics_per_node` (default 1) NICs of that bandwidth, shared by
/// its devices' transfers to other nodes (`matrix_topology::set_nodes`); without it the
/// inter-node links are independent, as before.
/// A relative `nvidia_smi` path is taken from the cluster file's directory.
///
/// The readers are defined in cluster_json.ipp, which this header does not include (it parses
/// JSON and nvidia-smi output): header-only, a file that calls them includes
/// `devplace/io/cluster_json.ipp` (or `devplace/io.hpp`) too; compiled mode (`devplace::core`,
/// see config.hpp) needs nothing more. They are called as before (`read_cluster_json(path)`):
/// their template parameter is never given.
#include <filesystem>
#include <string>

#include "devplace/config.hpp"
#include "devplace/io/detail/json_fwd.hpp"
#include "devplace/io/error.hpp"
#include "devplace/topology/device_limit.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::io {

inline constexpr const char* cluster_format = "devplace.cluster/1";

namespace detail {
/// The definitions of the functions below, in io/cluster_json.ipp; where that file is not
/// included (header-only mode) and `devplace::core` not linked, a call does not compile: this type
/// is incomplete.
template <int>
struct cluster_json_defined_in_io_cluster_json_ipp;
}  // namespace detail

/// The topology of a parsed `devplace.cluster/1` document (`file` names it in errors; a relative
/// `nvidia_smi` path is taken from `base_dir`). `limit`: a cluster of more devices (nodes x
/// devices per node) is an error at /nodes, before any matrix is built (as for the generator form
/// of `devplace.topology/1`).
template <int N = 0>
matrix_topology cluster_from_json(const nlohmann::json& doc, const std::string& file,
                                  const std::filesystem::path& base_dir = {}, const device_limit& limit = {}) {
  return detail::cluster_json_defined_in_io_cluster_json_ipp<N>::from_json(doc, file, base_dir, limit);
}

/// The topology of the JSON text `text`.
template <int N = 0>
matrix_topology read_cluster_json_text(const std::string& text, const std::string& file,
                                       const std::filesystem::path& base_dir = {}, const device_limit& limit = {}) {
  return detail::cluster_json_defined_in_io_cluster_json_ipp<N>::from_text(text, file, base_dir, limit);
}

/// Reads a `devplace.cluster/1` file and expands it to the matrix form.
template <int N = 0>
matrix_topology read_cluster_json(const std::filesystem::path& path) {
  return detail::cluster_json_defined_in_io_cluster_json_ipp<N>::from_file(path);
}

}  // namespace devplace::io

#if !DEVPLACE_HEADER_ONLY
namespace devplace::io {
extern template matrix_topology cluster_from_json<0>(const nlohmann::json&, const std::string&,
                                                    const std::filesystem::path&, const device_limit&);
extern template matrix_topology read_cluster_json_text<0>(const std::string&, const std::string&,
                                                         const std::filesystem::path&, const device_limit&);
extern template matrix_topology read_cluster_json<0>(const std::filesystem::path&);
}  // namespace devplace::io
#endif
