#pragma once
// devplace simulate --graph G --topology T --plan P.json [--schedule gpipe|1f1b]
//                   [--micro-batches MB] [--micro-batch-size N] [--recompute] [--out plan.json]
// Simulates one training iteration of a mapped plan (stage_of and device_of) and writes the plan
// back with its simulation figures.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands/common.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/io/topology_json.hpp"
#include "devplace/sim/pipeline_simulator.hpp"

namespace devplace::cli {

inline void register_simulate(CLI::App& app) {
  struct args_t {
    std::string graph, format = "auto", topology, plan_file, schedule = "gpipe", out;
    std::optional<std::size_t> micro_batches;
    double micro_batch_size = 1;
    bool recompute = false;
  };
  auto a = std::make_shared<args_t>();
  auto* cmd = app.add_subcommand("simulate", "Simulate one training iteration of a mapped plan");
  cmd->add_option("--graph", a->graph, "Graph file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", a->format, "Graph format")
      ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))->capture_default_str();
  cmd->add_option("--topology", a->topology, "Topology file (matrix or generator form)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--plan", a->plan_file, "Plan with stage_of and device_of")->required()->check(CLI::ExistingFile);
  cmd->add_option("--schedule", a->schedule, "Pipeline schedule")->check(CLI::IsMember({"gpipe", "1f1b"}))->capture_default_str();
  cmd->add_option("--micro-batches", a->micro_batches, "Micro-batches per iteration [the plan's]")->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batch-size", a->micro_batch_size, "Samples per micro-batch")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_flag("--recompute", a->recompute, "Activation recomputation (backward repeats the forward)");
  cmd->add_option("--out", a->out, "Write the plan with its simulation figures here");
  cmd->callback([a] {
    const op_graph g = io::read_graph(a->graph, a->format);
    const matrix_topology t = io::read_topology_json(a->topology);
    plan p = io::read_plan_json(a->plan_file, &g);
    if (p.device_of.empty()) throw failure(a->plan_file + ": /device_of: the plan is not mapped (run devplace map first)");
    for (std::size_t s = 0; s < p.stages; ++s)
      for (std::size_t r = 0; r < p.replicas; ++r)
        if (p.device_of[s][r] >= t.num_devices())
          throw failure(a->plan_file + ": /device_of/" + std::to_string(s) + "/" + std::to_string(r) + ": device " +
                        std::to_string(p.device_of[s][r]) + " is not in the topology (" + std::to_string(t.num_devices()) +
                        " devices)");
    if (a->micro_batches) p.micro_batches = *a->micro_batches;
    const auto model = make_pipeline_model(g, p.stage_of, p.stages, p.device_of);
    const simulation_options o{.micro_batches = p.micro_batches, .micro_batch_size = a->micro_batch_size,
                               .schedule = a->schedule == "1f1b" ? pipeline_schedule::one_f_one_b : pipeline_schedule::gpipe,
                               .recompute = a->recompute};
    const auto r = simulate(model, t, o);
    p.simulation = simulation_summary{.schedule = a->schedule, .iteration_ms = r.iteration_ms,
                                      .samples_per_s = r.samples_per_s, .bubble_fraction = r.bubble_fraction};
    std::cout << "simulation      " << a->schedule << ", S = " << p.stages << ", R = " << p.replicas
              << ", MB = " << p.micro_batches << ": iteration " << r.iteration_ms << " ms, " << r.samples_per_s
              << " samples/s, bubble " << r.bubble_fraction << '\n';
    if (!a->out.empty()) {
      io::write_plan_json(p, a->out);
      std::cout << "written         " << a->out << '\n';
    }
  });
}

}  // namespace devplace::cli
