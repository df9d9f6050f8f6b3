#pragma once
/// \file phaze/estimator.hpp
/// An analytic operator latency estimator for PHAZE's template (seed-phaze.md §1.4 step 3; PHAZE
/// itself uses Sunstone, Tandem and Accelergy, not reproducible here; docs/phaze.md). Every
/// operator is a tensor-core (TC) operator, a vector-core (VC) operator or a zero-cost operator
/// (views, reshapes, layout changes: `nop`, removed before scheduling, §2.5). Its work is
/// MACs (TC) or element operations (VC) plus the bytes it moves through the global buffer; its
/// latency is a roofline at frequency f:
///   ℓ  = max(work / (per-core rate), words / glb_bw) / f        one core (PE_x·PE_y MACs, PE_vc lanes)
///   ℓ̂ = max(work / (cores · per-core rate), words / glb_bw) / f  all cores of its type
/// with words = bytes / element size and glb_bw from phaze/architecture.hpp. The backward pass
/// does `backward_factor` times the work (2 for TC: the two gradient GEMMs; 1 for VC).
///
/// Work from a profiled graph that carries no shapes (docs/formats.md graph JSON): with I the
/// largest input, O the output and P the parameters, in elements, a TC operator with parameters
/// (linear, conv) does O · k MACs with k = √(P · I / O) — exact for a linear layer, whose weight is
/// k × (O/tokens) — and one without (matmul, attention) O · √(I₁ · I₂ / O) (twice for attention).
/// These are estimates; give `op_work` directly when the real FLOPs are known.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include "devplace/config.hpp"
#include "devplace/dag/op_graph.hpp"
#include "devplace/phaze/architecture.hpp"

namespace devplace::phaze {

enum class op_class { tensor, vector, nop };

/// The class of an operator from its `op` label (aten names; the part before the first '.').
template <int = 0>
[[nodiscard]] op_class classify_op(std::string_view op) {
  const std::string_view base = op.substr(0, op.find('.'));
  static constexpr std::array<std::string_view, 13> tensor{"linear", "addmm", "mm", "bmm", "baddbmm", "matmul",
                                                           "conv1d", "conv2d", "conv3d", "convolution", "einsum",
                                                           "scaled_dot_product_attention",
                                                           "_scaled_dot_product_flash_attention"};
  static constexpr std::array<std::string_view, 24> nop{
      "view", "reshape", "_unsafe_view", "transpose", "t", "permute", "contiguous", "alias", "expand", "unsqueeze",
      "squeeze", "flatten", "select", "slice", "split", "unbind", "_assert_tensor_metadata", "to", "detach",
      "new_empty", "as_strided", "expand_as", "lift_fresh_copy", "clone"};
  if (std::find(tensor.begin(), tensor.end(), base) != tensor.end()) return op_class::tensor;
  if (std::find(nop.begin(), nop.end(), base) != nop.end()) return op_class::nop;
  return op_class::vector;
}

/// What an operator does for one micro-batch.
struct op_work {
  op_class kind = op_class::vector;
  double work = 0;   ///< MACs (TC) or element operations (VC)
  double bytes = 0;  ///< moved through the global buffer: inputs + output + parameters
};

struct estimator_options {
  double element_bytes = 4;        ///< bytes per word (the bundled graphs are float32)
  double frequency_hz = 1.05e9;    ///< PHAZE's 1.05 GHz
  double tensor_backward_factor = 2;
  double vector_backward_factor = 1;
};

/// ℓ and ℓ̂ of one operator, forward and backward, in ms.
struct op_latency {
  double single_ms = 0, parallel_ms = 0;
  double single_bw_ms = 0, parallel_bw_ms = 0;
};

/// Element operations per output element of a VC operator (1 unless listed).
template <int = 0>
[[nodiscard]] double vector_ops_per_element(std::string_view op) {
  const std::string_view base = op.substr(0, op.find('.'));
  if (base == "layer_norm" || base == "batch_norm" || base == "native_layer_norm") return 8;
  if (base == "softmax" || base == "_softmax" || base == "log_softmax") return 5;
  if (base == "gelu" || base == "tanh") return 8;
  return 1;
}

/// The work of operator v of a profiled graph (see the file comment), its activations scaled by
/// `scale` (a micro-batch b for a graph profiled at b₀: b / b₀; parameters do not scale).
template <int = 0>
[[nodiscard]] op_work operator_work(const op_graph& g, std::size_t v, const estimator_options& o, double scale = 1) {
  DEVPLACE_EXPECTS(v < g.num_vertices(), "phaze: operator_work: vertex out of range");
  DEVPLACE_EXPECTS(scale > 0 && o.element_bytes > 0, "phaze: operator_work: scale and element_bytes must be > 0");
  const auto& a = g.op(v);
  op_work w;
  w.kind = classify_op(a.op);
  std::vector<double> inputs;
  for (auto u : g.in_edges(v)) inputs.push_back(g.edge_bytes(u, v) * scale / o.element_bytes);
  std::sort(inputs.rbegin(), inputs.rend());
  double out = a.out_bytes >= 0 ? a.out_bytes * scale / o.element_bytes : 0;
  if (a.out_bytes < 0)
    for (auto x : g.out_edges(v)) out = std::max(out, g.edge_bytes(v, x) * scale / o.element_bytes);
  const double params = a.param_bytes / o.element_bytes;
  double in_total = 0;
  for (double x : inputs) in_total += x;
  w.bytes = (in_total + out + params) * o.element_bytes;
  if (w.kind == op_class::nop) return w;
  const double I1 = inputs.empty() ? out : inputs[0], I2 = inputs.size() > 1 ? inputs[1] : I1;
  if (w.kind == op_class::vector) {
    w.work = std::max(out, I1) * vector_ops_per_element(a.op);
  } else if (params > 0) {
    w.work = out > 0 ? out * std::sqrt(params * I1 / out) : 0;
  } else {
    const bool attention = std::string_view(a.op).find("attention") != std::string_view::npos;
    w.work = out > 0 ? (attention ? 2 : 1) * out * std::sqrt(I1 * I2 / out) : 0;
  }
  return w;
}

/// The roofline latencies of `w` on configuration `c`.
template <int = 0>
[[nodiscard]] op_latency estimate_latency(const op_work& w, const core_config& c, const estimator_options& o) {
  DEVPLACE_EXPECTS(o.frequency_hz > 0, "phaze: estimator frequency_hz must be > 0");
  op_latency l;
  if (w.kind == op_class::nop) return l;
  const bool tc = w.kind == op_class::tensor;
  const std::size_t cores = tc ? c.num_tc : c.num_vc;
  const double rate = tc ? static_cast<double>(c.macs_per_core()) : static_cast<double>(c.pe_vc());
  const double memory_cycles = w.bytes / o.element_bytes / glb_bandwidth_words(c, cores);
  const double to_ms = 1000.0 / o.frequency_hz;
  const double back = tc ? o.tensor_backward_factor : o.vector_backward_factor;
  auto roof = [&](double work, double r) { return std::max(work / r, memory_cycles) * to_ms; };
  l.single_ms = roof(w.work, rate);
  l.parallel_ms = roof(w.work, rate * static_cast<double>(cores));
  l.single_bw_ms = roof(back * w.work, rate);
  l.parallel_bw_ms = roof(back * w.work, rate * static_cast<double>(cores));
  return l;
}

}  // namespace devplace::phaze
