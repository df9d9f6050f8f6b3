#include "devplace/sim/svg.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "devplace/topology/generators.hpp"

using namespace devplace;

namespace {
// A small well-formedness checker: tags balance, attributes are quoted, entities are known.
// Returns the number of elements named `name`, or -1 when the document is not well formed.
int count_elements(const std::string& doc, const std::string& name) {
  std::vector<std::string> open;
  int count = 0;
  std::size_t i = 0;
  while ((i = doc.find('<', i)) != std::string::npos) {
    const std::size_t j = doc.find('>', i);
    if (j == std::string::npos) return -1;
    std::string tag = doc.substr(i + 1, j - i - 1);
    i = j + 1;
    if (tag.empty()) return -1;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return -1;
      open.pop_back();
      continue;
    }
    const bool self = tag.back() == '/';
    if (self) tag.pop_back();
    const std::string el = tag.substr(0, tag.find_first_of(" \n"));
    // attributes: name="value" pairs
    std::size_t k = el.size();
    while (k < tag.size()) {
      while (k < tag.size() && tag[k] == ' ') ++k;
      if (k >= tag.size()) break;
      const std::size_t eq = tag.find('=', k);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') return -1;
      const std::size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos) return -1;
      k = close + 1;
    }
    if (el == name) ++count;
    if (!self) open.push_back(el);
  }
  for (std::size_t a = 0; (a = doc.find('&', a)) != std::string::npos; ++a)
    if (doc.compare(a, 5, "&amp;") && doc.compare(a, 4, "&lt;") && doc.compare(a, 4, "&gt;") && doc.compare(a, 6, "&quot;"))
      return -1;
  return open.empty() ? count : -1;
}
pipeline_model two_by_two() {
  pipeline_model m;
  m.stages = 2;
  m.replicas = 2;
  m.forward_ms = {1, 1};
  m.backward_ms = {2, 2};
  m.param_bytes = {1e6, 1e6};
  m.message_bytes = {{-1, 1e6}, {-1, -1}};
  m.device_of = {{0, 1}, {2, 3}};
  return m;
}
}  // namespace

TEST_CASE("the checker itself rejects broken documents") {
  CHECK(count_elements("<svg><rect x=\"1\"/></svg>", "rect") == 1);
  CHECK(count_elements("<svg><rect x=1/></svg>", "rect") == -1);
  CHECK(count_elements("<svg><g></svg>", "g") == -1);
  CHECK(count_elements("<svg>a & b</svg>", "svg") == -1);
}

TEST_CASE("the SVG pictures are well formed and have one element per item") {
  const auto t = two_level(2, 2);
  const auto m = two_by_two();
  const auto r = simulate(m, t, {.micro_batches = 3});
  const std::string g = gantt_svg(r, t.num_devices());
  CHECK(count_elements(g, "svg") == 1);
  CHECK(count_elements(g, "rect") == static_cast<int>(r.timeline.size()));
  CHECK(count_elements(g, "title") == static_cast<int>(r.timeline.size()));
  const std::string h = heatmap_svg(t, m.device_of);
  CHECK(count_elements(h, "rect") == 4 * 4 + 2 * 2 * 2);  // D x D cells + the outlined stage blocks
  const std::string s = stage_graph_svg(m);
  CHECK(count_elements(s, "circle") == 4);  // S x R stage replicas
  CHECK(count_elements(s, "line") == 2);    // one edge per replica copy
}
