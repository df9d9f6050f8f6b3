#pragma once
/// \file phaze/cores_json.hpp
/// Reads PHAZE's `Estimator/arch_configs/cores.json` (seed-phaze.md §7.1): a JSON array of
/// `{num_tc, num_vc, width, depth, width_vc, GLB_Buffer (bytes), area}`. Bad input throws
/// `io::input_error` naming the file, the JSON pointer and the reason.
#include <filesystem>
#include <string>
#include <vector>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/phaze/architecture.hpp"

namespace devplace::phaze {

namespace detail {

/// One `{num_tc, num_vc, width, depth, width_vc, GLB_Buffer, area}` object at pointer `p`;
/// `width_vc` and `area` may be left out when `optional_extras`.
template <int = 0>
core_config read_core_entry(const io::detail::reader& r, const io::detail::json& e, const std::string& p,
                                   bool optional_extras) {
  r.object(e, p);
  auto power_of_two = [&](const char* key) {
    const auto q = io::detail::child(p, key);
    const auto v = r.count(r.field(e, key, p), q);
    if (v == 0 || (v & (v - 1)) != 0) r.fail(q, "expected a power of two, got " + std::to_string(v));
    return static_cast<std::size_t>(v);
  };
  core_config c{.num_tc = power_of_two("num_tc"), .num_vc = power_of_two("num_vc"), .pe_x = power_of_two("width"),
                .pe_y = power_of_two("depth")};
  if ((!optional_extras || io::detail::reader::optional(e, "width_vc")) && power_of_two("width_vc") != c.pe_x)
    r.fail(io::detail::child(p, "width_vc"), "PHAZE's template needs width_vc = width");
  c.glb_bytes = r.positive(r.field(e, "GLB_Buffer", p), io::detail::child(p, "GLB_Buffer"));
  if (!optional_extras || io::detail::reader::optional(e, "area"))
    c.area = r.positive(r.field(e, "area", p), io::detail::child(p, "area"));
  return c;
}

}  // namespace detail

/// The configurations of a cores.json document `text` (`file` names it in errors), in order.
template <int = 0>
[[nodiscard]] std::vector<core_config> read_cores_json_text(const std::string& text, const std::string& file) {
  const io::detail::reader r(file);
  const auto doc = io::detail::parse_json(text, file);
  r.array(doc, "");
  std::vector<core_config> out;
  out.reserve(doc.size());
  for (std::size_t i = 0; i < doc.size(); ++i) out.push_back(detail::read_core_entry(r, doc[i], io::detail::child("", i), false));
  return out;
}

/// The configurations of a cores.json file, in file order.
template <int = 0>
[[nodiscard]] std::vector<core_config> read_cores_json(const std::filesystem::path& path) {
  return read_cores_json_text(io::detail::read_text(path), path.string());
}

/// An accelerator description: one cores.json object (`width_vc`, `area` optional), e.g.
/// `{"num_tc": 8, "num_vc": 2, "width": 128, "depth": 128, "GLB_Buffer": 134217728}`.
template <int = 0>
[[nodiscard]] core_config read_accelerator_json_text(const std::string& text, const std::string& file) {
  const io::detail::reader r(file);
  return detail::read_core_entry(r, io::detail::parse_json(text, file), "", true);
}

/// The same from a file.
template <int = 0>
[[nodiscard]] core_config read_accelerator_json(const std::filesystem::path& path) {
  return read_accelerator_json_text(io::detail::read_text(path), path.string());
}

/// The area table of a list of configurations.
template <int = 0>
[[nodiscard]] area_table make_area_table(const std::vector<core_config>& configs) {
  area_table t;
  for (const auto& c : configs) t.add(c);
  return t;
}

}  // namespace devplace::phaze
