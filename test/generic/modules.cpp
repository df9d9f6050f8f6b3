// Generic in every module: PHAZE, the MCM search and PipeDream's optimizer run, through real calls,
// on a user graph type (members only, nothing of op_graph) and a user topology type, and give
// exactly what the same data gives as `op_graph` / `mcm::chip_topology` (the oracle).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "archetypes/minimal_topology.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/dag/operator_properties.hpp"
#include "devplace/mcm/search.hpp"
#include "devplace/peers/pipedream.hpp"
#include "devplace/peers/piper.hpp"
#include "devplace/peers/tarnawski.hpp"
#include "devplace/phaze/workload.hpp"

using namespace devplace;

namespace {

/// A profiled op_model with operator kinds, outputs and layer ids.
struct op_model {
  std::vector<std::vector<int>> succ;
  std::vector<std::vector<double>> bytes;
  std::vector<double> fwd, bwd, mem, par, out;
  std::vector<std::string> label;
  std::vector<std::int64_t> layer;  // empty: none
  double micro_batch = 2;

  [[nodiscard]] double edge(std::size_t u, std::size_t v) const {
    for (std::size_t k = 0; k < succ[u].size(); ++k)
      if (static_cast<std::size_t>(succ[u][k]) == v) return bytes[u][k];
    return 0.0;
  }
};

/// The user's type: member functions only.
struct labelled_user_graph {
  const op_model* m;
  [[nodiscard]] std::size_t num_vertices() const { return m->succ.size(); }
  [[nodiscard]] const std::vector<int>& out_edges(std::size_t u) const { return m->succ[u]; }
  [[nodiscard]] double forward_ms(std::size_t v) const { return m->fwd[v]; }
  [[nodiscard]] double backward_ms(std::size_t v) const { return m->bwd[v]; }
  [[nodiscard]] double memory_bytes(std::size_t v) const { return m->mem[v]; }
  [[nodiscard]] double param_bytes(std::size_t v) const { return m->par[v]; }
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const { return m->edge(u, v); }
  [[nodiscard]] std::string op_label(std::size_t v) const { return m->label[v]; }
  [[nodiscard]] double output_bytes(std::size_t v) const { return m->out[v]; }
  [[nodiscard]] std::int64_t layer_id(std::size_t v) const { return m->layer.empty() ? -1 : m->layer[v]; }
  [[nodiscard]] double profiled_micro_batch() const { return m->micro_batch; }
};

/// A user type with the profiled costs only (no labels, outputs or layers).
struct costs_only_graph {
  const op_model* m;
  [[nodiscard]] std::size_t num_vertices() const { return m->succ.size(); }
  [[nodiscard]] const std::vector<int>& out_edges(std::size_t u) const { return m->succ[u]; }
  [[nodiscard]] double forward_ms(std::size_t v) const { return m->fwd[v]; }
  [[nodiscard]] double backward_ms(std::size_t v) const { return m->bwd[v]; }
  [[nodiscard]] double memory_bytes(std::size_t v) const { return m->mem[v]; }
  [[nodiscard]] double param_bytes(std::size_t v) const { return m->par[v]; }
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const { return m->edge(u, v); }
};

static_assert(phaze::operator_graph<labelled_user_graph> && labelled_dag<op_graph> && !labelled_dag<costs_only_graph>);
static_assert(profiled_dag<costs_only_graph> && device_topology<archetypes::minimal_topology>);

/// A layered transformer-like chain of blocks, each linear -> view -> gelu -> linear, with skip
/// edges inside a block; `layers` blocks, random costs.
op_model random_model(std::uint64_t seed, std::size_t blocks, bool with_layers) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  const char* kinds[] = {"linear", "view", "gelu", "addmm"};
  op_model m;
  const std::size_t n = 4 * blocks;
  m.succ.resize(n);
  m.bytes.resize(n);
  for (std::size_t v = 0; v < n; ++v) {
    m.label.emplace_back(kinds[v % 4]);
    m.fwd.push_back(0.5 + U(rng));
    m.bwd.push_back(1.0 + 2 * U(rng));
    m.mem.push_back(1e6 * U(rng));
    m.par.push_back(v % 4 == 0 || v % 4 == 3 ? 4e6 * (1 + U(rng)) : 0.0);
    m.out.push_back(1e5 * (1 + U(rng)));
    if (with_layers) m.layer.push_back(static_cast<std::int64_t>(v / 4));
    auto add = [&](std::size_t w) {
      m.succ[v].push_back(static_cast<int>(w));
      m.bytes[v].push_back(m.out[v]);
    };
    if (v + 1 < n) add(v + 1);
    if (v % 4 == 0 && v + 3 < n && U(rng) < 0.5) add(v + 3);
  }
  return m;
}

