// The colour-class quotient (transform/class_quotient.hpp) under the exact DP: pipeline_dp on
// the contracted graph against a brute force over the ORIGINAL graph's stage assignments in which
// every class (forward and backward vertices) lies in one stage; hand-computed tiny cases; and
// BERT-L-3 from ../shared (128 supernodes, DP optimal, expanded plan valid).
#include "devplace/transform/class_quotient.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/stage_cost.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif
#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

namespace {

struct node {
  double time, mem;  // time: forward time of a forward node, whole time of a backward node
  std::int64_t cls;  // < 0: own class
  bool bwd;
};
struct edge {
  std::size_t u, v;
  double bytes;
};
struct instance {
  std::vector<node> nodes;
  std::vector<edge> edges;
};

op_graph to_graph(const instance& in) {
  op_graph_builder b;
  for (std::size_t v = 0; v < in.nodes.size(); ++v) {
    op_attributes a;
    a.id = static_cast<std::int64_t>(v);
    a.fwd_ms = in.nodes[v].time;  // as io/tarnawski.hpp stores it: the node's time in fwd_ms
    a.fwd_mem_bytes = in.nodes[v].mem;
    a.group = in.nodes[v].cls;
    a.backward = in.nodes[v].bwd;
    b.add_op(std::move(a));
  }
  for (const auto& e : in.edges) b.add_edge(e.u, e.v, e.bytes);
  return std::move(b).build();
}

// Brute force over the original vertices: every class gets one stage (S^classes assignments),
// forward -> forward edges must not run backwards, backward -> backward edges not forwards, no
// stage empty. A stage's time is the sum of
// its nodes' times plus the bytes of the forward -> forward edges with one end in it at bw GB/s;
// its memory the sum of its nodes' memory plus those bytes. Returns +inf when nothing fits.
double brute_force(const instance& in, std::size_t S, double bw, double mem_cap) {
  const std::size_t n = in.nodes.size();
  std::vector<std::size_t> cls(n);
  std::size_t K = 0;
  {
    std::vector<std::pair<std::int64_t, std::size_t>> seen;
    for (std::size_t v = 0; v < n; ++v) {
      const auto c = in.nodes[v].cls;
      if (c < 0) { cls[v] = K++; continue; }
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == c; });
      if (it == seen.end()) { seen.emplace_back(c, K); cls[v] = K++; } else cls[v] = it->second;
    }
  }
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> st(K, 0);
  for (;;) {
    bool ok = true;
    std::vector<std::size_t> count(S, 0);
    for (std::size_t v = 0; v < n; ++v) ++count[st[cls[v]]];
    for (auto c : count) ok = ok && c > 0;
    for (const auto& e : in.edges) {
      const bool fu = !in.nodes[e.u].bwd, fv = !in.nodes[e.v].bwd;
      if (fu && fv && st[cls[e.u]] > st[cls[e.v]]) ok = false;    // activations flow forwards
      if (!fu && !fv && st[cls[e.u]] < st[cls[e.v]]) ok = false;  // gradients flow backwards
    }
    if (ok) {
      std::vector<double> t(S, 0.0), m(S, 0.0);
      for (std::size_t v = 0; v < n; ++v) { t[st[cls[v]]] += in.nodes[v].time; m[st[cls[v]]] += in.nodes[v].mem; }
      for (const auto& e : in.edges) {
        if (in.nodes[e.u].bwd || in.nodes[e.v].bwd) continue;
        const std::size_t a = st[cls[e.u]], b = st[cls[e.v]];
        if (a == b) continue;
        for (std::size_t s : {a, b}) { t[s] += e.bytes / (bw * 1e6); m[s] += e.bytes; }
      }
      double worst = 0;
      bool fits = true;
      for (std::size_t s = 0; s < S; ++s) { worst = std::max(worst, t[s]); fits = fits && m[s] <= mem_cap; }
      if (fits) best = std::min(best, worst);
    }
    std::size_t i = 0;
    while (i < K && ++st[i] == S) st[i++] = 0;
    if (i == K) break;
  }
  return best;
}

