// Every command of the devplace tool, registered in the order of `devplace --help`: used by the
// tool (main.cpp) and by the argument-layer fuzz target (fuzz/args.cpp).
#include "commands/commands.hpp"

namespace devplace::cli {

void register_all(CLI::App& app) {
  register_info(app);
  register_topology(app);
  register_partition(app);
  register_simulate(app);
  register_plan(app);
  register_map(app);
  register_ilp(app);
  register_peer(app);
  register_mcm(app);
  register_dfmodel(app);
  register_phaze(app);
  register_llm(app);
  register_sweep(app);
}

}  // namespace devplace::cli
