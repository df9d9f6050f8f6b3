#pragma once
// The pictures (--svg DIR) and the trace (--trace FILE) of a simulated plan, shared by `plan`
// and `simulate`; defined in pictures.cpp, which alone includes the SVG and trace writers.
#include <string>
#include <vector>

#include "devplace/dag/op_graph.hpp"
#include "devplace/plan.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::cli {

/// The files `--svg DIR` writes.
std::vector<std::string> picture_paths(const std::string& dir);

/// Writes gantt.svg, heatmap.svg and stage_graph.svg of the simulated plan into `dir`.
void write_pictures(const std::string& dir, const op_graph& g, const matrix_topology& t, const plan& p,
                    const pipeline_model& model, const simulation_result& sim, const simulation_options& o);

/// Writes the simulated iteration in the Chrome Trace Event format to `file`.
void write_trace(const std::string& file, const op_graph& g, const matrix_topology& t, const plan& p,
                 const pipeline_model& model, const simulation_result& sim, const simulation_options& o);

}  // namespace devplace::cli
