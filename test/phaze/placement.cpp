// PHAZE's placement DP (phaze/placement.hpp) against a brute-force oracle written here: every
// ordered partition of the layers into stages with no backward edge × every variant (t, b) ×
// every activation policy × every d ≤ min(K, B), each stage's load and memory recomputed by a
// separate implementation of seed-phaze.md §3.4, F by eq. 17/18. Graphs have topologically
// sorted ids, so the serial layer order inside a stage is ascending id.
#include "devplace/phaze/placement.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "support/random_dag.hpp"

using namespace devplace;
using phaze::placement_options;
using phaze::workload_variant;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

struct oracle_stage {
  double stash = 0, recompute = 0, params = 0, fixed = 0, act = 0, inbound = 0;
  std::size_t devices = 1;
};

/// §3.4 for the layers with label == s, written directly over ids.
oracle_stage oracle_stage_cost(const workload_variant<op_graph>& w, const std::vector<std::size_t>& label,
                               std::size_t s, const placement_options& o) {
  const auto& g = w.graph;
  const std::size_t n = g.num_vertices();
  const double ms_per_byte = 1.0 / (o.bandwidth_gbps * 1e6);
  auto arrive = [&](double bytes) { return bytes > 0 ? bytes * ms_per_byte : 0.0; };
  oracle_stage r;
  std::vector<double> fin(n, 0), finb(n, 0);
  double t = 0, fw_sum = 0;
  for (std::size_t v = 0; v < n; ++v) {
    if (label[v] != s) continue;
    double start = t;
    for (auto u : g.in_edges(v)) {
      const double b = g.edge_bytes(u, v);
      start = std::max(start, label[u] == s ? fin[u] : arrive(b));
      if (label[u] != s) r.inbound += b;
    }
    fin[v] = t = start + g.forward_ms(v);
    fw_sum += g.forward_ms(v);
    r.params += g.param_bytes(v);
    r.act += g.memory_bytes(v);
    if (!w.tensor_parallel.empty() && w.tensor_parallel[v]) r.devices = w.tensor_width;
  }
  auto bwd = [&](double t0) {
    double tb = t0;
    for (std::size_t v = n; v-- > 0;) {
      if (label[v] != s) continue;
      double start = tb;
      for (auto x : g.out_edges(v)) start = std::max(start, label[x] == s ? finb[x] : arrive(g.edge_bytes(v, x)));
      finb[v] = tb = start + g.backward_ms(v);
    }
    return tb;
  };
  r.stash = t + bwd(0);
  r.recompute = t + bwd(fw_sum);
  r.fixed = (2 + o.optimizer_bytes_per_param_byte) * r.params + r.act;
  return r;
}

/// Calls f(label, stages) for every labelling with labels 0..s-1 all used and label(u) ≤ label(v)
/// on every edge.
template <class F>
void for_each_ordered_partition(const op_graph& g, F&& f) {
  const std::size_t n = g.num_vertices();
  std::vector<std::size_t> label(n, 0);
  auto rec = [&](auto&& self, std::size_t v) -> void {
    if (v == n) {
      std::vector<char> used(n, 0);
      std::size_t top = 0;
      for (auto l : label) used[l] = 1, top = std::max(top, l);
      for (std::size_t l = 0; l <= top; ++l)
        if (!used[l]) return;
      f(label, top + 1);
      return;
    }
    std::size_t lo = 0;
    for (auto u : g.in_edges(v)) lo = std::max(lo, label[u]);
    for (std::size_t l = lo; l < n; ++l) {
      label[v] = l;
      self(self, v + 1);
    }
  };
  rec(rec, 0);
}

double oracle_F(const std::vector<workload_variant<op_graph>>& variants, const placement_options& o) {
  double best = inf;
  for (const auto& w : variants) {
    const std::size_t B = o.global_batch / w.micro_batch;
    for_each_ordered_partition(w.graph, [&](const std::vector<std::size_t>& label, std::size_t s) {
      std::vector<oracle_stage> st;
      std::size_t a = 0;
      for (std::size_t i = 0; i < s; ++i) st.push_back(oracle_stage_cost(w, label, i, o)), a += st.back().devices;
      for (bool rc : {false, true}) {
        bool fits = true;
        double load = 0;
        for (std::size_t i = 0; i < s; ++i) {
          const std::size_t pos = s - i;
          const double stash = rc ? st[i].inbound : st[i].act;
          fits = fits && st[i].fixed + double(pos - 1) * stash <= o.device_memory_bytes;
          load = std::max(load, rc && pos > 1 ? st[i].recompute : st[i].stash);
        }
        if (!fits) continue;
        for (std::size_t d = 1; d <= std::min(o.devices, B); ++d) {
          if (d * a > o.devices) continue;
          const double per = std::ceil(double(B) / double(d));
          const double sync = o.resync_factor * double(d - 1) / double(d) * st[0].params / (o.bandwidth_gbps * 1e6);
          best = std::min(best, (per + double(s) - 1) * load + sync);
        }
      }
    });
  }
  return best;
}

