// viz and sweep on user types: the heat map of a user topology (the `device_topology`
// archetype) is the heat map of the same bandwidths as `matrix_topology`, and the Gantt chart of
// a user graph simulated on it is the chart of the same operators as `op_graph`; a sweep over a user's
// point space whose points run DFModel on the member-only workload archetype and the ADL-only
// network archetype writes, for every point, what the same instance written out as
// `dfmodel::workload` / `dfmodel::network` gives when evaluated directly.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "archetypes/dfmodel_archetypes.hpp"
#include "archetypes/minimal_topology.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/dfmodel/fusion.hpp"
#include "devplace/sweep/driver.hpp"
#include "devplace/topology/matrix_topology.hpp"
#include "devplace/viz/gantt.hpp"
#include "devplace/viz/heatmap.hpp"

using namespace devplace;
namespace df = devplace::dfmodel;
using json = nlohmann::json;

TEST_CASE("viz: the heat map of a user topology = of the same bandwidths as matrix_topology") {
  const std::vector<std::vector<double>> bw{{0, 50, 50, 10, 10}, {50, 0, 50, 10, 10}, {50, 50, 0, 10, 10},
                                            {10, 10, 10, 0, 25}, {10, 10, 10, 25, 0}};
  archetypes::minimal_topology user{bw};
  Eigen::MatrixXd m(5, 5);
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) m(a, b) = bw[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
  const matrix_topology t(m);
  const auto labels = viz::make_device_labels(5);
  const std::vector<std::vector<std::size_t>> stages{{0, 1, 2}, {3, 4}};
  const std::string mine = viz::heatmap_svg(user, stages, labels, {.title = "user"});
  CHECK(mine == viz::heatmap_svg(t, stages, labels, {.title = "user"}));
  user.bw[3][4] = user.bw[4][3] = 40;  // the picture reads the user's bandwidths
  CHECK(viz::heatmap_svg(user, stages, labels, {.title = "user"}) != mine);
}

namespace {

/// A profiled chain of operators, members only.
struct user_chain {
  std::vector<std::vector<int>> succ{{1}, {2}, {3}, {}};
  std::vector<double> fwd{1, 2, 1.5, 0.5}, bwd{2, 3, 3, 1};
  std::size_t num_vertices() const { return succ.size(); }
  const std::vector<int>& out_edges(std::size_t u) const { return succ[u]; }
  double forward_ms(std::size_t v) const { return fwd[v]; }
  double backward_ms(std::size_t v) const { return bwd[v]; }
  double memory_bytes(std::size_t) const { return 1e6; }
  double param_bytes(std::size_t v) const { return 1e6 * static_cast<double>(v + 1); }
  double edge_bytes(std::size_t, std::size_t) const { return 4e6; }
};

}  // namespace

TEST_CASE("viz: the Gantt chart of a user graph on a user topology = of op_graph on matrix_topology") {
  const user_chain g;
  op_graph_builder b;
  for (std::size_t v = 0; v < 4; ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = g.fwd[v], .bwd_ms = g.bwd[v], .fwd_mem_bytes = 1e6,
              .bwd_mem_bytes = 1e6, .param_bytes = 1e6 * static_cast<double>(v + 1)});
  for (std::size_t v = 0; v + 1 < 4; ++v) b.add_edge(v, v + 1, 4e6);
  const op_graph og = std::move(b).build();
  const archetypes::minimal_topology ut{{{0, 50, 10, 10}, {50, 0, 10, 10}, {10, 10, 0, 50}, {10, 10, 50, 0}}};
  Eigen::MatrixXd bw(4, 4);
  for (int a = 0; a < 4; ++a)
    for (int c = 0; c < 4; ++c) bw(a, c) = ut.bw[static_cast<std::size_t>(a)][static_cast<std::size_t>(c)];
  const matrix_topology mt(bw);
  const std::vector<std::size_t> stage_of{0, 0, 1, 1};
  const std::vector<std::vector<std::size_t>> device_of{{0, 1}, {2, 3}};
  const simulation_options o{.micro_batches = 3};
  const auto mu = make_pipeline_model(g, stage_of, 2, device_of);
  const auto mo = make_pipeline_model(og, stage_of, 2, device_of);
  const auto ru = simulate(mu, ut, o);
  const auto ro = simulate(mo, mt, o);
  CHECK(ru.iteration_ms == ro.iteration_ms);
  const auto labels = viz::make_device_labels(4);
  CHECK(viz::gantt_svg(ru, mu, o, labels) == viz::gantt_svg(ro, mo, o, labels));
}

