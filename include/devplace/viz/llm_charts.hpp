#pragma once
/// \file viz/llm_charts.hpp
/// Pictures and traces of LLM evaluations (llm/evaluate.hpp): the time breakdown of several
/// executions as stacked bars (compute, exposed TP / CP / PP communication, bubble, exposed DP
/// reduction, optimizer), their memory per GPU by kind (weights, gradients, optimizer states,
/// activations), and one evaluation's breakdown as a Chrome trace: one slice per item, laid end
/// to end on the critical stage's timeline, so that the slices add up to the iteration.
#include <string>
#include <vector>

#include "devplace/llm/evaluate.hpp"
#include "devplace/viz/stacked_bar.hpp"
#include "devplace/viz/trace.hpp"

namespace devplace::viz {

/// A labelled evaluation, e.g. "1: tp 8 pp 8 dp 16".
struct labelled_evaluation {
  std::string label;
  llm::evaluation eval;
};

/// "tp 8 pp 8 dp 16 vp 12 mb 6 selective +SP +DO +DPO +TPO": the degrees and the choices (SP
/// sequence parallel, DO distributed optimizer, DPO / TPO the DP / TP overlaps).
template <int = 0>
[[nodiscard]] std::string execution_label(const llm::execution& e) {
  std::string s = "tp " + std::to_string(e.tp) + " pp " + std::to_string(e.pp) + " dp " + std::to_string(e.dp);
  if (e.cp > 1) s += " cp " + std::to_string(e.cp);
  s += " vp " + std::to_string(e.vp) + " mb " + std::to_string(e.micro_batch) + " " + std::string(llm::to_string(e.recompute));
  if (e.sequence_parallel) s += " +SP";
  if (e.distributed_optimizer) s += " +DO";
  if (e.dp_overlap) s += " +DPO";
  if (e.tp_overlap) s += " +TPO";
  return s;
}

/// The breakdown items of `r` in seconds, in drawing order (recomputation is part of compute).
template <int = 0>
[[nodiscard]] std::vector<bar_segment> llm_time_segments(const llm::evaluation& r) {
  const auto& b = r.breakdown;
  return {{"compute", b.compute_s},       {"exposed TP", b.tp_exposed_s}, {"exposed CP", b.cp_exposed_s},
          {"PP sends", b.pp_exposed_s},   {"bubble", b.bubble_s},         {"exposed DP", b.dp_exposed_s},
          {"optimizer", b.optimizer_s}};
}

/// Stacked bars of the iteration time of each evaluation, in seconds.
template <int = 0>
[[nodiscard]] std::string llm_time_chart(const std::vector<labelled_evaluation>& rs, const std::string& title) {
  std::vector<stacked_bar> bars;
  for (const auto& r : rs) bars.push_back({r.label, llm_time_segments(r.eval)});
  return stacked_bar_svg(bars, {.title = title, .subtitle = "iteration time by where it goes", .unit = "s",
                                .kinds = {"compute", "exposed TP", "exposed CP", "PP sends", "bubble", "exposed DP", "optimizer"}});
}

/// Stacked bars of the memory per GPU (the fullest stage) of each evaluation, in GiB.
template <int = 0>
[[nodiscard]] std::string llm_memory_chart(const std::vector<labelled_evaluation>& rs, const std::string& title) {
  constexpr double gib = double(1ull << 30);
  std::vector<stacked_bar> bars;
  for (const auto& r : rs) {
    const auto& m = r.eval.peak_memory;
    bars.push_back({r.label,
                    {{"weights", m.weights() / gib}, {"gradients", m.gradients() / gib},
                     {"optimizer states", m.optimizer() / gib}, {"activations", m.activations() / gib}}});
  }
  return stacked_bar_svg(bars, {.title = title, .subtitle = "memory per GPU of the fullest pipeline stage", .unit = "GiB",
                                .kinds = {"weights", "gradients", "optimizer states", "activations"}});
}

/// One evaluation's breakdown as a trace: process "iteration", thread "critical stage", one
/// complete event per non-empty item, end to end from 0; the events' durations add up to
/// `iteration_s`.
template <int = 0>
[[nodiscard]] std::string llm_breakdown_trace(const llm::evaluation& r, const std::string& name) {
  trace_builder t;
  t.process(0, name, 0);
  t.thread(0, 0, "critical stage", 0);
  double at_us = 0;
  for (const auto& s : llm_time_segments(r)) {
    if (!(s.value > 0)) continue;
    t.complete(s.kind, "llm", 0, 0, at_us, s.value * 1e6, {{"seconds", s.value}, {"share", s.value / r.iteration_s}});
    at_us += s.value * 1e6;
  }
  t.other_data("iteration_s", r.iteration_s);
  t.other_data("recompute_s", r.breakdown.recompute_s);
  t.other_data("tokens_per_s_per_gpu", r.tokens_per_s_per_gpu);
  return t.str();
}

}  // namespace devplace::viz
