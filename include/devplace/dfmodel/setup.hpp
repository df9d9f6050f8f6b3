#pragma once
/// \file dfmodel/setup.hpp
/// A DFModel setup = system + workload + mode, read from `devplace.dfmodel.setup/1` JSON
/// (docs/dfmodel.md has the format), and `run_setup`: stage 1a sharding (exact search), then the
/// intra-chip pass (fusion, tile count), then step time, utilisation, cost and power. Readers
/// throw io::input_error naming the file, the JSON pointer and the reason.
///
/// The reader and `result_json` are defined in setup.ipp, which this header does not include (it
/// parses and builds JSON): header-only, a file that calls them includes
/// `devplace/dfmodel/setup.ipp` (or `devplace/dfmodel.hpp`) too; compiled mode (`devplace::core`,
/// see config.hpp) needs nothing more. A file that uses the `nlohmann::json` of `result_json`
/// includes <nlohmann/json.hpp>. They are called as before (`read_setup_json(path)`): their
/// template parameter is never given.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/dfmodel/fusion.hpp"
#include "devplace/dfmodel/network.hpp"
#include "devplace/dfmodel/sharding.hpp"
#include "devplace/dfmodel/system.hpp"
#include "devplace/dfmodel/workload.hpp"
#include "devplace/io/detail/json_fwd.hpp"
#include "devplace/io/error.hpp"
#include "devplace/status.hpp"

namespace devplace::dfmodel {

struct setup {
  std::string name;
  system sys;                ///< a dimension of size 0 is free: `run_setup` tries every size
  std::size_t chips = 0;     ///< chips of the system (needed with free dimension sizes)
  workload work;
  mapping_options mode;
};

struct run_result {
  sharding shard;
  mapping_result mapping;
  network net;               ///< the network evaluated (its sizes chosen when some were free)
};

/// Stage 1a (exhaustive, exact) then the intra-chip pass. With free dimension sizes (size 0),
/// every assignment of sizes multiplying to `chips` is evaluated (TP / PP / DP enumeration) and
/// the fastest step kept (ties: the first in `size_assignments` order).
[[nodiscard]] inline run_result run_setup(const setup& s) {
  run_result r;
  r.shard = shard_exhaustive(s.work);
  if (r.shard.status != status::optimal) {
    r.mapping.status = r.shard.status;
    return r;
  }
  const bool any_free = std::any_of(s.sys.net.dims.begin(), s.sys.net.dims.end(), [](const dimension& d) { return d.size == 0; });
  if (!any_free) {
    r.net = s.sys.net;
    r.mapping = optimise_mapping(s.work, r.shard, s.sys, s.mode);
    return r;
  }
  system sys = s.sys;
  for (const auto& net : size_assignments(s.sys.net, s.chips)) {
    sys.net = net;
    const auto dp = static_cast<std::int64_t>(degree(net, parallelism::dp));
    if (s.work.llm.global_batch % (s.work.llm.micro_batch * dp) != 0) continue;
    auto m = optimise_mapping(s.work, r.shard, sys, s.mode);
    if (m.status == status::optimal && (r.mapping.status != status::optimal || m.final_ns < r.mapping.final_ns))
      r.mapping = std::move(m), r.net = net;
  }
  return r;
}

namespace detail {
/// The definitions of the functions below, in dfmodel/setup.ipp; where that file is not included
/// (header-only mode) and `devplace::core` not linked, a call does not compile: this type is incomplete.
template <int>
struct setup_json_defined_in_dfmodel_setup_ipp;
}  // namespace detail

/// Reads a `devplace.dfmodel.setup/1` document from `text`; `file` names it in errors. Throws
/// io::input_error.
template <int N = 0>
[[nodiscard]] setup read_setup_json_text(const std::string& text, const std::string& file) {
  return detail::setup_json_defined_in_dfmodel_setup_ipp<N>::from_text(text, file);
}

/// Reads a `devplace.dfmodel.setup/1` file. Throws io::input_error.
template <int N = 0>
[[nodiscard]] setup read_setup_json(const std::filesystem::path& path) {
  return detail::setup_json_defined_in_dfmodel_setup_ipp<N>::from_file(path);
}

/// The result document (`devplace.dfmodel.result/1`, an `nlohmann::json`).
template <int N = 0>
[[nodiscard]] io::detail::json_t<N> result_json(const setup& s, const run_result& r) {
  return detail::setup_json_defined_in_dfmodel_setup_ipp<N>::result(s, r);
}

}  // namespace devplace::dfmodel

#if !DEVPLACE_HEADER_ONLY
namespace devplace::dfmodel {
extern template setup read_setup_json_text<0>(const std::string&, const std::string&);
extern template setup read_setup_json<0>(const std::filesystem::path&);
extern template nlohmann::json result_json<0>(const setup&, const run_result&);
}  // namespace devplace::dfmodel
#endif
