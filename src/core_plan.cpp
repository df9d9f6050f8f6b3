// devplace::core: the library of compiled mode (see include/devplace/config.hpp). Built with
// DEVPLACE_COMPILED, the headers only declare their heavy functions (templates called with their
// default argument) and an explicit instantiation of each; the library's translation units
// include their definitions (the .ipp files) and instantiate each once: this one the (S, R) plan
// search, the trace of a simulated iteration, the exact DP partitioner and the simulator's core,
// core_map.cpp the mapper (which the search calls, declared here), core_io.cpp the readers and
// writers, core_sweep.cpp the sweep generators. Four units, so that a build on several cores
// compiles them in parallel.
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/sim/plan_search.ipp"
#include "devplace/viz/sim_trace.hpp"
#include "devplace/viz/sim_trace.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif

namespace devplace {
template plan_search_result search_plan<0>(const op_graph&, const matrix_topology&, const plan_search_options&);
namespace detail {
template partition_result pipeline_dp_core<0>(const op_graph&, const partition_options&);
template simulation_result simulate_core<0>(const pipeline_model&, const Eigen::MatrixXd&, const Eigen::MatrixXd&,
                                            const simulation_options&, const network_nodes&);
}  // namespace detail
namespace viz {
template trace_builder simulation_trace<0>(const simulation_result&, const pipeline_model&, const simulation_options&,
                                           const device_labels&, const sim_trace_options&);
}  // namespace viz
}  // namespace devplace
