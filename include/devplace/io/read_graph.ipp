#pragma once
/// \file io/read_graph.ipp
/// The definition of `io::read_graph` (io/read_graph.hpp): it parses JSON and PipeDream text, so it
/// is compiled where it is included and called (header-only mode: io/read_graph.hpp does not
/// include it; devplace/io.hpp does) or once in `devplace::core` (compiled mode; see config.hpp).
#include <filesystem>
#include <string>

#include "devplace/io/graph_json.hpp"
#include "devplace/io/pipedream.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/io/tarnawski.hpp"

namespace devplace::io {

/// The body of `read_graph` (io/read_graph.hpp declares this type and calls `run`).
template <int>
struct detail::read_graph_defined_in_io_read_graph_ipp {
  static op_graph run(const std::filesystem::path& path, const std::string& format) {
    const std::string file = path.string();
    if (format != "auto" && format != "devplace" && format != "pipedream" && format != "tarnawski")
      throw input_error(file, "--format", "unknown format '" + format + "' (expected auto, devplace, pipedream or tarnawski)");
    const std::string text = detail::read_text(path);
    std::string f = format;
    if (f == "auto") {
      const auto first = text.find_first_not_of(" \t\r\n");
      if (first != std::string::npos && text[first] == '{') {
        const auto doc = detail::parse_json(text, file);
        if (doc.is_object() && doc.contains("format")) return graph_from_json(doc, file);
        if (doc.is_object() && doc.contains("nodes") && doc["nodes"].is_array() &&
            (doc.contains("maxSizePerFPGA") || (!doc["nodes"].empty() && doc["nodes"][0].is_object() &&
                                                doc["nodes"][0].contains("fpgaLatency"))))
          return tarnawski_from_json(doc, file);
        throw input_error(file, "/", "unrecognised JSON graph: no \"format\" field (devplace.graph/1) and no "
                                     "Tarnawski et al. fields; pass --format");
      }
      f = "pipedream";
    }
    if (f == "devplace") return read_graph_json_text(text, file);
    if (f == "tarnawski") return tarnawski_from_json(detail::parse_json(text, file), file);
    return read_pipedream_text(text, file);
  }
};

}  // namespace devplace::io
