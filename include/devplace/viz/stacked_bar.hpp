#pragma once
/// \file viz/stacked_bar.hpp
/// `stacked_bar_svg(bars, options)`: a horizontal stacked bar chart, one bar per item (a plan, an
/// execution, a GPU), each cut into segments of named kinds (compute, exposed communication,
/// bubble, optimizer; or memory by kind), on a value axis with its unit.
///
/// Kinds are coloured in the order of `stacked_bar_options::kinds`, then in order of first
/// appearance, with the Okabe–Ito palette (its eight colours, then again); the legend names every
/// kind that appears. A segment wide enough for it carries its value; every bar ends with its
/// total. Each segment's tooltip names the bar, the kind, the value and its share of the bar.
///
///     viz::stacked_bar_svg({{"plan A", {{"compute", 41.0}, {"exposed TP", 6.5}, {"bubble", 9.2}}},
///                           {"plan B", {{"compute", 41.0}, {"exposed PP", 2.1}, {"bubble", 4.0}}}},
///                          {.title = "Time per iteration", .unit = "ms"});
///
/// Complexity: O(B · K) for B bars of K segments.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/viz/chart.hpp"
#include "devplace/viz/svg.hpp"

namespace devplace::viz {

struct bar_segment {
  std::string kind;   ///< what the segment counts ("compute", "exposed TP", "activations")
  double value = 0;   ///< ≥ 0, in the chart's unit
};

struct stacked_bar {
  std::string label;
  std::vector<bar_segment> segments;  ///< drawn left to right
};

struct stacked_bar_options {
  std::string title;                ///< the first line
  std::string subtitle;             ///< a second line (none when empty)
  std::string unit = "ms";          ///< of the values: the axis reads "value (unit)"
  std::string axis_title;           ///< instead of "value (unit)" when not empty
  double bar_length = 640;          ///< px of the largest total
  std::vector<std::string> kinds;   ///< the colour order of the kinds known beforehand
};

/// The palette of the kinds, in order: Okabe–Ito's colours, the darkest first.
[[nodiscard]] inline const char* kind_colour(std::size_t k) noexcept {
  constexpr const char* colours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"};
  return colours[k % 8];
}

namespace detail {
/// Black or white text, whichever reads on `colour` (#rrggbb).
template <int = 0>
const char* text_on(const char* colour) {
  const auto hex = [&](int i) { return std::stoi(std::string(colour + i, 2), nullptr, 16); };
  const double luminance = 0.299 * hex(1) + 0.587 * hex(3) + 0.114 * hex(5);
  return luminance < 128 ? "#ffffff" : "#000000";
}
}  // namespace detail

/// The chart of `bars`. Throws std::invalid_argument naming the bar and kind of a value that is
/// negative or not finite, and when bar_length is not > 0.
template <int = 0>
[[nodiscard]] std::string stacked_bar_svg(const std::vector<stacked_bar>& bars, const stacked_bar_options& o = {}) {
  if (!(o.bar_length > 0)) throw std::invalid_argument("stacked_bar_svg: bar_length must be > 0");
  std::vector<std::string> kinds = o.kinds;
  std::vector<char> used(kinds.size(), 0);
  double top_total = 0, label_w = 0, total_w = 0;
  constexpr double font = 11, bar_h = 22, pitch = 30;
  for (const auto& b : bars) {
    double total = 0;
    for (const auto& sgm : b.segments) {
      if (!std::isfinite(sgm.value) || sgm.value < 0)
        throw std::invalid_argument("stacked_bar_svg: bar \"" + b.label + "\", kind \"" + sgm.kind +
                                    "\": the value must be finite and >= 0");
      auto it = std::find(kinds.begin(), kinds.end(), sgm.kind);
      if (it == kinds.end()) {
        kinds.push_back(sgm.kind);
        used.push_back(0);
        it = kinds.end() - 1;
      }
      used[static_cast<std::size_t>(it - kinds.begin())] = 1;
      total += sgm.value;
    }
    top_total = std::max(top_total, total);
    label_w = std::max(label_w, text_width(b.label, font));
    total_w = std::max(total_w, text_width(format_number(total, 4) + " " + o.unit, font));
  }
  std::vector<legend_entry> legend;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    if (used[k]) legend.push_back({kinds[k], kind_colour(k)});
  const double left = label_w + 20, top = o.subtitle.empty() ? 40 : 58;
  const double width = std::max({left + o.bar_length + 10 + total_w + 20, text_width(o.title, 14, true) + 20,
                                 text_width(o.subtitle, 11) + 20, 240.0});
  const double rows_h = pitch * static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  const double height = top + rows_h + 45 + legend_height(legend, width - 20) + 10;
  svg_canvas c(width, height);
  c.text(10, 20, o.title, {.size = 14, .bold = true});
  if (!o.subtitle.empty()) c.text(10, 38, o.subtitle, {.size = 11, .fill = "#444444"});
  const double hi = top_total > 0 ? top_total : 1, scale = o.bar_length / hi;
  const double axis_end = draw_axis(c, left, left + o.bar_length, top + rows_h + 4, 0, hi,
                                    o.axis_title.empty() ? "value (" + o.unit + ")" : o.axis_title, top);
  if (bars.empty()) c.text(left, top + 19, "no bars", {.size = font, .fill = "#444444"});
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = top + pitch * static_cast<double>(i) + (pitch - bar_h) / 2;
    c.text(left - 8, y + bar_h / 2 + 4, b.label, {.size = font, .anchor = text_anchor::end});
    double x = left, total = 0;
    for (const auto& sgm : b.segments) total += sgm.value;
    for (const auto& sgm : b.segments) {
      const std::size_t k = static_cast<std::size_t>(std::find(kinds.begin(), kinds.end(), sgm.kind) - kinds.begin());
      const double w = sgm.value * scale;
      const std::string value = format_number(sgm.value, 3);
      c.rect(x, y, w, bar_h, kind_colour(k),
             b.label + ", " + sgm.kind + ": " + format_number(sgm.value, 6) + " " + o.unit + " (" +
                 format_number(total > 0 ? 100 * sgm.value / total : 0, 3) + " %)",
             {}, 1, "segment");
      if (text_width(value, 10) + 6 <= w)
        c.text(x + w / 2, y + bar_h / 2 + 4, value, {.size = 10, .anchor = text_anchor::middle, .fill = detail::text_on(kind_colour(k))});
      x += w;
    }
    c.text(x + 6, y + bar_h / 2 + 4, format_number(total, 4) + " " + o.unit, {.size = font});
  }
  draw_legend(c, 10, axis_end + 4, width - 20, legend);
  return c.str();
}

}  // namespace devplace::viz
