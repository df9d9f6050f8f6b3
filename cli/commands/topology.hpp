#pragma once
// devplace topology --spec FILE --out FILE
// devplace topology --generator NAME [--shape A B ...] [--devices D] [--seed N] ... --out FILE
// Expands a topology (generator form or matrix form) to the matrix form of devplace.topology/1.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands/common.hpp"
#include "devplace/io/topology_json.hpp"
#include "devplace/topology/generators.hpp"

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

inline void register_topology(CLI::App& app) {
  struct args_t {
    std::string spec, out, generator;
    std::vector<std::size_t> shape;
    std::optional<std::size_t> devices;
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
  spec->excludes(gen);
  gen->excludes(spec);
  cmd->add_option("--shape", a->shape, "Generator shape, e.g. --shape 8 8")->expected(1, 3)->needs(gen);
  cmd->add_option("--devices", a->devices, "Number of devices (random generators)")->needs(gen);
  cmd->add_option("--seed", a->seed, "Seed (random generators)")->needs(gen);
  cmd->add_option("--memory-bytes", a->memory_bytes, "Memory of every device [32 GiB]")->needs(gen);
  cmd->add_option("--latency-us", a->latency_us, "Latency of every pair [0]")->needs(gen);
  cmd->add_option("--intra-gbps", a->intra_gbps, "Intra-node bandwidth (two_level)")->needs(gen);
  cmd->add_option("--inter-gbps", a->inter_gbps, "Inter-node bandwidth (two_level, dgx1_cluster)")->needs(gen);
  cmd->add_option("--out", a->out, "Output file (matrix form)")->required();
  cmd->callback([a] {
    matrix_topology t;
    if (!a->spec.empty()) {
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
      throw CLI::RequiredError("--spec or --generator");
    }
    io::write_topology_json(t, a->out);
    print_topology_summary(t, std::cout);
    std::cout << "written         " << a->out << '\n';
  });
}

}  // namespace devplace::cli
