#pragma once
/// \file llm/search.hpp
/// The best LLM execution on N GPUs, proved over a declared space by bounds that prune.
///
/// The space: every tp · pp · cp · dp ≤ N (or = N) whose degrees divide what they split (heads
/// and ffn by tp, layers by pp · vp, seq by cp, the global batch by micro_batch · dp), every
/// micro-batch, vp, recomputation, sequence parallelism, distributed optimizer and overlap that
/// `search_space` allows. The objective is the iteration time of `evaluate` among executions that
/// fit in memory.
///
/// **Bounds.** For a group (tp, pp, cp, dp) and a micro-batch b, with m = B / (b dp) micro-batches
/// and c the least compute of one layer's forward and backward pass on one GPU over the sequence
/// parallel choices (`cost_of_layer`; recomputation and the ends only add):
///
///   T ≥ m · A + (S − A) / v_max,   A = ⌈L / pp⌉ · c,  S = L · c
///
/// because T ≥ T_pipe = m t_max + (Σ t_i − t_max) / v is non-decreasing in t_max (m ≥ 1/v) and in
/// Σ t_i, every t_i is at least its stage's compute, the stage with the most layers has
/// ⌈L / pp⌉ of them, and v ≤ v_max. A group whose stage with the most layers cannot hold its
/// weight, gradient and (sharded, where allowed) optimizer states is infeasible for every choice.
/// The pairs (group, b) are visited by increasing bound; the search stops when the next bound is
/// no better than the k-th best time found: every execution left has a bound, so the answer is
/// `optimal` over the space. A time limit that stops it first gives `time_limit` with the best
/// found; a space where nothing fits gives `infeasible`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "devplace/llm/evaluate.hpp"
#include "devplace/status.hpp"

namespace devplace::llm {

struct search_space {
  std::int64_t gpus = 1;                  ///< N
  bool exact_gpus = false;                ///< only tp · pp · cp · dp = N (else ≤ N)
  std::int64_t global_batch = 1;
  llm::dtype dtype = llm::dtype::bf16;
  std::int64_t max_tp = 0, max_pp = 0, max_cp = 1, max_vp = 0;  ///< 0: no limit beyond divisibility
  std::int64_t max_micro_batch = 0;
  std::vector<llm::recompute> recompute{llm::recompute::none, llm::recompute::selective, llm::recompute::full};
  std::vector<bool> sequence_parallel{false, true};
  std::vector<bool> distributed_optimizer{false, true};
  std::vector<bool> dp_overlap{false, true};
  std::vector<bool> tp_overlap{false, true};
};

struct search_options {
  std::size_t top_k = 1;
  double time_limit_s = 0;                          ///< 0: none
  std::function<void(double fraction)> progress;    ///< called now and then with the share of bounds passed
};

struct ranked_execution {
  execution exec;
  evaluation eval;
};

struct search_result {
  devplace::status status = devplace::status::infeasible;
  std::vector<ranked_execution> top;   ///< best first
  std::uint64_t groups = 0;            ///< (tp, pp, cp, dp) groups in the space
  std::uint64_t pairs = 0;             ///< (group, micro-batch) pairs with a bound
  std::uint64_t pairs_evaluated = 0;   ///< pairs whose executions were evaluated
  std::uint64_t evaluated = 0;         ///< executions evaluated
  std::uint64_t did_not_fit = 0;       ///< of which did not fit in memory
  std::uint64_t pruned_memory = 0;     ///< groups infeasible by the states bound
  double seconds = 0;
  [[nodiscard]] bool has_solution() const noexcept { return !top.empty(); }
};

[[nodiscard]] inline std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i != n / i) d.push_back(n / i);
    }
  std::sort(d.begin(), d.end());
  return d;
}

