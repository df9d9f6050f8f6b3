#pragma once
// Checks of the SVG documents the pictures write, independent of the code that wrote them:
//   * `parse_xml`: a strict parser of the XML subset SVG pictures use (elements, quoted
//     attributes, text, the five entities); throws on anything malformed;
//   * `text_boxes`: every <text>'s box from DejaVu Sans's real advance widths (the font's hmtx
//     table, ASCII) and its ascent and descent, to check that text stays inside the canvas and
//     no two texts overlap;
//   * `external_check`: xmllint (parse) and rsvg-convert (render to PNG), or skipped when the
//     tool is missing.
#include <doctest/doctest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "support/skip.hpp"

namespace devplace::test {

struct xml_node {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;  // character data directly inside, entities resolved
  std::vector<std::unique_ptr<xml_node>> children;

  [[nodiscard]] double num(const std::string& a, double fallback = 0) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? fallback : std::stod(it->second);
  }
  [[nodiscard]] std::string attr(const std::string& a) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? std::string() : it->second;
  }
  template <class F>
  void each(F&& f) const {
    f(*this);
    for (const auto& c : children) c->each(f);
  }
};

/// The elements named `name` (and of class `cls`, when given) under `root`, in document order.
inline std::vector<const xml_node*> elements(const xml_node& root, const std::string& name, const std::string& cls = "") {
  std::vector<const xml_node*> out;
  root.each([&](const xml_node& n) {
    if (n.name == name && (cls.empty() || n.attr("class") == cls)) out.push_back(&n);
  });
  return out;
}

inline std::string xml_unescape(const std::string& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      if (s[i] == '<' || s[i] == '>') throw std::runtime_error("unescaped < or > in text");
      r += s[i];
      continue;
    }
    const std::size_t semi = s.find(';', i);
    if (semi == std::string::npos) throw std::runtime_error("& without ;");
    const std::string e = s.substr(i + 1, semi - i - 1);
    if (e == "amp") r += '&';
    else if (e == "lt") r += '<';
    else if (e == "gt") r += '>';
    else if (e == "quot") r += '"';
    else if (e == "apos") r += '\'';
    else throw std::runtime_error("unknown entity &" + e + ";");
    i = semi;
  }
  return r;
}

/// The root element of `doc`; throws std::runtime_error when it is not well formed.
inline std::unique_ptr<xml_node> parse_xml(const std::string& doc) {
  std::size_t i = 0;
  auto skip_ws = [&] {
    while (i < doc.size() && std::isspace(static_cast<unsigned char>(doc[i]))) ++i;
  };
  auto parse_name = [&] {
    const std::size_t b = i;
    while (i < doc.size() && (std::isalnum(static_cast<unsigned char>(doc[i])) || doc[i] == '-' || doc[i] == ':' || doc[i] == '_')) ++i;
    if (i == b) throw std::runtime_error("a name expected at " + std::to_string(b));
    return doc.substr(b, i - b);
  };
  auto element = [&](auto&& self) -> std::unique_ptr<xml_node> {
    if (doc.compare(i, 1, "<") != 0) throw std::runtime_error("< expected at " + std::to_string(i));
    ++i;
    auto n = std::make_unique<xml_node>();
    n->name = parse_name();
    for (;;) {
      skip_ws();
      if (i >= doc.size()) throw std::runtime_error("unterminated tag <" + n->name);
      if (doc.compare(i, 2, "/>") == 0) {
        i += 2;
        return n;
      }
      if (doc[i] == '>') {
        ++i;
        break;
      }
      const std::string a = parse_name();
      if (doc.compare(i, 2, "=\"") != 0) throw std::runtime_error("attribute " + a + " of <" + n->name + "> is not quoted");
      const std::size_t close = doc.find('"', i + 2);
      if (close == std::string::npos) throw std::runtime_error("unterminated attribute " + a);
      if (!n->attrs.emplace(a, xml_unescape(doc.substr(i + 2, close - i - 2))).second)
        throw std::runtime_error("attribute " + a + " twice in <" + n->name + ">");
      i = close + 1;
    }
    for (;;) {
      const std::size_t lt = doc.find('<', i);
      if (lt == std::string::npos) throw std::runtime_error("<" + n->name + "> is not closed");
      n->text += xml_unescape(doc.substr(i, lt - i));
      i = lt;
      if (doc.compare(i, 2, "</") == 0) {
        i += 2;
        if (parse_name() != n->name || doc.compare(i, 1, ">") != 0) throw std::runtime_error("mismatched </...> for <" + n->name + ">");
        ++i;
        return n;
      }
      n->children.push_back(self(self));
    }
  };
  skip_ws();
  auto root = element(element);
  skip_ws();
  if (i != doc.size()) throw std::runtime_error("content after the root element");
  return root;
}

