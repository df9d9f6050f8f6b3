// The Gantt chart against the simulation it draws: every bar where its tooltip's times put it on
// the time axis (whose tick labels are checked against the same scale), the durations of the bars
// summing to the timeline's, a legend entry for every colour drawn, the critical path outlined
// event by event, text inside the canvas and never overlapping, and the document parsed by
// xmllint and rendered by rsvg-convert.
#include "devplace/viz/gantt.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "devplace/topology/generators.hpp"
#include "support/random_pipeline.hpp"
#include "viz/svg_doc.hpp"

using namespace devplace;

namespace {

struct bar {
  double x, w, from_ms, to_ms;
  std::string fill;
};

// The bars: rects with a tooltip ending in ": A to B ms".
std::vector<bar> bars_of(const test::xml_node& root) {
  std::vector<bar> out;
  root.each([&](const test::xml_node& n) {
    if (n.name != "rect" || n.children.empty() || n.children[0]->name != "title" || !n.attr("class").empty()) return;
    const std::string& t = n.children[0]->text;
    const auto colon = t.rfind(": "), to = t.rfind(" to ");
    if (colon == std::string::npos || to == std::string::npos || to < colon || t.substr(t.size() - 3) != " ms") return;
    out.push_back({n.num("x"), n.num("width"), std::stod(t.substr(colon + 2)), std::stod(t.substr(to + 4)), n.attr("fill")});
  });
  return out;
}

void check_gantt(const simulation_result& r, const pipeline_model& m, const simulation_options& o, const viz::device_labels& l) {
  const viz::gantt_options opt{.title = "test plan", .time_width = 800};
  const std::string doc = viz::gantt_svg(r, m, o, l, opt);
  const auto root = test::parse_xml(doc);
  test::check_text_layout(*root);
  // The axis: tick "0" at the left end, tick t at x0 + t · scale.
  const double scale = 800 / r.iteration_ms;
  double x0 = -1;
  std::vector<std::pair<double, double>> ticks;
  for (auto* t : test::elements(*root, "text"))
    if (t->attr("text-anchor") == "middle" && !t->text.empty() && t->text.find_first_not_of("0123456789.") == std::string::npos)
      ticks.emplace_back(std::stod(t->text), t->num("x"));
  for (auto [v, x] : ticks)
    if (v == 0) x0 = x;
  REQUIRE(x0 > 0);
  CHECK(ticks.size() >= 3);
  for (auto [v, x] : ticks) CHECK(x == doctest::Approx(x0 + v * scale).epsilon(1e-3));
  // Bars: where their times say, summing to the timeline's durations (the allreduce on every
  // device of its ring).
  double drawn = 0, expected = 0;
  std::set<std::string> fills;
  for (const auto& b : bars_of(*root)) {
    CHECK(b.x == doctest::Approx(x0 + b.from_ms * scale).epsilon(1e-3));
    CHECK(b.w == doctest::Approx(std::max((b.to_ms - b.from_ms) * scale, 0.5)).epsilon(1e-2));
    drawn += b.to_ms - b.from_ms;
    fills.insert(b.fill);
  }
  std::set<std::size_t> devices;  // an interleaved model's later chunks repeat the ranks' devices
  for (const auto& row : m.device_of) devices.insert(row.begin(), row.end());
  const std::size_t used = devices.size();
  for (const auto& e : r.timeline)
    expected += (e.end_ms - e.start_ms) * (e.kind == sim_task_kind::allreduce ? double(m.device_of[e.stage].size()) : 1.0);
  expected += o.update_ms * double(used);
  CHECK(drawn == doctest::Approx(expected).epsilon(1e-3));
  std::set<std::string> legend;
  for (auto* n : test::elements(*root, "rect", "legend")) legend.insert(n->attr(n->attr("fill") == "none" ? "stroke" : "fill"));
  for (const auto& f : fills) CHECK(legend.count(f) == 1);
  // Device rows and stages are named.
  std::set<std::string> texts;
  for (auto* t : test::elements(*root, "text")) texts.insert(t->text);
  const std::size_t ranks = m.stages / o.virtual_stages;  // interleaved: a group per rank, naming its chunks
  for (std::size_t s = 0; s < ranks; ++s) {
    std::string group = ranks == m.stages ? "stage " + std::to_string(s) : "chunks";
    for (std::size_t c = s; ranks < m.stages && c < m.stages; c += ranks) group += (c == s ? " " : ", ") + std::to_string(c);
    CHECK(texts.count(group) == 1);
    for (auto d : m.device_of[s]) CHECK(texts.count(l.name[d]) == 1);
  }
  // The critical path, outlined event by event, and its length in the legend.
  const auto path = critical_path(r);
  const auto outlines = test::elements(*root, "rect", "critical");
  REQUIRE(outlines.size() == path.size());
  for (std::size_t k = 0; k < path.size(); ++k)
    CHECK(outlines[k]->num("x") == doctest::Approx(x0 + r.timeline[path[k]].start_ms * scale).epsilon(1e-3));
  CHECK(texts.count("critical path (" + std::to_string(path.size()) + " tasks, " + viz::format_number(r.iteration_ms, 4) +
                    " ms)") == 1);
}

}  // namespace

