// The pictures (--svg DIR) and the trace (--trace FILE) of a simulated plan, shared by `plan`
// and `simulate`.
#include <filesystem>
#include <string>
#include <vector>

#include "commands/common.hpp"
#include "commands/pictures.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/io/atomic_write.hpp"
#include "devplace/plan.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/matrix_topology.hpp"
#include "devplace/viz/gantt.hpp"
#include "devplace/viz/heatmap.hpp"
#include "devplace/viz/labels.hpp"
#include "devplace/viz/sim_trace.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/viz/sim_trace.ipp"  // simulation_trace's definition (compiled mode: devplace::core)
#endif
#include "devplace/viz/stage_graph.hpp"

namespace devplace::cli {

/// The files `--svg DIR` writes.
std::vector<std::string> picture_paths(const std::string& dir) {
  const std::filesystem::path d = dir;
  return {(d / "gantt.svg").string(), (d / "heatmap.svg").string(), (d / "stage_graph.svg").string()};
}

/// "bert_large_mbs4 on dgx1_cluster (32 devices), S = 4, R = 8".
namespace {

std::string picture_title(const op_graph& g, const matrix_topology& t, const plan& p) {
  return g.name() + " on " + (t.name().empty() ? "the topology" : t.name()) + " (" + std::to_string(t.num_devices()) +
         " devices), S = " + std::to_string(pipeline_ranks(p)) + ", " + replicas_text(p);
}

}  // namespace

/// Writes gantt.svg, heatmap.svg and stage_graph.svg of the simulated plan into `dir`.
void write_pictures(const std::string& dir, const op_graph& g, const matrix_topology& t, const plan& p,
                    const pipeline_model& model, const simulation_result& sim, const simulation_options& o) {
  const auto labels = viz::make_device_labels(t);
  const std::string title = picture_title(g, t, p);
  std::vector<std::size_t> operators(p.stages, 0);
  for (auto s : p.stage_of) ++operators[s];
  const auto paths = picture_paths(dir);
  io::atomic_write(paths[0], viz::gantt_svg(sim, model, o, labels, {.title = title}));
  io::atomic_write(paths[1], viz::heatmap_svg(t, p.device_of, labels, 
                                          {.title = "Bandwidth of " + t.name() + " and the stages of " + g.name() + ", S = " +
                                                    std::to_string(pipeline_ranks(p)) + ", " + replicas_text(p)}));
  io::atomic_write(paths[2], viz::stage_graph_svg(model, labels, {.title = title, .operators = operators, .virtual_stages = o.virtual_stages}));
}

/// Writes the simulated iteration in the Chrome Trace Event format to `file`.
void write_trace(const std::string& file, const op_graph& g, const matrix_topology& t, const plan& p,
                 const pipeline_model& model, const simulation_result& sim, const simulation_options& o) {
  io::atomic_write(file, viz::simulation_trace(sim, model, o, viz::make_device_labels(t), {.title = picture_title(g, t, p)}).str());
}

}  // namespace devplace::cli
