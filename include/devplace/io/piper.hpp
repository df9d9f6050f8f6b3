#pragma once
/// \file io/piper.hpp
/// Reads a Piper instance (Tarnawski, Narayanan, Phanishayee, NeurIPS 2021; msr-fiddle/piper
/// `algo.cpp`, `from_json`) keeping every field its model uses. The Piper cost model itself is
/// not part of devplace yet (docs/peers/README.md); this reader is its input side.
///
/// | field | kept as |
/// |---|---|
/// | `maxMemoryPerDevice`, `maxDevices`, `bandwidth` | M (bytes), K, BW (bytes/s); the upstream drivers override them |
/// | `mbsInBatch` | N, microbatches per batch (the code reads this, not the README's `maxBatchSize`) |
/// | `nodes[].id`, `name` | renumbered 0..n−1 in file order; `name` kept |
/// | `nodes[].TMPCs` | key = tensor-parallel degree t (a string of an integer in [1, 10000]), value = options |
/// | option `id`, `timePerSample`, `parameterSize`, `memoryUsageA`, `memoryUsageB` | name, p, w, a, b |
/// | option `syncTimeFw` / `syncTimeBw` | bytes per in-/out-neighbour id: exactly the node's in-/out-neighbours |
/// | `edges[].sourceId`, `destId`, `communicationCost` | edge and its bytes |
///
/// Checks as upstream's `checkInputCorrectness`: 1 ≤ K ≤ 10,000; M, BW > 1e-9; N ≥ 1; at least
/// one node and one edge; unique ids and option ids; no duplicate edge; endpoints exist; numbers
/// ≥ 0; sync keys are exactly the neighbours; at most 2 options per (node, t) (the fast knapsack
/// heuristic). A cycle is reported by `validate_piper`'s caller (the model).
///
/// The readers are defined in piper.ipp, which this header does not include (it parses JSON):
/// header-only, a file that calls them includes `devplace/io/piper.ipp` (or `devplace/io.hpp`)
/// too; compiled mode (`devplace::core`, see config.hpp) needs nothing more. They are called as
/// before (`read_piper(path)`): their template parameter is never given. The instance types need
/// nothing more: `peers/piper_cost.hpp` and `peers/piper.hpp` use them without JSON.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/io/detail/json_fwd.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io {

struct piper_option {
  std::string id;              ///< "vanilla", "activation recomp", ...
  double time_per_sample = 0;  ///< p
  double parameter_size = 0;   ///< w, bytes
  double memory_a = 0, memory_b = 0;  ///< memory = a·y + b, bytes
  std::vector<double> sync_fw;  ///< bytes per in-edge, in the order of `piper_instance::in_edges[v]`
  std::vector<double> sync_bw;  ///< bytes per out-edge, in the order of `piper_instance::out_edges[v]`
};

struct piper_node {
  std::int64_t id = 0;  ///< the file's id
  std::string name;
  std::map<int, std::vector<piper_option>> tmpcs;  ///< t -> options (ascending t)
};

struct piper_instance {
  double max_memory_per_device = 0, bandwidth = 0;
  std::size_t max_devices = 0, mbs_in_batch = 0;
  std::vector<piper_node> nodes;                            ///< renumbered 0..n−1, file order
  std::vector<std::pair<std::size_t, std::size_t>> edges;   ///< file order
  std::vector<double> edge_bytes;                           ///< `communicationCost` per edge
  std::vector<std::vector<std::size_t>> in_edges, out_edges;  ///< edge indices per node, file order
};

namespace detail {
/// The definitions of the functions below, in io/piper.ipp; where that file is not included
/// (header-only mode) and `devplace::core` not linked, a call does not compile: this type is
/// incomplete.
template <int>
struct piper_defined_in_io_piper_ipp;
}  // namespace detail

/// The instance of a parsed document (`file` names it in errors). Throws `input_error`.
template <int N = 0>
piper_instance piper_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::piper_defined_in_io_piper_ipp<N>::from_json(doc, file);
}

/// The instance in the file `path`. Throws `input_error`.
template <int N = 0>
piper_instance read_piper(const std::filesystem::path& path) {
  return detail::piper_defined_in_io_piper_ipp<N>::from_file(path);
}

}  // namespace devplace::io

#if !DEVPLACE_HEADER_ONLY
namespace devplace::io {
extern template piper_instance piper_from_json<0>(const nlohmann::json&, const std::string&);
extern template piper_instance read_piper<0>(const std::filesystem::path&);
}  // namespace devplace::io
#endif
