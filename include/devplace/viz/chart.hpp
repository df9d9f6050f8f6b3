#pragma once
/// \file viz/chart.hpp
/// Chart furniture drawn on an `svg_canvas` (viz/svg.hpp): a legend laid out in rows, a
/// horizontal value axis with "nice" ticks and a title, and a colour ramp for magnitudes.
/// Every function keeps its text inside the canvas and returns where its drawing ends, so that
/// a picture stacks them without overlaps.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "devplace/viz/svg.hpp"

namespace devplace::viz {

/// One legend item: a swatch of `colour` (an outline when `outline`), then `label`.
struct legend_entry {
  std::string label;
  std::string colour;
  bool outline = false;
};

namespace detail {
inline constexpr double legend_swatch = 14, legend_gap = 6, legend_spacing = 18;
template <int = 0>
double legend_entry_width(const legend_entry& e, double font) {
  return legend_swatch + legend_gap + text_width(e.label, font) + legend_spacing;
}
}  // namespace detail

/// The height of `entries` laid out left to right in rows no wider than `max_width`.
template <int = 0>
[[nodiscard]] double legend_height(const std::vector<legend_entry>& entries, double max_width, double font = 11) {
  if (entries.empty()) return 0;
  double x = 0, rows = 1;
  for (const auto& e : entries) {
    const double w = detail::legend_entry_width(e, font);
    if (x > 0 && x + w > max_width) {
      ++rows;
      x = 0;
    }
    x += w;
  }
  return rows * (font + 8);
}

/// Draws the legend with its top-left corner at (x, top); returns the y below it.
template <int = 0>
double draw_legend(svg_canvas& c, double x, double top, double max_width, const std::vector<legend_entry>& entries,
                          double font = 11) {
  double cx = 0, row_top = top;
  const double row_h = font + 8;
  for (const auto& e : entries) {
    const double w = detail::legend_entry_width(e, font);
    if (cx > 0 && cx + w > max_width) {
      cx = 0;
      row_top += row_h;
    }
    const double sy = row_top + (row_h - 10) / 2;
    if (e.outline) c.rect(x + cx + 1, sy, detail::legend_swatch - 2, 10, "none", {}, e.colour, 2, "legend");
    else c.rect(x + cx, sy, detail::legend_swatch, 10, e.colour, {}, "#333333", 0.5, "legend");
    c.text(x + cx + detail::legend_swatch + detail::legend_gap, row_top + (row_h + font) / 2 - 2, e.label, {.size = font});
    cx += w;
  }
  return entries.empty() ? top : row_top + row_h;
}

/// The tick values of an axis over [lo, hi] drawn `length` px long: as many as fit their labels
/// (`format_number`) with 8 px between them, at most 11.
template <int = 0>
[[nodiscard]] std::vector<double> axis_ticks(double lo, double hi, double length, double font = 10) {
  for (std::size_t n = 11; n > 2; --n) {
    const auto ticks = nice_ticks(lo, hi, n);
    if (ticks.size() < 2) return ticks;
    double widest = 0;
    for (double t : ticks) widest = std::max(widest, text_width(format_number(t), font));
    const double spacing = length * (ticks[1] - ticks[0]) / (hi - lo);
    if (spacing >= widest + 8) return ticks;
  }
  return nice_ticks(lo, hi, 2);
}

/// A horizontal axis along y from x0 (value lo) to x1 (value hi): the line, ticks labelled below
/// it, `title` centred below them, and light vertical grid lines up to `grid_top` (none when
/// grid_top >= y). Labels that would leave the canvas are anchored inwards. Returns the y below.
template <int = 0>
double draw_axis(svg_canvas& c, double x0, double x1, double y, double lo, double hi, std::string_view title,
                        double grid_top, double font = 10) {
  c.line(x0, y, x1, y, "#333333", 1);
  const double scale = hi > lo ? (x1 - x0) / (hi - lo) : 0;
  for (double t : axis_ticks(lo, hi, x1 - x0, font)) {
    const double x = x0 + (t - lo) * scale;
    if (grid_top < y) c.line(x, grid_top, x, y, "#dddddd", 0.5, {}, {}, "grid");
    c.line(x, y, x, y + 4, "#333333", 1);
    const std::string label = format_number(t);
    const double w = text_width(label, font);
    text_anchor a = text_anchor::middle;
    double lx = x;
    if (x - w / 2 < 1) {
      a = text_anchor::start;
      lx = std::max(x, 1.0);
    } else if (x + w / 2 > c.width() - 1) {
      a = text_anchor::end;
      lx = std::min(x, c.width() - 1);
    }
    c.text(lx, y + 6 + font, label, {.size = font, .anchor = a});
  }
  const double title_y = y + 6 + font + 6 + font + 1;
  if (!title.empty()) c.text((x0 + x1) / 2, title_y, title, {.size = font + 1, .anchor = text_anchor::middle});
  return title_y + 0.3 * (font + 1) + 2;
}

/// The colours of stages 0, 1, ... (cycled) in every picture: Okabe–Ito's colours that stand out
/// of the yellow-to-blue scale of `ramp_colour`.
[[nodiscard]] inline const char* stage_colour(std::size_t s) noexcept {
  constexpr const char* colours[] = {"#D55E00", "#009E73", "#CC79A7", "#E69F00", "#000000"};
  return colours[s % 5];
}

/// A sequential colour for v in [0, 1]: from a pale yellow (0) through Okabe–Ito's blue to a dark
/// navy (1), its lightness falling monotonically so that it reads in greyscale too.
template <int = 0>
[[nodiscard]] std::string ramp_colour(double v) {
  v = std::clamp(std::isfinite(v) ? v : 0.0, 0.0, 1.0);
  static constexpr double stops[3][3] = {{255, 247, 188}, {0, 114, 178}, {8, 29, 88}};
  const double t = v < 0.5 ? v * 2 : (v - 0.5) * 2;
  const auto& a = stops[v < 0.5 ? 0 : 1];
  const auto& b = stops[v < 0.5 ? 1 : 2];
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(a[0] + (b[0] - a[0]) * t)),
                static_cast<int>(std::lround(a[1] + (b[1] - a[1]) * t)), static_cast<int>(std::lround(a[2] + (b[2] - a[2]) * t)));
  return buf;
}

}  // namespace devplace::viz