op_graph model_op_graph(const op_model& m) {
  op_graph_builder b;
  for (std::size_t v = 0; v < m.succ.size(); ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .op = m.label[v], .fwd_ms = m.fwd[v], .bwd_ms = m.bwd[v],
              .fwd_mem_bytes = m.mem[v], .bwd_mem_bytes = m.mem[v], .param_bytes = m.par[v], .out_bytes = m.out[v],
              .layer = m.layer.empty() ? -1 : m.layer[v]});
  for (std::size_t u = 0; u < m.succ.size(); ++u)
    for (std::size_t k = 0; k < m.succ[u].size(); ++k) b.add_edge(u, static_cast<std::size_t>(m.succ[u][k]), m.bytes[u][k]);
  op_graph g = std::move(b).build();
  g.set_micro_batch_size(m.micro_batch);
  return g;
}

void check_same_layer_graph(const phaze::layer_graph& a, const phaze::layer_graph& b) {
  const op_graph& x = a.variant.graph;
  const op_graph& y = b.variant.graph;
  REQUIRE(x.num_vertices() == y.num_vertices());
  CHECK(x.num_edges() == y.num_edges());
  for (std::size_t v = 0; v < x.num_vertices(); ++v) {
    CHECK(x.forward_ms(v) == y.forward_ms(v));
    CHECK(x.backward_ms(v) == y.backward_ms(v));
    CHECK(x.param_bytes(v) == y.param_bytes(v));
    CHECK(x.memory_bytes(v) == y.memory_bytes(v));
    for (auto w : x.out_edges(v)) CHECK(x.edge_bytes(v, w) == y.edge_bytes(v, w));
  }
  CHECK(a.report.unique_layers == b.report.unique_layers);
}

}  // namespace

TEST_CASE("phaze: workload_layers, make_layer_graph and evaluate_architecture on a user type = on op_graph") {
  for (bool with_layers : {true, false}) {
    for (std::uint64_t seed : {1u, 2u}) {
      CAPTURE(with_layers);
      CAPTURE(seed);
      const op_model m = random_model(seed, 6, with_layers);
      const op_graph og = model_op_graph(m);
      const labelled_user_graph ug{&m};
      const auto so = phaze::workload_layers(og, 4);
      const auto su = phaze::workload_layers(ug, 4);
      CHECK(su.from_ids == with_layers);
      CHECK(so.from_ids == su.from_ids);
      CHECK(so.layer_of == su.layer_of);
      CHECK(so.members == su.members);
      const auto c = phaze::tpu_v4_like();
      check_same_layer_graph(phaze::make_layer_graph(og, so, c, 4, 2), phaze::make_layer_graph(ug, su, c, 4, 2));
      const phaze::architecture_options o{.placement = {.devices = 8, .global_batch = 16},
                                          .hbm_bytes = {1e8, 1e10},
                                          .micro_batches = {1, 2}};
      const auto ro = phaze::evaluate_architecture(og, so, c, o);
      const auto ru = phaze::evaluate_architecture(ug, su, c, o);
      REQUIRE(ro.samples_per_s > 0);  // something fits: the comparison compares plans
      CHECK(ru.samples_per_s == ro.samples_per_s);
      CHECK(ru.hbm_bytes == ro.hbm_bytes);
      CHECK(ru.plan.micro_batch == ro.plan.micro_batch);
      CHECK(ru.plan.samples_per_s == ro.plan.samples_per_s);
    }
  }
}

TEST_CASE("phaze: the copy keeps every attribute PHAZE reads, and defaults for a type without them") {
  const op_model m = random_model(5, 2, true);
  const op_graph c = phaze::to_phaze_graph(labelled_user_graph{&m});
  CHECK(c.micro_batch_size() == 2.0);
  for (std::size_t v = 0; v < m.succ.size(); ++v) {
    CHECK(c.op(v).op == m.label[v]);
    CHECK(c.op(v).out_bytes == m.out[v]);
    CHECK(c.op(v).layer == m.layer[v]);
  }
  const op_graph p = to_operator_graph(costs_only_graph{&m});
  CHECK(p.micro_batch_size() == 0.0);
  CHECK(p.op(0).op.empty());
  CHECK(p.op(0).out_bytes == -1.0);
  CHECK(p.op(0).layer == -1);
}

