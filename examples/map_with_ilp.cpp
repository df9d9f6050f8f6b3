// Map a partitioned model onto a DGX-1 twice — with the backtracking mapper and as a MILP — and
// write the MILP in the LP format for any other solver.
//
//   ./build/examples/example_map_with_ilp [graph.json] [model.lp]
//
// The MILP is solved with GLPK when this program was built against devplace::glpk.
#include <devplace/ilp/builders/mapping.hpp>
#include <devplace/ilp/lp_writer.hpp>
#include <devplace/io/read_graph.hpp>
#include <devplace/map/mapper.hpp>
#include <devplace/partition/topo_dp.hpp>
#include <devplace/topology/generators.hpp>
#if DEVPLACE_HEADER_ONLY
#include <devplace/io/read_graph.ipp>  // io::read_graph's definition (compiled mode: devplace::core)
#endif
#ifdef DEVPLACE_HAS_GLPK
#include <devplace/ilp/backends/glpk.hpp>
#endif

#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : std::string(DEVPLACE_EXAMPLES_DIR) + "/data/bert_large_mbs4.json";
  const std::filesystem::path lp =
      argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path() / "devplace_mapping.lp";
  try {
    const devplace::op_graph g = devplace::io::read_graph(file);
    const auto part = devplace::topo_dp(g, {.stages = 4, .cost = {.replicas = 2}});
    const auto sg = devplace::make_stage_graph(g, part.stage_of, 4, 2);
    const auto topology = devplace::dgx1();

    const auto mapper = devplace::map_devices(sg, topology, {.cost = devplace::cost_choice::p2p, .threads = 2, .timeout_s = 30});
    std::cout << g.name() << " in 4 stages x 2 replicas on a DGX-1 (p2p cost model)\n"
              << "  mapper  " << mapper.objective_ms << " ms (" << devplace::to_string(mapper.status) << ")\n";

    const auto milp = devplace::ilp::build_mapping_ilp(sg, topology, {.cost = devplace::cost_choice::p2p});
    devplace::ilp::write_lp(lp, milp.model());
    std::cout << "  MILP    " << milp.model().num_vars() << " columns, " << milp.model().num_rows() << " rows, written to "
              << lp.string() << '\n';
#ifdef DEVPLACE_HAS_GLPK
    const auto r = milp.decode(devplace::ilp::glpk_solver{}.solve(milp.model(), {.time_limit_s = 60}));
    std::cout << "  GLPK    " << r.objective_ms << " ms (" << devplace::to_string(r.status) << ")\n";
    if (r.optimal && mapper.optimal && std::abs(r.objective_ms - mapper.objective_ms) > 1e-6 * mapper.objective_ms) return 1;
#endif
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