namespace detail {

struct pair_bound {
  double bound = 0;
  std::int64_t tp, pp, cp, dp, mb;
};

/// The executions of one (group, micro-batch) pair that the space allows.
template <class Visit>
void for_each_execution(const model& m, const search_space& sp, const pair_bound& p, Visit&& visit) {
  execution e;
  e.tp = p.tp, e.pp = p.pp, e.cp = p.cp, e.dp = p.dp, e.micro_batch = p.mb;
  e.global_batch = sp.global_batch;
  e.dtype = sp.dtype;
  const std::int64_t mbs = e.micro_batches();
  const bool replicas = p.dp * p.cp > 1;
  for (auto v : divisors(m.layers / p.pp)) {
    if (v > 1 && (p.pp == 1 || mbs % p.pp != 0)) continue;  // interleaving needs m a multiple of pp
    if (sp.max_vp > 0 && v > sp.max_vp) continue;
    e.vp = v;
    for (auto r : sp.recompute) {
      e.recompute = r;
      for (bool seq : sp.sequence_parallel) {
        if (seq && p.tp == 1) continue;  // the same execution as without
        e.sequence_parallel = seq;
        for (bool dist : sp.distributed_optimizer) {
          if (dist && !replicas) continue;
          e.distributed_optimizer = dist;
          for (bool dpo : sp.dp_overlap) {
            if (dpo && !replicas) continue;
            e.dp_overlap = dpo;
            for (bool tpo : sp.tp_overlap) {
              if (tpo && p.tp == 1) continue;
              e.tp_overlap = tpo;
              visit(e);
            }
          }
        }
      }
    }
  }
}

}  // namespace detail

/// The least compute of one layer's forward and backward pass on one GPU over the sequence
/// parallel choices of `sp` (the c of the bound).
[[nodiscard]] inline double least_layer_compute(const model& m, const hardware& hw, const search_space& sp,
                                                std::int64_t tp, std::int64_t cp, std::int64_t mb) {
  execution e;
  e.tp = tp, e.cp = cp, e.micro_batch = mb, e.dtype = sp.dtype;
  double best = 1e300;
  for (bool seq : sp.sequence_parallel) {
    e.sequence_parallel = seq && tp > 1;
    const layer_cost c = cost_of_layer(m, hw, e);
    best = std::min(best, c.compute_fwd() + c.compute_bwd());
  }
  return best;
}

/// The lower bound m A + (S − A) / v_max on the iteration time of every execution of `sp` with
/// the group (tp, pp, cp, dp) and micro-batch `mb`, from the layer compute `c`.
[[nodiscard]] inline double pair_lower_bound(const model& m, const search_space& sp, std::int64_t pp, std::int64_t dp,
                                             std::int64_t mb, double c) {
  const double mbs = double(sp.global_batch / (dp * mb));
  const double A = std::ceil(double(m.layers) / double(pp)) * c, S = double(m.layers) * c;
  const std::int64_t vmax = pp > 1 ? m.layers / pp : 1;
  const double vcap = sp.max_vp > 0 ? double(std::min(sp.max_vp, vmax)) : double(vmax);
  return mbs * A + (S - A) / vcap;
}

/// Calls `visit(e)` for every execution of `sp` with the group (tp, pp, cp, dp) and micro-batch
/// `mb` (the executions one bound covers).
template <class Visit>
void for_each_execution(const model& m, const search_space& sp, std::int64_t tp, std::int64_t pp, std::int64_t cp,
                        std::int64_t dp, std::int64_t mb, Visit&& visit) {
  detail::for_each_execution(m, sp, detail::pair_bound{0, tp, pp, cp, dp, mb}, visit);
}

