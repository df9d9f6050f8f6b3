// devplace: the command-line tool. Each command lives in cli/commands/<name>.cpp, a translation unit
// of its own, and provides `void register_<name>(CLI::App& app)` (declared in commands/commands.hpp),
// which adds a subcommand whose callback does the work.
// Exit status: 0 success, 1 runtime failure (bad input file, infeasible request), 2 bad usage.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>

#include "devplace/io/atomic_write.hpp"
#include "devplace/version.hpp"
#include "commands/commands.hpp"

namespace {

/// Input files and directories checked by CLI11's ExistingFile / ExistingDirectory: a missing one is
/// a runtime failure (exit status 1, docs/cli.md), not bad usage. Wraps every such check, in
/// every subcommand, so that its failure throws `devplace::cli::failure` instead of a parse error.
void missing_paths_are_failures(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    for (int i = 0;; ++i) {
      CLI::Validator* v = nullptr;
      try {
        v = opt->get_validator(i);
      } catch (const CLI::OptionNotFound&) {
        break;
      }
      const std::string kind = v->get_description();  // CLI::ExistingFile is "FILE", ExistingDirectory "DIR"
      if (kind != "FILE" && kind != "DIR") continue;
      const CLI::Validator check = *v;
      const std::string flag = opt->get_name();
      *v = CLI::Validator(
          [check, flag](std::string& path) -> std::string {
            std::string value = path;
            const std::string error = check(value);
            if (!error.empty()) throw devplace::cli::failure(flag + ": " + error);
            return {};
          },
          kind);
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) missing_paths_are_failures(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  devplace::io::remove_temp_files_on_signals();  // SIGINT/SIGTERM leave no partial output
  CLI::App app{"devplace: place DNN training onto multi-device systems"};
  app.set_version_flag("--version", DEVPLACE_VERSION_STRING);
  app.require_subcommand(1);
  devplace::cli::register_all(app);
  missing_paths_are_failures(app);
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