// A forward DAG of nf nodes (edges i -> j, i < j) with classes; training: one backward node per
// forward node, same class, edges mirrored (w' -> u' for u -> w) and v -> v' (saved activations);
// orphans: some backward nodes in classes of their own (no forward node, like a weight-gradient
// step), fed by v' and feeding (v-1)'.
instance random_instance(std::mt19937_64& rng, std::size_t nf, bool training, bool orphans = false) {
  instance in;
  std::uniform_real_distribution<double> time(0.0, 10.0), mem(0.0, 100.0), bytes(0.0, 4e6);
  std::uniform_int_distribution<int> cls(-2, static_cast<int>(nf) / 2);
  std::bernoulli_distribution edge(0.35), zero(0.2);
  for (std::size_t v = 0; v < nf; ++v) in.nodes.push_back({zero(rng) ? 0.0 : time(rng), mem(rng), cls(rng), false});
  for (std::size_t u = 0; u < nf; ++u)
    for (std::size_t w = u + 1; w < nf; ++w)
      if (edge(rng) || w == u + 1) in.edges.push_back({u, w, bytes(rng)});
  if (training) {
    const std::size_t fwd_edges = in.edges.size();
    for (std::size_t v = 0; v < nf; ++v) {
      in.nodes.push_back({time(rng), mem(rng), in.nodes[v].cls, true});
      in.edges.push_back({v, nf + v, bytes(rng)});
    }
    for (std::size_t k = 0; k < fwd_edges; ++k) in.edges.push_back({nf + in.edges[k].v, nf + in.edges[k].u, bytes(rng)});
    // A class-less forward node's backward node joins it only through a shared class: give both one.
    for (std::size_t v = 0; v < nf; ++v)
      if (in.nodes[v].cls < 0) in.nodes[v].cls = in.nodes[nf + v].cls = 1000 + static_cast<std::int64_t>(v);
    std::bernoulli_distribution orphan(0.4);
    for (std::size_t v = 0; orphans && v < nf; ++v)
      if (orphan(rng)) {
        const std::size_t o = in.nodes.size();
        in.nodes.push_back({time(rng), mem(rng), 2000 + static_cast<std::int64_t>(v), true});
        in.edges.push_back({nf + v, o, bytes(rng)});
        if (v > 0) in.edges.push_back({o, nf + v - 1, bytes(rng)});
      }
  }
  return in;
}

}  // namespace

TEST_CASE("Class quotient: pipeline_dp on the supernodes equals a brute force over the original graph") {
  std::mt19937_64 rng(20261125);
  int feasible = 0, infeasible = 0, contracted = 0, fused = 0, with_orphans = 0;
  for (int trial = 0; trial < 240; ++trial) {
    const std::size_t nf = 3 + static_cast<std::size_t>(trial % 5);  // 3..7 forward nodes
    const bool training = trial % 3 != 0, orphans = trial % 3 == 2 && nf <= 5;  // at most 3^10 assignments
    const instance in = random_instance(rng, nf, training, orphans);
    const op_graph g = to_graph(in);
    const auto q = transform::contract_class_quotient(g);
    if (q.graph.num_vertices() < nf) ++contracted;
    if (q.contraction.fused_classes > 0) ++fused;
    if (q.contraction.orphans > 0) ++with_orphans;
    CHECK(q.supernode_of.size() == g.num_vertices());
    for (std::size_t S = 1; S <= 3; ++S) {
      CAPTURE(trial);
      CAPTURE(S);
      const double cap = trial % 3 == 0 ? 120.0 * static_cast<double>(nf) / static_cast<double>(S) : std::numeric_limits<double>::infinity();
      const double expect = brute_force(in, S, 10.0, cap);
      partition_result r;
      if (S <= q.graph.num_vertices()) {
        r = pipeline_dp(q.graph, {.stages = S, .cost = {.device_memory_bytes = cap, .bandwidth_gbps = 10.0}});
      }
      if (std::isinf(expect)) {
        CHECK(!r.has_solution());
        ++infeasible;
        continue;
      }
      REQUIRE(r.status == status::optimal);
      CHECK(r.objective_ms == doctest::Approx(expect).epsilon(1e-9));
      ++feasible;
      // The expanded plan, costed on the original graph by the brute force's rules.
      const auto so = transform::expand_stage_of(q, r.stage_of);
      REQUIRE(so.size() == g.num_vertices());
      for (const auto& e : in.edges) {
        if (!in.nodes[e.u].bwd && !in.nodes[e.v].bwd) CHECK(so[e.u] <= so[e.v]);
        if (in.nodes[e.u].bwd && in.nodes[e.v].bwd) CHECK(so[e.u] >= so[e.v]);
      }
      for (std::size_t v = 0; v < so.size(); ++v)
        for (std::size_t w = 0; w < so.size(); ++w)
          if (in.nodes[v].cls >= 0 && in.nodes[v].cls == in.nodes[w].cls) CHECK(so[v] == so[w]);
      if (!training) {  // inference: devplace's own evaluation of the original graph agrees
        const auto ev = evaluate_partition(g, so, S, {.device_memory_bytes = cap, .bandwidth_gbps = 10.0});
        CHECK(ev.objective_ms == doctest::Approx(expect).epsilon(1e-9));
      }
    }
  }
  CHECK(feasible > 300);
  CHECK(infeasible > 0);
  CHECK(contracted > 30);
  CHECK(fused > 5);         // forward cycles between classes were fused
  CHECK(with_orphans > 20);  // orphaned backward classes were given supernodes
}

