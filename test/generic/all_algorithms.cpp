// Generic for real: every public algorithm runs, through real calls, on
//   (a) `op_graph`,
//   (b) a user-defined struct with member functions (and, in the second half, its own compute_ms),
//   (c) `std::vector<std::vector<int>>` with costs attached by `views::with_costs`,
//   (d) a user topology type that is not `matrix_topology`,
// and the results are equal where the costs are equal, and follow the custom costs where they
// differ (hand-computed values).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/cluster/greedy_cluster.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/ilp/builders/mapping.hpp"
#include "devplace/ilp/builders/partition.hpp"
#include "devplace/map/baselines.hpp"
#include "devplace/map/bounds.hpp"
#include "devplace/map/mapper.hpp"
#include "devplace/map/stage_graph.hpp"
#include "devplace/partition/even_split.hpp"
#include "devplace/partition/general_dp.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "devplace/refine/boundary_refine.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/sim/plan_search.hpp"
#include "devplace/topology/matrix_topology.hpp"
#include "devplace/views/with_costs.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sim/plan_search.ipp"  // search_plan's definition (compiled mode: devplace::core)
#endif

using namespace devplace;

namespace {

/// The profile every representation carries: per vertex fwd, bwd, memory, params; per edge bytes.
struct profile {
  std::vector<std::vector<int>> succ;
  std::vector<double> fwd, bwd, mem, par;
  std::vector<std::vector<double>> bytes;  // bytes[u][k] of succ[u][k]
  std::vector<double> compute;             // custom c_u (empty: fwd + bwd)

  [[nodiscard]] double edge(std::size_t u, std::size_t v) const {
    for (std::size_t k = 0; k < succ[u].size(); ++k)
      if (static_cast<std::size_t>(succ[u][k]) == v) return bytes[u][k];
    return 0.0;
  }
};

/// (b) a user type: member functions only, compute_ms its own.
struct user_graph {
  const profile* p;
  [[nodiscard]] std::size_t num_vertices() const { return p->succ.size(); }
  [[nodiscard]] const std::vector<int>& out_edges(std::size_t u) const { return p->succ[u]; }
  [[nodiscard]] double forward_ms(std::size_t v) const { return p->fwd[v]; }
  [[nodiscard]] double backward_ms(std::size_t v) const { return p->bwd[v]; }
  [[nodiscard]] double compute_ms(std::size_t v) const { return p->compute.empty() ? p->fwd[v] + p->bwd[v] : p->compute[v]; }
  [[nodiscard]] double memory_bytes(std::size_t v) const { return p->mem[v]; }
  [[nodiscard]] double param_bytes(std::size_t v) const { return p->par[v]; }
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const { return p->edge(u, v); }
};

/// (d) a user topology type.
struct user_topology {
  std::vector<std::vector<double>> bw;
  [[nodiscard]] std::size_t num_devices() const { return bw.size(); }
  [[nodiscard]] double bandwidth_gbps(std::size_t a, std::size_t b) const { return bw[a][b]; }
  [[nodiscard]] double latency_us(std::size_t a, std::size_t b) const { return a == b ? 0.0 : 2.0; }
  [[nodiscard]] double device_memory_bytes(std::size_t) const { return 1e12; }
};

op_graph to_op(const profile& p) {
  op_graph_builder b;
  for (std::size_t v = 0; v < p.succ.size(); ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = p.fwd[v], .bwd_ms = p.bwd[v], .fwd_mem_bytes = p.mem[v],
              .bwd_mem_bytes = p.mem[v], .param_bytes = p.par[v]});
  for (std::size_t u = 0; u < p.succ.size(); ++u)
    for (std::size_t k = 0; k < p.succ[u].size(); ++k) b.add_edge(u, static_cast<std::size_t>(p.succ[u][k]), p.bytes[u][k]);
  return std::move(b).build();
}

auto with_profile(const profile& p) {
  return views::with_costs(p.succ, costs{.forward_ms = [&p](const auto&, std::size_t v) { return p.fwd[v]; },
                                         .backward_ms = [&p](const auto&, std::size_t v) { return p.bwd[v]; },
                                         .memory_bytes = [&p](const auto&, std::size_t v) { return p.mem[v]; },
                                         .param_bytes = [&p](const auto&, std::size_t v) { return p.par[v]; },
                                         .edge_bytes = [&p](const auto&, std::size_t u, std::size_t v) { return p.edge(u, v); }});
}

