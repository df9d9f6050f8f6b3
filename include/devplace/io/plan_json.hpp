#pragma once
/// \file io/plan_json.hpp
/// Reads and writes plans in the `devplace.plan/1` JSON format (docs/formats.md).
///
/// `read_plan_json(path, &g)` also checks the plan against its graph: one `stage_of` entry per
/// operator, and no edge running from a higher stage to a lower one. An interleaved plan
/// (`virtual_stages` v > 1) cuts the graph into `stages` = S · v chunks whose `device_of` rows
/// repeat every S rows (chunk c on the devices of pipeline rank c mod S); plans without the field
/// have v = 1.
///
/// Defined in plan_json.ipp, which this header does not include (it parses and builds JSON):
/// header-only, a file that calls these functions includes `devplace/io/plan_json.ipp` (or
/// `devplace/io.hpp`) too; compiled mode (`devplace::core`, see config.hpp) needs nothing more. A
/// file that uses the `nlohmann::json` of `plan_to_json` includes <nlohmann/json.hpp>. The
/// functions are called as before (`read_plan_json(path, &g)`): their template parameter is never
/// given.
#include <cstddef>
#include <filesystem>
#include <string>

#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/io/detail/json_fwd.hpp"
#include "devplace/io/error.hpp"
#include "devplace/plan.hpp"

namespace devplace::io {

inline constexpr const char* plan_format = "devplace.plan/1";
/// The most replicas per stage a plan file may ask for (2^20: far above any topology's device
/// count; a larger number is a corrupt file, not a plan).
inline constexpr std::size_t max_plan_replicas = std::size_t{1} << 20;

namespace detail {
/// The definitions of the functions below, in io/plan_json.ipp; where that file is not included
/// (header-only mode) and `devplace::core` not linked, a call does not compile: this type is incomplete.
template <int>
struct plan_json_defined_in_io_plan_json_ipp;
}  // namespace detail

/// The plan of a parsed `devplace.plan/1` document (`file` names it in errors), checked against
/// `g` when given. Throws `input_error` (file, JSON pointer, reason) on a malformed plan.
template <int N = 0>
plan plan_from_json(const nlohmann::json& doc, const std::string& file, const op_graph* g = nullptr) {
  return detail::plan_json_defined_in_io_plan_json_ipp<N>::from_json(doc, file, g);
}

/// The plan of the JSON text `text` (`file` names it in errors), checked against `g` when given.
template <int N = 0>
plan read_plan_json_text(const std::string& text, const std::string& file, const op_graph* g = nullptr) {
  return detail::plan_json_defined_in_io_plan_json_ipp<N>::from_text(text, file, g);
}

/// The plan in the file `path`, checked against `g` when given.
template <int N = 0>
plan read_plan_json(const std::filesystem::path& path, const op_graph* g = nullptr) {
  return detail::plan_json_defined_in_io_plan_json_ipp<N>::from_file(path, g);
}

/// The `devplace.plan/1` document of `p` (an `nlohmann::json`).
template <int N = 0>
detail::json_t<N> plan_to_json(const plan& p) {
  return detail::plan_json_defined_in_io_plan_json_ipp<N>::to_json(p);
}

/// Writes `p` to `path` (atomically: a reader never sees half a file).
template <int N = 0>
void write_plan_json(const plan& p, const std::filesystem::path& path) {
  detail::plan_json_defined_in_io_plan_json_ipp<N>::write(p, path);
}

}  // namespace devplace::io

#if !DEVPLACE_HEADER_ONLY
namespace devplace::io {
extern template plan plan_from_json<0>(const nlohmann::json&, const std::string&, const op_graph*);
extern template plan read_plan_json_text<0>(const std::string&, const std::string&, const op_graph*);
extern template plan read_plan_json<0>(const std::filesystem::path&, const op_graph*);
extern template nlohmann::json plan_to_json<0>(const plan&);
extern template void write_plan_json<0>(const plan&, const std::filesystem::path&);
}  // namespace devplace::io
#endif
