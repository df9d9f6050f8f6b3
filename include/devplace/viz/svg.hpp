#pragma once
/// \file viz/svg.hpp
/// The drawing primitives shared by devplace's pictures: an `svg_canvas` that writes a standalone
/// SVG document (rectangles, lines, paths, text with tooltips), the Okabe–Ito palette, a
/// conservative text-width estimate used to lay text out inside the canvas without overlaps,
/// "nice" axis ticks and number, time and byte formatting.
///
/// Text is set in DejaVu Sans (Verdana's metrics, the sans-serif font of Debian's renderers);
/// `text_width` bounds its advance widths from above: 1 em for m, w, M, W, %, @ and non-ASCII
/// characters, 0.84 em for + = < > # ~ ^, 0.8 em for other capitals and &, 0.64 em for
/// lower-case letters and digits, 0.46 em for spaces and narrow punctuation, 0.7 em for the rest,
/// all times 1.13 in bold (DejaVu Sans Bold's widest glyphs are 1.1 to 1.12 times these). A
/// text's box is [x, x + width] × [baseline − size, baseline + 0.3 · size] (start anchor; middle
/// and end shift it by half or all of its width), which holds DejaVu's ascent (0.93 em) and
/// descent (0.24 em).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace devplace::viz {

/// Okabe & Ito's palette for colour-blind readers, in their order (black last).
inline constexpr std::array<const char*, 8> okabe_ito{"#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                                      "#0072B2", "#D55E00", "#CC79A7", "#000000"};

/// `s` with &, <, > and " written as XML entities.
template <int = 0>
[[nodiscard]] std::string xml_escape(std::string_view s) {
  std::string r;
  r.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      default: r += c;
    }
  }
  return r;
}

/// An upper bound of the advance width of `s` (UTF-8) set at `font_size` px in DejaVu Sans (bold:
/// DejaVu Sans Bold), per the file comment.
template <int = 0>
[[nodiscard]] double text_width(std::string_view s, double font_size, bool bold = false) {
  double em = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte
    if (c >= 0x80 || c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%' || c == '@') em += 1.0;
    else if (c == '+' || c == '=' || c == '<' || c == '>' || c == '#' || c == '~' || c == '^') em += 0.84;
    else if ((c >= 'A' && c <= 'Z') || c == '&') em += 0.8;
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) em += 0.64;
    else if (c == ' ' || c == '.' || c == ',' || c == ':' || c == ';' || c == '\'' || c == '|' || c == '!' || c == '(' ||
             c == ')' || c == '[' || c == ']' || c == '/' || c == '-')
      em += 0.46;
    else em += 0.7;
  }
  return em * font_size * (bold ? 1.13 : 1.0);
}

/// `x` with `digits` significant digits, no exponent for |x| in [1e-3, 1e9), trailing zeros cut.
template <int = 0>
[[nodiscard]] std::string format_number(double x, int digits = 3) {
  if (!std::isfinite(x)) return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
  if (x == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(x))));
  const int decimals = std::clamp(digits - 1 - magnitude, 0, 9);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

/// A byte count in B, kB, MB, GB or TB (powers of 1000), 3 significant digits.
template <int = 0>
[[nodiscard]] std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 5> unit{"B", "kB", "MB", "GB", "TB"};
  std::size_t k = 0;
  while (k + 1 < unit.size() && std::fabs(bytes) >= 999.5) {
    bytes /= 1000;
    ++k;
  }
  return format_number(bytes) + " " + unit[k];
}

/// Axis ticks: multiples of 1, 2 or 5 × 10^k covering [lo, hi] with at most `max_ticks` ticks
/// (at least 2 when hi > lo), all within [lo, hi].
template <int = 0>
[[nodiscard]] std::vector<double> nice_ticks(double lo, double hi, std::size_t max_ticks) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || max_ticks < 2) {
    if (std::isfinite(lo)) ticks.push_back(lo);
    return ticks;
  }
  const double raw = (hi - lo) / static_cast<double>(max_ticks - 1);
  const double base = std::pow(10.0, std::floor(std::log10(raw)));
  double step = base * 10;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (base * m >= raw) {
      step = base * m;
      break;
    }
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) ticks.push_back(k * step);
  return ticks;
}

