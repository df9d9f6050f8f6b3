#pragma once
// The commands of the devplace tool. Each lives in commands/<name>.cpp, its own translation unit,
// and defines `register_<name>`, which adds its subcommand to the application; main.cpp calls them
// in the order of `devplace --help`. Add a command: write commands/<name>.cpp, declare its
// register function here, call it in commands/all.cpp and list the file in cli/sources.cmake.
#include <stdexcept>

namespace CLI {
class App;
}  // namespace CLI

namespace devplace::cli {

/// A runtime failure the user can act on (exit status 1); the message is printed as it is.
struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void register_info(CLI::App& app);
void register_topology(CLI::App& app);
void register_partition(CLI::App& app);
void register_simulate(CLI::App& app);
void register_plan(CLI::App& app);
void register_map(CLI::App& app);
void register_ilp(CLI::App& app);
void register_peer(CLI::App& app);
void register_mcm(CLI::App& app);
void register_dfmodel(CLI::App& app);
void register_phaze(CLI::App& app);
void register_llm(CLI::App& app);
void register_sweep(CLI::App& app);

/// Every command above, in the order of `devplace --help` (commands/all.cpp).
void register_all(CLI::App& app);

}  // namespace devplace::cli
