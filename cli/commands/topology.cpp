// devplace topology --spec FILE --out FILE
// devplace topology --generator NAME [--shape A B ...] [--devices D] [--seed N] ... --out FILE
// devplace topology --nvidia-smi FILE [--nodes N --inter-gbps X] [--nvlink-gbps X] [--pcie-gbps X] ... --out FILE
// devplace topology --cluster FILE --out FILE
// Expands a topology (generator form or matrix form) to the matrix form of devplace.topology/1.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/cluster_json.hpp"
#include "devplace/io/nvidia_smi.hpp"
#include "devplace/io/topology_json.hpp"
#include "devplace/topology/generators.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/cluster_json.ipp"  // the cluster reader's definitions (compiled mode: devplace::core)
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif

namespace devplace::cli {

inline void print_topology_summary(const matrix_topology& t, std::ostream& os) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (std::size_t a = 0; a < t.num_devices(); ++a)
    for (std::size_t b = 0; b < t.num_devices(); ++b)
      if (a != b) {
        lo = std::min(lo, t.bandwidth_gbps(a, b));
        hi = std::max(hi, t.bandwidth_gbps(a, b));
      }
  os << "topology        " << t.name() << '\n' << "devices         " << t.num_devices() << '\n';
  if (t.num_devices() > 1) os << "bandwidth GB/s  " << lo << " .. " << hi << '\n';
}

void register_topology(CLI::App& app) {
  struct args_t {
    std::string spec, out, generator, nvidia_smi, cluster;
    std::vector<std::size_t> shape;
    std::optional<std::size_t> devices, nodes;
    std::optional<double> nvlink_gbps, pcie_gbps;
    std::optional<std::uint64_t> seed;
    std::optional<double> memory_bytes, latency_us, intra_gbps, inter_gbps;
  };
  auto a = std::make_shared<args_t>();
  auto* cmd = app.add_subcommand("topology", "Expand a topology (generator or matrix form) into the matrix form");
  auto* spec = cmd->add_option("--spec", a->spec, "Topology file (devplace.topology/1, either form)")
                   ->check(CLI::ExistingFile);
  auto* gen = cmd->add_option("--generator", a->generator,
                              "Generator: two_level, dgx1, dgx1_cluster, mesh2d, torus2d, mesh3d, torus3d, "
                              "random_blk_1, random_blk_2, uniform_dist");
  auto* nvsmi = cmd->add_option("--nvidia-smi", a->nvidia_smi,
                                "The text of `nvidia-smi topo -m` (one node; bandwidth per link kind in docs/topology.md)")
                   ->check(CLI::ExistingFile);
  auto* cluster = cmd->add_option("--cluster", a->cluster,
                                  "Cluster description (devplace.cluster/1: nodes x devices, intra link, inter bandwidth)")
                      ->check(CLI::ExistingFile);
  const std::vector<CLI::Option*> sources{spec, gen, nvsmi, cluster};
  for (auto* x : sources)
    for (auto* y : sources)
      if (x != y) x->excludes(y);
  cmd->add_option("--nodes", a->nodes, "Copies of the --nvidia-smi node, linked at --inter-gbps [1]")->needs(nvsmi);
  cmd->add_option("--nvlink-gbps", a->nvlink_gbps, "One NVLink, one direction (--nvidia-smi) [25]")->needs(nvsmi);
  cmd->add_option("--pcie-gbps", a->pcie_gbps, "A PCIe x16 link, one direction (--nvidia-smi) [15.75, Gen3]")->needs(nvsmi);
  cmd->add_option("--shape", a->shape, "Generator shape, e.g. --shape 8 8")->expected(1, 3)->needs(gen);
  cmd->add_option("--devices", a->devices, "Number of devices (random generators)")->needs(gen);
  cmd->add_option("--seed", a->seed, "Seed (random generators)")->needs(gen);
  auto* mem = cmd->add_option("--memory-bytes", a->memory_bytes, "Memory of every device [32 GiB]");
  auto* lat = cmd->add_option("--latency-us", a->latency_us, "Latency of every pair [0]");
  cmd->add_option("--intra-gbps", a->intra_gbps, "Intra-node bandwidth (two_level)")->needs(gen);
  auto* inter = cmd->add_option("--inter-gbps", a->inter_gbps, "Inter-node bandwidth (two_level, dgx1_cluster, --nvidia-smi)");
  cmd->add_option("--out", a->out, "Output file (matrix form)")->required();
  cmd->callback([a, mem, lat, inter] {
    for (auto* o : {mem, lat, inter})
      if (o->count() > 0 && a->generator.empty() && a->nvidia_smi.empty())
        throw CLI::ValidationError(o->get_name(), "needs --generator or --nvidia-smi");
    require_writable({a->out});
    matrix_topology t;
    if (!a->nvidia_smi.empty()) {
      io::nvidia_smi_options o;
      if (a->nvlink_gbps) o.nvlink_gbps = *a->nvlink_gbps;
      if (a->pcie_gbps) o.pcie_gbps = *a->pcie_gbps;
      if (a->memory_bytes) o.memory_bytes = *a->memory_bytes;
      if (a->latency_us) o.latency_us = *a->latency_us;
      for (auto [v, flag] : {std::pair{o.nvlink_gbps, "--nvlink-gbps"}, {o.pcie_gbps, "--pcie-gbps"},
                             {o.memory_bytes, "--memory-bytes"}})
        if (!(v > 0) || !std::isfinite(v)) throw failure(std::string(flag) + ": expected a number > 0");
      if (!(o.latency_us >= 0) || !std::isfinite(o.latency_us)) throw failure("--latency-us: expected a number >= 0");
      const std::size_t nodes = a->nodes.value_or(1);
      if (nodes < 1) throw failure("--nodes: expected an integer >= 1");
      if (nodes > 1 && !a->inter_gbps) throw failure("--nodes " + std::to_string(nodes) + " needs --inter-gbps");
      const double ig = a->inter_gbps.value_or(1.0);
      if (!(ig > 0) || !std::isfinite(ig)) throw failure("--inter-gbps: expected a number > 0");
      t = io::read_nvidia_smi_topo(a->nvidia_smi, o);
      if (nodes > 1) t = io::replicate_nodes(t, nodes, ig, o.latency_us);
    } else if (!a->cluster.empty()) {
      t = io::read_cluster_json(a->cluster);
    } else if (!a->spec.empty()) {
      t = io::read_topology_json(a->spec);
    } else if (!a->generator.empty()) {
      const generator_spec s{.generator = a->generator, .shape = a->shape, .devices = a->devices,
                             .seed = a->seed, .memory_bytes = a->memory_bytes, .latency_us = a->latency_us,
                             .intra_gbps = a->intra_gbps, .inter_gbps = a->inter_gbps};
      try {
        t = generate_topology(s);
      } catch (const spec_error& e) {
        std::string flag = e.field();
        for (auto& ch : flag) if (ch == '_') ch = '-';
        throw failure("--" + flag + ": " + e.what());
      }
    } else {
      throw CLI::RequiredError("--spec, --generator, --nvidia-smi or --cluster");
    }
    io::write_topology_json(t, a->out);
    print_topology_summary(t, std::cout);
    std::cout << "written         " << a->out << '\n';
  });
}

}  // namespace devplace::cli