profile random_profile(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  profile p;
  p.succ.resize(n);
  p.bytes.resize(n);
  for (std::size_t u = 0; u < n; ++u) {
    p.fwd.push_back(0.5 + 3 * U(rng));
    p.bwd.push_back(1.0 + 6 * U(rng));
    p.mem.push_back(1e6 * U(rng));
    p.par.push_back(1e7 * U(rng));
    for (std::size_t v = u + 1; v < n; ++v)
      if (v == u + 1 || U(rng) < 0.2) {
        p.succ[u].push_back(static_cast<int>(v));
        p.bytes[u].push_back(1e6 + 5e7 * U(rng));
      }
  }
  return p;
}

/// Everything the algorithms produce for one graph representation and one topology.
struct outcome {
  std::uint64_t downsets = 0;
  double dp = 0, topo = 0, flow = 0, refined = 0, evaluated = 0;
  std::vector<std::size_t> dp_stage_of, even_stage_of, cluster_of, flow_stage_of;
  double general = 0;                                           // general_dp (J(2)) objective
  std::vector<std::size_t> general_stage_of, general_replicas;
  double general_mapped = 0, general_iteration = 0, general_plan_samples = 0;
  std::vector<double> stage_compute;
  double lower_bound = 0, mapped = 0, cs = 0, iteration = 0, plan_samples = 0;
  std::size_t ilp_rows = 0, ilp_cols = 0, map_ilp_rows = 0;
};

template <class G, class T>
outcome run_all(const G& g, const T& topo, std::size_t S, std::size_t R) {
  outcome o;
  o.downsets = count_downsets(g).count;
  const partition_options po{.stages = S, .cost = {.replicas = R, .micro_batches = 2}};
  const auto dp = pipeline_dp(g, po);
  REQUIRE(dp.status == status::optimal);
  o.dp = dp.objective_ms;
  o.dp_stage_of = dp.stage_of;
  o.topo = topo_dp(g, po).objective_ms;
  o.even_stage_of = even_split(g, {.stages = S}).stage_of;
  o.cluster_of = greedy_cluster(g, {.max_clusters = 4, .alpha = 1.0}).cluster_of;
  const auto flow = parmesan_partition(g, {.partition = po, .clusters = 6, .threads = 1});
  o.flow = flow.objective_ms;
  o.flow_stage_of = flow.stage_of;
  const auto refined = boundary_refine(g, o.even_stage_of, {.stages = S, .cost = po.cost, .policy = refine_policy::objective});
  o.refined = refined.objective_ms;
  o.evaluated = evaluate_partition(g, dp.stage_of, S, po.cost).objective_ms;
  // J(2): S stages over the S·R devices, each stage its own count; mapped and simulated too.
  const auto gen = general_dp(g, {.stages = S, .devices = S * R, .cost = {.micro_batches = 2}});
  REQUIRE(gen.status == status::optimal);
  o.general = gen.objective_ms;
  o.general_stage_of = gen.stage_of;
  o.general_replicas = gen.replicas;
  {
    const stage_graph gsg = make_stage_graph(g, gen.stage_of, gen.replicas);
    const auto gm = map_devices(gsg, topo, p2p_cost{}, {.threads = 1, .timeout_s = 30});
    REQUIRE(gm.status == status::optimal);
    o.general_mapped = gm.objective_ms;
    o.general_iteration =
        simulate(make_pipeline_model(g, gen.stage_of, S, std::vector<std::vector<std::size_t>>(gm.device_of.begin(), gm.device_of.end())),
                 topo, {.micro_batches = 3})
            .iteration_ms;
  }
  const stage_graph sg = make_stage_graph(g, dp.stage_of, S, R);
  for (std::size_t s = 0; s < S; ++s) o.stage_compute.push_back(sg.compute_ms(s));
  const link_costs L(topo);
  o.lower_bound = p2p_lower_bound(sg, L);
  const auto m = map_devices(sg, topo, p2p_cost{}, {.threads = 1, .timeout_s = 30});
  REQUIRE(m.status == status::optimal);
  o.mapped = m.objective_ms;
  o.cs = evaluate(sg, topo, cs_map(sg), cost_choice::p2p).objective_ms;
  const auto model = make_pipeline_model(g, dp.stage_of, S, std::vector<std::vector<std::size_t>>(m.device_of.begin(), m.device_of.end()));
  o.iteration = simulate(model, topo, {.micro_batches = 3}).iteration_ms;
  const auto plan = search_plan(g, topo, {.exact_product = true, .micro_batches = 2, .micro_batch_size = 1,
                                         .clusters = 6, .map_timeout_s = 30, .threads = 1});
  REQUIRE(plan.status == status::feasible);
  o.plan_samples = plan.candidates[plan.best].samples_per_s;
  const auto gplan = search_plan(g, topo, {.exact_product = true, .micro_batches = 2, .micro_batch_size = 1,
                                          .clusters = 6, .map_timeout_s = 30, .threads = 1, .general = true});
  REQUIRE(gplan.status == status::feasible);
  o.general_plan_samples = gplan.candidates[gplan.best].samples_per_s;
  CHECK(o.general_plan_samples >= o.plan_samples);  // the equal-count configurations are still searched
  const auto ilp = ilp::build_partition_ilp(g, po);
  o.ilp_rows = ilp.model().num_rows();
  o.ilp_cols = ilp.model().num_vars();
  o.map_ilp_rows = ilp::build_mapping_ilp(sg, topo).model().num_rows();
  return o;
}

