#pragma once
/// \file io/error.hpp
/// `input_error`: what every reader throws on bad input. Its message is one line,
/// "FILE: LOCATION: REASON", where LOCATION is a JSON pointer (e.g. `/nodes/17/fwd_ms`), a
/// text position (`line 12`, `line 3, column 9`) or `/` for the document as a whole.
#include <stdexcept>
#include <string>
#include <utility>

namespace devplace::io {

class input_error : public std::runtime_error {
 public:
  input_error(std::string file, std::string location, std::string reason)
      : std::runtime_error(file + ": " + location + ": " + reason),
        file_(std::move(file)), location_(std::move(location)), reason_(std::move(reason)) {}
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] const std::string& location() const noexcept { return location_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string file_, location_, reason_;
};

/// A file could not be written (the target is left untouched).
class output_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace devplace::io
