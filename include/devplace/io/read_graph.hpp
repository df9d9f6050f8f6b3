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
/// Defined in read_graph.ipp: inline in header-only mode, compiled once by `devplace::core` in
/// compiled mode, where this header includes no JSON (see config.hpp).
#include <filesystem>
#include <string>

#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io {

/// Reads the operator graph in `path`; `format` is one of the table above. Throws `input_error`
/// (file, field, reason) on a missing file, an unknown format or a malformed graph.
/// Called as `read_graph(path, format)`: the template parameter is never given, it only makes a
/// translation unit compile the readers where it calls this, not where it includes the header.
template <int = 0>
[[nodiscard]] op_graph read_graph(const std::filesystem::path& path, const std::string& format = "auto");

}  // namespace devplace::io

#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"
#else
namespace devplace::io {
extern template op_graph read_graph<0>(const std::filesystem::path&, const std::string&);
}  // namespace devplace::io
#endif