TEST_CASE("gantt: two stages of two replicas on two nodes") {
  const auto t = two_level(2, 2);
  const pipeline_model m{.stages = 2, .replicas = 2, .forward_ms = {1, 1}, .backward_ms = {2, 2}, .param_bytes = {1e6, 1e6},
                         .message_bytes = {{-1, 1e6}, {-1, -1}}, .device_of = {{0, 1}, {2, 3}}};
  const simulation_options o{.micro_batches = 3, .recompute = true, .update_ms = 0.5};
  const auto r = simulate(m, t, o);
  const auto l = viz::make_device_labels(t);
  check_gantt(r, m, o, l);
  const std::string doc = viz::gantt_svg(r, m, o, l);
  CHECK(doc.find("recomputation") != std::string::npos);
  CHECK(doc.find("optimizer step") != std::string::npos);
  test::external_check(doc, "gantt");
}

TEST_CASE("gantt: an interleaved pipeline draws each device once, every chunk's passes on it") {
  const auto t = two_level(2, 2);
  pipeline_model m = test::uniform_chain(4, 2, 1, 2, 1e6, 1e6);
  m.device_of = {{0, 1}, {2, 3}, {0, 1}, {2, 3}};
  const simulation_options o{.micro_batches = 4, .schedule = pipeline_schedule::interleaved, .virtual_stages = 2};
  const auto r = simulate(m, t, o);
  check_gantt(r, m, o, viz::make_device_labels(t));
  const std::string doc = viz::gantt_svg(r, m, o, viz::make_device_labels(t));
  CHECK(doc.find("chunks 0, 2") != std::string::npos);
  CHECK(doc.find("interleaved 1F1B") != std::string::npos);
}

TEST_CASE("gantt: random pipelines") {
  std::mt19937_64 rng(3737);
  for (int trial = 0; trial < 25; ++trial) {
    const auto p = test::make_random_pipeline(rng, trial % 2 == 1);
    const auto r = simulate(p.model, p.topology, p.options);
    if (!(r.iteration_ms > 0)) continue;
    INFO("trial " << trial);
    check_gantt(r, p.model, p.options, viz::make_device_labels(p.topology.num_devices()));
  }
}

TEST_CASE("gantt: 512 devices are drawn one row per node") {
  const auto t = two_level(64, 8);
  pipeline_model m{.stages = 8, .replicas = 64};
  for (std::size_t s = 0; s < 8; ++s) {
    m.forward_ms.push_back(1.0 + double(s % 3));
    m.backward_ms.push_back(2.0);
    m.param_bytes.push_back(1e7);
    m.device_of.emplace_back();
    for (std::size_t r = 0; r < 64; ++r) m.device_of[s].push_back(s * 64 + r);
  }
  m.message_bytes.assign(8, std::vector<double>(8, -1.0));
  for (std::size_t s = 0; s + 1 < 8; ++s) m.message_bytes[s][s + 1] = 1e6;
  const simulation_options o{.micro_batches = 4};
  const auto r = simulate(m, t, o);
  const auto l = viz::make_device_labels(t);
  const std::string doc = viz::gantt_svg(r, m, o, l);
  CHECK(doc.size() < 3'000'000);
  const auto root = test::parse_xml(doc);
  test::check_text_layout(*root);
  std::size_t node_rows = 0;
  for (auto* n : test::elements(*root, "text"))
    if (n->text.size() > 4 && n->text.substr(n->text.size() - 4) == " (8)") ++node_rows;
  CHECK(node_rows == 64);
  CHECK(root->num("height") < 64 * 18 + 300);
  test::external_check(doc, "gantt512");
}

TEST_CASE("gantt: bad arguments are named") {
  const auto t = two_level(1, 2);
  const pipeline_model m{.stages = 1, .replicas = 1, .forward_ms = {1}, .backward_ms = {1}, .param_bytes = {0},
                         .message_bytes = {{-1}}, .device_of = {{1}}};
  const auto r = simulate(m, t, {.micro_batches = 1});
  CHECK_THROWS_WITH_AS((void)viz::gantt_svg(r, m, {.micro_batches = 1}, viz::make_device_labels(1)),
                       doctest::Contains("device_of[0] names device 1"), std::invalid_argument);
  CHECK_THROWS_AS((void)viz::gantt_svg(r, m, {.micro_batches = 1}, viz::make_device_labels(2), {.time_width = 0}),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)viz::make_device_labels(2, {"a"}), std::invalid_argument);
}
