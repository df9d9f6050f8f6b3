// devplace info --graph FILE [--format auto|devplace|pipedream|tarnawski]
// Prints the size and totals of an operator graph.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/algorithm/downsets.hpp"
#include "devplace/algorithm/longest_path.hpp"
#include "devplace/algorithm/sources_sinks.hpp"
#include "devplace/io/read_graph.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif

namespace devplace::cli {

void register_info(CLI::App& app) {
  struct args_t {
    std::string graph, format = "auto";
    std::size_t downset_cap = 10'000'000;
  };
  auto args = std::make_shared<args_t>();
  auto* cmd = app.add_subcommand("info", "Describe an operator graph: size, totals, sources, sinks, longest path, down-sets");
  cmd->add_option("--graph", args->graph, "Graph file (devplace.graph/1 JSON, PipeDream graph.txt or Tarnawski JSON)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", args->format, "Input format")
      ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))->capture_default_str();
  cmd->add_option("--downset-cap", args->downset_cap, "Stop counting fronted subgraphs (down-sets) at this many")
      ->capture_default_str();
  cmd->callback([args] {
    const op_graph g = io::read_graph(args->graph, args->format);
    double fwd = 0, bwd = 0, params = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      fwd += g.forward_ms(v);
      bwd += g.backward_ms(v);
      params += g.param_bytes(v);
    }
    const auto src = sources(g);
    const auto snk = sinks(g);
    const auto by_time = longest_path(g, [](const op_graph& gg, auto v) { return gg.compute_ms(v); });
    const auto by_hops = longest_path(g, unit_cost{});
    constexpr std::uint64_t downset_memory = 1ull << 30;
    const auto ds = count_downsets(g, {.max_downsets = args->downset_cap, .max_memory_bytes = downset_memory});
    std::cout << "graph           " << (g.name().empty() ? args->graph : g.name()) << '\n'
              << "operators       " << g.num_vertices() << '\n'
              << "edges           " << g.num_edges() << '\n'
              << "forward ms      " << fwd << '\n'
              << "backward ms     " << bwd << '\n'
              << "parameter bytes " << std::setprecision(17) << params << std::setprecision(6) << '\n'
              << "sources         " << src.size() << '\n'
              << "sinks           " << snk.size() << '\n'
              << "longest path    " << by_time.length << " ms (fwd+bwd), " << by_hops.path.size() << " operators\n"
              << "down-sets       ";
    if (ds.status == status::work_limit && ds.count == 0)
      std::cout << "not counted (the enumeration of " << g.num_vertices() << " operators would need "
                << downset_enumerator::memory_bytes(g.num_vertices()) / (1u << 20) << " MiB, over "
                << downset_memory / (1u << 20) << " MiB)\n";
    else if (ds.status == status::work_limit)
      std::cout << "more than " << args->downset_cap << " (count stopped at the cap)\n";
    else
      std::cout << ds.count << " (including the empty set)\n";
  });
}

}  // namespace devplace::cli
