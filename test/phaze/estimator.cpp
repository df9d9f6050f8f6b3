// PHAZE's operator latency estimator and per-layer scheduling (phaze/estimator.hpp,
// phaze/layer_schedule.hpp, phaze/workload.hpp): hand-computed rooflines, the nop removal and
// fusion on a hand graph, list schedules checked by the ILP builder's validator and against an
// exhaustive oracle (tiny layers), the ILP path with GLPK, and the layer graph's bookkeeping.
#include "devplace/phaze/workload.hpp"

#include <doctest/doctest.h>

#include <random>

#include "support/random_dag.hpp"
#ifdef DEVPLACE_HAS_GLPK
#include "devplace/ilp/backends/glpk.hpp"
#endif

using namespace devplace;
using namespace devplace::phaze;
using ilp::phaze_op_kind;
using ilp::phaze_operator;

namespace {

/// Exhaustive optimum of a layer with one tensor and one vector core (so every operator either
/// runs alone in parallel or on the one core of its kind): every topological order × every y,
/// serial schedule generation (seed-phaze.md §2.7).
double exhaustive_makespan(const std::vector<std::vector<int>>& succ, const std::vector<phaze_operator>& ops) {
  const std::size_t n = succ.size();
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  double best = 1e300;
  do {
    std::vector<std::size_t> pos(n);
    for (std::size_t i = 0; i < n; ++i) pos[perm[i]] = i;
    bool topo = true;
    for (std::size_t u = 0; u < n; ++u)
      for (int v : succ[u]) topo = topo && pos[u] < pos[static_cast<std::size_t>(v)];
    if (!topo) continue;
    for (std::size_t mask = 0; mask < (std::size_t{1} << n); ++mask) {
      std::vector<double> fin(n, 0);
      std::vector<std::pair<double, double>> busy_tc, busy_vc, busy_all;  // intervals
      double span = 0;
      for (auto v : perm) {
        const bool par = mask >> v & 1;
        const double d = par ? ops[v].parallel_latency : ops[v].latency;
        double t = 0;
        for (std::size_t u = 0; u < n; ++u)
          for (int w : succ[u])
            if (static_cast<std::size_t>(w) == v) t = std::max(t, fin[u]);
        auto clash = [&](double s, const std::vector<std::pair<double, double>>& iv) {
          for (auto [a, b] : iv)
            if (s < b && a < s + d) return b;
          return -1.0;
        };
        for (bool moved = true; moved;) {  // earliest start that clashes with nothing it may not overlap
          moved = false;
          std::vector<const std::vector<std::pair<double, double>>*> lists{&busy_all};
          if (par) lists = {&busy_all, &busy_tc, &busy_vc};
          else {
            if (ops[v].kind != phaze_op_kind::vector) lists.push_back(&busy_tc);
            if (ops[v].kind != phaze_op_kind::tensor) lists.push_back(&busy_vc);
          }
          for (auto* l : lists)
            if (double b = clash(t, *l); b >= 0) t = b, moved = true;
        }
        fin[v] = t + d;
        span = std::max(span, fin[v]);
        if (par) busy_all.push_back({t, t + d});
        else {
          if (ops[v].kind != phaze_op_kind::vector) busy_tc.push_back({t, t + d});
          if (ops[v].kind != phaze_op_kind::tensor) busy_vc.push_back({t, t + d});
        }
      }
      best = std::min(best, span);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

std::vector<phaze_operator> random_ops(std::mt19937_64& rng, std::size_t n) {
  std::vector<phaze_operator> ops;
  for (std::size_t i = 0; i < n; ++i) {
    const double l = double(2 + rng() % 9);
    ops.push_back({static_cast<phaze_op_kind>(rng() % 3), l, double(1 + rng() % 8)});
  }
  return ops;
}

}  // namespace

TEST_CASE("phaze estimator: operator classes") {
  CHECK(classify_op("linear") == op_class::tensor);
  CHECK(classify_op("conv2d") == op_class::tensor);
  CHECK(classify_op("scaled_dot_product_attention") == op_class::tensor);
  CHECK(classify_op("transpose.int") == op_class::nop);
  CHECK(classify_op("view") == op_class::nop);
  CHECK(classify_op("gelu") == op_class::vector);
  CHECK(classify_op("add.Tensor") == op_class::vector);
}

TEST_CASE("phaze estimator: hand-computed work and rooflines") {
  // linear: 64 tokens x 256 in -> 64 x 512 out, weight 256 x 512, float32.
  op_graph_builder b;
  const auto x = b.add_op({.id = 0, .op = "layer_norm", .fwd_ms = 0, .bwd_ms = 0, .out_bytes = 4.0 * 64 * 256});
  const auto y = b.add_op({.id = 1, .op = "linear", .fwd_ms = 0, .bwd_ms = 0, .param_bytes = 4.0 * 256 * 512,
                           .out_bytes = 4.0 * 64 * 512});
  b.add_edge(x, y, 4.0 * 64 * 256);
  const auto g = std::move(b).build();
  const estimator_options eo;
  const auto w = operator_work(g, y, eo);
  CHECK(w.kind == op_class::tensor);
  CHECK(w.work == doctest::Approx(64.0 * 256 * 512));
  CHECK(w.bytes == 4.0 * (64 * 256 + 64 * 512 + 256 * 512));
  CHECK(operator_work(g, y, eo, 2).work == doctest::Approx(2.0 * 64 * 256 * 512));  // activations scale
  // TPUv4-like: 8 cores of 128 x 128; compute 512 cycles on one core, 64 on all; memory
  // (16384 + 32768 + 131072) words / 4096 per cycle = 44 cycles.
  const auto l = estimate_latency(w, tpu_v4_like(), eo);
  CHECK(l.single_ms == doctest::Approx(512 / 1.05e9 * 1000));
  CHECK(l.parallel_ms == doctest::Approx(64 / 1.05e9 * 1000));
  CHECK(l.single_bw_ms == doctest::Approx(1024 / 1.05e9 * 1000));
  // a vector op is bandwidth-bound on one core of two at 4096 words/cycle: layer_norm 8 ops x
  // 16384 elements / 128 lanes = 1024 cycles single, 512 parallel.
  const auto lv = estimate_latency(operator_work(g, x, eo), tpu_v4_like(), eo);
  CHECK(lv.single_ms == doctest::Approx(1024 / 1.05e9 * 1000));
  CHECK(lv.parallel_ms == doctest::Approx(512 / 1.05e9 * 1000));
}

TEST_CASE("phaze layer problem: zero-cost operators removed, TC -> VC fused") {
  // linear -> view -> gelu -> linear -> add ; layer_norm -> add
  op_graph_builder b;
  const char* names[] = {"linear", "view", "gelu", "linear", "add.Tensor", "layer_norm"};
  for (int i = 0; i < 6; ++i) b.add_op({.id = i, .op = names[i], .fwd_ms = 1, .bwd_ms = 1, .out_bytes = 4096});
  b.add_edge(0, 1, 4096);
  b.add_edge(1, 2, 4096);
  b.add_edge(2, 3, 4096);
  b.add_edge(3, 4, 4096);
  b.add_edge(5, 4, 4096);
  const auto g = std::move(b).build();
  std::vector<op_class> kind;
  std::vector<op_latency> lat;
  for (std::size_t v = 0; v < 6; ++v) kind.push_back(classify_op(g.op(v).op)), lat.push_back({double(v + 1), 0.5, 2, 1});
  const std::vector<std::size_t> members{0, 1, 2, 3, 5, 4};  // a topological order
  const auto p = make_layer_problem(g, members, kind, lat);
  // 0+2 fused (latency of 0), 3 TC (its only successor 4 has two predecessors), 5 VC, 4 VC
  REQUIRE(p.forward.size() == 4);
  CHECK(p.forward[0].kind == phaze_op_kind::fused);
  CHECK(p.forward[0].latency == 1);
  CHECK(p.forward[1].kind == phaze_op_kind::tensor);
  CHECK(p.forward[1].latency == 4);
  CHECK(p.forward[2].kind == phaze_op_kind::vector);
  CHECK(p.forward[2].latency == 6);
  CHECK(p.backward[3].latency == 2);
  CHECK(p.successors == std::vector<std::vector<int>>{{1}, {3}, {3}, {}});
  const std::vector<std::size_t> not_topological{0, 1, 2, 3, 4, 5};
  CHECK_THROWS_AS(make_layer_problem(g, not_topological, kind, lat), std::invalid_argument);
}

TEST_CASE("phaze list schedule: valid, and optimal where the oracle says so") {
  std::mt19937_64 rng(77);
  int matched = 0, total = 0;
  for (int rep = 0; rep < 40; ++rep) {
    const std::size_t n = 2 + rng() % 5;
    const auto adj = test::random_adjacency(rng, n, test::all_shapes[rep % 5]);
    const auto ops = random_ops(rng, n);
    const ilp::phaze_schedule_options one{.tensor_cores = 1, .vector_cores = 1};
    const auto s = list_schedule(adj, ops, one);
    CHECK(ilp::validate_phaze_schedule(adj, std::span<const phaze_operator>(ops), one, s) == "");
    const double opt = exhaustive_makespan(adj, ops);
    CHECK(s.makespan >= opt - 1e-9);
    matched += s.makespan <= opt + 1e-9;
    ++total;
    const ilp::phaze_schedule_options many{.tensor_cores = 3, .vector_cores = 2};
    const auto s3 = list_schedule(adj, ops, many);
    CHECK(ilp::validate_phaze_schedule(adj, std::span<const phaze_operator>(ops), many, s3) == "");
  }
  MESSAGE("list schedule optimal on " << matched << " of " << total << " one-core layers");
  CHECK(matched > total / 2);
  // chain: Σ min(ℓ, ℓ̂) exactly
  const std::vector<std::vector<int>> chain{{1}, {2}, {}};
  const std::vector<phaze_operator> ops{{phaze_op_kind::tensor, 4, 3}, {phaze_op_kind::vector, 2, 5}, {phaze_op_kind::fused, 6, 1}};
  CHECK(list_schedule(chain, ops, {.tensor_cores = 2, .vector_cores = 2}).makespan == 3 + 2 + 1);
  // two independent TC operators, 2 TCs: both on one core each (4), not parallel one after the other (6)
  const std::vector<std::vector<int>> two{{}, {}};
  const std::vector<phaze_operator> tt{{phaze_op_kind::tensor, 4, 3}, {phaze_op_kind::tensor, 4, 3}};
  CHECK(list_schedule(two, tt, {.tensor_cores = 2, .vector_cores = 1}).makespan == 4);
}

#ifdef DEVPLACE_HAS_GLPK
TEST_CASE("phaze per-layer scheduling through the ILP (GLPK): proved, never worse than the list schedule") {
  std::mt19937_64 rng(91);
  for (int rep = 0; rep < 8; ++rep) {
    const std::size_t n = 3 + rng() % 4;
    layer_problem p;
    p.successors = test::random_adjacency(rng, n, test::all_shapes[rep % 5]);
    p.forward = random_ops(rng, n);
    p.backward = random_ops(rng, n);
    const core_config c{.num_tc = 1, .num_vc = 1};
    const auto heuristic = schedule_layer(p, c);
    const auto exact = schedule_layer(p, c, ilp::glpk_solver{}, {.ilp_time_limit_s = 30});
    CHECK(heuristic.forward.method == schedule_method::list);
    REQUIRE(exact.forward.proved());
    REQUIRE(exact.backward.proved());
    CHECK(exact.forward.makespan_ms <= heuristic.forward.makespan_ms + 1e-9);
    CHECK(exact.forward.makespan_ms == doctest::Approx(exhaustive_makespan(p.successors, p.forward)));
    CHECK(exact.backward.makespan_ms == doctest::Approx(exhaustive_makespan(reversed(p.successors), p.backward)));
  }
  // above max_ilp_pairs the ILP is not tried
  layer_problem wide;
  wide.successors.resize(4);
  wide.forward = wide.backward = std::vector<phaze_operator>(4, {phaze_op_kind::vector, 2, 1});
  const auto t = schedule_layer(wide, {.num_tc = 1, .num_vc = 1}, ilp::glpk_solver{}, {.max_ilp_pairs = 5});
  CHECK(t.incomparable == 6);
  CHECK(t.forward.method == schedule_method::list);
}
#endif

TEST_CASE("phaze layer graph: layers, memoised schedules, sums and edges") {
  std::mt19937_64 rng(3);
  const auto adj = test::random_adjacency(rng, 40, test::shape::chain_with_skips);
  op_graph_builder b;
  const char* names[] = {"linear", "gelu", "view", "add.Tensor"};
  for (std::size_t v = 0; v < adj.size(); ++v)
    b.add_op({.id = std::int64_t(v), .op = names[v % 4], .fwd_ms = 1, .bwd_ms = 1,
              .param_bytes = v % 4 == 0 ? 4096.0 * 64 : 0, .out_bytes = 4096});
  for (std::size_t u = 0; u < adj.size(); ++u)
    for (int v : adj[u]) b.add_edge(u, std::size_t(v), 4096);
  const auto g = std::move(b).build();
  const auto split = split_layers(g, 8);
  REQUIRE(split.members.size() == 8);
  const auto lg = make_layer_graph(g, split, tpu_v4_like(), 2, 1);
  const auto& L = lg.variant.graph;
  REQUIRE(L.num_vertices() == 8);
  double params = 0, edge_bytes = 0, layer_edges = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) params += g.param_bytes(v);
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (auto v : g.out_edges(u)) edge_bytes += split.layer_of[u] != split.layer_of[v] ? g.edge_bytes(u, v) : 0;
  double lparams = 0;
  for (std::size_t l = 0; l < 8; ++l) {
    lparams += L.param_bytes(l);
    for (auto m : L.out_edges(l)) layer_edges += L.edge_bytes(l, m);
    CHECK(L.forward_ms(l) > 0);
  }
  CHECK(lparams == params);
  CHECK(layer_edges == 2 * edge_bytes);  // micro-batch 2 of a graph profiled at 1
  CHECK(lg.report.unique_layers <= 8);
  // the DP runs on it
  const auto r = place(L, {.devices = 8, .global_batch = 16});
  CHECK(r.status == status::optimal);
}

namespace {
/// A copy of `g` whose operator v carries the layer id `layer(v)` (< 0: none).
template <class F>
op_graph phaze_with_layer_ids(const op_graph& g, F&& layer) {
  op_graph_builder b;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    auto a = g.op(v);
    a.layer = layer(v);
    b.add_op(std::move(a));
  }
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (auto v : g.out_edges(u)) b.add_edge(u, std::size_t(v), g.edge_bytes(u, v));
  return std::move(b).build();
}
}  // namespace

TEST_CASE("phaze layers: the graph's layer ids when present, equal blocks otherwise") {
  std::mt19937_64 rng(5);
  const auto adj = test::random_adjacency(rng, 40, test::shape::chain_with_skips);
  op_graph_builder b;
  const char* names[] = {"linear", "gelu", "view", "add.Tensor"};
  for (std::size_t v = 0; v < adj.size(); ++v)
    b.add_op({.id = std::int64_t(v), .op = names[v % 4], .fwd_ms = 1, .bwd_ms = 1,
              .param_bytes = v % 4 == 0 ? 4096.0 * 64 : 0, .out_bytes = 4096.0 * double(1 + v % 3)});
  for (std::size_t u = 0; u < adj.size(); ++u)
    for (int v : adj[u]) b.add_edge(u, std::size_t(v), 4096);
  const auto g = std::move(b).build();
  // No ids: equal blocks, as split_layers.
  const auto blocks = split_layers(g, 8);
  CHECK(!has_layer_ids(g));
  const auto w = workload_layers(g, 8);
  CHECK(!w.from_ids);
  CHECK(w.layer_of == blocks.layer_of);
  CHECK(w.members == blocks.members);
  // Ids that name the same blocks (sparse, in either order): the same layers, the same plan.
  const placement_options po{.devices = 8, .global_batch = 16, .device_memory_bytes = 64.0 * 4096 * 64};
  const auto plan_of = [&](const op_graph& h, const layer_split& s) {
    const auto lg = make_layer_graph(h, s, tpu_v4_like(), 1, 1);
    return place(lg.variant.graph, po);
  };
  const auto base = plan_of(g, blocks);
  REQUIRE(base.status == status::optimal);
  for (bool reversed : {false, true}) {
    const auto h = phaze_with_layer_ids(g, [&](std::size_t v) {
      const auto l = std::int64_t(blocks.layer_of[v]);
      return reversed ? 1000 - 10 * l : 10 * l + 3;
    });
    CHECK(has_layer_ids(h));
    const auto s = workload_layers(h, 3);  // the count is ignored when ids are present
    CHECK(s.from_ids);
    REQUIRE(s.members.size() == 8);
    for (std::size_t l = 0; l < 8; ++l) {
      const std::size_t block = reversed ? 7 - l : l;
      CHECK(s.members[l] == blocks.members[block]);
      CHECK(s.ids[l] == (reversed ? 1000 - 10 * std::int64_t(block) : 10 * std::int64_t(block) + 3));
    }
    const auto p = plan_of(h, s);
    REQUIRE(p.status == status::optimal);
    CHECK(p.time_per_batch_ms == doctest::Approx(base.time_per_batch_ms).epsilon(1e-12));
    if (!reversed) {  // the same layer graph: the same plan (reversed, ties may split differently)
      CHECK(p.pipeline_stages() == base.pipeline_stages());
      CHECK(p.data_parallel == base.data_parallel);
    }
  }
  // Layers of uneven sizes: every operator in its id's layer, members in topological order.
  const auto uneven = phaze_with_layer_ids(g, [](std::size_t v) { return std::int64_t(v < 5 ? 0 : v < 30 ? 1 : 2); });
  const auto u = workload_layers(uneven, 24);
  REQUIRE(u.members.size() == 3);
  CHECK(u.members[0].size() == 5);
  CHECK(u.members[1].size() == 25);
  CHECK(u.members[2].size() == 10);
  CHECK(make_layer_graph(uneven, u, tpu_v4_like(), 1, 1).variant.graph.num_vertices() == 3);
  // A layer that is not convex (operator 0 and 39 in layer 0, the rest between them in layer 1):
  // the layer graph has a cycle.
  const auto cyclic = phaze_with_layer_ids(g, [](std::size_t v) { return std::int64_t(v == 0 || v == 39 ? 0 : 1); });
  CHECK_THROWS_WITH_AS(split_layers_by_id(cyclic), doctest::Contains("acyclic layer graph"), std::invalid_argument);
  // Some operators with ids, some without: a clear error.
  const auto partial = phaze_with_layer_ids(g, [](std::size_t v) { return std::int64_t(v == 17 ? -1 : 0); });
  CHECK_THROWS_WITH_AS(workload_layers(partial, 8), "phaze: operator id 17 has no layer id while others have one (give every operator a layer or none)",
                       std::invalid_argument);
}