/// DejaVu Sans and DejaVu Sans Bold advance widths of ASCII 32..126, in em (from the fonts' hmtx
/// tables, units per em 2048).
inline double dejavu_advance(char c, bool bold) {
  static constexpr double regular[95] = {
      0.3179, 0.4009, 0.46, 0.8379, 0.6362, 0.9502, 0.7798, 0.2749, 0.3901, 0.3901, 0.5, 0.8379, 0.3179, 0.3608, 0.3179, 0.3369,
      0.6362, 0.6362, 0.6362, 0.6362, 0.6362, 0.6362, 0.6362, 0.6362, 0.6362, 0.6362, 0.3369, 0.3369, 0.8379, 0.8379, 0.8379,
      0.5308, 1.0, 0.6841, 0.686, 0.6982, 0.77, 0.6318, 0.5752, 0.7749, 0.752, 0.2949, 0.2949, 0.6558, 0.5571, 0.8628, 0.748,
      0.7871, 0.603, 0.7871, 0.6948, 0.6348, 0.6108, 0.7319, 0.6841, 0.9888, 0.6851, 0.6108, 0.6851, 0.3901, 0.3369, 0.3901,
      0.8379, 0.5, 0.5, 0.6128, 0.6348, 0.5498, 0.6348, 0.6152, 0.3521, 0.6348, 0.6338, 0.2778, 0.2778, 0.5791, 0.2778, 0.9741,
      0.6338, 0.6118, 0.6348, 0.6348, 0.4111, 0.521, 0.3921, 0.6338, 0.5918, 0.8179, 0.5918, 0.5918, 0.5249, 0.6362, 0.3369,
      0.6362, 0.8379};
  static constexpr double heavy[95] = {
      0.3481, 0.4561, 0.521, 0.8379, 0.6958, 1.002, 0.8721, 0.3062, 0.457, 0.457, 0.5229, 0.8379, 0.3799, 0.415, 0.3799, 0.3652,
      0.6958, 0.6958, 0.6958, 0.6958, 0.6958, 0.6958, 0.6958, 0.6958, 0.6958, 0.6958, 0.3999, 0.3999, 0.8379, 0.8379, 0.8379,
      0.5801, 1.0, 0.7739, 0.7622, 0.7339, 0.8301, 0.6831, 0.6831, 0.8208, 0.8369, 0.3721, 0.3721, 0.7749, 0.6372, 0.9951, 0.8369,
      0.8501, 0.7329, 0.8501, 0.77, 0.7202, 0.6821, 0.812, 0.7739, 1.103, 0.771, 0.7241, 0.7251, 0.457, 0.3652, 0.457, 0.8379,
      0.5, 0.5, 0.6748, 0.7158, 0.5928, 0.7158, 0.6782, 0.4351, 0.7158, 0.7119, 0.3428, 0.3428, 0.665, 0.3428, 1.042, 0.7119,
      0.687, 0.7158, 0.7158, 0.4932, 0.5952, 0.478, 0.7119, 0.6519, 0.9238, 0.645, 0.6519, 0.582, 0.7119, 0.3652, 0.7119, 0.8379};
  const auto u = static_cast<unsigned char>(c);
  if (u < 32 || u > 126) return 1.2;  // outside the table: wider than any glyph above
  return bold ? heavy[u - 32] : regular[u - 32];
}

struct text_box {
  double x0, y0, x1, y1;
  std::string text;
};

/// The boxes of every <text> of `root`: advance widths as set, ascent 0.93 em, descent 0.24 em.
inline std::vector<text_box> text_boxes(const xml_node& root) {
  std::vector<text_box> out;
  root.each([&](const xml_node& n) {
    if (n.name != "text") return;
    const double size = n.num("font-size", 16);
    const bool bold = n.attr("font-weight") == "bold";
    double w = 0;
    for (std::size_t i = 0; i < n.text.size(); ++i)
      if ((static_cast<unsigned char>(n.text[i]) & 0xC0) != 0x80) w += dejavu_advance(n.text[i], bold) * size;
    double x = n.num("x");
    const std::string anchor = n.attr("text-anchor");
    if (anchor == "middle") x -= w / 2;
    else if (anchor == "end") x -= w;
    const double y = n.num("y");
    out.push_back({x, y - 0.93 * size, x + w, y + 0.24 * size, n.text});
  });
  return out;
}

/// Every text inside the canvas and no two texts overlapping (checked with CHECK, naming them).
inline void check_text_layout(const xml_node& root) {
  const double W = root.num("width"), H = root.num("height");
  const auto boxes = text_boxes(root);
  for (const auto& b : boxes) {
    INFO("text \"" << b.text << "\" box [" << b.x0 << ", " << b.x1 << "] x [" << b.y0 << ", " << b.y1 << "] in " << W << " x " << H);
    CHECK((b.x0 >= 0 && b.y0 >= 0 && b.x1 <= W && b.y1 <= H));
  }
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      const auto &a = boxes[i], &b = boxes[j];
      const bool overlap = a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
      INFO("\"" << a.text << "\" and \"" << b.text << "\"");
      CHECK_FALSE(overlap);
    }
}

/// True when `tool` runs here; otherwise marks the test skipped.
inline bool require_tool(const std::string& tool) {
  if (std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0) return true;
  skip(tool + " is not installed");
  return false;
}

/// xmllint parses `doc` and rsvg-convert renders it to a non-empty PNG (each skipped when missing).
inline void external_check(const std::string& doc, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("devplace_viz_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto svg = dir / (name + ".svg"), png = dir / (name + ".png");
  std::ofstream(svg) << doc;
  if (require_tool("xmllint")) CHECK(std::system(("xmllint --noout '" + svg.string() + "'").c_str()) == 0);
  if (require_tool("rsvg-convert")) {
    CHECK(std::system(("rsvg-convert -o '" + png.string() + "' '" + svg.string() + "'").c_str()) == 0);
    CHECK(std::filesystem::exists(png));
    if (std::filesystem::exists(png)) CHECK(std::filesystem::file_size(png) > 100);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace devplace::test
