#pragma once
/// \file viz/stage_graph.hpp
/// `stage_graph_svg(model, labels)`: the stage graph of a mapped pipeline.
///
/// Stages are boxes in a row, left to right, each with its name, operator count (when given),
/// forward + backward time of one micro-batch and parameter bytes, outlined in the stage's
/// colour (the heat map's). Every stage-graph edge s → t is an arrow labelled with the bytes it
/// carries per micro-batch (activations forward, as many gradient bytes back): between adjacent
/// boxes, or as an arc above the boxes for t > s + 1, higher the longer it spans. Below, one row
/// per replica names the device of each stage's copy (rows of a stage with fewer replicas
/// stop early); past `max_replica_rows` rows, the last row counts the replicas left out.
///
/// Complexity: O(S² + S R) for S stages of R replicas.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/viz/chart.hpp"
#include "devplace/viz/labels.hpp"
#include "devplace/viz/svg.hpp"

namespace devplace::viz {

struct stage_graph_options {
  std::string title;                        ///< the first line
  std::vector<std::size_t> operators;       ///< per stage (empty: not shown)
  std::size_t max_replica_rows = 16;        ///< replica rows drawn at most (≥ 2)
  /// v of an interleaved model (`simulation_options::virtual_stages`): its S·v chunks are drawn
  /// as stages, chunk c on the devices of rank c mod S.
  std::size_t virtual_stages = 1;
};

namespace detail {

inline std::vector<std::string> stage_box_lines(const pipeline_model& m, const stage_graph_options& o, std::size_t s) {
  std::vector<std::string> lines{"stage " + std::to_string(s)};
  if (!o.operators.empty()) lines.push_back(std::to_string(o.operators[s]) + (o.operators[s] == 1 ? " operator" : " operators"));
  lines.push_back("fwd " + format_number(m.forward_ms[s]) + " + bwd " + format_number(m.backward_ms[s]) + " ms");
  lines.push_back("params " + format_bytes(m.param_bytes[s]));
  const std::size_t r = m.device_of[s].size();
  lines.push_back(std::to_string(r) + (r == 1 ? " replica" : " replicas"));
  return lines;
}

/// An arrowhead pointing right (dir = 1) or down (dir = 0) at (x, y).
inline void arrowhead(svg_canvas& c, double x, double y, bool right) {
  const std::string d = right ? "M" + svg_canvas::num(x) + " " + svg_canvas::num(y) + " l-7 -4 l0 8 z"
                              : "M" + svg_canvas::num(x) + " " + svg_canvas::num(y) + " l-4 -7 l8 0 z";
  c.path(d, "#444444", 1, "#444444");
}

}  // namespace detail

/// The stage graph of `m` on the devices `l` names. Throws std::invalid_argument when `m` is not
/// a model on l.num_devices() devices (check_pipeline_model), `operators` has neither 0 nor S
/// entries, or max_replica_rows < 2.
[[nodiscard]] inline std::string stage_graph_svg(const pipeline_model& m, const device_labels& l, const stage_graph_options& o = {}) {
  check_pipeline_model(m, l.num_devices(), o.virtual_stages);
  if (!o.operators.empty() && o.operators.size() != m.stages)
    throw std::invalid_argument("stage_graph_svg: operators has " + std::to_string(o.operators.size()) + " entries, S = " +
                                std::to_string(m.stages));
  if (o.max_replica_rows < 2) throw std::invalid_argument("stage_graph_svg: max_replica_rows must be >= 2");
  const std::size_t S = m.stages;
  constexpr double line_h = 15, font = 11, name_font = 10, cell_h = 18;
  double box_w = 110, gap = 56;
  std::vector<std::vector<std::string>> lines(S);
  std::size_t rows = 0;
  for (std::size_t s = 0; s < S; ++s) {
    lines[s] = detail::stage_box_lines(m, o, s);
    for (std::size_t k = 0; k < lines[s].size(); ++k) box_w = std::max(box_w, text_width(lines[s][k], font, k == 0) + 16);
    for (auto d : m.device_of[s]) box_w = std::max(box_w, text_width(l.name[d], name_font) + 12);
    rows = std::max(rows, m.device_of[s].size());
    for (std::size_t t = s + 1; t < S; ++t)
      if (m.message_bytes[s][t] >= 0) box_w = std::max(box_w, text_width(format_bytes(m.message_bytes[s][t]), 10) + 16);
    if (s + 1 < S && m.message_bytes[s][s + 1] >= 0)
      gap = std::max(gap, text_width(format_bytes(m.message_bytes[s][s + 1]), 10) + 16);
  }
  const std::size_t shown = rows <= o.max_replica_rows ? rows : o.max_replica_rows - 1;
  std::size_t max_span = 0;
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t t = s + 2; t < S; ++t)
      if (m.message_bytes[s][t] >= 0) max_span = std::max(max_span, t - s);
  const double left = text_width("replica " + std::to_string(rows), font) + 20, pitch = box_w + gap;
  const double arcs_h = max_span ? 22.0 * static_cast<double>(max_span - 1) + 16 : 0;
  const double box_top = 64 + arcs_h, box_h = line_h * static_cast<double>(lines[0].size()) + 10;
  const double grid_top = box_top + box_h + 26;
  const std::string title = o.title.empty() ? "Stage graph" : o.title;
  const std::string sub = "boxes: stages (one micro-batch); arrows: bytes per micro-batch; rows: replicas and their devices";
  const double width = std::max({left + pitch * static_cast<double>(S) - gap + 20, text_width(title, 14, true) + 20, text_width(sub, 11) + 20});
  const double height = grid_top + cell_h * static_cast<double>(shown + (shown < rows ? 1 : 0)) + 14;
  svg_canvas c(width, height);
  c.text(10, 20, title, {.size = 14, .bold = true});
  c.text(10, 38, sub, {.size = 11, .fill = "#444444"});
  auto bx = [&](std::size_t s) { return left + pitch * static_cast<double>(s); };
  for (std::size_t s = 0; s < S; ++s) {
    c.rect(bx(s), box_top, box_w, box_h, "#f7f7f7", {}, stage_colour(s), 2, "stage");
    for (std::size_t k = 0; k < lines[s].size(); ++k)
      c.text(bx(s) + 8, box_top + 5 + line_h * static_cast<double>(k + 1) - 3, lines[s][k], {.size = font, .bold = k == 0});
  }
  // Edges: adjacent stages by an arrow in the gap, the others by arcs above the boxes.
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t t = s + 1; t < S; ++t) {
      if (m.message_bytes[s][t] < 0) continue;
      const std::string label = format_bytes(m.message_bytes[s][t]), tip = "stage " + std::to_string(s) + " to stage " +
                                std::to_string(t) + ": " + format_number(m.message_bytes[s][t], 6) + " bytes per micro-batch";
      if (t == s + 1) {
        const double y = box_top + box_h / 2, x0 = bx(s) + box_w, x1 = bx(t);
        c.line(x0, y, x1 - 6, y, "#444444", 1.5, {}, tip, "edge");
        detail::arrowhead(c, x1, y, true);
        c.text((x0 + x1) / 2, y - 6, label, {.size = 10, .anchor = text_anchor::middle});
        continue;
      }
      const double xs = bx(s) + box_w * 0.75, xt = bx(t) + box_w * 0.25, apex = box_top - 12 - 22.0 * static_cast<double>(t - s - 2);
      c.path("M" + svg_canvas::num(xs) + " " + svg_canvas::num(box_top) + " L" + svg_canvas::num(xs) + " " + svg_canvas::num(apex) +
                 " L" + svg_canvas::num(xt) + " " + svg_canvas::num(apex) + " L" + svg_canvas::num(xt) + " " +
                 svg_canvas::num(box_top - 6),
             "#444444", 1.2, "none", tip, "edge");
      detail::arrowhead(c, xt, box_top, false);
      const double lw = text_width(label, 10) + 6;
      c.rect((xs + xt) / 2 - lw / 2, apex - 7, lw, 13, "#ffffff");
      c.text((xs + xt) / 2, apex + 4, label, {.size = 10, .anchor = text_anchor::middle});
    }
  // Replicas: one row each, the device of every stage's copy.
  for (std::size_t r = 0; r < shown; ++r) {
    const double y = grid_top + cell_h * static_cast<double>(r);
    c.text(10, y + 13, "replica " + std::to_string(r), {.size = font});
    for (std::size_t s = 0; s < S; ++s) {
      if (r >= m.device_of[s].size()) continue;
      const std::size_t d = m.device_of[s][r];
      c.rect(bx(s), y + 1, box_w, cell_h - 2, "#ffffff", "stage " + std::to_string(s) + ", replica " + std::to_string(r) +
             ": device " + std::to_string(d), stage_colour(s), 1, "replica");
      c.text(bx(s) + box_w / 2, y + 13, l.name[d], {.size = name_font, .anchor = text_anchor::middle});
    }
  }
  if (shown < rows) {
    const double y = grid_top + cell_h * static_cast<double>(shown);
    c.text(10, y + 13, "...", {.size = font});
    for (std::size_t s = 0; s < S; ++s)
      if (m.device_of[s].size() > shown)
        c.text(bx(s) + box_w / 2, y + 13, "+" + std::to_string(m.device_of[s].size() - shown) + " more",
               {.size = name_font, .anchor = text_anchor::middle});
  }
  c.text(10, grid_top - 8, "replicas", {.size = font, .bold = true});
  return c.str();
}

}  // namespace devplace::viz