/// Searches `sp` for the fastest executions of `m` on `hw` (see the file comment).
[[nodiscard]] inline search_result search_executions(const model& m, const hardware& hw, const search_space& sp,
                                                     const search_options& o = {}) {
  check_model(m);
  check_system(hw);
  if (sp.gpus < 1) throw std::invalid_argument("llm search: gpus must be >= 1");
  if (sp.global_batch < 1) throw std::invalid_argument("llm search: global_batch must be >= 1");
  if (o.top_k < 1) throw std::invalid_argument("llm search: top_k must be >= 1");
  if (sp.recompute.empty() || sp.sequence_parallel.empty() || sp.distributed_optimizer.empty() || sp.dp_overlap.empty() ||
      sp.tp_overlap.empty())
    throw std::invalid_argument("llm search: every choice list needs at least one value");
  (void)matrix_rate(hw.gpu, sp.dtype);  // throws when the GPU cannot run the datatype
  const auto start = std::chrono::steady_clock::now();
  search_result res;
  const double hbm = hw.gpu.hbm_gib * double(1ull << 30);
  const bool may_shard = std::find(sp.distributed_optimizer.begin(), sp.distributed_optimizer.end(), true) !=
                         sp.distributed_optimizer.end();
  // Least compute of one layer per (tp, cp, micro-batch), computed once.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, double> layer_compute;
  auto least_layer = [&](std::int64_t tp, std::int64_t cp, std::int64_t mb) {
    const auto key = std::tuple{tp, cp, mb};
    if (auto it = layer_compute.find(key); it != layer_compute.end()) return it->second;
    return layer_compute[key] = least_layer_compute(m, hw, sp, tp, cp, mb);
  };
  std::vector<detail::pair_bound> pairs;
  for (auto tp : divisors(m.heads)) {
    if (m.ffn % tp != 0 || (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)) continue;
    if ((sp.max_tp > 0 && tp > sp.max_tp) || tp > sp.gpus) continue;
    for (auto pp : divisors(m.layers)) {
      if ((sp.max_pp > 0 && pp > sp.max_pp) || tp * pp > sp.gpus) continue;
      for (auto cp : divisors(m.seq)) {
        if (cp > sp.max_cp || tp * pp * cp > sp.gpus) continue;
        for (auto dp : divisors(sp.global_batch)) {
          const std::int64_t used = tp * pp * cp * dp;
          if (used > sp.gpus || (sp.exact_gpus && used != sp.gpus)) continue;
          ++res.groups;
          // States of the stage with the most layers, sharded where the space allows.
          const double shard = may_shard ? double(dp * cp) : 1.0;
          const double layers_max = std::ceil(double(m.layers) / double(pp));
          const double states = layers_max * params_per_layer(m).per_rank(tp) * (6 + 12 / shard);
          if (states > hbm) {
            ++res.pruned_memory;
            continue;
          }
          for (auto mb : divisors(sp.global_batch / dp)) {
            if (sp.max_micro_batch > 0 && mb > sp.max_micro_batch) continue;
            pairs.push_back({pair_lower_bound(m, sp, pp, dp, mb, least_layer(tp, cp, mb)), tp, pp, cp, dp, mb});
          }
        }
      }
    }
  }
  res.pairs = pairs.size();
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.bound, a.tp, a.pp, a.cp, a.dp, a.mb) < std::tie(b.bound, b.tp, b.pp, b.cp, b.dp, b.mb);
  });
  auto kth = [&] { return res.top.size() < o.top_k ? 1e300 : res.top.back().eval.iteration_s; };
  res.status = status::optimal;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    if (p.bound >= kth()) break;  // every pair left has a bound no better than the k-th best
    if (o.time_limit_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o.time_limit_s) {
      res.status = status::time_limit;
      break;
    }
    if (o.progress && i % 256 == 0) o.progress(double(i) / double(pairs.size()));
    ++res.pairs_evaluated;
    detail::for_each_execution(m, sp, p, [&](const execution& e) {
      ++res.evaluated;
      evaluation ev = evaluate(m, hw, e);
      if (!ev.fits) {
        ++res.did_not_fit;
        return;
      }
      if (ev.iteration_s >= kth()) return;
      const auto at = std::upper_bound(res.top.begin(), res.top.end(), ev.iteration_s,
                                       [](double t, const ranked_execution& r) { return t < r.eval.iteration_s; });
      res.top.insert(at, ranked_execution{e, std::move(ev)});
      if (res.top.size() > o.top_k) res.top.pop_back();
    });
  }
  if (res.top.empty() && res.status == status::optimal) res.status = status::infeasible;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

}  // namespace devplace::llm