void check_equal(const outcome& a, const outcome& b) {
  CHECK(a.downsets == b.downsets);
  CHECK(a.dp == doctest::Approx(b.dp).epsilon(1e-12));
  CHECK(a.dp_stage_of == b.dp_stage_of);
  CHECK(a.topo == doctest::Approx(b.topo).epsilon(1e-12));
  CHECK(a.even_stage_of == b.even_stage_of);
  CHECK(a.cluster_of == b.cluster_of);
  CHECK(a.flow == doctest::Approx(b.flow).epsilon(1e-12));
  CHECK(a.flow_stage_of == b.flow_stage_of);
  CHECK(a.refined == doctest::Approx(b.refined).epsilon(1e-12));
  CHECK(a.evaluated == doctest::Approx(b.evaluated).epsilon(1e-12));
  CHECK(a.stage_compute == b.stage_compute);
  CHECK(a.lower_bound == doctest::Approx(b.lower_bound).epsilon(1e-12));
  CHECK(a.mapped == doctest::Approx(b.mapped).epsilon(1e-12));
  CHECK(a.cs == doctest::Approx(b.cs).epsilon(1e-12));
  CHECK(a.iteration == doctest::Approx(b.iteration).epsilon(1e-12));
  CHECK(a.plan_samples == doctest::Approx(b.plan_samples).epsilon(1e-12));
  CHECK(a.general == doctest::Approx(b.general).epsilon(1e-12));
  CHECK(a.general_stage_of == b.general_stage_of);
  CHECK(a.general_replicas == b.general_replicas);
  CHECK(a.general_mapped == doctest::Approx(b.general_mapped).epsilon(1e-12));
  CHECK(a.general_iteration == doctest::Approx(b.general_iteration).epsilon(1e-12));
  CHECK(a.general_plan_samples == doctest::Approx(b.general_plan_samples).epsilon(1e-12));
  CHECK(a.ilp_rows == b.ilp_rows);
  CHECK(a.ilp_cols == b.ilp_cols);
  CHECK(a.map_ilp_rows == b.map_ilp_rows);
}

}  // namespace

TEST_CASE("every algorithm gives the same results on op_graph, a user type, vector<vector<int>> + with_costs, and a user topology") {
  const user_topology ut{{{0, 40, 10, 10}, {40, 0, 10, 10}, {10, 10, 0, 25}, {10, 10, 25, 0}}};
  Eigen::MatrixXd bw(4, 4), lat = Eigen::MatrixXd::Constant(4, 4, 2.0);
  for (Eigen::Index a = 0; a < 4; ++a)
    for (Eigen::Index b = 0; b < 4; ++b) bw(a, b) = ut.bw[std::size_t(a)][std::size_t(b)];
  lat.diagonal().setZero();
  const matrix_topology mt(bw, lat, std::vector<double>(4, 1e12));
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const profile p = random_profile(seed, 9);
    const op_graph og = to_op(p);
    const user_graph ug{&p};
    const auto vg = with_profile(p);
    static_assert(profiled_dag<user_graph> && profiled_dag<decltype(vg)> && device_topology<user_topology>);
    CAPTURE(seed);
    const outcome a = run_all(og, mt, 2, 2);
    const outcome b = run_all(ug, mt, 2, 2);
    const outcome c = run_all(vg, mt, 2, 2);
    const outcome d = run_all(og, ut, 2, 2);
    check_equal(a, b);
    check_equal(a, c);
    check_equal(a, d);
    // Sanity of the shared run: the flow is never worse than its fixed-order reference, the DP
    // never worse than either, the mapper never worse than the CS map.
    CHECK(a.dp <= a.topo * (1 + 1e-12));
    CHECK(a.dp <= a.flow * (1 + 1e-12));
    // J(2) over the same S·R devices includes the equal counts: never worse than eq. 13 at R.
    CHECK(a.general <= a.dp * (1 + 1e-12));
    CHECK(a.mapped <= a.cs * (1 + 1e-12));
    CHECK(a.lower_bound <= a.mapped * (1 + 1e-12));
  }
}

