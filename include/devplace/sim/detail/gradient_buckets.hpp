#pragma once
/// \file sim/detail/gradient_buckets.hpp
/// When the gradient buckets of a stage are full, as a fraction of its last backward pass: the
/// one rule of the pipeline simulator's bucketed allreduce (sim/pipeline_simulator.hpp).
///
/// The P gradient bytes are cut into K = ⌈P / b⌉ buckets, bucket k holding bytes
/// [k b, min((k + 1) b, P)) in the order the backward pass produces them. Bucket k is full at the
/// fraction x_k of the backward time:
///   * without a gradient profile, x_k = min((k + 1) b, P) / P (gradients at a constant rate);
///   * with one (the stage's operators in backward order, with times t_i and bytes p_i), x_k =
///     Σ_{i ≤ j} t_i / Σ t_i for the first operator j whose cumulative bytes Σ_{i ≤ j} p_i reach
///     the bucket's end min((k + 1) b, P) / P · Σ p_i (a bucket is full when the backward of
///     the operator holding its last byte has finished; operators without parameters that run
///     before it delay it, those after it do not).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "devplace/sim/pipeline_model.hpp"

namespace devplace::detail {

struct gradient_bucket {
  double bytes = 0;          ///< P_k
  double fill_fraction = 0;  ///< x_k ∈ [0, 1]: full at that fraction of the backward time
};

/// The K buckets of b > 0 bytes of P > 0 gradient bytes; `profile` is the stage's row of
/// `pipeline_model::gradient_profile` (empty: the constant-rate rule), checked by
/// `check_pipeline_model` (some bytes where P > 0).
[[nodiscard]] inline std::vector<gradient_bucket> gradient_buckets(const std::vector<gradient_op>& profile, double P, double b) {
  const auto K = static_cast<std::size_t>(std::ceil(P / b));
  double time = 0, bytes = 0;
  for (const auto& op : profile) {
    time += op.backward_ms;
    bytes += op.param_bytes;
  }
  std::vector<gradient_bucket> out(K);
  std::size_t i = 0;
  double t = 0, q = 0;  // time and bytes of the operators 0..i−1
  for (std::size_t k = 0; k < K; ++k) {
    const double end = std::min(double(k + 1) * b, P);
    out[k].bytes = end - double(k) * b;
    if (profile.empty()) {
      out[k].fill_fraction = end / P;
      continue;
    }
    const double target = end / P * bytes, slack = 1e-9 * bytes;  // rounding of the two sums
    while (i < profile.size() && q < target - slack) {
      t += profile[i].backward_ms;
      q += profile[i].param_bytes;
      ++i;
    }
    out[k].fill_fraction = time > 0 ? std::min(1.0, t / time) : 0.0;
  }
  return out;
}

}  // namespace devplace::detail