op_graph random_layers(std::mt19937_64& rng, const std::vector<std::vector<int>>& adj) {
  op_graph_builder b;
  for (std::size_t v = 0; v < adj.size(); ++v)
    b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = double(1 + rng() % 6), .bwd_ms = double(1 + rng() % 9),
              .fwd_mem_bytes = double(rng() % 30) * 1e6, .param_bytes = double(rng() % 8) * 1e6});
  for (std::size_t u = 0; u < adj.size(); ++u)
    for (int v : adj[u]) b.add_edge(u, static_cast<std::size_t>(v), double(1 + rng() % 9) * 1e6);
  return std::move(b).build();
}

std::vector<std::vector<int>> chain(std::size_t n) {
  std::vector<std::vector<int>> adj(n);
  for (std::size_t v = 0; v + 1 < n; ++v) adj[v].push_back(int(v + 1));
  return adj;
}

/// A variant with t > 1: every layer with an even id is a slice (its costs divided by t).
workload_variant<op_graph> sliced_variant(std::mt19937_64& rng, const std::vector<std::vector<int>>& adj,
                                          std::size_t t, std::size_t b) {
  workload_variant<op_graph> w{.tensor_width = t, .micro_batch = b, .graph = random_layers(rng, adj)};
  w.tensor_parallel.resize(adj.size());
  for (std::size_t v = 0; v < adj.size(); ++v) w.tensor_parallel[v] = v % 2 == 0;
  return w;
}

/// What the cases covered, so that a test that exercises nothing fails.
struct coverage {
  int infeasible = 0, multi_stage = 0, data_parallel = 0, recompute = 0, sliced = 0;
};

void check_against_oracle(const std::vector<workload_variant<op_graph>>& variants, const placement_options& o,
                          coverage& cov) {
  const auto r = phaze::place(std::span<const workload_variant<op_graph>>(variants), o);
  const double expect = oracle_F(variants, o);
  if (expect == inf) {
    ++cov.infeasible;
    CHECK(r.status == status::infeasible);
    CHECK_FALSE(r.has_solution());
    return;
  }
  REQUIRE(r.status == status::optimal);
  CHECK(r.time_per_batch_ms == doctest::Approx(expect).epsilon(1e-12));
  // the plan's own numbers: p · Σa ≤ K, d ≤ min(K, B), throughput = global batch / F
  CHECK(r.devices_used <= o.devices);
  CHECK(r.data_parallel <= std::min(o.devices, r.micro_batches));
  CHECK(r.samples_per_s == doctest::Approx(double(o.global_batch) / r.time_per_batch_ms * 1000));
  std::size_t layers = 0;
  for (const auto& s : r.stages) layers += s.layers.size();
  CHECK(layers == variants.front().graph.num_vertices());
  cov.multi_stage += r.pipeline_stages() > 1;
  cov.data_parallel += r.data_parallel > 1;
  cov.recompute += r.recompute;
  cov.sliced += r.tensor_width > 1;
}

}  // namespace

TEST_CASE("phaze placement: the DP equals the brute-force oracle on chains") {
  std::mt19937_64 rng(13);
  coverage cov;
  for (std::size_t n = 1; n <= 7; ++n)
    for (std::size_t K : {1, 3, 8}) {
      const auto adj = chain(n);
      std::vector<workload_variant<op_graph>> vs;
      vs.push_back({.tensor_width = 1, .micro_batch = 1, .graph = random_layers(rng, adj)});
      vs.push_back(sliced_variant(rng, adj, 2, 2));
      for (double mem : {inf, 60e6, 25e6}) {
        CAPTURE(n);
        CAPTURE(K);
        CAPTURE(mem);
        check_against_oracle(vs, {.devices = K, .global_batch = 8, .bandwidth_gbps = 1, .device_memory_bytes = mem}, cov);
      }
    }
  MESSAGE("chains: infeasible " << cov.infeasible << ", multi-stage " << cov.multi_stage << ", d > 1 "
          << cov.data_parallel << ", recompute " << cov.recompute << ", t > 1 " << cov.sliced);
  CHECK(cov.infeasible > 0);
  CHECK(cov.multi_stage > 0);
  CHECK(cov.data_parallel > 0);
  CHECK(cov.recompute > 0);
  CHECK(cov.sliced > 0);
}

