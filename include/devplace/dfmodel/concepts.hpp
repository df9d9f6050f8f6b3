#pragma once
/// \file dfmodel/concepts.hpp
/// What DFModel reads from a user's workload and network types, and the one-time copies into
/// the `workload` / `network` its passes run on. Every customisation point tries a member
/// function first, then a free function found by argument-dependent lookup.
///
/// A workload is a `dag` (dag/concepts.hpp) whose vertices are kernels, listed in a topological
/// order (every edge u -> v has u < v), each edge one tensor. Per kernel v:
///
///   dfmodel::kernel_loops(g, v)     -> dfmodel::loops    {outer, m, k, n}, each >= 1 (required)
///   dfmodel::kernel_operation(g, v) -> dfmodel::kernel_op  what it reads (required)
///   dfmodel::kernel_name(g, v)      -> std::string       default "k<v>"
///   dfmodel::is_backward(g, v)      -> bool              default false
///   dfmodel::reduces_gradient(g, v) -> bool              all-reduce over DP once per step; default false
///   dfmodel::input_port(g, u, v)    -> int               0 or 1: which input of v the tensor u -> v
///                                                          feeds; default: v's inputs by source id
///   dfmodel::step_figures(g)        -> dfmodel::llm_params  layers, batches, word bytes; default {}
///
/// FLOP and bytes follow from the loops: 2·outer·M·K·N for a GEMM (systolic), outer·M·N for an
/// element-wise kernel (SIMD); a kernel writes outer·M·N·word_bytes. DFModel needs the loop sizes
/// and not only these totals because a sharding scheme splits one loop. GEMM operations run on
/// the systolic arrays, element-wise ones on the SIMD lanes; every kernel is free (no pinned
/// configuration or scheme; build a `workload` for pins).
///
/// A network is a list of 1 to 3 one-dimensional dimensions, dimension 0 innermost. Per d:
///
///   dfmodel::dimension_count(n)           -> std::size_t
///   dfmodel::dimension_size(n, d)         -> std::size_t   chips along d
///   dfmodel::dimension_link_gbps(n, d)    -> double        bandwidth of one link (GB/s)
///   dfmodel::dimension_shape(n, d)        -> dim_kind      ring, fully connected or switch
///   dfmodel::dimension_parallelism(n, d)  -> parallelism   TP, PP, DP or none
///
/// Example (archetypes: test/archetypes/dfmodel_archetypes.hpp):
///
///   struct my_layer {   // num_vertices, out_edges as for any dag, and per kernel:
///     dfmodel::loops kernel_loops(std::size_t v) const;
///     dfmodel::kernel_op kernel_operation(std::size_t v) const;
///   };
///   auto sh = dfmodel::shard_exhaustive(layer);
///   auto m = dfmodel::optimise_mapping(layer, sh, dfmodel::make_system(my_net));
///
/// The entry points taking a user type copy it once per call (`to_workload`, `to_network`, O(n + m));
/// convert once yourself for a sweep over many systems.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devplace/dag/concepts.hpp"
#include "devplace/dfmodel/network.hpp"
#include "devplace/dfmodel/workload.hpp"

namespace devplace::dfmodel {

/// The loop sizes of a kernel: Out[M×N] = W[M×K]·X[K×N], `outer` times.
struct loops {
  std::int64_t outer = 1, m = 1, k = 1, n = 1;
};

namespace detail::cpo {

void kernel_loops() = delete;  // poison pills: only ADL finds user overloads
void kernel_operation() = delete;
void kernel_name() = delete;
void is_backward() = delete;
void reduces_gradient() = delete;
void input_port() = delete;
void step_figures() = delete;
void dimension_count() = delete;
void dimension_size() = delete;
void dimension_link_gbps() = delete;
void dimension_shape() = delete;
void dimension_parallelism() = delete;

/// One customisation point: `g.NAME(args...)` when valid, else ADL `NAME(g, args...)`, else the
/// `FALLBACK_EXPR` when `HAS_FALLBACK`, else no overload.
#define DEVPLACE_DFMODEL_CPO(NAME, RESULT, FALLBACK_EXPR, HAS_FALLBACK)                                        \
  struct NAME##_fn {                                                                                          \
    template <class G, class... A>                                                                            \
      requires requires(const G& g, A... a) { g.NAME(a...); } || requires(const G& g, A... a) { NAME(g, a...); } || \
               (HAS_FALLBACK)                                                                                 \
    [[nodiscard]] RESULT operator()(const G& g, A... a) const {                                               \
      if constexpr (requires { g.NAME(a...); }) return static_cast<RESULT>(g.NAME(a...));                     \
      else if constexpr (requires { NAME(g, a...); }) return static_cast<RESULT>(NAME(g, a...));              \
      else return FALLBACK_EXPR;                                                                              \
    }                                                                                                         \
  };

DEVPLACE_DFMODEL_CPO(kernel_loops, loops, loops{}, false)
DEVPLACE_DFMODEL_CPO(kernel_operation, kernel_op, kernel_op::elementwise, false)
DEVPLACE_DFMODEL_CPO(kernel_name, std::string, std::string{}, true)  // empty: "k<v>" (to_workload)
DEVPLACE_DFMODEL_CPO(is_backward, bool, false, true)
DEVPLACE_DFMODEL_CPO(reduces_gradient, bool, false, true)
DEVPLACE_DFMODEL_CPO(input_port, int, -1, true)  // -1: by source id (to_workload)
DEVPLACE_DFMODEL_CPO(step_figures, llm_params, llm_params{}, true)
DEVPLACE_DFMODEL_CPO(dimension_count, std::size_t, 0, false)
DEVPLACE_DFMODEL_CPO(dimension_size, std::size_t, 0, false)
DEVPLACE_DFMODEL_CPO(dimension_link_gbps, double, 0.0, false)
DEVPLACE_DFMODEL_CPO(dimension_shape, dim_kind, dim_kind::ring, false)
DEVPLACE_DFMODEL_CPO(dimension_parallelism, parallelism, parallelism::none, false)
#undef DEVPLACE_DFMODEL_CPO

}  // namespace detail::cpo