enum class text_anchor { start, middle, end };

/// How a text element is set: size in px, anchor, colour, weight, an optional tooltip.
struct text_style {
  double size = 11;
  text_anchor anchor = text_anchor::start;
  std::string_view fill = "#000000";
  bool bold = false;
};

/// A standalone SVG document being drawn; `str()` returns it. Coordinates in px, y downwards.
class svg_canvas {
 public:
  svg_canvas(double width, double height) : width_(width), height_(height) {}

  [[nodiscard]] double width() const noexcept { return width_; }
  [[nodiscard]] double height() const noexcept { return height_; }

  /// A filled rectangle; `stroke` empty for none; `title` a tooltip; `cls` a class attribute.
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view title = {},
            std::string_view stroke = {}, double stroke_width = 1, std::string_view cls = {}) {
    body_ << "<rect" << cls_attr(cls) << " x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(std::max(w, 0.0))
          << "\" height=\"" << num(std::max(h, 0.0)) << "\" fill=\"" << fill << '"';
    if (!stroke.empty()) body_ << " stroke=\"" << stroke << "\" stroke-width=\"" << num(stroke_width) << '"';
    close(title, "rect");
  }

  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width = 1,
            std::string_view dash = {}, std::string_view title = {}, std::string_view cls = {}) {
    body_ << "<line" << cls_attr(cls) << " x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2)
          << "\" y2=\"" << num(y2) << "\" stroke=\"" << stroke << "\" stroke-width=\"" << num(stroke_width) << '"';
    if (!dash.empty()) body_ << " stroke-dasharray=\"" << dash << '"';
    close(title, "line");
  }

  /// A path (`d` in SVG path syntax), unfilled unless `fill` is given.
  void path(std::string_view d, std::string_view stroke, double stroke_width = 1, std::string_view fill = "none",
            std::string_view title = {}, std::string_view cls = {}) {
    body_ << "<path" << cls_attr(cls) << " d=\"" << d << "\" stroke=\"" << stroke << "\" stroke-width=\""
          << num(stroke_width) << "\" fill=\"" << fill << '"';
    close(title, "path");
  }

  /// Text with its baseline at y.
  void text(double x, double y, std::string_view s, const text_style& st = {}, std::string_view title = {}) {
    body_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << num(st.size) << '"';
    if (st.anchor != text_anchor::start) body_ << " text-anchor=\"" << (st.anchor == text_anchor::middle ? "middle" : "end") << '"';
    if (st.fill != "#000000") body_ << " fill=\"" << st.fill << '"';
    if (st.bold) body_ << " font-weight=\"bold\"";
    body_ << '>' << xml_escape(s);
    if (!title.empty()) body_ << "<title>" << xml_escape(title) << "</title>";
    body_ << "</text>\n";
  }

  /// The document: the root element with its size and font, a white background, what was drawn.
  [[nodiscard]] std::string str() const {
    std::ostringstream o;
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width_) << "\" height=\"" << num(height_)
      << "\" viewBox=\"0 0 " << num(width_) << ' ' << num(height_)
      << "\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n<rect x=\"0\" y=\"0\" width=\"" << num(width_)
      << "\" height=\"" << num(height_) << "\" fill=\"#ffffff\"/>\n"
      << body_.str() << "</svg>\n";
    return o.str();
  }

  /// A coordinate as written: at most 2 decimals.
  [[nodiscard]] static std::string num(double x) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f", std::fabs(x) < 5e-3 ? 0.0 : x);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
  }

 private:
  static std::string cls_attr(std::string_view cls) {
    return cls.empty() ? std::string() : " class=\"" + std::string(cls) + "\"";
  }
  void close(std::string_view title, std::string_view element) {
    if (title.empty()) body_ << "/>\n";
    else body_ << "><title>" << xml_escape(title) << "</title></" << element << ">\n";
  }

  double width_, height_;
  std::ostringstream body_;
};

}  // namespace devplace::viz
