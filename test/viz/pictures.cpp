// The heat map, the stage graph and the stacked bar chart against their inputs: every matrix cell
// covered once with the topology's bandwidth and a colour that darkens with it, the stage blocks
// outlined exactly, the stage boxes with their figures, hand-computed bar widths; text inside the
// canvas and never overlapping; the documents parsed by xmllint and rendered by rsvg-convert.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "devplace/topology/generators.hpp"
#include "devplace/viz/heatmap.hpp"
#include "devplace/viz/stacked_bar.hpp"
#include "devplace/viz/stage_graph.hpp"
#include "viz/svg_doc.hpp"

using namespace devplace;

namespace {

std::set<std::string> texts_of(const test::xml_node& root) {
  std::set<std::string> out;
  for (auto* t : test::elements(root, "text")) out.insert(t->text);
  return out;
}

double luminance(const std::string& hex) {
  auto c = [&](int i) { return std::stoi(hex.substr(static_cast<std::size_t>(i), 2), nullptr, 16); };
  return 0.299 * c(1) + 0.587 * c(3) + 0.114 * c(5);
}

void check_heatmap(const matrix_topology& t, const std::vector<std::vector<std::size_t>>& device_of) {
  const auto l = viz::make_device_labels(t);
  const std::string doc = viz::heatmap_svg(t, device_of, l, {.title = "test"});
  const auto root = test::parse_xml(doc);
  test::check_text_layout(*root);
  const std::size_t D = t.num_devices();
  const auto cells = test::elements(*root, "rect", "cell");
  REQUIRE_FALSE(cells.empty());
  const double x0 = cells[0]->num("x"), y0 = cells[0]->num("y"), cell = cells[0]->num("height");
  auto at = [&](double v, double origin) { return static_cast<std::size_t>(std::lround((v - origin) / cell)); };
  // Every (a, b) covered once; the tooltip's bandwidth is the topology's; darker when faster.
  std::vector<int> covered(D * D, 0);
  std::map<double, std::set<double>> lum;  // bandwidth -> luminances
  for (auto* c : cells) {
    const std::size_t a = at(c->num("y"), y0), b0 = at(c->num("x"), x0), n = at(c->num("x") + c->num("width"), x0) - b0;
    const std::string tip = c->children.at(0)->text;
    for (std::size_t b = b0; b < b0 + n; ++b) {
      REQUIRE(a * D + b < covered.size());
      ++covered[a * D + b];
      if (a == b) continue;
      const double bw = std::stod(tip.substr(tip.rfind(": ") + 2));
      CHECK(bw == doctest::Approx(t.bandwidth_gbps(a, b)).epsilon(1e-3));
      lum[t.bandwidth_gbps(a, b)].insert(luminance(c->attr("fill")));
    }
  }
  for (int k : covered) CHECK(k == 1);
  for (const auto& [bw, ls] : lum) CHECK(ls.size() == 1);
  for (auto it = lum.begin(); std::next(it) != lum.end(); ++it) CHECK(*it->second.begin() > *std::next(it)->second.begin());
  // The stage blocks: the outlined cells are exactly the pairs inside a stage, one rectangle per
  // pair of runs of consecutive devices.
  std::vector<int> outlined(D * D, 0), expected(D * D, 0);
  std::size_t blocks = 0;
  for (const auto& row : device_of) {
    std::set<std::size_t> in(row.begin(), row.end());
    std::size_t runs = 0;
    for (auto d : in) runs += in.count(d - 1) == 0 || d == 0;
    blocks += runs * runs;
    for (auto a : row)
      for (auto b : row) expected[a * D + b] = 1;
  }
  const auto stages = test::elements(*root, "rect", "stage");
  CHECK(stages.size() == blocks);
  for (auto* s : stages)
    for (std::size_t a = at(s->num("y"), y0); a < at(s->num("y") + s->num("height"), y0); ++a)
      for (std::size_t b = at(s->num("x"), x0); b < at(s->num("x") + s->num("width"), x0); ++b) ++outlined[a * D + b];
  CHECK(outlined == expected);
  const auto texts = texts_of(*root);
  for (std::size_t s = 0; s < device_of.size(); ++s)
    CHECK(texts.count("stage " + std::to_string(s) + " (" + std::to_string(device_of[s].size()) + " devices)") == 1);
  CHECK(texts.count("GB/s") == 1);
}

}  // namespace

