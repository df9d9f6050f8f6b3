// devplace::core, the readers and writers: graphs, plans, topologies, clusters, the peers'
// instances and DFModel setups (see core_plan.cpp for the library's translation units).
#include "devplace/dfmodel/setup.hpp"
#include "devplace/dfmodel/setup.ipp"
#include "devplace/io/read_graph.hpp"
#include "devplace/io/read_graph.ipp"
#include "devplace/io/cluster_json.hpp"
#include "devplace/io/cluster_json.ipp"
#include "devplace/io/piper.hpp"
#include "devplace/io/piper.ipp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/plan_json.ipp"
#include "devplace/io/tarnawski_instance.hpp"
#include "devplace/io/tarnawski_instance.ipp"
#include "devplace/io/topology_json.hpp"
#include "devplace/io/topology_json.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif

namespace devplace {
namespace dfmodel {
template setup read_setup_json_text<0>(const std::string&, const std::string&);
template setup read_setup_json<0>(const std::filesystem::path&);
template nlohmann::json result_json<0>(const setup&, const run_result&);
}  // namespace dfmodel
namespace io {
template op_graph read_graph<0>(const std::filesystem::path&, const std::string&);
template matrix_topology cluster_from_json<0>(const nlohmann::json&, const std::string&, const std::filesystem::path&,
                                             const device_limit&);
template matrix_topology read_cluster_json_text<0>(const std::string&, const std::string&, const std::filesystem::path&,
                                                  const device_limit&);
template matrix_topology read_cluster_json<0>(const std::filesystem::path&);
template piper_instance piper_from_json<0>(const nlohmann::json&, const std::string&);
template piper_instance read_piper<0>(const std::filesystem::path&);
template tarnawski_instance tarnawski_instance_from_json<0>(const nlohmann::json&, const std::string&);
template tarnawski_instance read_tarnawski_instance<0>(const std::filesystem::path&);
template plan plan_from_json<0>(const nlohmann::json&, const std::string&, const op_graph*);
template plan read_plan_json_text<0>(const std::string&, const std::string&, const op_graph*);
template plan read_plan_json<0>(const std::filesystem::path&, const op_graph*);
template nlohmann::json plan_to_json<0>(const plan&);
template void write_plan_json<0>(const plan&, const std::filesystem::path&);
template matrix_topology topology_from_json<0>(const nlohmann::json&, const std::string&, const device_limit&);
template matrix_topology read_topology_json_text<0>(const std::string&, const std::string&, const device_limit&);
template matrix_topology read_topology_json<0>(const std::filesystem::path&, const device_limit&);
template nlohmann::json topology_to_json<0>(const matrix_topology&);
template void write_topology_json<0>(const matrix_topology&, const std::filesystem::path&);
}  // namespace io
}  // namespace devplace
