#pragma once
/// \file io/llm_json.hpp
/// Readers and writers of the LLM formats: `devplace.llm-model/1`, `devplace.llm-system/1`,
/// `devplace.llm-execution/1` (docs/llm.md), and Calculon's model, system and execution files
/// read as they are (a document without `format` whose keys are Calculon's). Bad input throws
/// `input_error` naming the file, the JSON pointer and the reason.
#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/error.hpp"
#include "devplace/llm/execution.hpp"
#include "devplace/llm/model.hpp"
#include "devplace/llm/system.hpp"

namespace devplace::io {

inline constexpr const char* llm_model_format = "devplace.llm-model/1";
inline constexpr const char* llm_system_format = "devplace.llm-system/1";
inline constexpr const char* llm_execution_format = "devplace.llm-execution/1";

namespace detail {

/// Rejects members other than `allowed` (and `format`, `name`, `units`, `source`): a misspelt
/// field is an error, not a silent default.
inline void only_fields(const reader& r, const json& doc, const std::string& ptr,
                        std::initializer_list<std::string_view> allowed) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "format" || k == "name" || k == "units" || k == "source" || k == "notes") continue;
    bool ok = false;
    for (auto a : allowed) ok = ok || k == a;
    if (!ok) r.fail(child(ptr, k), "unknown field");
  }
}

inline std::int64_t positive_int(const reader& r, const json& doc, std::string_view key, const std::string& ptr) {
  const std::string p = child(ptr, key);
  const auto x = r.integer(r.field(doc, key, ptr), p);
  if (x < 1) r.fail(p, "expected an integer >= 1, got " + std::to_string(x));
  return x;
}

inline llm::dtype parse_dtype(const reader& r, const std::string& s, const std::string& ptr) {
  if (s == "fp32" || s == "float32") return llm::dtype::fp32;
  if (s == "fp16" || s == "float16") return llm::dtype::fp16;
  if (s == "bf16" || s == "bfloat16") return llm::dtype::bf16;
  if (s == "fp8" || s == "float8") return llm::dtype::fp8;
  r.fail(ptr, "unknown datatype '" + s + "' (expected fp32, fp16, bf16 or fp8)");
}

inline llm::efficiency_table parse_table(const reader& r, const json& v, const std::string& ptr) {
  llm::efficiency_table t;
  r.array(v, ptr);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = child(ptr, i);
    const auto& row = r.array(v[i], p);
    if (row.size() != 2) r.fail(p, "expected [threshold, fraction]");
    const double x = r.non_negative(row[0], child(p, 0)), e = r.positive(row[1], child(p, 1));
    if (e > 1) r.fail(child(p, 1), "expected a fraction in (0, 1], got " + row[1].dump());
    t.rows.emplace_back(x, e);
  }
  std::sort(t.rows.begin(), t.rows.end());
  return t;
}

inline llm::model llm_model_from_json(const json& doc, const std::string& file);
inline llm::hardware llm_system_from_json(const json& doc, const std::string& file);
inline llm::execution llm_execution_from_json(const json& doc, const std::string& file);

}  // namespace detail

/// A model from a parsed document: `devplace.llm-model/1` or Calculon's model keys.
inline llm::model llm_model_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::llm_model_from_json(doc, file);
}
inline llm::hardware llm_system_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::llm_system_from_json(doc, file);
}
inline llm::execution llm_execution_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::llm_execution_from_json(doc, file);
}

inline llm::model read_llm_model(const std::filesystem::path& p) {
  llm::model m = llm_model_from_json(detail::parse_json(detail::read_text(p), p.string()), p.string());
  if (m.name.empty()) m.name = p.stem().string();
  return m;
}
inline llm::hardware read_llm_system(const std::filesystem::path& p) {
  llm::hardware s = llm_system_from_json(detail::parse_json(detail::read_text(p), p.string()), p.string());
  if (s.name.empty()) s.name = p.stem().string();
  return s;
}
inline llm::execution read_llm_execution(const std::filesystem::path& p) {
  return llm_execution_from_json(detail::parse_json(detail::read_text(p), p.string()), p.string());
}

inline nlohmann::json to_json(const llm::model& m);
inline nlohmann::json to_json(const llm::execution& e);

}  // namespace devplace::io

#include "devplace/io/detail/llm_json_impl.hpp"
