// devplace: the command-line tool.
#include <CLI/CLI.hpp>

#include "devplace/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"devplace: place DNN training onto multi-device systems"};
  app.set_version_flag("--version", DEVPLACE_VERSION_STRING);
  app.require_subcommand(0, 1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
