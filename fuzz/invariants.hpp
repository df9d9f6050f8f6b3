#pragma once
// Shared by the fuzz targets: the cheap algorithms run on whatever a reader accepted, with their
// invariants checked (a violated invariant aborts, which libFuzzer reports as a crash).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/algorithm/longest_path.hpp"
#include "devplace/algorithm/sources_sinks.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/io/error.hpp"
#include "devplace/partition/topo_dp.hpp"

namespace devplace::fuzz {

[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}
inline void require(bool ok, const char* what) {
  if (!ok) violated(what);
}

/// Work caps per input, so that one execution stays well under a millisecond (10^6 executions
/// per target, docs/fuzzing.md): down-sets counted, the enumerator's reachability memory, and
/// the ideals of the Tarnawski DP, the devices of a topology.
inline constexpr std::size_t max_downsets = 256;
inline constexpr std::size_t max_downset_memory = std::size_t{1} << 20;
inline constexpr std::size_t max_ideals = 256;
/// Topologies are read with this device limit (`device_limit`).
inline constexpr std::size_t max_devices = 256;

/// `devplace info` and a small partition on an accepted graph.
inline void graph_invariants(const op_graph& g) {
  const std::size_t n = g.num_vertices();
  require(sources(g).empty() == (n == 0) && sinks(g).empty() == (n == 0), "a non-empty DAG has sources and sinks");
  const auto hops = longest_path(g, unit_cost{});
  require(hops.path.size() <= n && (n == 0 || !hops.path.empty()), "longest path within the graph");
  const auto ds = count_downsets(g, {.max_downsets = max_downsets, .max_memory_bytes = max_downset_memory});
  require(ds.status == status::work_limit ? ds.count == max_downsets || ds.count == 0 : ds.count >= n + 1,
          "a DAG of n vertices has >= n + 1 down-sets");
  if (n == 0) return;
  const std::size_t S = n < 3 ? n : 3;
  const auto r = topo_dp(g, {.stages = S});
  if (!r.has_solution()) return;
  require(r.stage_of.size() == n, "stage_of covers every operator");
  for (std::size_t v = 0; v < n; ++v) {
    require(r.stage_of[v] < S, "stage index < S");
    for (auto w : devplace::out_edges(g, v)) require(r.stage_of[v] <= r.stage_of[w], "edges never go back a stage");
  }
}

/// The fuzz input as text.
inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Reads a graph with `read(text)`; a rejected input (io::input_error) ends the run, an accepted
/// one goes through `graph_invariants` and is returned.
template <class Read>
std::optional<op_graph> read_and_check_graph(const std::uint8_t* data, std::size_t size, Read read) {
  std::optional<op_graph> g;
  try {
    g = read(as_text(data, size));
  } catch (const io::input_error&) {
    return std::nullopt;
  }
  graph_invariants(*g);
  return g;
}

}  // namespace devplace::fuzz
