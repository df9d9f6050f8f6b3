// devplace dfmodel --setup F.json [--out R.json]
// Runs DFModel on a setup (system + workload + mode, docs/dfmodel.md): the sharding, the
// intra-chip fusion and tile count, then prints TP/PP/DP, the II of every configuration, the
// step time, utilisation, cost and power, and writes them as devplace.dfmodel.result/1 JSON.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/dfmodel/setup.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/dfmodel/setup.ipp"  // the setup reader's and result_json's definitions (compiled mode: devplace::core)
#endif

namespace devplace::cli {

void register_dfmodel(CLI::App& app) {
  struct args_t {
    std::string setup, out;
  };
  auto args = std::make_shared<args_t>();
  auto* cmd = app.add_subcommand("dfmodel", "DFModel: step time of a workload on a system (sharding, dataflow fusion, II)");
  cmd->add_option("--setup", args->setup, "Setup file (devplace.dfmodel.setup/1 JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "Write the result (devplace.dfmodel.result/1 JSON)");
  cmd->callback([args] {
    require_writable({args->out});
    const auto s = dfmodel::read_setup_json(args->setup);
    const auto r = dfmodel::run_setup(s);
    const auto& m = r.mapping;
    if (m.status != status::optimal && m.status != status::feasible)
      throw std::runtime_error("dfmodel: no mapping fits (" + std::string(to_string(m.status)) +
                               "): every fusion exceeds SRAM or DRAM capacity");
    std::printf("setup           %s\n", s.name.empty() ? args->setup.c_str() : s.name.c_str());
    std::printf("TP PP DP        %zu %zu %zu\n", m.tp, m.pp, m.dp);
    std::printf("sharding        %.0f bytes communicated per layer\n", r.shard.bytes);
    std::printf("tiles           %lld\n", static_cast<long long>(m.num_tile));
    for (std::size_t c = 0; c < m.configs.size(); ++c) {
      const auto& f = m.configs[c];
      std::printf("config %-2zu II    %.6f ns (compute %.3f, memory %.3f, network %.3f; %zu kernels)\n", c, f.ii_ns,
                  f.compute_ns, f.memory_ns, f.network_ns, f.kernels.size());
    }
    std::printf("step time       %.9f s\n", m.final_s);
    std::printf("utilisation     %.9f\n", m.util);
    std::printf("cost            %.2f $\n", m.cost);
    std::printf("power           %.2f W\n", m.power);
    if (!args->out.empty()) {
      io::atomic_write(args->out, dfmodel::result_json(s, r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
  });
}

}  // namespace devplace::cli
