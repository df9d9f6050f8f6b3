#pragma once
/// \file io/atomic_write.hpp
/// `atomic_write(path, text)`: writes to a temporary file beside `path`, then renames it over
/// `path`, so a failure never leaves a half-written file. Throws `output_error`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

#include "devplace/io/error.hpp"

namespace devplace::io {

inline void atomic_write(const std::filesystem::path& path, std::string_view text) {
  namespace fs = std::filesystem;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw output_error(path.string() + ": cannot write: directory '" + dir.string() + "' does not exist");
  std::random_device rd;
  const fs::path tmp = dir / (".devplace-" + path.filename().string() + "." + std::to_string(rd()) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw output_error(path.string() + ": cannot write: cannot create a file in '" + dir.string() + "'");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      throw output_error(path.string() + ": cannot write: write failed");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignore;
    fs::remove(tmp, ignore);
    throw output_error(path.string() + ": cannot write: " + ec.message());
  }
}

}  // namespace devplace::io
