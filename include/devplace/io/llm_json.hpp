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
#include "devplace/io/detail/llm_json_impl.hpp"
#include "devplace/io/error.hpp"
#include "devplace/llm/execution.hpp"
#include "devplace/llm/model.hpp"
#include "devplace/llm/system.hpp"

namespace devplace::io {


/// A model from a parsed document: `devplace.llm-model/1` or Calculon's model keys.
template <int = 0>
llm::model llm_model_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::llm_model_from_json(doc, file);
}
template <int = 0>
llm::hardware llm_system_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::llm_system_from_json(doc, file);
}
template <int = 0>
llm::execution llm_execution_from_json(const nlohmann::json& doc, const std::string& file) {
  return detail::llm_execution_from_json(doc, file);
}

template <int = 0>
llm::model read_llm_model(const std::filesystem::path& p) {
  llm::model m = llm_model_from_json(detail::parse_json(detail::read_text(p), p.string()), p.string());
  if (m.name.empty()) m.name = p.stem().string();
  return m;
}
template <int = 0>
llm::hardware read_llm_system(const std::filesystem::path& p) {
  llm::hardware s = llm_system_from_json(detail::parse_json(detail::read_text(p), p.string()), p.string());
  if (s.name.empty()) s.name = p.stem().string();
  return s;
}
template <int = 0>
llm::execution read_llm_execution(const std::filesystem::path& p) {
  return llm_execution_from_json(detail::parse_json(detail::read_text(p), p.string()), p.string());
}


}  // namespace devplace::io