TEST_CASE("mcm: the evaluators and the search on a user graph and a user topology = op_graph on chip_topology") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const op_model m = random_model(seed, 4, false);
    const op_graph og = model_op_graph(m);
    const costs_only_graph pg{&m};
    const std::size_t C = 4;
    // A one-way ring with different link speeds, 0 where there is no link.
    archetypes::minimal_topology ut{std::vector<std::vector<double>>(C, std::vector<double>(C, 0.0))};
    for (std::size_t k = 0; k + 1 < C; ++k) ut.bw[k][k + 1] = 10.0 + 5.0 * double(k);
    const double sram = 1e300;  // minimal_topology gives no memory: the CPO's default is +infinity
    CHECK_THROWS_WITH_AS(mcm::to_chip_topology(ut), doctest::Contains("no finite device_memory_bytes"), std::invalid_argument);
    struct with_memory : archetypes::minimal_topology {
      double sram;
      [[nodiscard]] double device_memory_bytes(std::size_t) const { return sram; }
    };
    const with_memory wt{ut, sram};
    const mcm::chip_topology ct(ut.bw, sram);
    const mcm::ring_evaluator eo(og, ct);
    const mcm::ring_evaluator eu(pg, wt);
    std::vector<int> f(og.num_vertices());
    for (std::size_t v = 0; v < f.size(); ++v) f[v] = static_cast<int>(v * C / f.size());
    CHECK(eo(f).throughput == eu(f).throughput);
    CHECK(eo(f).bottleneck_ms == eu(f).bottleneck_ms);
    mcm::annealing_policy po(og.num_vertices(), C, {.budget = 30});
    mcm::annealing_policy pu(og.num_vertices(), C, {.budget = 30});
    const mcm::search_options so{.samples = 30, .seed = seed};
    const auto ro = mcm::search(og, ct, po, eo, so);
    const auto ru = mcm::search(pg, wt, pu, eu, so);
    CHECK(ru.chip_of == ro.chip_of);
    CHECK(ru.best.throughput == ro.best.throughput);
    CHECK(ru.baseline_throughput == ro.baseline_throughput);
    CHECK(ru.samples == ro.samples);
  }
}

TEST_CASE("pipedream: the optimizer on a user type = on op_graph, with and without output_bytes") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const op_model m = random_model(seed, 3, false);
    op_graph og = model_op_graph(m);
    // Slow links: the activation transfers (2 out / B) weigh against the compute, so the outputs matter.
    const peers::pipedream_options o{.levels = {{.machines = 2, .bandwidth = 1e7}, {.machines = 2, .bandwidth = 1e6}}};
    const auto ro = peers::pipedream_optimize(og, o);
    REQUIRE(ro.status == status::optimal);
    const auto ru = peers::pipedream_optimize(labelled_user_graph{&m}, o);
    CHECK(ru.status == ro.status);
    CHECK(ru.objective_s == ro.objective_s);
    CHECK(ru.stage_of == ro.stage_of);
    CHECK(ru.states == ro.states);
    // Without output_bytes every edge carries its source's output (as in PipeDream's files),
    // so the largest leaving edge is the output, except at the sink, which sends nothing.
    const auto rp = peers::pipedream_optimize(costs_only_graph{&m}, o);
    op_model sinkless = m;
    sinkless.out.back() = 0.0;
    const auto rs = peers::pipedream_optimize(model_op_graph(sinkless), o);
    CHECK(rp.objective_s == rs.objective_s);
    CHECK(rp.stage_of == rs.stage_of);
    op_model silent = m;  // no outputs at all: a different answer, so the comparisons above can fail
    for (auto& x : silent.out) x = 0.0;
    CHECK(peers::pipedream_optimize(model_op_graph(silent), o).objective_s != rs.objective_s);
  }
}