TEST_CASE("heatmap: 4x DGX-1 with four stages, and random topologies with scattered stages") {
  const auto t = dgx1_cluster(4);
  std::vector<std::vector<std::size_t>> device_of(4);
  for (std::size_t d = 0; d < 32; ++d) device_of[d / 8].push_back(d);
  check_heatmap(t, device_of);
  test::external_check(viz::heatmap_svg(t, device_of, viz::make_device_labels(t)), "heatmap");
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 10; ++trial) {
    const std::size_t D = 2 + rng() % 14;
    Eigen::MatrixXd bw(static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(D));
    for (Eigen::Index a = 0; a < bw.rows(); ++a)
      for (Eigen::Index b = 0; b < bw.cols(); ++b) bw(a, b) = a == b ? 0.0 : double(1 + rng() % 3) * 10;
    std::vector<std::size_t> ids(D);
    for (std::size_t d = 0; d < D; ++d) ids[d] = d;
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<std::vector<std::size_t>> stages(1 + rng() % 3);
    for (std::size_t k = 0; k < D - rng() % 2; ++k) stages[k % stages.size()].push_back(ids[k]);
    INFO("trial " << trial);
    check_heatmap(matrix_topology(bw), stages);
  }
}

TEST_CASE("heatmap: 512 devices stay small and readable") {
  const auto t = two_level(64, 8);
  std::vector<std::vector<std::size_t>> device_of(8);
  for (std::size_t d = 0; d < 512; ++d) device_of[d / 64].push_back(d);
  const std::string doc = viz::heatmap_svg(t, device_of, viz::make_device_labels(t));
  CHECK(doc.size() < 2'000'000);
  const auto root = test::parse_xml(doc);
  test::check_text_layout(*root);
  CHECK(test::elements(*root, "rect", "cell").size() < 512 * 6);  // runs of equal bandwidth, not 512² cells
  check_heatmap(t, device_of);
}

TEST_CASE("stage graph: boxes with their figures, edges with their bytes, replicas with their devices") {
  const auto t = two_level(2, 3);
  const pipeline_model m{.stages = 3, .replicas = 2, .forward_ms = {1, 2.5, 1}, .backward_ms = {2, 5, 2},
                         .param_bytes = {1e6, 2.5e9, 0}, .message_bytes = {{-1, 4e6, 120}, {-1, -1, 0}, {-1, -1, -1}},
                         .device_of = {{0, 3}, {1, 4}, {2}}};
  const auto l = viz::make_device_labels(t);
  const std::string doc = viz::stage_graph_svg(m, l, {.title = "test", .operators = {5, 1, 2}});
  const auto root = test::parse_xml(doc);
  test::check_text_layout(*root);
  const auto texts = texts_of(*root);
  for (const char* s : {"stage 0", "stage 1", "stage 2", "5 operators", "1 operator", "2 operators", "fwd 1 + bwd 2 ms",
                        "fwd 2.5 + bwd 5 ms", "params 1 MB", "params 2.5 GB", "params 0 B", "2 replicas", "1 replica", "4 MB",
                        "120 B", "0 B", "node0/gpu0", "node1/gpu0", "node0/gpu2", "replica 0", "replica 1"})
    CHECK_MESSAGE(texts.count(s) == 1, s);
  CHECK(test::elements(*root, "rect", "stage").size() == 3);
  CHECK(test::elements(*root, "rect", "replica").size() == 5);
  CHECK(test::elements(*root, "line", "edge").size() == 2);  // 0 -> 1 and 1 -> 2; 0 -> 2 is an arc
  CHECK(test::elements(*root, "path", "edge").size() == 1);
  test::external_check(doc, "stage_graph");
  CHECK_THROWS_AS((void)viz::stage_graph_svg(m, l, {.operators = {1}}), std::invalid_argument);
  CHECK_THROWS_AS((void)viz::stage_graph_svg(m, viz::make_device_labels(4)), std::invalid_argument);
}

