#pragma once
/// \file viz/gantt.hpp
/// `gantt_svg(result, model, options, labels)`: the simulated iteration as a Gantt chart.
///
/// One row per device the plan uses, grouped by stage (a rule and the stage's name between
/// groups) and named after the topology ("node0/gpu3"); each row has a compute band (forward,
/// recomputation, backward, the optimizer step, and blocking sends at the end of the task that
/// carries them) and a thinner transfer band below it (activation and gradient sends on the
/// sender's row, the stage's allreduce on every device of its ring). A time axis in ms, a legend
/// of every kind drawn, and a caption with the iteration time, bubble fraction and samples/s.
/// The critical path (sim/critical_path.hpp) is outlined in black, with connectors where it
/// moves from one row to another.
///
/// With more used devices than `gantt_options::max_device_rows`, one row per node instead: one
/// thin lane per device of the node (in stage order) with its compute and allreduce (the sends,
/// and the critical path's sends, stay in the trace export, viz/sim_trace.hpp).
///
/// Complexity: O(T + D) for T timeline events and D devices; the document has O(T) elements.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/sim/critical_path.hpp"
#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/viz/chart.hpp"
#include "devplace/viz/labels.hpp"
#include "devplace/viz/svg.hpp"

namespace devplace::viz {

struct gantt_options {
  std::string title;                  ///< the first line, e.g. "BERT-Large on 4x DGX-1"
  double time_width = 1000;           ///< px for the whole iteration
  std::size_t max_device_rows = 64;   ///< above this many used devices: one row per node
  bool critical_path = true;          ///< outline it
};

/// What a Gantt bar shows.
enum class gantt_kind { forward, recomputation, backward, activation, gradient, allreduce, optimizer };

[[nodiscard]] constexpr const char* label_of(gantt_kind k) noexcept {
  constexpr const char* names[] = {"forward", "recomputation", "backward", "activation send", "gradient send",
                                   "allreduce", "optimizer step"};
  return names[static_cast<int>(k)];
}
/// Okabe–Ito colours: compute in blues and purple, transfers in green and vermillion.
[[nodiscard]] constexpr const char* colour_of(gantt_kind k) noexcept {
  constexpr const char* colours[] = {"#56B4E9", "#CC79A7", "#0072B2", "#009E73", "#D55E00", "#E69F00", "#F0E442"};
  return colours[static_cast<int>(k)];
}

namespace detail {

/// A piece of a timeline event drawn in one colour.
struct gantt_piece {
  gantt_kind kind;
  double start_ms, end_ms;
};

/// The pieces of event `e`: F = forward, then its blocking sends; B = recomputation, backward,
/// then its blocking sends; transfers and the allreduce whole.
inline std::vector<gantt_piece> pieces_of(const sim_event& e, const pipeline_model& m, const simulation_options& o) {
  const double k = static_cast<double>(m.replicas) / static_cast<double>(m.device_of[e.stage].size());
  std::vector<gantt_piece> out;
  auto cut = [&](gantt_kind kind, double from, double len) {
    const double to = std::min(e.end_ms, from + len);
    if (to > from) out.push_back({kind, from, to});
    return std::max(from, to);
  };
  switch (e.kind) {
    case sim_task_kind::forward: {
      const double t = cut(gantt_kind::forward, e.start_ms, k * m.forward_ms[e.stage]);
      cut(gantt_kind::activation, t, e.end_ms - t);
      break;
    }
    case sim_task_kind::backward: {
      double t = cut(gantt_kind::recomputation, e.start_ms, o.recompute ? k * m.forward_ms[e.stage] : 0.0);
      t = cut(gantt_kind::backward, t, k * m.backward_ms[e.stage]);
      cut(gantt_kind::gradient, t, e.end_ms - t);
      break;
    }
    case sim_task_kind::send_activation: out.push_back({gantt_kind::activation, e.start_ms, e.end_ms}); break;
    case sim_task_kind::send_gradient: out.push_back({gantt_kind::gradient, e.start_ms, e.end_ms}); break;
    case sim_task_kind::allreduce: out.push_back({gantt_kind::allreduce, e.start_ms, e.end_ms}); break;
  }
  return out;
}

/// Where each device is drawn: its compute band and transfer band (height 0: not drawn).
struct gantt_layout {
  bool by_node = false;
  double left = 0, top = 0, scale = 1, rows_bottom = 0;
  std::vector<double> compute_y, compute_h, comm_y, comm_h;  // per device
  std::vector<std::size_t> stage_of_device;                  // per device, S for unused
};

inline constexpr double gantt_row = 18, gantt_font = 10;

/// The name of the device group of pipeline rank k of `ranks`: "stage k", or with interleaving
/// (ranks < S) the chunks it runs, "chunks k, k + ranks, ...".
inline std::string gantt_group_label(const pipeline_model& m, std::size_t ranks, std::size_t k) {
  if (ranks >= m.stages) return "stage " + std::to_string(k);
  std::string s = "chunks";
  for (std::size_t c = k; c < m.stages; c += ranks) s += (c == k ? " " : ", ") + std::to_string(c);
  return s;
}

/// Rows, their labels and the stage rules (per pipeline rank of `ranks`); returns the layout the
/// events are drawn with.
inline gantt_layout gantt_rows(svg_canvas& c, const gantt_layout& base, const pipeline_model& m, const device_labels& l,
                               const std::vector<std::size_t>& order, double right, std::size_t ranks) {
  gantt_layout g = base;
  double y = g.top;
  const double label_x = g.left - 6;
  if (!g.by_node) {
    for (std::size_t s = 0; s < ranks; ++s) {
      const double group_top = y;
      for (std::size_t d : m.device_of[s]) {
        g.compute_y[d] = y + 2;
        g.compute_h[d] = 9;
        g.comm_y[d] = y + 12;
        g.comm_h[d] = 4;
        c.text(label_x, y + 13, l.name[d], {.size = gantt_font, .anchor = text_anchor::end});
        y += gantt_row;
      }
      c.line(2, y + 0.5, right, y + 0.5, "#888888", 0.75, {}, {}, "stage-rule");
      c.text(4, (group_top + y) / 2 + 4, gantt_group_label(m, ranks, s), {.size = 11, .bold = true});
    }
  } else {
    std::size_t i = 0;
    while (i < order.size()) {
      const std::size_t node = l.node_of[order[i]];
      std::size_t j = i;
      while (j < order.size() && l.node_of[order[j]] == node) ++j;
      const double lane = (gantt_row - 4) / static_cast<double>(j - i);
      for (std::size_t k = i; k < j; ++k) {
        g.compute_y[order[k]] = y + 2 + lane * static_cast<double>(k - i);
        g.compute_h[order[k]] = lane;
      }
      c.text(label_x, y + 13, l.nodes[node] + " (" + std::to_string(j - i) + ")", {.size = gantt_font, .anchor = text_anchor::end});
      y += gantt_row;
      c.line(g.left, y, right, y, "#cccccc", 0.5);
      i = j;
    }
  }
  g.rows_bottom = y;
  return g;
}

/// The critical path: black outlines of its pieces and connectors between rows.
inline void gantt_critical(svg_canvas& c, const gantt_layout& g, const simulation_result& r,
                           const std::vector<std::size_t>& path) {
  double prev_x = -1, prev_mid = -1;
  for (std::size_t i : path) {
    const sim_event& e = r.timeline[i];
    const bool compute = e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward ||
                         (g.by_node && e.kind == sim_task_kind::allreduce);
    const double y = compute ? g.compute_y[e.from] : g.comm_y[e.from], h = compute ? g.compute_h[e.from] : g.comm_h[e.from];
    if (!(h > 0)) continue;
    const double x0 = g.left + e.start_ms * g.scale, x1 = g.left + e.end_ms * g.scale;
    c.rect(x0, y, std::max(x1 - x0, 1.0), h, "none", {}, "#000000", 1.5, "critical");
    const double mid = y + h / 2;
    if (prev_x >= 0 && std::fabs(prev_mid - mid) > 0.5) c.line(x0, prev_mid, x0, mid, "#000000", 1.5, {}, {}, "critical");
    prev_x = x1;
    prev_mid = mid;
  }
}

/// The tooltip of an event.
inline std::string gantt_title(const sim_event& e, const gantt_piece& p, const device_labels& l,
                               const std::vector<std::size_t>& stage_of_device) {
  std::string s = std::string(label_of(p.kind)) + ", stage " + std::to_string(e.stage);
  if (e.kind == sim_task_kind::send_activation || e.kind == sim_task_kind::send_gradient)
    s += " to stage " + std::to_string(stage_of_device[e.to]) + ", " + l.name[e.from] + " to " + l.name[e.to] + ", " +
         format_bytes(e.bytes);
  if (e.kind == sim_task_kind::allreduce) s += ", " + format_bytes(e.bytes) + " over the stage's replicas";
  else s += ", replica " + std::to_string(e.replica) + ", micro-batch " + std::to_string(e.micro_batch);
  return s + ": " + format_number(p.start_ms, 6) + " to " + format_number(p.end_ms, 6) + " ms";
}

}  // namespace detail

/// The Gantt chart of `r`, the simulation of `m` with `o` on the devices `l` names. Throws
/// std::invalid_argument when `m` is not a model on l.num_devices() devices
/// (check_pipeline_model) or `r` names a device or stage outside it.
[[nodiscard]] inline std::string gantt_svg(const simulation_result& r, const pipeline_model& m, const simulation_options& o,
                                           const device_labels& l, const gantt_options& opt = {}) {
  const std::size_t D = l.num_devices(), ranks = m.stages / std::max<std::size_t>(o.virtual_stages, 1);
  check_pipeline_model(m, D, o.virtual_stages);
  for (const auto& e : r.timeline)
    if (e.from >= D || e.to >= D || e.stage >= m.stages)
      throw std::invalid_argument("gantt_svg: a timeline event names a device or stage outside the model");
  if (!(opt.time_width > 0)) throw std::invalid_argument("gantt_svg: time_width must be > 0");
  detail::gantt_layout g;
  g.stage_of_device.assign(D, m.stages);
  std::vector<std::size_t> order;  // used devices, by node then stage order
  for (std::size_t s = 0; s < ranks; ++s)  // interleaved: a device by its pipeline rank (its first chunk)
    for (auto d : m.device_of[s]) {
      g.stage_of_device[d] = s;
      order.push_back(d);
    }
  g.by_node = order.size() > opt.max_device_rows;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return l.node_of[a] < l.node_of[b]; });
  double label_w = 0;
  for (auto d : order)
    label_w = std::max(label_w, text_width(g.by_node ? l.nodes[l.node_of[d]] + " (9999)" : l.name[d], detail::gantt_font) + 12);
  double group_w = text_width("stage " + std::to_string(m.stages), 11, true);
  for (std::size_t k = 0; k < ranks; ++k) group_w = std::max(group_w, text_width(detail::gantt_group_label(m, ranks, k), 11, true));
  g.left = g.by_node ? label_w : label_w + group_w + 10;
  g.top = 70;
  g.scale = r.iteration_ms > 0 ? opt.time_width / r.iteration_ms : 1;
  const double right = g.left + opt.time_width;
  const auto path = opt.critical_path ? critical_path(r) : std::vector<std::size_t>{};
  const std::string caption =
      "iteration " + format_number(r.iteration_ms, 4) + " ms, bubble " + format_number(100 * r.bubble_fraction, 3) +
      " %, " + format_number(r.samples_per_s, 4) + " samples/s; " + (o.schedule == pipeline_schedule::gpipe ? "GPipe" : o.schedule == pipeline_schedule::one_f_one_b ? "1F1B" : "interleaved 1F1B") +
      ", " + std::to_string(o.micro_batches) + " micro-batches" + (o.recompute ? ", recomputation" : "") +
      (o.blocking_sends ? ", blocking sends" : "");
  const std::string rows_note =
      g.by_node ? "one row per node (devices used), one lane per device; sends: see the trace export"
                : std::to_string(order.size()) + " devices used of " + std::to_string(D) + "; transfers below each device's compute";
  double width = std::max({right + 30, text_width(opt.title, 14, true) + 20, text_width(caption, 12) + 20, text_width(rows_note, 11) + 20});
  // Legend: every kind drawn.
  std::vector<char> seen(7, 0);
  for (const auto& e : r.timeline)
    for (const auto& p : detail::pieces_of(e, m, o))
      if (!g.by_node || e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward || e.kind == sim_task_kind::allreduce)
        seen[static_cast<int>(p.kind)] = 1;
  if (o.update_ms > 0) seen[static_cast<int>(gantt_kind::optimizer)] = 1;
  std::vector<legend_entry> legend;
  for (int k = 0; k < 7; ++k)
    if (seen[k]) legend.push_back({label_of(static_cast<gantt_kind>(k)), colour_of(static_cast<gantt_kind>(k))});
  if (!path.empty())
    legend.push_back({"critical path (" + std::to_string(path.size()) + " tasks, " +
                          format_number(path_length_ms(r, path) + o.update_ms, 4) + " ms)",
                      "#000000", true});
  const double rows_h = detail::gantt_row * static_cast<double>(g.by_node ? [&] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < order.size(); ++i) n += i == 0 || l.node_of[order[i]] != l.node_of[order[i - 1]];
    return n;
  }() : order.size());
  const double axis_h = 45, height = g.top + rows_h + axis_h + legend_height(legend, width - 20) + 12;
  svg_canvas c(width, height);
  c.text(10, 20, opt.title.empty() ? "Simulated iteration" : opt.title, {.size = 14, .bold = true});
  c.text(10, 40, caption, {.size = 12});
  c.text(10, 58, rows_note, {.size = 11, .fill = "#444444"});
  g.compute_y.assign(D, 0);
  g.compute_h.assign(D, 0);
  g.comm_y.assign(D, 0);
  g.comm_h.assign(D, 0);
  g = detail::gantt_rows(c, g, m, l, order, right, ranks);
  const double axis_end = draw_axis(c, g.left, right, g.rows_bottom + 4, 0, r.iteration_ms, "time (ms)", g.top);
  for (const auto& e : r.timeline)
    for (const auto& p : detail::pieces_of(e, m, o)) {
      const bool compute = e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward ||
                           (g.by_node && e.kind == sim_task_kind::allreduce);  // by node: in the device's lane
      const std::string title = g.by_node ? std::string() : detail::gantt_title(e, p, l, g.stage_of_device);
      auto draw = [&](std::size_t d) {
        const double y = compute ? g.compute_y[d] : g.comm_y[d], h = compute ? g.compute_h[d] : g.comm_h[d];
        if (h > 0)
          c.rect(g.left + p.start_ms * g.scale, y, std::max((p.end_ms - p.start_ms) * g.scale, 0.5), h, colour_of(p.kind), title);
      };
      if (e.kind == sim_task_kind::allreduce)
        for (auto d : m.device_of[e.stage]) draw(d);
      else draw(e.from);
    }
  if (o.update_ms > 0)
    for (auto d : order)
      c.rect(g.left + (r.iteration_ms - o.update_ms) * g.scale, g.compute_y[d], o.update_ms * g.scale, g.compute_h[d],
             colour_of(gantt_kind::optimizer), g.by_node ? std::string()
                        : "optimizer step, " + l.name[d] + ": " + format_number(r.iteration_ms - o.update_ms, 6) + " to " +
                              format_number(r.iteration_ms, 6) + " ms");
  detail::gantt_critical(c, g, r, path);
  draw_legend(c, 10, axis_end + 4, width - 20, legend);
  return c.str();
}

}  // namespace devplace::viz