TEST_CASE("Class quotient: hand-computed inference and training cases") {
  // a (weights of b, class 0) -> b (class 0) -> c (class 1) <- w (weights of c, class 1); c -> d.
  instance in;
  in.nodes = {{0.0, 10, 0, false}, {2.0, 20, 0, false}, {3.0, 30, 1, false}, {0.0, 40, 1, false}, {1.0, 50, -1, false}};
  in.edges = {{0, 1, 100}, {1, 2, 1e6}, {3, 2, 50}, {2, 4, 2e6}};
  {
    const op_graph g = to_graph(in);
    const auto q = transform::contract_class_quotient(g);
    REQUIRE(q.graph.num_vertices() == 3);
    CHECK(q.classes == 3);
    CHECK(q.supernode_of == std::vector<std::size_t>{0, 0, 1, 1, 2});
    CHECK(q.graph.forward_ms(0) == 2.0);
    CHECK(q.graph.forward_ms(1) == 3.0);
    CHECK(q.graph.memory_bytes(1) == 70.0);
    CHECK(q.graph.num_edges() == 2);
    CHECK(q.graph.edge_bytes(0, 1) == 1e6);
    CHECK(q.graph.edge_bytes(1, 2) == 2e6);
    // S = 2 at 10 GB/s (1e6 bytes = 0.1 ms): {a,b} | {w,c,d}: max(2 + 0.1, 4 + 0.1) = 4.1;
    // {a,b,w,c} | {d}: max(5 + 0.2, 1 + 0.2) = 5.2.
    const auto r = pipeline_dp(q.graph, {.stages = 2});
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective_ms == doctest::Approx(4.1).epsilon(1e-12));
    CHECK(transform::expand_stage_of(q, r.stage_of) == std::vector<std::size_t>{0, 0, 1, 1, 1});
  }
  // Training: b' (class 0, 4 ms) and c' (class 1, 6 ms), edges b -> b', c -> c', c' -> b' (1e6).
  in.nodes.push_back({4.0, 5, 0, true});
  in.nodes.push_back({6.0, 5, 1, true});
  in.edges.push_back({1, 5, 7e5});
  in.edges.push_back({2, 6, 9e5});
  in.edges.push_back({6, 5, 1e6});
  const op_graph g = to_graph(in);
  const auto q = transform::contract_class_quotient(g);
  REQUIRE(q.graph.num_vertices() == 3);
  CHECK(q.graph.forward_ms(0) == 2.0);
  CHECK(q.graph.backward_ms(0) == 4.0);
  CHECK(q.graph.backward_ms(1) == 6.0);
  CHECK(q.graph.backward_ms(2) == 0.0);
  CHECK(q.graph.memory_bytes(0) == 35.0);
  CHECK(q.graph.edge_bytes(0, 1) == 1e6);  // the gradient edge c' -> b' is not added again
  CHECK(q.zero_byte_edges == 0);
  // {0} | {1,2}: max(6 + 0.1, 10 + 0.1) = 10.1; {0,1} | {2}: max(15 + 0.2, 1 + 0.2) = 15.2.
  const auto r = pipeline_dp(q.graph, {.stages = 2});
  REQUIRE(r.status == status::optimal);
  CHECK(r.objective_ms == doctest::Approx(10.1).epsilon(1e-12));
  CHECK(transform::expand_stage_of(q, r.stage_of) == std::vector<std::size_t>{0, 0, 1, 1, 1, 0, 1});
  CHECK_THROWS_AS((void)transform::expand_stage_of(q, std::vector<std::size_t>{0, 1}), std::invalid_argument);
}

