#pragma once
/// \file io/read_graph.hpp
/// `read_graph(path, format)`: reads an operator graph in any supported format.
///
/// | format        | file |
/// |---------------|------|
/// | `devplace`    | `devplace.graph/1` JSON (io/graph_json.hpp) |
/// | `pipedream`   | PipeDream `graph.txt` (io/pipedream.hpp) |
/// | `tarnawski`   | Tarnawski et al. 2020 JSON (io/tarnawski.hpp) |
/// | `auto`        | decided by content: JSON with `"format"` → devplace; JSON whose nodes carry `fpgaLatency` → tarnawski; text → pipedream |
/// Defined in read_graph.ipp, which this header does not include (it parses JSON): header-only, a
/// file that calls `read_graph` includes `devplace/io/read_graph.ipp` (or `devplace/io.hpp`) too;
/// compiled mode (`devplace::core`, see config.hpp) needs nothing more.
#include <filesystem>
#include <string>

#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io {

namespace detail {
/// The definition of `read_graph` below, in io/read_graph.ipp; where that file is not included
/// (header-only mode) and `devplace::core` not linked, a call does not compile: this type is incomplete.
template <int>
struct read_graph_defined_in_io_read_graph_ipp;
}  // namespace detail

/// Reads the operator graph in `path`; `format` is one of the table above. Throws `input_error`
/// (file, field, reason) on a missing file, an unknown format or a malformed graph.
/// Called as `read_graph(path, format)`: the template parameter is never given.
template <int N = 0>
[[nodiscard]] op_graph read_graph(const std::filesystem::path& path, const std::string& format = "auto") {
  return detail::read_graph_defined_in_io_read_graph_ipp<N>::run(path, format);
}

}  // namespace devplace::io

#if !DEVPLACE_HEADER_ONLY
namespace devplace::io {
extern template op_graph read_graph<0>(const std::filesystem::path&, const std::string&);
}  // namespace devplace::io
#endif
