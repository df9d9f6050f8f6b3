#pragma once
/// \file io/pipedream.hpp
/// Reads PipeDream profiles (`graph.txt`, msr-fiddle/pipedream) into an `op_graph`.
///
/// Format: a node line `ID -- DESCRIPTION -- forward_compute_time=F, backward_compute_time=B,
/// activation_size=A, parameter_size=P[ -- stage_id=S]`; an edge line `<TAB>ID_A -- ID_B`.
/// Times are ms per minibatch, sizes bytes; `activation_size` may be a list `[a; b; c]`.
///
/// Mapping: fwd_ms = F, bwd_ms = B, param_bytes = P, out_bytes = Σ A, and every edge carries its
/// source's activation size. Memory fields are 0 (the profiles have none). An id of the form
/// `nodeN` keeps N as the operator id; other ids are numbered in order of appearance. The
/// description becomes the operator name. Errors name the line.
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "devplace/dag/op_graph.hpp"
#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/error.hpp"

namespace devplace::io {

namespace detail {

inline std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

inline std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto k = s.find(sep, start);
    if (k == std::string::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, k - start));
    start = k + sep.size();
  }
}

inline bool parse_double(const std::string& text, double& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(out);
}

}  // namespace detail

inline op_graph read_pipedream_text(const std::string& text, const std::string& file) {
  struct node_rec {
    std::string key;
    op_attributes a;
    std::size_t line;
  };
  std::vector<node_rec> nodes;
  std::vector<std::tuple<std::string, std::string, std::size_t>> edges;
  std::istringstream in(text);
  std::string line;
  std::size_t ln = 0;
  auto fail = [&](std::size_t l, const std::string& why) -> void {
    throw input_error(file, "line " + std::to_string(l), why);
  };
  while (std::getline(in, line)) {
    ++ln;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (detail::trim(line).empty()) continue;
    if (line[0] == '\t') {
      const auto parts = detail::split(line.substr(1), " -- ");
      if (parts.size() != 2) fail(ln, "expected an edge 'ID -- ID'");
      edges.emplace_back(detail::trim(parts[0]), detail::trim(parts[1]), ln);
      continue;
    }
    const auto parts = detail::split(line, " -- ");
    if (parts.size() != 3 && parts.size() != 4)
      fail(ln, "expected a node 'ID -- DESCRIPTION -- METRICS[ -- stage_id=S]' (" + std::to_string(parts.size()) +
                   " fields separated by ' -- ')");
    node_rec r{detail::trim(parts[0]), {}, ln};
    r.a.name = detail::trim(parts[1]);
    const auto paren = r.a.name.find('(');
    r.a.op = r.a.name.substr(0, paren);
    bool seen[4] = {false, false, false, false};
    for (const auto& kv : detail::split(parts[2], ", ")) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) fail(ln, "expected key=value in the metrics, got '" + detail::trim(kv) + "'");
      const std::string key = detail::trim(kv.substr(0, eq));
      std::string val = detail::trim(kv.substr(eq + 1));
      double x = 0;
      if (key == "activation_size" && !val.empty() && val.front() == '[') {
        if (val.back() != ']') fail(ln, "activation_size: unterminated list");
        for (const auto& item : detail::split(val.substr(1, val.size() - 2), ";")) {
          double y = 0;
          if (!detail::parse_double(item, y) || y < 0) fail(ln, "activation_size: expected numbers >= 0 in the list");
          x += y;
        }
      } else if (!detail::parse_double(val, x) || x < 0) {
        fail(ln, key + ": expected a finite number >= 0, got '" + val + "'");
      }
      if (key == "forward_compute_time") { r.a.fwd_ms = x; seen[0] = true; }
      else if (key == "backward_compute_time") { r.a.bwd_ms = x; seen[1] = true; }
      else if (key == "activation_size") { r.a.out_bytes = x; seen[2] = true; }
      else if (key == "parameter_size") { r.a.param_bytes = x; seen[3] = true; }
    }
    const char* names[4] = {"forward_compute_time", "backward_compute_time", "activation_size", "parameter_size"};
    for (int k = 0; k < 4; ++k)
      if (!seen[k]) fail(ln, std::string("missing ") + names[k]);
    nodes.push_back(std::move(r));
  }
  if (nodes.empty()) throw input_error(file, "line 1", "no node lines: not a PipeDream graph.txt");
  // Ids: the numeric suffix of "nodeN" when every id has one and they are distinct.
  std::unordered_map<std::string, std::size_t> index;
  bool numeric = true;
  std::unordered_map<std::int64_t, int> seen_ids;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (!index.emplace(nodes[k].key, k).second) fail(nodes[k].line, "duplicate node id '" + nodes[k].key + "'");
    std::int64_t id = 0;
    const auto& key = nodes[k].key;
    const auto digits = key.find_first_of("0123456789");
    const bool ok = digits != std::string::npos &&
                    std::from_chars(key.data() + digits, key.data() + key.size(), id).ptr == key.data() + key.size();
    if (!ok || !seen_ids.emplace(id, 0).second) numeric = false;
    nodes[k].a.id = ok ? id : 0;
  }
  op_graph_builder b;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (!numeric) nodes[k].a.id = static_cast<std::int64_t>(k);
    b.add_op(nodes[k].a);
  }
  for (const auto& [from, to, l] : edges) {
    const auto u = index.find(from), v = index.find(to);
    if (u == index.end()) fail(l, "edge from unknown node '" + from + "'");
    if (v == index.end()) fail(l, "edge to unknown node '" + to + "'");
    if (u->second == v->second) fail(l, "self-loop on node '" + from + "'");
    b.add_edge(u->second, v->second, nodes[u->second].a.out_bytes);
  }
  try {
    return std::move(b).build();
  } catch (const graph_error& e) {
    throw input_error(file, "edges", e.what());
  }
}

inline op_graph read_pipedream(const std::filesystem::path& path) {
  return read_pipedream_text(detail::read_text(path), path.string());
}

}  // namespace devplace::io