TEST_CASE("stage graph: 64 replicas are cut to the rows that fit") {
  pipeline_model m{.stages = 8, .replicas = 64};
  for (std::size_t s = 0; s < 8; ++s) {
    m.forward_ms.push_back(1);
    m.backward_ms.push_back(2);
    m.param_bytes.push_back(1e8);
    m.device_of.emplace_back();
    for (std::size_t r = 0; r < 64; ++r) m.device_of[s].push_back(s * 64 + r);
  }
  m.message_bytes.assign(8, std::vector<double>(8, -1.0));
  for (std::size_t s = 0; s + 1 < 8; ++s) m.message_bytes[s][s + 1] = 3e6;
  for (std::size_t s = 0; s + 3 < 8; ++s) m.message_bytes[s][s + 3] = 1e3;
  const std::string doc = viz::stage_graph_svg(m, viz::make_device_labels(two_level(64, 8)));
  const auto root = test::parse_xml(doc);
  test::check_text_layout(*root);
  CHECK(test::elements(*root, "rect", "replica").size() == 8 * 15);
  CHECK(texts_of(*root).count("+49 more") == 1);
}

TEST_CASE("stacked bar: hand-computed widths, colours by kind, totals") {
  const std::vector<viz::stacked_bar> bars{{"plan A", {{"compute", 3}, {"exposed TP", 1}}}, {"plan B", {{"compute", 2}}}};
  const std::string doc = viz::stacked_bar_svg(bars, {.title = "Time per iteration", .unit = "ms", .bar_length = 400});
  const auto root = test::parse_xml(doc);
  test::check_text_layout(*root);
  const auto seg = test::elements(*root, "rect", "segment");
  REQUIRE(seg.size() == 3);
  CHECK(seg[0]->num("width") == doctest::Approx(300));  // 400 px for the largest total, 4 ms
  CHECK(seg[1]->num("width") == doctest::Approx(100));
  CHECK(seg[2]->num("width") == doctest::Approx(200));
  CHECK(seg[1]->num("x") == doctest::Approx(seg[0]->num("x") + 300));
  CHECK(seg[0]->attr("fill") == seg[2]->attr("fill"));
  CHECK(seg[0]->attr("fill") != seg[1]->attr("fill"));
  CHECK(test::elements(*root, "rect", "legend").size() == 2);
  const auto texts = texts_of(*root);
  for (const char* s : {"plan A", "plan B", "4 ms", "2 ms", "compute", "exposed TP", "value (ms)", "3", "1"})
    CHECK_MESSAGE(texts.count(s) == 1, s);
  test::external_check(doc, "stacked_bar");
  // The kinds' order fixes their colours.
  const std::string swapped = viz::stacked_bar_svg(bars, {.kinds = {"exposed TP", "compute"}});
  CHECK(test::elements(*test::parse_xml(swapped), "rect", "segment")[0]->attr("fill") == viz::kind_colour(1));
  CHECK_THROWS_WITH_AS((void)viz::stacked_bar_svg({{"plan C", {{"bubble", -1}}}}), doctest::Contains("\"plan C\", kind \"bubble\""),
                       std::invalid_argument);
  CHECK_THROWS_AS((void)viz::stacked_bar_svg({{"x", {{"a", NAN}}}}), std::invalid_argument);
  CHECK(test::parse_xml(viz::stacked_bar_svg({}))->name == "svg");
}

TEST_CASE("svg primitives: escaping, numbers, ticks, the width estimate bounds DejaVu Sans") {
  CHECK(viz::xml_escape("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;");
  CHECK(viz::format_number(559.128623, 4) == "559.1");
  CHECK(viz::format_number(0.000123) == "0.000123");
  CHECK(viz::format_number(2.0) == "2");
  CHECK(viz::format_bytes(1.2e9) == "1.2 GB");
  CHECK(viz::format_bytes(999) == "999 B");
  CHECK(viz::nice_ticks(0, 559, 8) == std::vector<double>{0, 100, 200, 300, 400, 500});
  CHECK(viz::nice_ticks(0, 1, 3) == std::vector<double>{0, 0.5, 1});
  for (char c = 32; c < 127; ++c)
    for (bool bold : {false, true}) {
      INFO("'" << c << "' bold " << bold);
      CHECK(viz::text_width(std::string(1, c), 100, bold) >= 100 * test::dejavu_advance(c, bold) - 1e-9);
    }
  CHECK(test::parse_xml(viz::svg_canvas(10, 10).str())->name == "svg");
  CHECK_THROWS(test::parse_xml("<svg><g></svg>"));  // the checker itself rejects broken documents
  CHECK_THROWS(test::parse_xml("<svg a=1/>"));
  CHECK_THROWS(test::parse_xml("<svg>a & b</svg>"));
}
