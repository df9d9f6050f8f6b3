// Compile-time checks of the views: what they model, that they compose, and the ownership rule.
#include "devplace/views/all.hpp"
#include "devplace/views/induced.hpp"
#include "devplace/views/quotient.hpp"
#include "devplace/views/reverse.hpp"
#include "devplace/views/with_costs.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "archetypes/minimal_dag.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/dag/op_graph.hpp"

using namespace devplace;

namespace {
using set_t = std::vector<std::size_t>;
}  // namespace

static_assert(dag_view<dag_ref_view<csr_dag>>);
static_assert(!dag_view<csr_dag>);
static_assert(bidirectional_dag<dag_ref_view<csr_dag>>);
static_assert(profiled_dag<dag_ref_view<op_graph>>);
static_assert(dag<dag_ref_view<archetypes::minimal_dag>>);
static_assert(!bidirectional_dag<dag_ref_view<archetypes::minimal_dag>>);
static_assert(dag<views::all_t<const std::vector<std::vector<int>>&>>);

using induced_csr = decltype(views::induced(std::declval<const csr_dag&>(), std::declval<const set_t&>()));
static_assert(bidirectional_dag<induced_csr>);
static_assert(dag<decltype(views::induced(std::declval<const archetypes::minimal_dag&>(), std::declval<const set_t&>()))>);
static_assert(dag<decltype(views::reverse(std::declval<induced_csr>()))>);
static_assert(bidirectional_dag<decltype(views::reverse(views::reverse(std::declval<const csr_dag&>())))>);
static_assert(profiled_dag<decltype(views::induced(std::declval<const op_graph&>(), std::declval<const set_t&>()))>);
static_assert(profiled_dag<decltype(views::quotient(std::declval<const op_graph&>(), std::declval<const set_t&>()))>);
static_assert(!profiled_dag<decltype(views::quotient(std::declval<const csr_dag&>(), std::declval<const set_t&>()))>);
static_assert(profiled_dag<decltype(views::with_costs(std::declval<const csr_dag&>(), costs{}))>);
// The ownership rule: a view over a temporary graph does not compile; over a temporary view it does.
template <class G>
concept can_all = requires(G&& g) { views::all(std::forward<G>(g)); };
template <class G>
concept can_induce = requires(G&& g, const set_t& s) { views::induced(std::forward<G>(g), s); };
template <class G>
concept can_reverse = requires(G&& g) { views::reverse(std::forward<G>(g)); };
static_assert(can_all<const csr_dag&> && can_all<csr_dag&>);
static_assert(!can_all<csr_dag>);  // rvalue graph: would dangle
static_assert(!can_induce<csr_dag>);
static_assert(!can_reverse<csr_dag>);
static_assert(can_reverse<induced_csr>);  // rvalue view: held by value, fine
static_assert(!can_reverse<std::vector<std::vector<int>>&>);  // not bidirectional

TEST_CASE("a view of a view holds it by value, a view of a graph refers to it") {
  const csr_dag g = to_csr_dag(std::vector<std::vector<int>>{{1}, {}});
  const auto r = views::reverse(g);
  CHECK(&r.base().base() == &g);
  const auto rr = views::reverse(r);
  CHECK(&rr.base().base().base() == &g);
  CHECK(num_vertices(rr) == 2);
}
