#pragma once
/// \file viz/heatmap.hpp
/// `heatmap_svg(topology, device_of, labels)`: the bandwidth matrix with the stages of a plan
/// (Parmesan's Figs. 6 and 10).
///
/// Cell (a, b) is the bandwidth from device a (row) to device b (column) on a log colour scale,
/// pale (slowest) to dark (fastest), whose bar on the right is labelled in GB/s; the diagonal is
/// grey. Rows are labelled with the device names and columns with the names inside their node
/// (or the device ids, or nothing, whichever fits), under a bracket per node; where the cells are
/// too small, only nodes are labelled (every k-th when their names need more room). A strip above
/// and left of the matrix colours each device by its stage, the blocks of each stage (pairs of
/// runs of consecutive devices) are outlined in the stage's colour, and a legend names the stages.
/// Cells of equal bandwidth next to each other in a row are one <rect class="cell">, whose tooltip
/// names the devices and the bandwidth, so a 512-device matrix stays a few thousand elements.
///
/// Complexity: O(D²) for D devices.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/topology/concepts.hpp"
#include "devplace/viz/chart.hpp"
#include "devplace/viz/labels.hpp"
#include "devplace/viz/svg.hpp"

namespace devplace::viz {

struct heatmap_options {
  std::string title;          ///< the first line
  double matrix_size = 768;   ///< px for the whole matrix (cells between 1 and 24 px)
};

namespace detail {

/// Maximal runs [first, last] of consecutive device ids in `devices`.
inline std::vector<std::pair<std::size_t, std::size_t>> device_runs(std::vector<std::size_t> devices) {
  std::sort(devices.begin(), devices.end());
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for (auto d : devices)
    if (!runs.empty() && runs.back().second + 1 == d) runs.back().second = d;
    else runs.emplace_back(d, d);
  return runs;
}

/// Labels along one side: per device when `each` fits, else per node (every k-th node).
struct side_labels {
  std::vector<std::pair<double, std::string>> at;  // centre offset along the side, text
};

inline side_labels node_labels(const device_labels& l, double cell, double font) {
  side_labels out;
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // first device, count, per node in order
  for (std::size_t d = 0; d < l.num_devices(); ++d)
    if (!spans.empty() && l.node_of[spans.back().first] == l.node_of[d]) ++spans.back().second;
    else spans.emplace_back(d, 1);
  double last_end = -1e300;
  for (auto [first, n] : spans) {
    const std::string& name = l.nodes[l.node_of[first]];
    const double centre = cell * (static_cast<double>(first) + static_cast<double>(n) / 2), w = text_width(name, font);
    if (centre - w / 2 < last_end + 6) continue;  // would touch the previous label
    out.at.emplace_back(centre, name);
    last_end = centre + w / 2;
  }
  return out;
}

/// The colour bar at (x, top), `height` px tall, over [lo, hi] GB/s on a log scale: 48 steps,
/// ticks at the ends and at 1-2-5 values between them where their labels have room.
inline void heatmap_scale(svg_canvas& c, double x, double top, double height, double lo, double hi, double font) {
  auto value = [&](double bw) { return hi > lo && lo > 0 ? std::log(bw / lo) / std::log(hi / lo) : 1.0; };
  for (int k = 0; k < 48; ++k) c.rect(x, top + height * (47 - k) / 48.0, 14, height / 48.0 + 0.3, ramp_colour((k + 0.5) / 48.0));
  c.text(x, top - 10, "GB/s", {.size = 10, .bold = true});
  auto tick = [&](double v) {
    const double y = top + height * (1 - value(v));
    c.line(x + 14, y, x + 18, y, "#333333");
    c.text(x + 20, y + font * 0.35, format_number(v, 3), {.size = font});
    return y;
  };
  const double gap = font * 1.5;
  double last_y = tick(lo);
  if (!(hi > lo) || last_y - top < gap) return;
  for (double p = std::pow(10.0, std::floor(std::log10(lo))); p <= hi; p *= 10)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = p * m, y = top + height * (1 - value(v));
      if (v > lo && v < hi && last_y - y >= gap && y - top >= gap) last_y = tick(v);
    }
  tick(hi);
}

}  // namespace detail

