// devplace peer tarnawski --graph F.json [--cpus C] [--fpgas F] [--max-ideals N] [--threads N] [--out R.json]
// devplace peer pipedream --graph graph.txt -n A [B ...] [-b BW1 [BW2 ...]] [--straight]
//                         [--fewer-machines] [--memory BYTES] [--compression R | --no-transfers]
//                         [--out R.json]
// devplace peer piper --graph F.json --devices K --memory-gib M [--bandwidth-gib B] [--max-sets N]
//                     [--out R.json]
// The peers' own models on their own inputs (docs/peers/): prints one line with the objective
// at 17 significant digits and, with --out, a JSON document with the objective in the peer's
// units, the state counts, the split and the wall time.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/atomic_write.hpp"
#include "devplace/io/pipedream.hpp"
#include "devplace/io/piper.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#include "devplace/peers/pipedream.hpp"
#include "devplace/peers/piper.hpp"
#include "devplace/peers/tarnawski.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/piper.ipp"  // the Piper reader's definitions (compiled mode: devplace::core)
#include "devplace/io/tarnawski_instance.ipp"  // the Tarnawski instance reader's definitions (compiled mode: devplace::core)
#endif

namespace devplace::cli {

/// A double printed with 17 significant digits (round-trips exactly).
inline std::string digits17(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

inline void write_peer_json(const std::string& out, const nlohmann::json& doc) {
  if (out.empty()) return;
  io::atomic_write(out, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  std::cout << "written " << out << '\n';
}

inline void register_peer_pipedream(CLI::App* peer) {
  struct args_t {
    std::string graph, out;
    std::vector<std::size_t> machines;
    std::vector<double> bandwidths;
    bool straight = false, fewer = false, no_transfers = false;
    double compression = 1.0, memory = 0;
  };
  auto a = std::make_shared<args_t>();
  auto* cmd = peer->add_subcommand("pipedream", "PipeDream's optimizer (optimizer_graph_hierarchical.py) on a graph.txt");
  cmd->add_option("--graph,-f", a->graph, "PipeDream profile graph.txt")->required()->check(CLI::ExistingFile);
  cmd->add_option("-n,--machines", a->machines, "Machines per level, level 1 (GPUs in a machine) first")
      ->required()->check(CLI::PositiveNumber);
  cmd->add_option("-b,--bandwidths", a->bandwidths, "Bandwidth per level, bytes/s [1e9 each]")->check(CLI::PositiveNumber);
  cmd->add_flag("--straight", a->straight, "--straight_pipeline: one machine per stage");
  cmd->add_flag("--fewer-machines", a->fewer, "--use_fewer_machines");
  cmd->add_option("--memory", a->memory, "--use_memory_constraint -s BYTES")->check(CLI::PositiveNumber);
  cmd->add_option("--compression", a->compression,
                  "--activation_compression_ratio (the reference runs use 1)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_flag("--no-transfers", a->no_transfers, "Upstream's default: no --activation_compression_ratio, transfers ignored");
  cmd->add_option("--out", a->out, "Write the result (JSON) here");
  cmd->callback([a] {
    require_writable({a->out});
    if (!a->bandwidths.empty() && a->bandwidths.size() != a->machines.size())
      throw failure("-b: give one bandwidth per level of -n (" + std::to_string(a->machines.size()) + ")");
    peers::pipedream_options o;
    for (std::size_t i = 0; i < a->machines.size(); ++i)
      o.levels.push_back({a->machines[i], a->bandwidths.empty() ? 1e9 : a->bandwidths[i]});
    o.straight = a->straight;
    o.use_fewer_machines = a->fewer;
    if (a->memory > 0) o.memory_size = a->memory;
    if (a->no_transfers) o.activation_compression_ratio.reset();
    else o.activation_compression_ratio = a->compression;
    const op_graph g = io::read_pipedream(a->graph);
    const auto r = peers::pipedream_optimize(g, o);
    if (r.status != status::optimal) throw failure("pipedream: no split fits the memory constraint");
    std::cout << "pipedream time per stage " << digits17(r.objective_s) << " s, states " << r.states << ", stages "
              << r.stages.size() << ", " << r.time_s << " s\n";
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& s : r.stages)
      stages.push_back({{"level", s.level + 1}, {"from_state", s.from_state}, {"to_state", s.to_state},
                        {"replicas", s.replicas}, {"vertices", s.vertices}});
    write_peer_json(a->out, {{"peer", "pipedream"}, {"graph", a->graph}, {"objective", r.objective_s},
                             {"objective_unit", "s per minibatch (time per stage)"}, {"states", r.states},
                             {"operators", r.vertices}, {"single_stage_s", r.single_stage_s},
                             {"data_parallel_s", r.data_parallel_s}, {"stages", stages}, {"stage_of", r.stage_of},
                             {"time_s", r.time_s}});
  });
}

inline void register_peer_tarnawski(CLI::App* peer) {
  struct args_t {
    std::string graph, out;
    std::optional<std::size_t> cpus, fpgas;
    std::uint64_t max_ideals = 5'000'000;
    unsigned threads = 1;
  };
  auto a = std::make_shared<args_t>();
  auto* cmd = peer->add_subcommand("tarnawski", "Tarnawski et al. 2020 max-load DP (throughput-dp/dp.cpp) on its JSON");
  cmd->add_option("--graph", a->graph, "Tarnawski et al. throughput instance (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--cpus", a->cpus, "Override maxCPUs");
  cmd->add_option("--fpgas", a->fpgas, "Override maxFPGAs (accelerators)");
  cmd->add_option("--max-ideals", a->max_ideals, "Stop beyond this many ideals")->capture_default_str();
  cmd->add_option("--threads", a->threads, "Workers over the ideals of one size (0: one per hardware thread); the result is the same")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Write the result (JSON) here");
  cmd->callback([a] {
    require_writable({a->out});
    const auto in = io::read_tarnawski_instance(a->graph);
    const auto r = peers::tarnawski_max_load(in, {.cpus = a->cpus, .fpgas = a->fpgas, .max_ideals = a->max_ideals, .threads = a->threads});
    if (r.status == status::work_limit)
      throw failure("tarnawski: more than " + std::to_string(a->max_ideals) + " ideals after preprocessing; raise --max-ideals");
    if (r.status != status::optimal) throw failure("tarnawski: no split has a finite load");
    std::cout << "tarnawski max-load " << digits17(r.max_load) << ", supernodes " << r.supernodes << ", ideals " << r.ideals
              << ", ideal pairs " << r.ideal_pairs << ", " << r.time_s << " s\n";
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : r.devices)
      devices.push_back({{"kind", d.cpu ? "cpu" : "accelerator"}, {"load", d.load}, {"nodes", d.nodes}});
    const auto& c = r.contraction;
    write_peer_json(a->out, {{"peer", "tarnawski"}, {"graph", a->graph}, {"objective", r.max_load},
                             {"objective_unit", "max device load, the instance's time unit (ms)"},
                             {"supernodes", r.supernodes}, {"ideals", r.ideals}, {"ideal_pairs", r.ideal_pairs},
                             {"preprocessing", {{"orphans", c.orphans}, {"mirror_edges", c.mirror_edges},
                                                {"fused_classes", c.fused_classes}, {"trivial_merges", c.trivial_merges}}},
                             {"devices", devices}, {"time_s", r.time_s}});
  });
}

inline void register_peer_piper(CLI::App* peer) {
  struct args_t {
    std::string graph, out;
    std::size_t devices = 0;
    double memory_gib = 0, bandwidth_gib = 25;
    std::uint64_t max_sets = 1'000'000;
  };
  auto a = std::make_shared<args_t>();
  auto* cmd = peer->add_subcommand("piper", "Piper's planner (algo.cpp runDP) and its equi baseline on a Piper JSON");
  cmd->add_option("--graph", a->graph, "Piper instance (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--devices,-k", a->devices, "K, the number of devices (overrides maxDevices)")->required()->check(CLI::Range(1, 10000));
  cmd->add_option("--memory-gib,-m", a->memory_gib, "M, memory per device in GiB = 2^30 bytes (overrides maxMemoryPerDevice)")
      ->required()->check(CLI::PositiveNumber);
  cmd->add_option("--bandwidth-gib", a->bandwidth_gib, "Bandwidth in GiB/s (the drivers' 25 * 2^30 B/s)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-sets", a->max_sets, "Stop beyond this many successor-closed sets")->capture_default_str();
  cmd->add_option("--out", a->out, "Write the result (JSON) here");
  cmd->callback([a] {
    const auto in = io::read_piper(a->graph);
    peers::piper_options o;
    o.devices = a->devices;
    o.memory_bytes = a->memory_gib * (1 << 30);
    o.bandwidth = a->bandwidth_gib * (1 << 30);
    o.max_sets = a->max_sets;
    const auto r = peers::piper_plan(in, o);
    if (r.status == status::work_limit)
      throw failure("piper: more than " + std::to_string(a->max_sets) + " successor-closed sets; raise --max-sets");
    if (r.status != status::optimal) throw failure("piper: no split fits in " + digits17(a->memory_gib) + " GiB per device");
    const auto equi = peers::piper_equi(in, r.params);
    const bool equi_oom = equi.tps >= peers::piper_infinity;
    std::cout << "piper TPS " << digits17(r.tps) << ", equi " << (equi_oom ? std::string("OOM") : digits17(equi.tps))
              << ", sets " << r.sets << ", set pairs " << r.set_pairs << ", stages " << r.stages.size() << ", " << r.time_s
              << " s\n";
    auto stages_json = [&](const std::vector<peers::piper_stage>& split) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& st : split) {
        nlohmann::json nodes = nlohmann::json::array(), options = nlohmann::json::array();
        for (std::size_t i = 0; i < st.nodes.size(); ++i) {
          nodes.push_back(in.nodes[st.nodes[i]].id);
          options.push_back(in.nodes[st.nodes[i]].tmpcs.at(static_cast<int>(st.t))[st.option[i]].id);
        }
        out.push_back({{"nodes", nodes}, {"options", options}, {"t", st.t}, {"d", st.d}});
      }
      return out;
    };
    nlohmann::json equi_json = nullptr;
    if (!equi_oom)
      equi_json = {{"objective", equi.tps}, {"stages", stages_json(equi.split)}, {"d", equi.d},
                   {"recomputation", equi.recomputation}};
    write_peer_json(a->out, {{"peer", "piper"}, {"graph", a->graph}, {"objective", r.tps},
                             {"objective_unit", "time per sample, the file's units (ResNet/GNMT: ms of compute + s of communication)"},
                             {"dp_value", r.dp_value}, {"devices", r.params.devices}, {"memory_bytes", r.params.memory_bytes},
                             {"bandwidth", r.params.bandwidth}, {"microbatches", r.params.microbatches},
                             {"sets", r.sets}, {"set_pairs", r.set_pairs}, {"devices_used", r.devices_used},
                             {"sum_d", r.sum_d}, {"stages", stages_json(r.stages)}, {"equi", equi_json},
                             {"time_s", r.time_s}});
  });
}

void register_peer(CLI::App& app) {
  auto* peer = app.add_subcommand("peer", "Run a peer partitioner's own model on its own input (docs/peers/)");
  peer->require_subcommand(1);
  register_peer_tarnawski(peer);
  register_peer_pipedream(peer);
  register_peer_piper(peer);
}

}  // namespace devplace::cli