inline namespace cpo {
inline constexpr detail::cpo::kernel_loops_fn kernel_loops{};
inline constexpr detail::cpo::kernel_operation_fn kernel_operation{};
inline constexpr detail::cpo::kernel_name_fn kernel_name{};
inline constexpr detail::cpo::is_backward_fn is_backward{};
inline constexpr detail::cpo::reduces_gradient_fn reduces_gradient{};
inline constexpr detail::cpo::input_port_fn input_port{};
inline constexpr detail::cpo::step_figures_fn step_figures{};
inline constexpr detail::cpo::dimension_count_fn dimension_count{};
inline constexpr detail::cpo::dimension_size_fn dimension_size{};
inline constexpr detail::cpo::dimension_link_gbps_fn dimension_link_gbps{};
inline constexpr detail::cpo::dimension_shape_fn dimension_shape{};
inline constexpr detail::cpo::dimension_parallelism_fn dimension_parallelism{};
}  // namespace cpo

/// \concept workload_graph
/// A `dag` of kernels with their loop sizes and operations. Not modelled by `workload` itself
/// (the entry points take it directly). Archetype: test/archetypes/dfmodel_archetypes.hpp
template <class G>
concept workload_graph = dag<G> && !std::same_as<G, workload> && requires(const G& g, std::size_t v) {
  { dfmodel::kernel_loops(g, v) } -> std::same_as<loops>;
  { dfmodel::kernel_operation(g, v) } -> std::same_as<kernel_op>;
};

/// \concept network_model
/// Dimensions with sizes, link bandwidths, shapes and the parallelism each carries. Not modelled
/// by `network` itself. Archetype: test/archetypes/dfmodel_archetypes.hpp
template <class N>
concept network_model = !std::same_as<N, network> && requires(const N& n, std::size_t d) {
  { dfmodel::dimension_count(n) } -> std::same_as<std::size_t>;
  { dfmodel::dimension_size(n, d) } -> std::same_as<std::size_t>;
  { dfmodel::dimension_link_gbps(n, d) } -> std::same_as<double>;
  { dfmodel::dimension_shape(n, d) } -> std::same_as<dim_kind>;
  { dfmodel::dimension_parallelism(n, d) } -> std::same_as<parallelism>;
};

/// Copies any `workload_graph` into a `workload` (O(n + m)) and checks it (`check_workload`:
/// std::invalid_argument on sizes < 1, an edge u -> v with u >= v, or a port other than 0 or 1).
template <workload_graph G>
[[nodiscard]] workload to_workload(const G& g) {
  workload w;
  w.name = "user workload";
  w.llm = dfmodel::step_figures(g);
  const std::size_t n = devplace::num_vertices(g);
  for (std::size_t v = 0; v < n; ++v) {
    const loops l = dfmodel::kernel_loops(g, v);
    kernel k;
    k.name = dfmodel::kernel_name(g, v);
    if (k.name.empty()) k.name = "k" + std::to_string(v);
    k.op = dfmodel::kernel_operation(g, v);
    k.kind = k.op == kernel_op::gemm_weight || k.op == kernel_op::gemm_two_inputs ? kernel_kind::systolic : kernel_kind::simd;
    k.outer = l.outer, k.m = l.m, k.k = l.k, k.n = l.n;
    k.backward = dfmodel::is_backward(g, v);
    k.periodic_all_reduce = dfmodel::reduces_gradient(g, v);
    w.kernels.push_back(std::move(k));
  }
  std::vector<int> next_port(n, 0);  // sources visited in increasing id: ports by source id
  for (std::size_t u = 0; u < n; ++u)
    for (auto x : devplace::out_edges(g, u)) {
      const auto v = static_cast<std::size_t>(x);
      const int given = v < n ? dfmodel::input_port(g, u, v) : -1;
      const int port = given >= 0 ? given : (v < n ? next_port[v]++ : 0);
      w.tensors.push_back({u, v, port});
    }
  check_workload(w);
  return w;
}

/// Copies any `network_model` into a `network` and checks it (`check_network`).
template <network_model N>
[[nodiscard]] network to_network(const N& x) {
  network net;
  const std::size_t D = dfmodel::dimension_count(x);
  for (std::size_t d = 0; d < D; ++d)
    net.dims.push_back({dfmodel::dimension_shape(x, d), dfmodel::dimension_size(x, d), dfmodel::dimension_link_gbps(x, d),
                        dfmodel::dimension_parallelism(x, d)});
  check_network(net);
  return net;
}

}  // namespace devplace::dfmodel
