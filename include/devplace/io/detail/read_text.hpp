#pragma once
/// \file io/detail/read_text.hpp
/// `read_text(path)`: a whole file as a string, for the readers (JSON or not); a file that cannot
/// be opened is an `input_error`.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "devplace/io/error.hpp"

namespace devplace::io::detail {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path.string(), "/", "cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace devplace::io::detail
