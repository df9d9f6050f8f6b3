// Compile-time checks: which types model the library's concepts, and which do not.
#include "devplace/dag/concepts.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/dag/properties.hpp"
#include "devplace/topology/concepts.hpp"
#include "devplace/topology/matrix_topology.hpp"

#include <Eigen/Core>
#include <doctest/doctest.h>

#include <list>
#include <vector>

#include "archetypes/minimal_dag.hpp"
#include "archetypes/minimal_topology.hpp"

namespace {
// A user type that models dag through ADL free functions.
namespace user {
struct adjacency {
  std::vector<std::vector<long>> succ;
};
inline std::size_t num_vertices(const adjacency& a) { return a.succ.size(); }
inline const std::vector<long>& out_edges(const adjacency& a, std::size_t u) { return a.succ[u]; }
}  // namespace user

// A user type that models dag through the traits escape hatch.
struct legacy_graph {
  std::vector<std::list<unsigned>> s;
};
}  // namespace

template <>
struct devplace::dag_traits<legacy_graph> {
  static std::size_t num_vertices(const legacy_graph& g) { return g.s.size(); }
  static const std::list<unsigned>& out_edges(const legacy_graph& g, std::size_t u) { return g.s[u]; }
};

using namespace devplace;

static_assert(dag<std::vector<std::vector<int>>>);
static_assert(dag<std::vector<std::vector<std::size_t>>>);
static_assert(dag<csr_dag>);
static_assert(bidirectional_dag<csr_dag>);
static_assert(dag<op_graph>);
static_assert(profiled_dag<op_graph>);
static_assert(dag<archetypes::minimal_dag>);
static_assert(!bidirectional_dag<archetypes::minimal_dag>);
static_assert(dag<user::adjacency>);
static_assert(dag<legacy_graph>);
static_assert(!dag<std::vector<int>>);
static_assert(!dag<std::vector<std::vector<double>>>);
static_assert(!dag<int>);
static_assert(!bidirectional_dag<std::vector<std::vector<int>>>);
static_assert(!profiled_dag<csr_dag>);
static_assert(std::same_as<vertex_id_t<std::vector<std::vector<int>>>, int>);
static_assert(std::same_as<vertex_id_t<csr_dag>, csr_dag::vertex_type>);

static_assert(vertex_cost_fn<unit_cost, csr_dag>);
static_assert(vertex_cost_fn<by_vertex<std::vector<double>>, csr_dag>);
static_assert(edge_cost_fn<unit_cost, csr_dag>);

static_assert(device_topology<matrix_topology>);
static_assert(device_topology<Eigen::MatrixXd>);
static_assert(device_topology<archetypes::minimal_topology>);
static_assert(!device_topology<std::vector<double>>);

TEST_CASE("CPOs dispatch to traits, members, ADL and the range-of-ranges default") {
  const std::vector<std::vector<int>> vv{{1, 2}, {2}, {}};
  CHECK(num_vertices(vv) == 3);
  CHECK(std::ranges::distance(out_edges(vv, 0)) == 2);
  const user::adjacency adj{{{1}, {}}};
  CHECK(num_vertices(adj) == 2);
  CHECK(*std::ranges::begin(out_edges(adj, 0)) == 1);
  const legacy_graph lg{{{1u, 2u}, {2u}, {}, {}}};
  CHECK(num_vertices(lg) == 4);
  CHECK(std::ranges::distance(out_edges(lg, 0)) == 2);
  const archetypes::minimal_dag md(vv);
  CHECK(num_vertices(md) == 3);
  CHECK(*std::ranges::begin(out_edges(md, 1)) == 2);
  Eigen::MatrixXd m(2, 2);
  m << 0, 5, 7, 0;
  CHECK(num_devices(m) == 2);
  CHECK(bandwidth_gbps(m, 1, 0) == 7.0);
  CHECK(latency_us(m, 0, 1) == 0.0);
  CHECK(device_memory_bytes(m, 0) == std::numeric_limits<double>::infinity());
  CHECK(transfer_ms(m, 0, 1, 5e6) == doctest::Approx(1.0));
}