TEST_CASE("Class quotient: an orphaned backward class gets a zero-time supernode and a zero-byte mirror edge") {
  // Forward 0 -> 1 (classes 0, 1); backward 2 (class 2, no forward node) -> 3 (class 0, backward).
  // The orphan's artificial forward supernode must come after class 0's: mirror edge fwd(0) -> orphan.
  instance in;
  in.nodes = {{1.0, 0, 0, false}, {2.0, 0, 1, false}, {3.0, 0, 2, true}, {4.0, 0, 0, true}};
  in.edges = {{0, 1, 1e6}, {2, 3, 5e5}};
  const op_graph g = to_graph(in);
  const auto q = transform::contract_class_quotient(g);
  REQUIRE(q.graph.num_vertices() == 3);
  CHECK(q.contraction.orphans == 1);
  CHECK(q.zero_byte_edges == 1);
  const std::size_t orphan = q.supernode_of[2], c0 = q.supernode_of[0];
  CHECK(q.graph.forward_ms(orphan) == 0.0);
  CHECK(q.graph.backward_ms(orphan) == 3.0);
  CHECK(q.graph.backward_ms(c0) == 4.0);
  CHECK(q.graph.edge_bytes(c0, orphan) == 0.0);
  CHECK(q.graph.structure().find_edge(c0, orphan).has_value());
}

TEST_CASE("Class quotient: BERT-L-3 inference (Tarnawski) becomes 128 supernodes and the DP is optimal") {
  const fs::path f = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "dnn-partitioning" / "throughput-inputs" /
                     "OperatorGraphs" / "bert_l-3_inference.json";
  if (!devplace::test::require_path(f)) return;
  const op_graph g = io::read_graph(f);
  REQUIRE(g.num_vertices() == 235);
  const auto q = transform::contract_class_quotient(g);
  CHECK(q.graph.num_vertices() == 128);
  CHECK(count_downsets(q.graph).count == 1428);
  const std::size_t S = 4;
  const auto r = pipeline_dp(q.graph, {.stages = S});
  REQUIRE(r.status == status::optimal);
  const auto so = transform::expand_stage_of(q, r.stage_of);
  REQUIRE(so.size() == g.num_vertices());
  std::vector<std::size_t> count(S, 0);
  for (auto s : so) {
    REQUIRE(s < S);
    ++count[s];
  }
  for (auto c : count) CHECK(c > 0);
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (auto w : g.out_edges(u)) CHECK(so[u] <= so[static_cast<std::size_t>(w)]);  // convex, ordered
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (std::size_t w = 0; w < g.num_vertices(); ++w)
      if (g.op(u).group >= 0 && g.op(u).group == g.op(w).group) CHECK(so[u] == so[w]);
  // Costed on the original 235 operators, the plan has the DP's objective.
  const auto ev = evaluate_partition(g, so, S, stage_cost_options{});
  CHECK(ev.objective_ms == doctest::Approx(r.objective_ms).epsilon(1e-9));
}
