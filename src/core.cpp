// devplace::core: the library of compiled mode (see include/devplace/config.hpp). Built with
// DEVPLACE_COMPILED, the headers below only declare their heavy functions (templates called with
// their default argument) and an explicit instantiation of each; this translation unit includes
// their definitions (the .ipp files) and instantiates them once.
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
#include "devplace/map/mapper.hpp"
#include "devplace/map/mapper.ipp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/sim/plan_search.ipp"

#if DEVPLACE_HEADER_ONLY
#error "devplace::core must be compiled with DEVPLACE_COMPILED"
#endif

namespace devplace {
template mapping_result map_devices<0>(const stage_graph&, const link_costs&, const mapper_options&);
namespace dfmodel {
template setup read_setup_json_text<0>(const std::string&, const std::string&);
template setup read_setup_json<0>(const std::filesystem::path&);
template nlohmann::json result_json<0>(const setup&, const run_result&);
}  // namespace dfmodel
template plan_search_result search_plan<0>(const op_graph&, const matrix_topology&, const plan_search_options&);
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
