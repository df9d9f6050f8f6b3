// devplace: the command-line tool. Each command lives in cli/commands/<name>.hpp and provides
// `void register_<name>(CLI::App& app)`, which adds a subcommand whose callback does the work.
// Exit status: 0 success, 1 runtime failure (bad input file, infeasible request), 2 bad usage.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "devplace/io/atomic_write.hpp"
#include "devplace/version.hpp"
#include "commands/common.hpp"

int main(int argc, char** argv) {
  devplace::io::remove_temp_files_on_signals();  // SIGINT/SIGTERM leave no partial output
  CLI::App app{"devplace: place DNN training onto multi-device systems"};
  app.set_version_flag("--version", DEVPLACE_VERSION_STRING);
  app.require_subcommand(1);
  devplace::cli::register_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const devplace::cli::failure& e) {
    std::cerr << "devplace: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "devplace: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
