#pragma once
// The list of commands. Add a command: write commands/<name>.hpp with
// `inline void register_<name>(CLI::App&)`, include it here and call it below.
#include "commands/common.hpp"

namespace devplace::cli {

inline void register_all(CLI::App& app) {
  (void)app;
}

}  // namespace devplace::cli
