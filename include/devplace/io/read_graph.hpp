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
[[nodiscard]] DEVPLACE_INLINE op_graph read_graph(const std::filesystem::path& path, const std::string& format = "auto");

}  // namespace devplace::io

#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"
#endif
