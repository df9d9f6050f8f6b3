// Partition a profiled model three ways and compare: the fixed-order DP, the exact DP over all
// down-sets, and the Parmesan flow (cluster, DP, refine).
//
//   ./build/examples/example_partition_a_model [graph.json] [stages]
#include <devplace/io/read_graph.hpp>
#include <devplace/partition/parmesan.hpp>
#include <devplace/partition/pipeline_dp.hpp>
#include <devplace/partition/topo_dp.hpp>
#if DEVPLACE_HEADER_ONLY
#include <devplace/io/read_graph.ipp>  // io::read_graph's definition (compiled mode: devplace::core)
#endif

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : std::string(DEVPLACE_EXAMPLES_DIR) + "/data/inception_v3_mbs32.json";
  const std::size_t stages = argc > 2 ? std::stoul(argv[2]) : 4;
  try {
    const devplace::op_graph g = devplace::io::read_graph(file);
    const devplace::partition_options opt{.stages = stages, .cost = {.replicas = 2, .micro_batches = 4}};

    const auto fixed = devplace::topo_dp(g, opt);
    const auto exact = devplace::pipeline_dp(g, opt);
    const auto flow = devplace::parmesan_partition(g, {.partition = opt, .clusters = 32});

    std::cout << g.name() << ": " << g.num_vertices() << " operators, S = " << stages << ", R = 2\n"
              << "  fixed-order DP   " << fixed.objective_ms << " ms\n"
              << "  exact DP         " << exact.objective_ms << " ms (" << devplace::to_string(exact.status) << ", "
              << exact.downsets << " down-sets)\n"
              << "  Parmesan flow    " << flow.objective_ms << " ms\n";
    return exact.objective_ms <= fixed.objective_ms ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