TEST_CASE("phaze placement: the DP equals the brute-force oracle on small random DAGs") {
  std::mt19937_64 rng(2024);
  coverage cov;
  for (int rep = 0; rep < 3; ++rep)
    for (auto sh : test::all_shapes)
      for (std::size_t n : {3, 5, 6}) {
        const auto adj = test::random_adjacency(rng, n, sh);
        std::vector<workload_variant<op_graph>> vs;
        vs.push_back({.tensor_width = 1, .micro_batch = 2, .graph = random_layers(rng, adj)});
        vs.push_back(sliced_variant(rng, adj, 4, 1));
        const std::size_t K = 2 + rng() % 9;
        const double mem = rng() % 2 ? inf : double(40 + rng() % 60) * 1e6;
        CAPTURE(n);
        CAPTURE(K);
        CAPTURE(mem);
        check_against_oracle(vs, {.devices = K, .global_batch = 4, .bandwidth_gbps = 2, .device_memory_bytes = mem,
                                  .optimizer_bytes_per_param_byte = double(rep % 2)},
                             cov);
      }
  MESSAGE("DAGs: infeasible " << cov.infeasible << ", multi-stage " << cov.multi_stage << ", d > 1 "
          << cov.data_parallel << ", recompute " << cov.recompute << ", t > 1 " << cov.sliced);
  CHECK(cov.multi_stage > 0);
  CHECK(cov.data_parallel > 0);
}

TEST_CASE("phaze placement: hand-computed two-layer chain") {
  // layers 0 -> 1, fw 1 / 2 ms, bw 2 / 4 ms, edge 1e6 bytes at 1 GB/s = 1 ms, params 1e9 / 0 B.
  op_graph_builder b;
  b.add_op({.id = 0, .fwd_ms = 1, .bwd_ms = 2, .param_bytes = 1e9});
  b.add_op({.id = 1, .fwd_ms = 2, .bwd_ms = 4});
  b.add_edge(0, 1, 1e6);
  const auto g = std::move(b).build();
  // K = 1, B = 4: one stage, F = (4 + 0) · (3 + 6) = 36 ms.
  auto r = phaze::place(g, {.devices = 1, .global_batch = 4, .bandwidth_gbps = 1});
  CHECK(r.time_per_batch_ms == 36);
  CHECK(r.pipeline_stages() == 1);
  // K = 2, B = 4, huge resync (4 · 1/2 · 1e9 B / 1 GB/s = 2000 ms) forbids d = 2. Two stages:
  // stage {0} (s = 2): fw 1, bw waits for the gradient (1 ms) then 2 → 1 + 3 = 4 ms; stage {1}
  // (s = 1): fw waits for the input (1 ms) then 2 → 3, bw 4 → 7 ms. F = (4 + 1) · 7 = 35 < 36.
  r = phaze::place(g, {.devices = 2, .global_batch = 4, .bandwidth_gbps = 1});
  CHECK(r.time_per_batch_ms == 35);
  REQUIRE(r.pipeline_stages() == 2);
  CHECK(r.stages[0].layers == std::vector<std::size_t>{0});
  CHECK(r.stages[0].position == 2);
  CHECK(r.stages[1].latency_ms == 7);
  CHECK(r.data_parallel == 1);
  // with no parameters d = 2 wins: F = 2 · 9 = 18 ms.
  op_graph_builder b2;
  b2.add_op({.id = 0, .fwd_ms = 1, .bwd_ms = 2});
  b2.add_op({.id = 1, .fwd_ms = 2, .bwd_ms = 4});
  b2.add_edge(0, 1, 1e6);
  r = phaze::place(std::move(b2).build(), {.devices = 2, .global_batch = 4, .bandwidth_gbps = 1});
  CHECK(r.time_per_batch_ms == 18);
  CHECK(r.data_parallel == 2);
  CHECK(r.devices_used == 2);
}

TEST_CASE("phaze placement: statuses and argument checks") {
  std::mt19937_64 rng(5);
  const auto g = random_layers(rng, chain(4));
  CHECK(phaze::place(g, {.devices = 4, .global_batch = 8, .device_memory_bytes = 1}).status == status::infeasible);
  CHECK(phaze::place(g, {.devices = 4, .global_batch = 8, .max_downsets = 3}).status == status::work_limit);
  // 5 down-sets x (4 + 1) x (4 + 1) = 125 entries
  CHECK(phaze::place(g, {.devices = 4, .global_batch = 8, .max_table_entries = 124}).status == status::work_limit);
  CHECK(phaze::place(g, {.devices = 4, .global_batch = 8, .max_table_entries = 125}).status == status::optimal);
  CHECK_THROWS_AS(phaze::place(g, {.devices = 0}), std::invalid_argument);
  CHECK_THROWS_AS(phaze::place(g, {.devices = 2, .bandwidth_gbps = 0}), std::invalid_argument);
  std::vector<workload_variant<op_graph>> vs{{.micro_batch = 3, .graph = g}};
  CHECK_THROWS_AS(phaze::place(std::span<const workload_variant<op_graph>>(vs), {.devices = 2, .global_batch = 8}),
                  std::invalid_argument);
}
