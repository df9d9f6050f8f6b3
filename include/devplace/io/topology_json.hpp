#pragma once
/// \file io/topology_json.hpp
/// Reads and writes device topologies in the `devplace.topology/1` JSON format: the matrix form
/// (`devices`, `bandwidth_gbps`, optional `latency_us`, optional node and NIC data) or the
/// generator form (`generator` plus its parameters, expanded by `generate_topology`). Writing
/// always produces the matrix form, with the topology's nodes and NICs.
///
/// Defined in topology_json.ipp, which this header does not include (it parses and builds JSON and
/// expands generators): header-only, a file that calls these functions includes
/// `devplace/io/topology_json.ipp` (or `devplace/io.hpp`) too; compiled mode (`devplace::core`,
/// see config.hpp) needs nothing more. A file that uses the `nlohmann::json` of
/// `topology_to_json` includes <nlohmann/json.hpp>. The functions are called as before
/// (`read_topology_json(path)`): their template parameter is never given.
#include <filesystem>
#include <string>

#include "devplace/config.hpp"
#include "devplace/io/detail/json_fwd.hpp"
#include "devplace/io/error.hpp"
#include "devplace/topology/device_limit.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::io {

inline constexpr const char* topology_format = "devplace.topology/1";

namespace detail {
/// The definitions of the functions below, in io/topology_json.ipp; where that file is not
/// included (header-only mode) and `devplace::core` not linked, a call does not compile: this type
/// is incomplete.
template <int>
struct topology_json_defined_in_io_topology_json_ipp;
}  // namespace detail

/// The topology of a parsed `devplace.topology/1` document (`file` names it in errors). `limit`: a
/// topology with more devices is an error at /shape, /devices (generator form) or /devices (matrix
/// form), found before any D x D matrix is built. Throws `input_error` (file, JSON pointer,
/// reason) on a malformed topology.
template <int N = 0>
matrix_topology topology_from_json(const nlohmann::json& doc, const std::string& file, const device_limit& limit = {}) {
  return detail::topology_json_defined_in_io_topology_json_ipp<N>::from_json(doc, file, limit);
}

/// The topology of the JSON text `text` (`file` names it in errors).
template <int N = 0>
matrix_topology read_topology_json_text(const std::string& text, const std::string& file,
                                        const device_limit& limit = {}) {
  return detail::topology_json_defined_in_io_topology_json_ipp<N>::from_text(text, file, limit);
}

/// The topology in the file `path`.
template <int N = 0>
matrix_topology read_topology_json(const std::filesystem::path& path, const device_limit& limit = {}) {
  return detail::topology_json_defined_in_io_topology_json_ipp<N>::from_file(path, limit);
}

/// The matrix form of `t` (an `nlohmann::json`): its devices, bandwidth and latency matrices, and
/// its nodes and NICs when it has them (not when a NIC has unlimited bandwidth, which JSON cannot
/// hold).
template <int N = 0>
detail::json_t<N> topology_to_json(const matrix_topology& t) {
  return detail::topology_json_defined_in_io_topology_json_ipp<N>::to_json(t);
}

/// Writes the matrix form of `t` to `path` (atomically: a reader never sees half a file).
template <int N = 0>
void write_topology_json(const matrix_topology& t, const std::filesystem::path& path) {
  detail::topology_json_defined_in_io_topology_json_ipp<N>::write(t, path);
}

}  // namespace devplace::io

#if !DEVPLACE_HEADER_ONLY
namespace devplace::io {
extern template matrix_topology topology_from_json<0>(const nlohmann::json&, const std::string&, const device_limit&);
extern template matrix_topology read_topology_json_text<0>(const std::string&, const std::string&, const device_limit&);
extern template matrix_topology read_topology_json<0>(const std::filesystem::path&, const device_limit&);
extern template nlohmann::json topology_to_json<0>(const matrix_topology&);
extern template void write_topology_json<0>(const matrix_topology&, const std::filesystem::path&);
}  // namespace devplace::io
#endif
