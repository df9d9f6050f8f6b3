#pragma once
/// \file sim/svg.hpp
/// Pictures as standalone SVG documents (no dependency):
///   * `gantt_svg(result, devices)`: the simulated iteration, one row per device, one <rect> per
///     timeline event (forward, backward, transfers on the sender's row, allreduce);
///   * `heatmap_svg(topology, device_of)`: the bandwidth matrix on a log colour scale, one <rect>
///     per device pair, with the devices of each stage outlined (Parmesan's Figs. 6 and 10);
///   * `stage_graph_svg(model)`: the stage graph, one <circle> per stage replica laid out by stage
///     (column) and replica (row), one <line> per inter-stage edge of each replica copy.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "devplace/sim/pipeline_simulator.hpp"
#include "devplace/topology/concepts.hpp"

namespace devplace {

namespace detail {
inline std::string xml_escape(std::string_view s) {
  std::string r;
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
inline const char* kind_colour(sim_task_kind k) {
  switch (k) {
    case sim_task_kind::forward: return "#4e79a7";
    case sim_task_kind::backward: return "#f28e2b";
    case sim_task_kind::send_activation: return "#59a14f";
    case sim_task_kind::send_gradient: return "#e15759";
    case sim_task_kind::allreduce: return "#b07aa1";
  }
  return "#999999";
}
}  // namespace detail

[[nodiscard]] inline std::string gantt_svg(const simulation_result& r, std::size_t devices) {
  const double width = 1000, row = 18, left = 70, top = 30;
  const double scale = r.iteration_ms > 0 ? width / r.iteration_ms : 1;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 10 << "\" height=\""
    << top + row * double(devices) + 30 << "\">\n";
  o << "<text x=\"" << left << "\" y=\"18\" font-size=\"12\">iteration " << r.iteration_ms << " ms, bubble "
    << r.bubble_fraction << "</text>\n";
  for (std::size_t d = 0; d < devices; ++d)
    o << "<text x=\"4\" y=\"" << top + row * double(d) + 13 << "\" font-size=\"10\">dev " << d << "</text>\n";
  for (const auto& e : r.timeline) {
    const double x = left + e.start_ms * scale, w = std::max(0.5, (e.end_ms - e.start_ms) * scale);
    const double y = top + row * double(e.from) + (e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward ? 1 : 10);
    const double h = e.kind == sim_task_kind::forward || e.kind == sim_task_kind::backward ? 8 : 6;
    o << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h << "\" fill=\""
      << detail::kind_colour(e.kind) << "\"><title>" << to_string(e.kind) << " stage " << e.stage << " replica "
      << e.replica << " micro-batch " << e.micro_batch << ": " << e.start_ms << " - " << e.end_ms
      << " ms</title></rect>\n";
  }
  o << "</svg>\n";
  return o.str();
}

template <device_topology T>
[[nodiscard]] std::string heatmap_svg(const T& t, const std::vector<std::vector<std::size_t>>& device_of) {
  const std::size_t D = devplace::num_devices(t);
  const double cell = std::max(4.0, 512.0 / double(std::max<std::size_t>(D, 1))), top = 30;
  double lo = 1e300, hi = 0;
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) {
        lo = std::min(lo, devplace::bandwidth_gbps(t, a, b));
        hi = std::max(hi, devplace::bandwidth_gbps(t, a, b));
      }
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << cell * double(D) + 10 << "\" height=\""
    << top + cell * double(D) + 10 << "\">\n<text x=\"0\" y=\"18\" font-size=\"12\">bandwidth GB/s " << lo << " .. "
    << hi << " (log scale), stages outlined</text>\n";
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b) {
      double v = 0;  // 0 = slowest, 1 = fastest
      if (a != b && hi > lo) v = std::log(devplace::bandwidth_gbps(t, a, b) / lo) / std::log(hi / lo);
      const int shade = a == b ? 255 : static_cast<int>(230 - 200 * v);
      o << "<rect x=\"" << cell * double(b) << "\" y=\"" << top + cell * double(a) << "\" width=\"" << cell
        << "\" height=\"" << cell << "\" fill=\"rgb(" << shade << "," << shade << ",255)\"/>\n";
    }
  for (std::size_t s = 0; s < device_of.size(); ++s)
    for (auto a : device_of[s])
      for (auto b : device_of[s])
        o << "<rect class=\"stage\" x=\"" << cell * double(b) << "\" y=\"" << top + cell * double(a) << "\" width=\""
          << cell << "\" height=\"" << cell << "\" fill=\"none\" stroke=\"#e15759\" stroke-width=\"1\"><title>stage "
          << s << "</title></rect>\n";
  o << "</svg>\n";
  return o.str();
}

[[nodiscard]] inline std::string stage_graph_svg(const pipeline_model& m) {
  const double dx = 90, dy = 40, r = 12, left = 30, top = 30;
  std::ostringstream o;
  std::size_t rows = m.replicas;  // the widest stage (per-stage counts may differ from R)
  for (const auto& row : m.device_of) rows = std::max(rows, row.size());
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + dx * double(m.stages) << "\" height=\""
    << top + dy * double(rows) << "\">\n";
  auto cx = [&](std::size_t s) { return left + dx * double(s); };
  auto cy = [&](std::size_t rep) { return top + dy * double(rep); };
  for (std::size_t rep = 0; rep < rows; ++rep)
    for (std::size_t s = 0; s < m.stages; ++s)
      for (std::size_t t = s + 1; t < m.stages; ++t)
        if (m.message_bytes[s][t] >= 0 && rep < m.device_of[s].size() && rep < m.device_of[t].size())
          o << "<line x1=\"" << cx(s) << "\" y1=\"" << cy(rep) << "\" x2=\"" << cx(t) << "\" y2=\"" << cy(rep)
            << "\" stroke=\"#888\"><title>" << m.message_bytes[s][t] << " bytes</title></line>\n";
  for (std::size_t rep = 0; rep < rows; ++rep)
    for (std::size_t s = 0; s < m.stages; ++s)
      if (rep < m.device_of[s].size())
        o << "<circle cx=\"" << cx(s) << "\" cy=\"" << cy(rep) << "\" r=\"" << r << "\" fill=\"#4e79a7\"><title>stage " << s
        << " replica " << rep << " on device " << m.device_of[s][rep] << "</title></circle>\n<text x=\"" << cx(s) - 6
        << "\" y=\"" << cy(rep) + 4 << "\" font-size=\"10\" fill=\"white\">" << m.device_of[s][rep] << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace devplace
