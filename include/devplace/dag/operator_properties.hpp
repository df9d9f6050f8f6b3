#pragma once
/// \file dag/operator_properties.hpp
/// Optional attributes of an operator beyond the profiled costs of `profiled_dag`
/// (dag/properties.hpp), read by the components that model operators by kind (phaze/, peers/
/// PipeDream). Each is a customisation point that tries a member, then an ADL free function:
///
///   devplace::op_label(g, v)          -> std::string   the operator kind ("linear", "gelu.default");
///                                                       no default: `labelled_dag` requires it
///   devplace::output_bytes(g, v)      -> double        bytes of v's output; < 0 unknown (default -1)
///   devplace::layer_id(g, v)          -> std::int64_t  v's model layer; < 0 none (default -1)
///   devplace::profiled_micro_batch(g) -> double        micro-batch size the costs were profiled at;
///                                                       0 unknown (default 0)
///
/// `op_graph` answers them from its `op_attributes` (op, out_bytes, layer) and `micro_batch_size()`.
/// `to_operator_graph(g)` copies any `profiled_dag` into an `op_graph` with these attributes, in
/// O(n + m).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "devplace/dag/edges.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/dag/properties.hpp"

namespace devplace {
namespace detail::operator_cpo {

void op_label() = delete;
void output_bytes() = delete;
void layer_id() = delete;
void profiled_micro_batch() = delete;

template <class G>
concept member_op_label = requires(const G& g, std::size_t v) { { g.op_label(v) } -> std::convertible_to<std::string>; };
template <class G>
concept adl_op_label = requires(const G& g, std::size_t v) { { op_label(g, v) } -> std::convertible_to<std::string>; };

struct op_label_fn {
  template <class G, std::integral I>
    requires std::same_as<G, op_graph> || member_op_label<G> || adl_op_label<G>
  [[nodiscard]] std::string operator()(const G& g, I v) const {
    const auto vv = static_cast<std::size_t>(v);
    if constexpr (std::same_as<G, op_graph>) return g.op(vv).op;
    else if constexpr (member_op_label<G>) return std::string(g.op_label(vv));
    else return std::string(op_label(g, vv));
  }
};

template <class G>
concept member_output_bytes = requires(const G& g, std::size_t v) { { g.output_bytes(v) } -> std::convertible_to<double>; };
template <class G>
concept adl_output_bytes = requires(const G& g, std::size_t v) { { output_bytes(g, v) } -> std::convertible_to<double>; };

struct output_bytes_fn {
  template <class G, std::integral I>
  [[nodiscard]] double operator()(const G& g, I v) const {
    const auto vv = static_cast<std::size_t>(v);
    if constexpr (std::same_as<G, op_graph>) return g.op(vv).out_bytes;
    else if constexpr (member_output_bytes<G>) return static_cast<double>(g.output_bytes(vv));
    else if constexpr (adl_output_bytes<G>) return static_cast<double>(output_bytes(g, vv));
    else return -1.0;
  }
};

template <class G>
concept member_layer_id = requires(const G& g, std::size_t v) { { g.layer_id(v) } -> std::convertible_to<std::int64_t>; };
template <class G>
concept adl_layer_id = requires(const G& g, std::size_t v) { { layer_id(g, v) } -> std::convertible_to<std::int64_t>; };

struct layer_id_fn {
  template <class G, std::integral I>
  [[nodiscard]] std::int64_t operator()(const G& g, I v) const {
    const auto vv = static_cast<std::size_t>(v);
    if constexpr (std::same_as<G, op_graph>) return g.op(vv).layer;
    else if constexpr (member_layer_id<G>) return static_cast<std::int64_t>(g.layer_id(vv));
    else if constexpr (adl_layer_id<G>) return static_cast<std::int64_t>(layer_id(g, vv));
    else return -1;
  }
};

template <class G>
concept member_micro_batch = requires(const G& g) { { g.profiled_micro_batch() } -> std::convertible_to<double>; };
template <class G>
concept adl_micro_batch = requires(const G& g) { { profiled_micro_batch(g) } -> std::convertible_to<double>; };

struct profiled_micro_batch_fn {
  template <class G>
  [[nodiscard]] double operator()(const G& g) const {
    if constexpr (std::same_as<G, op_graph>) return g.micro_batch_size();
    else if constexpr (member_micro_batch<G>) return static_cast<double>(g.profiled_micro_batch());
    else if constexpr (adl_micro_batch<G>) return static_cast<double>(profiled_micro_batch(g));
    else return 0.0;
  }
};

}  // namespace detail::operator_cpo

inline namespace cpo {
inline constexpr detail::operator_cpo::op_label_fn op_label{};
inline constexpr detail::operator_cpo::output_bytes_fn output_bytes{};
inline constexpr detail::operator_cpo::layer_id_fn layer_id{};
inline constexpr detail::operator_cpo::profiled_micro_batch_fn profiled_micro_batch{};
}  // namespace cpo

/// \concept labelled_dag
/// A `profiled_dag` whose operators name their kind: `devplace::op_label(g, v)`.
/// Models: `op_graph`; any profiled_dag with an `op_label` member or ADL function.
template <class G>
concept labelled_dag = profiled_dag<G> && requires(const G& g, std::size_t v) {
  { devplace::op_label(g, v) } -> std::same_as<std::string>;
};

/// Copies any `profiled_dag` into an `op_graph`: the profiled costs as `to_op_graph` copies them,
/// plus op_label (when the type has one), output_bytes, layer_id and profiled_micro_batch.
/// Throws `graph_error` on a cycle, a self-loop or a negative / non-finite cost.
template <profiled_dag G>
[[nodiscard]] op_graph to_operator_graph(const G& g) {
  if constexpr (std::is_same_v<G, op_graph>) {
    return g;
  } else {
    op_graph_builder b;
    const std::size_t n = devplace::num_vertices(g);
    for (std::size_t v = 0; v < n; ++v) {
      op_attributes a;
      a.id = static_cast<std::int64_t>(v);
      if constexpr (labelled_dag<G>) a.op = devplace::op_label(g, v);
      a.fwd_ms = devplace::forward_ms(g, v);
      a.bwd_ms = devplace::backward_ms(g, v);
      const double c = devplace::compute_ms(g, v);
      if (c != a.fwd_ms + a.bwd_ms) a.compute_ms = c;
      a.fwd_mem_bytes = a.bwd_mem_bytes = devplace::memory_bytes(g, v);
      a.param_bytes = devplace::param_bytes(g, v);
      a.out_bytes = devplace::output_bytes(g, v);
      a.layer = devplace::layer_id(g, v);
      b.add_op(std::move(a));
    }
    for_each_edge(g, [&](std::size_t u, std::size_t v, double bytes) { b.add_edge(u, v, bytes); });
    op_graph out = std::move(b).build();
    out.set_micro_batch_size(devplace::profiled_micro_batch(g));
    return out;
  }
}

}  // namespace devplace