TEST_CASE("a user type's own compute_ms is what every algorithm reads") {
  // Chain 0 -> 1 -> 2, fwd = bwd = 1 ms each, no bytes; the user says c_u = 2, 2, 100.
  profile p;
  p.succ = {{1}, {2}, {}};
  p.bytes = {{0.0}, {0.0}, {}};
  p.fwd = {1, 1, 1};
  p.bwd = {1, 1, 1};
  p.mem = {0, 0, 0};
  p.par = {0, 0, 0};
  p.compute = {2, 2, 100};
  const user_graph ug{&p};
  const partition_options po{.stages = 2};
  const auto dp = pipeline_dp(ug, po);
  REQUIRE(dp.status == status::optimal);
  CHECK(dp.objective_ms == doctest::Approx(100.0));  // {0, 1} | {2}: max(4, 100)
  CHECK(dp.stage_of == std::vector<std::size_t>{0, 0, 1});
  CHECK(topo_dp(ug, po).objective_ms == doctest::Approx(100.0));
  // J(2) on 3 devices gives the 100 ms stage two of them: max(4 / 1, 100 / 2) = 50.
  const auto gen = general_dp(ug, {.stages = 2, .devices = 3});
  REQUIRE(gen.status == status::optimal);
  CHECK(gen.objective_ms == doctest::Approx(50.0));
  CHECK(gen.stage_of == std::vector<std::size_t>{0, 0, 1});
  CHECK(gen.replicas == std::vector<std::size_t>{1, 2});
  CHECK(evaluate_partition(ug, {0, 1, 1}, 2, po.cost).objective_ms == doctest::Approx(102.0));
  const auto sg = make_stage_graph(ug, dp.stage_of, 2, 1);
  CHECK(sg.compute_ms(0) == doctest::Approx(4.0));
  CHECK(sg.compute_ms(1) == doctest::Approx(100.0));
  CHECK(parmesan_partition(ug, {.partition = po, .clusters = 2, .threads = 1}).objective_ms == doctest::Approx(100.0));
  CHECK(boundary_refine(ug, {0, 1, 1}, {.stages = 2, .policy = refine_policy::objective}).objective_ms == doctest::Approx(100.0));
  // The copy keeps it: op_graph answers compute_ms 100 for the third operator.
  const op_graph copy = to_op_graph(ug);
  CHECK(copy.compute_ms(2) == doctest::Approx(100.0));
  CHECK(copy.forward_ms(2) == doctest::Approx(1.0));
  // The simulator splits c_u into forward and the rest: one micro-batch on two devices takes
  // 1 + 1 (F0, F1) + 1 (F2) + 99 (B2) + 1 + 1 (B1, B0) = 104 ms.
  const user_topology ut{{{0, 10}, {10, 0}}};
  const auto model = make_pipeline_model(ug, dp.stage_of, 2, {{0}, {1}});
  CHECK(model.backward_ms[1] == doctest::Approx(99.0));
  CHECK(simulate(model, ut, {.micro_batches = 1}).iteration_ms == doctest::Approx(104.0));  // 0-byte edges cost no latency
  // With the plain fwd + bwd the same chain splits at 4 ms.
  p.compute.clear();
  CHECK(pipeline_dp(ug, po).objective_ms == doctest::Approx(4.0));
}

TEST_CASE("parallel edges: edge_bytes is the total per pair, counted once however often v is listed") {
  // A user type listing 0 -> 1 twice with edge_bytes(0, 1) = 100.
  profile p;
  p.succ = {{1, 1}, {}};
  p.bytes = {{100.0, 100.0}, {}};
  p.fwd = {1, 1};
  p.bwd = {0, 0};
  p.mem = {0, 0};
  p.par = {0, 0};
  const user_graph ug{&p};
  const op_graph copy = to_op_graph(ug);
  CHECK(copy.num_edges() == 1);
  CHECK(copy.edge_bytes(0, 1) == doctest::Approx(100.0));
  const auto sg = make_stage_graph(ug, std::vector<std::size_t>{0, 1}, 2, 1);
  CHECK(sg.message_bytes(0, 1) == doctest::Approx(100.0));
  CHECK(evaluate_partition(ug, {0, 1}, 2, {}).stage_cut_bytes[0] == doctest::Approx(100.0));
  const auto model = make_pipeline_model(ug, {0, 1}, 2, {{0}, {1}});
  CHECK(model.message_bytes[0][1] == doctest::Approx(100.0));
}
