#pragma once
// The list of commands. Add a command: write commands/<name>.hpp with
// `inline void register_<name>(CLI::App&)`, include it here and call it below.
#include "commands/common.hpp"
#include "commands/dfmodel.hpp"
#include "commands/ilp.hpp"
#include "commands/llm.hpp"
#include "commands/info.hpp"
#include "commands/map.hpp"
#include "commands/mcm.hpp"
#include "commands/partition.hpp"
#include "commands/phaze.hpp"
#include "commands/peer.hpp"
#include "commands/plan.hpp"
#include "commands/simulate.hpp"
#include "commands/sweep.hpp"
#include "commands/topology.hpp"

namespace devplace::cli {

inline void register_all(CLI::App& app) {
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