/// The heat map of `t` with the stages of `device_of` (row s: the devices of stage s; may be
/// empty for no plan). Throws std::invalid_argument when the labels are not for t's devices or a
/// stage names a device outside t.
template <device_topology T>
[[nodiscard]] std::string heatmap_svg(const T& t, const std::vector<std::vector<std::size_t>>& device_of,
                                      const device_labels& l, const heatmap_options& opt = {}) {
  const std::size_t D = devplace::num_devices(t);
  if (l.num_devices() != D)
    throw std::invalid_argument("heatmap_svg: labels for " + std::to_string(l.num_devices()) + " devices, the topology has " +
                                std::to_string(D));
  if (D == 0) throw std::invalid_argument("heatmap_svg: the topology has no device");
  std::vector<std::size_t> stage(D, device_of.size());
  for (std::size_t s = 0; s < device_of.size(); ++s)
    for (auto d : device_of[s]) {
      if (d >= D) throw std::invalid_argument("heatmap_svg: stage " + std::to_string(s) + " names device " + std::to_string(d));
      stage[d] = s;
    }
  double lo = 1e300, hi = 0;
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) {
        lo = std::min(lo, devplace::bandwidth_gbps(t, a, b));
        hi = std::max(hi, devplace::bandwidth_gbps(t, a, b));
      }
  if (D == 1) lo = hi = 1;
  auto value = [&](double bw) { return hi > lo && lo > 0 ? std::log(bw / lo) / std::log(hi / lo) : 1.0; };
  const double cell = std::clamp(opt.matrix_size / static_cast<double>(D), 1.0, 24.0), M = cell * static_cast<double>(D);
  const double font = 9;
  // Row labels: names when the cells are tall enough, else nodes.
  const bool row_names = cell >= 12;
  detail::side_labels rows, cols;
  if (row_names)
    for (std::size_t d = 0; d < D; ++d) rows.at.emplace_back(cell * (static_cast<double>(d) + 0.5), l.name[d]);
  else rows = detail::node_labels(l, cell, font);  // horizontal text, stacked vertically: spacing by height
  if (!row_names) {
    detail::side_labels thinned;
    double last = -1e300;
    for (auto& [c, s] : rows.at)
      if (c - last >= font * 1.6) {
        thinned.at.emplace_back(c, s);
        last = c;
      }
    rows = thinned;
  }
  double short_w = 0, id_w = text_width(std::to_string(D - 1), 8);
  for (std::size_t d = 0; d < D; ++d) short_w = std::max(short_w, text_width(l.short_name[d], 8));
  const int col_mode = short_w <= cell - 2 ? 2 : id_w <= cell - 2 ? 1 : 0;  // short names, ids, none
  const auto node_cols = detail::node_labels(l, cell, font);
  double row_label_w = 0;
  for (auto& [c, s] : rows.at) row_label_w = std::max(row_label_w, text_width(s, font));
  const double strip = 8, x0 = 12 + row_label_w + 6 + strip + 2, y0 = (col_mode ? 72 : 58) + 4 + strip + 2;
  std::vector<legend_entry> legend;
  for (std::size_t s = 0; s < device_of.size(); ++s)
    legend.push_back({"stage " + std::to_string(s) + " (" + std::to_string(device_of[s].size()) + " devices)", stage_colour(s), true});
  if (std::find(stage.begin(), stage.end(), device_of.size()) != stage.end()) legend.push_back({"no stage", "#dddddd"});
  const std::string title = opt.title.empty() ? "Bandwidth between devices" : opt.title;
  const std::string sub = "row a, column b: bandwidth from device a to device b (GB/s, log colour scale)";
  const double scale_x = x0 + M + 24, scale_label_w = text_width(format_number(hi, 3) + " GB/s", font) + 30;
  const double width = std::max({scale_x + 16 + scale_label_w, text_width(title, 14, true) + 20, text_width(sub, 11) + 20});
  const double height = y0 + std::max(M, 160.0) + 16 + legend_height(legend, width - 20) + 8;
  svg_canvas c(width, height);
  c.text(10, 20, title, {.size = 14, .bold = true});
  c.text(10, 38, sub, {.size = 11, .fill = "#444444"});
  // Column labels: node names (with a bracket over each node's columns), then per-device labels.
  for (auto& [cx, s] : node_cols.at) c.text(x0 + cx, 58, s, {.size = font, .anchor = text_anchor::middle});
  if (col_mode)
    for (std::size_t d = 0; d < D; ++d)
      c.text(x0 + cell * (double(d) + 0.5), 72, col_mode == 2 ? l.short_name[d] : std::to_string(d),
             {.size = 8, .anchor = text_anchor::middle});
  for (auto& [cy, s] : rows.at) c.text(12 + row_label_w, y0 + cy + font * 0.35, s, {.size = font, .anchor = text_anchor::end});
  // Cells: runs of equal bandwidth per row.
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D;) {
      const double bw = a == b ? 0 : devplace::bandwidth_gbps(t, a, b);
      std::size_t e = b + 1;
      while (e < D && e != a && b != a && devplace::bandwidth_gbps(t, a, e) == bw) ++e;
      const std::string tip = a == b ? l.name[a] + " (itself)"
                                     : l.name[a] + " to " + (e - b == 1 ? l.name[b] : l.name[b] + " .. " + l.name[e - 1]) +
                                           ": " + format_number(bw, 4) + " GB/s";
      c.rect(x0 + cell * double(b), y0 + cell * double(a), cell * double(e - b), cell, a == b ? "#bbbbbb" : ramp_colour(value(bw)),
             tip, {}, 1, "cell");
      b = e;
    }
  for (std::size_t d = 0; d + 1 < D; ++d)  // node boundaries
    if (l.node_of[d] != l.node_of[d + 1])
      c.line(x0 + cell * double(d + 1), y0 - strip - 2, x0 + cell * double(d + 1), y0 + M, "#ffffff", cell >= 6 ? 1.5 : 0.5);
  // Stage strips and outlines.
  for (std::size_t d = 0; d < D; ++d) {
    const char* colour = stage[d] < device_of.size() ? stage_colour(stage[d]) : "#dddddd";
    const std::string tip = l.name[d] + (stage[d] < device_of.size() ? ": stage " + std::to_string(stage[d]) : ": no stage");
    c.rect(x0 + cell * double(d), y0 - strip - 2, cell, strip, colour, tip, {}, 1, "strip");
    c.rect(x0 - strip - 2, y0 + cell * double(d), strip, cell, colour, tip, {}, 1, "strip");
  }
  for (std::size_t s = 0; s < device_of.size(); ++s) {
    const auto runs = detail::device_runs(device_of[s]);
    for (auto [a0, a1] : runs)
      for (auto [b0, b1] : runs)
        c.rect(x0 + cell * double(b0), y0 + cell * double(a0), cell * double(b1 - b0 + 1), cell * double(a1 - a0 + 1), "none",
               "stage " + std::to_string(s), stage_colour(s), cell >= 6 ? 2 : 1, "stage");
  }
  const double bar_h = std::max(M, 160.0);
  detail::heatmap_scale(c, scale_x, y0, bar_h, lo, hi, font);
  draw_legend(c, 10, y0 + bar_h + 12, width - 20, legend);
  return c.str();
}

}  // namespace devplace::viz
