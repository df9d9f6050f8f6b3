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
///
/// The readers are defined in tarnawski_instance.ipp, which this header does not include (it
/// parses JSON): header-only, a file that calls them includes `devplace/io/tarnawski_instance.ipp`
/// (or `devplace/io.hpp`) too; compiled mode (`devplace::core`, see config.hpp) needs nothing more.
/// They are called as before (`read_tarnawski_instance(path)`): their template parameter is never
/// given. The instance types need nothing more: `peers/tarnawski.hpp` uses them without JSON.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/io/detail/json_fwd.hpp"
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

namespace detail {
/// The definitions of the functions below, in io/tarnawski_instance.ipp; where that file is not
/// included (header-only mode) and `devplace::core` not linked, a call does not compile: this type
/// is incomplete.
template <int>
struct tarnawski_instance_defined_in_io_tarnawski_instance_ipp;
}  // namespace detail

/// The instance of a parsed document (`file` names it in errors). Throws `input_error`.
template <int N = 0>
tarnawski_instance tarnawski_instance_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::tarnawski_instance_defined_in_io_tarnawski_instance_ipp<N>::from_json(doc, file);
}

/// The instance in the file `path`. Throws `input_error`.
template <int N = 0>
tarnawski_instance read_tarnawski_instance(const std::filesystem::path& path) {
  return detail::tarnawski_instance_defined_in_io_tarnawski_instance_ipp<N>::from_file(path);
}

}  // namespace devplace::io

#if !DEVPLACE_HEADER_ONLY
namespace devplace::io {
extern template tarnawski_instance tarnawski_instance_from_json<0>(const nlohmann::json&, const std::string&);
extern template tarnawski_instance read_tarnawski_instance<0>(const std::filesystem::path&);
}  // namespace devplace::io
#endif
