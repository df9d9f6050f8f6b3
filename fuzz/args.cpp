// libFuzzer target: the devplace argument layer (CLI11 with every command's options, validators
// and exclusions). The input is split at newlines into argv; the commands' callbacks are removed,
// so only parsing and validation run. A usage error (CLI::ParseError) is the expected rejection.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "commands/common.hpp"

namespace {
struct parsed {};  // thrown once the arguments are parsed and validated
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"devplace"};
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return 0;
  CLI::App app{"devplace"};
  app.require_subcommand(1);
  devplace::cli::register_all(app);
  app.parse_complete_callback([] { throw parsed{}; });
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
  } catch (const parsed&) {
  }
  return 0;
}