TEST_CASE("tarnawski: the max-load DP on a user type = on op_graph = on the instance written out by hand") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const op_model m = random_model(seed, 3, false);
    const peers::tarnawski_system sys{.fpgas = 2, .cpus = 1, .max_size_per_fpga = 2e7, .bandwidth_gbps = 0.5, .cpu_slowdown = 3};
    // The documented reading, by hand: fpga = fwd + bwd, cpu = 3 x that, size = parameters, output
    // cost = the largest bytes leaving the operator at 0.5 GB/s (5e5 bytes per ms).
    io::tarnawski_instance hand;
    hand.max_fpgas = 2;
    hand.max_cpus = 1;
    hand.max_size_per_fpga = 2e7;
    for (std::size_t v = 0; v < m.succ.size(); ++v) {
      hand.nodes.push_back({.id = static_cast<std::int64_t>(v), .fpga_latency = m.fwd[v] + m.bwd[v],
                            .cpu_latency = 3 * (m.fwd[v] + m.bwd[v]), .size = m.par[v]});
      double out = 0;
      for (std::size_t k = 0; k < m.succ[v].size(); ++k) {
        hand.edges.push_back({v, static_cast<std::size_t>(m.succ[v][k])});
        out = std::max(out, m.bytes[v][k] / 5e5);
      }
      hand.output_cost.push_back(out);
    }
    const auto rh = peers::tarnawski_max_load(hand);
    REQUIRE(rh.status == status::optimal);
    for (const auto& r : {peers::tarnawski_max_load(model_op_graph(m), sys), peers::tarnawski_max_load(costs_only_graph{&m}, sys)}) {
      CHECK(r.status == rh.status);
      CHECK(r.max_load == rh.max_load);
      CHECK(r.ideals == rh.ideals);
      REQUIRE(r.devices.size() == rh.devices.size());
      for (std::size_t d = 0; d < r.devices.size(); ++d) CHECK(r.devices[d].nodes == rh.devices[d].nodes);
    }
  }
  const op_model m = random_model(1, 1, false);
  CHECK_THROWS_WITH_AS(peers::make_tarnawski_instance(costs_only_graph{&m}, {.bandwidth_gbps = 0}),
                       "make_tarnawski_instance: bandwidth_gbps must be finite and > 0", std::invalid_argument);
}

TEST_CASE("piper: the planner on a user type = on op_graph = on the instance written out by hand") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const op_model m = random_model(seed, 2, false);  // 8 operators; profiled at micro-batch 2
    const peers::piper_system sys{.devices = 4, .memory_bytes = 4e7, .bandwidth = 1e9, .micro_batches = 4,
                                  .weight_memory_factor = 2};
    // The documented reading, by hand: one vanilla option per operator at t = 1, p = (fwd + bwd) / 2
    // per sample, w = parameters, a = activations, b = 2 w, no sync bytes; c = the edge's bytes.
    io::piper_instance hand;
    hand.max_devices = 4;
    hand.max_memory_per_device = 4e7;
    hand.bandwidth = 1e9;
    hand.mbs_in_batch = 4;
    const std::size_t n = m.succ.size();
    hand.in_edges.assign(n, {});
    hand.out_edges.assign(n, {});
    for (std::size_t u = 0; u < n; ++u)
      for (std::size_t k = 0; k < m.succ[u].size(); ++k) {
        const auto v = static_cast<std::size_t>(m.succ[u][k]);
        hand.out_edges[u].push_back(hand.edges.size());
        hand.in_edges[v].push_back(hand.edges.size());
        hand.edges.emplace_back(u, v);
        hand.edge_bytes.push_back(m.bytes[u][k]);
      }
    for (std::size_t v = 0; v < n; ++v) {
      io::piper_node node{.id = static_cast<std::int64_t>(v)};
      node.tmpcs[1].push_back({.id = "vanilla", .time_per_sample = (m.fwd[v] + m.bwd[v]) / 2, .parameter_size = m.par[v],
                               .memory_a = m.mem[v], .memory_b = 2 * m.par[v],
                               .sync_fw = std::vector<double>(hand.in_edges[v].size(), 0.0),
                               .sync_bw = std::vector<double>(hand.out_edges[v].size(), 0.0)});
      hand.nodes.push_back(std::move(node));
    }
    const auto rh = peers::piper_plan(hand);
    REQUIRE(rh.status == status::optimal);
    for (const auto& r : {peers::piper_plan(model_op_graph(m), sys), peers::piper_plan(labelled_user_graph{&m}, sys)}) {
      CHECK(r.status == rh.status);
      CHECK(r.tps == rh.tps);
      CHECK(r.sets == rh.sets);
      REQUIRE(r.stages.size() == rh.stages.size());
      for (std::size_t k = 0; k < r.stages.size(); ++k) CHECK(r.stages[k].nodes == rh.stages[k].nodes);
    }
  }
}
