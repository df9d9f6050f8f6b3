// devplace simulate --graph G --topology T --plan P.json [--schedule gpipe|1f1b|interleaved]
//                   [--micro-batches MB] [--micro-batch-size N] [--recompute|--no-recompute]
//                   [--blocking-sends] [--dp-bucket-mb X] [--out plan.json] [--trace FILE]
// Simulates one training iteration of a mapped plan (stage_of and device_of) and writes the plan
// back with its simulation figures. Every setting defaults to the one recorded in the plan's
// `settings` (so `simulate --plan P` reproduces what `plan` printed), else to the graph's
// micro-batch size, GPipe, no recomputation. An interleaved plan (virtual_stages v > 1) runs the
// interleaved schedule over its S x v chunks.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/io/topology_json.hpp"
#include "commands/pictures.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif

namespace devplace::cli {

void register_simulate(CLI::App& app) {
  struct args_t {
    std::string graph, format = "auto", topology, plan_file, out, trace;
    std::optional<std::string> schedule;
    std::optional<std::size_t> micro_batches;
    std::optional<double> micro_batch_size, dp_bucket_mb;
    bool recompute = false, no_recompute = false, blocking_sends = false, overlapped_sends = false;
  };
  auto a = std::make_shared<args_t>();
  auto* cmd = app.add_subcommand("simulate", "Simulate one training iteration of a mapped plan");
  cmd->add_option("--graph", a->graph, "Graph file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", a->format, "Graph format")
      ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))->capture_default_str();
  cmd->add_option("--topology", a->topology, "Topology file (matrix or generator form)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--plan", a->plan_file, "Plan with stage_of and device_of")->required()->check(CLI::ExistingFile);
  cmd->add_option("--schedule", a->schedule, "Pipeline schedule [the plan's, else gpipe]")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}));
  cmd->add_option("--micro-batches", a->micro_batches, "Micro-batches per iteration [the plan's]")->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batch-size", a->micro_batch_size, "Samples per micro-batch [the plan's, else the graph's, else 1]")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dp-bucket-mb", a->dp_bucket_mb,
                  "Gradient bucket of the data-parallel allreduce, MiB, overlapped with the last backward (PyTorch DDP: 25); "
                  "0: one allreduce after it [the plan's, else 0]")
      ->check(CLI::NonNegativeNumber);
  auto* rc = cmd->add_flag("--recompute", a->recompute, "Activation recomputation (backward repeats the forward) [the plan's, else off]");
  cmd->add_flag("--no-recompute", a->no_recompute, "No activation recomputation")->excludes(rc);
  auto* bs = cmd->add_flag("--blocking-sends", a->blocking_sends,
                           "A device is busy while it sends (the p2p mapping model) [the plan's, else overlapped]");
  cmd->add_flag("--overlapped-sends", a->overlapped_sends, "Transfers run on the links, overlapped with compute")->excludes(bs);
  cmd->add_option("--out", a->out, "Write the plan with its simulation figures here");
  cmd->add_option("--trace", a->trace, "Write the simulated iteration here in the Chrome Trace Event format (Perfetto, chrome://tracing)");
  cmd->callback([a] {
    require_writable({a->out, a->trace});
    const op_graph g = io::read_graph(a->graph, a->format);
    const matrix_topology t = io::read_topology_json(a->topology);
    plan p = io::read_plan_json(a->plan_file, &g);
    if (p.device_of.empty()) throw failure(a->plan_file + ": /device_of: the plan is not mapped (run devplace map first)");
    for (std::size_t s = 0; s < p.stages; ++s)
      for (std::size_t r = 0; r < p.device_of[s].size(); ++r)
        if (p.device_of[s][r] >= t.num_devices())
          throw failure(a->plan_file + ": /device_of/" + std::to_string(s) + "/" + std::to_string(r) + ": device " +
                        std::to_string(p.device_of[s][r]) + " is not in the topology (" + std::to_string(t.num_devices()) +
                        " devices)");
    if (a->micro_batches) p.micro_batches = *a->micro_batches;
    plan_settings st = p.settings.value_or(plan_settings{.micro_batch_size = g.micro_batch_size() > 0 ? g.micro_batch_size() : 1.0});
    if (a->schedule) st.schedule = *a->schedule;
    if (a->micro_batch_size) st.micro_batch_size = *a->micro_batch_size;
    if (a->dp_bucket_mb) st.dp_bucket_bytes = *a->dp_bucket_mb * 1048576.0;
    if (a->recompute || a->no_recompute) st.recompute = a->recompute;
    if (a->blocking_sends || a->overlapped_sends) st.blocking_sends = a->blocking_sends;
    p.settings = st;
    const auto model = make_pipeline_model(g, p.stage_of, p.stages, p.device_of);
    const auto so = simulation_options_of(p);
    const auto r = simulate(model, t, so);
    p.simulation = simulation_summary{.schedule = st.schedule, .iteration_ms = r.iteration_ms,
                                      .samples_per_s = r.samples_per_s, .bubble_fraction = r.bubble_fraction};
    std::cout << "simulation      " << st.schedule << (st.recompute ? " with recomputation" : "") << ", S = " << pipeline_ranks(p)
              << ", " << replicas_text(p) << ", MB = " << p.micro_batches << " x " << st.micro_batch_size << ": "
              << simulation_line(p) << '\n';
    if (!a->out.empty()) {
      io::write_plan_json(p, a->out);
      std::cout << "written         " << a->out << '\n';
    }
    if (!a->trace.empty()) {
      write_trace(a->trace, g, t, p, model, r, so);
      std::cout << "written         " << a->trace << " (Chrome Trace Event format)\n";
    }
  });
}

}  // namespace devplace::cli
