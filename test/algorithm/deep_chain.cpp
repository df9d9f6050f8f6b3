// Graph depth must not become call-stack depth: the cheap algorithms run on a 10^6-operator chain
// (a diamond, then a chain), which overflows the stack of any recursion on depth.
#include <doctest/doctest.h>

#include <cstddef>
#include <limits>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/algorithm/longest_path.hpp"
#include "devplace/algorithm/reconverging.hpp"
#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "devplace/views/with_costs.hpp"

using namespace devplace;

namespace {

constexpr std::size_t deep_n = 1'000'000;

// 0 -> {1, 2} -> 3 -> 4 -> ... -> deep_n-1.
const std::vector<std::vector<int>>& deep_chain() {
  static const std::vector<std::vector<int>> adj = [] {
    std::vector<std::vector<int>> a(deep_n);
    a[0] = {1, 2};
    a[1] = {3};
    a[2] = {3};
    for (std::size_t v = 3; v + 1 < deep_n; ++v) a[v] = {static_cast<int>(v + 1)};
    return a;
  }();
  return adj;
}

}  // namespace

TEST_CASE("topological sort, longest path and reconverging distances on a 10^6-operator chain") {
  const auto& g = deep_chain();
  const auto topo = topological_sort(g);
  REQUIRE(topo.order.size() == deep_n);
  std::vector<std::size_t> pos(deep_n);
  for (std::size_t k = 0; k < deep_n; ++k) pos[topo.order[k]] = k;
  std::size_t backwards = 0;
  for (std::size_t u = 0; u < deep_n; ++u)
    for (int w : g[u]) backwards += pos[u] >= pos[static_cast<std::size_t>(w)];
  CHECK(backwards == 0);
  const auto lp = longest_path(g, unit_cost{});
  CHECK(lp.path.size() == deep_n - 1);  // the diamond takes one of its two sides
  // Vertex 3 is the only reconverging vertex (a cut vertex with in-degree 2); every vertex is
  // that many hops from it along the chain, 1 and 2 are next to it and 0 two hops away.
  const auto d = distance_to_reconverging(g);
  REQUIRE(d.size() == deep_n);
  CHECK(d[0] == 2);
  CHECK(d[1] == 1);
  CHECK(d[2] == 1);
  std::size_t wrong = 0;
  for (std::size_t v = 3; v < deep_n; ++v) wrong += d[v] != v - 3;
  CHECK(wrong == 0);
}

TEST_CASE("topo_dp with S = 4 over a with_costs view of a 10^6-operator chain") {
  const csr_dag chain = to_csr_dag(deep_chain());
  const auto g = views::with_costs(chain, costs{.forward_ms = [](const auto&, std::size_t) { return 1.0; },
                                                .edge_bytes = [](const auto&, std::size_t, std::size_t) { return 1e3; }});
  const op_graph core = to_op_graph(g);
  REQUIRE(core.num_vertices() == deep_n);
  const partition_options o{.stages = 4};
  const auto r = topo_dp(g, o);
  REQUIRE(r.status == status::feasible);
  const auto e = evaluate_partition(core, r.stage_of, 4, o.cost);
  CHECK(e.valid);
  CHECK(r.objective_ms == e.objective_ms);
  // Oracle: a stage of c operators costs c ms plus its cut; the middle stages cut two edges of
  // 1e3 bytes, 2e-4 ms at 10 GB/s, so deep_n / 4 operators per stage is optimal.
  CHECK(r.objective_ms == doctest::Approx(double(deep_n) / 4 + 2e-4).epsilon(1e-12));
  std::vector<std::size_t> size(4, 0);
  for (auto s : r.stage_of) ++size[s];
  CHECK(size == std::vector<std::size_t>(4, deep_n / 4));
}

TEST_CASE("counting down-sets of a 10^6-operator chain refuses the deep_n^2 closure instead of allocating it") {
  const auto r = count_downsets(deep_chain(), {.max_memory_bytes = std::uint64_t{1} << 30});
  CHECK(r.status == status::work_limit);
  CHECK(r.count == 0);
  CHECK(double(downset_enumerator::memory_bytes(deep_n)) == doctest::Approx(2.5e11).epsilon(0.01));
}