namespace {

using O = df::kernel_op;

/// GEMM with a weight -> element-wise -> GEMM of both (a skip tensor into port 0).
archetypes::minimal_kernel_graph user_layer() {
  return {{{{1, 64, 32, 16}, O::gemm_weight}, {{1, 64, 1, 16}, O::elementwise}, {{2, 32, 64, 16}, O::gemm_two_inputs}},
          {{1, 2}, {2}, {}}};
}

/// The same layer written out as DFModel's struct (sequence 2048, DFModel's default figures).
df::workload builtin_layer() {
  df::workload w;
  auto add = [&](df::kernel_kind kind, O op, std::int64_t outer, std::int64_t m, std::int64_t k) {
    df::kernel x;
    x.name = "k" + std::to_string(w.kernels.size());
    x.kind = kind, x.op = op, x.outer = outer, x.m = m, x.k = k, x.n = 16;
    w.kernels.push_back(x);
  };
  add(df::kernel_kind::systolic, O::gemm_weight, 1, 64, 32);
  add(df::kernel_kind::simd, O::elementwise, 1, 64, 1);
  add(df::kernel_kind::systolic, O::gemm_two_inputs, 2, 32, 64);
  w.tensors = {{0, 1, 0}, {0, 2, 0}, {1, 2, 1}};
  return w;
}

df::accelerator small_chip() { return {.cores = 16, .systolic_width = 4, .systolic_height = 4, .freq_ghz = 1, .sram_bytes = 1e9}; }

/// Point i: a fully connected TP dimension of 1 + i % 4 chips, i / 4 + 1 configurations.
json evaluate_builtin(std::size_t i) {
  df::system s;
  s.acc = small_chip();
  s.net = df::fully_connected(1 + i % 4, 20);
  const auto w = builtin_layer();
  const auto r = df::optimise_mapping(w, df::shard_exhaustive(w), s, {.configs = i / 4 + 1, .tile_size = 4});
  return {{"final_ns", r.final_ns}, {"configs", r.config_of}};
}

}  // namespace

TEST_CASE("sweep: a user's point space over DFModel on user types, evaluated by the driver = directly") {
  const auto g = user_layer();
  sweep::point_space s;
  s.size = 12;
  s.inputs = [](std::size_t i) { return json{{"tp", 1 + i % 4}, {"configs", i / 4 + 1}}; };
  s.evaluate = [&g](std::size_t i) {
    archetypes::minimal_network net{{{df::dim_kind::fully_connected, 1 + i % 4, 20, df::parallelism::tp}}};
    const auto r = df::optimise_mapping(g, df::shard_exhaustive(g), df::make_system(net, small_chip()),
                                        {.configs = i / 4 + 1, .tile_size = 4});
    return sweep::point_result{r.status == status::optimal ? "optimal" : "infeasible",
                               json{{"final_ns", r.final_ns}, {"configs", r.config_of}}};
  };
  const auto dir = std::filesystem::temp_directory_path() / "devplace_test_generic_sweep";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  sweep::solo_channel one;
  const auto rep = sweep::run(s, {.out = dir / "points.jsonl", .threads = 2}, one);
  CHECK(rep.complete);
  std::ifstream in(dir / "points.jsonl");
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    const auto j = json::parse(line);
    const auto i = j["index"].get<std::size_t>();
    CAPTURE(i);
    CHECK(i == n);
    CHECK(j["status"] == "optimal");
    CHECK(j["result"] == evaluate_builtin(i));
  }
  CHECK(n == 12);
  std::filesystem::remove_all(dir);
}
