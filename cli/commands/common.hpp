#pragma once
// Shared plumbing of the CLI commands.
#include <CLI/CLI.hpp>

#include <stdexcept>

namespace devplace::cli {

/// A runtime failure the user can act on (exit status 1); the message is printed as it is.
struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Defined in commands/all.hpp: registers every command.
void register_all(CLI::App& app);

}  // namespace devplace::cli

#include "commands/all.hpp"
