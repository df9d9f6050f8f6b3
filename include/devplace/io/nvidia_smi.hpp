#pragma once
/// \file io/nvidia_smi.hpp
/// Reads the text of `nvidia-smi topo -m` (the GPU connection matrix) into a `matrix_topology`.
///
/// The table starts with a header line `GPU0 GPU1 ... [NIC columns] CPU Affinity ...`, then one
/// row per GPU and per NIC: the row name, one link kind per column, then affinity fields that
/// are ignored. NIC rows and columns are skipped; only GPU-GPU entries become bandwidths. Colour
/// escapes, tabs and the legends that follow (`Legend:`, `NIC Legend:`) are accepted.
///
/// Link kinds and their bandwidth per direction (GB/s), documented in docs/topology.md:
///   NV#  = # x `nvlink_gbps` (one NVLink per direction: 25 GB/s for NVLink 2/3/4 -- V100, A100, H100)
///   PIX  = PXB = `pcie_gbps` (a PCIe x16 link; 15.75 GB/s Gen3, 31.5 Gen4, 63 Gen5)
///   PHB  = NODE = 0.8 x `pcie_gbps` (through a host bridge / between host bridges of one CPU)
///   SYS  = 0.64 x `pcie_gbps` (across the CPUs' SMP interconnect; SOC is the old name)
/// Errors are `input_error` with `line N` and the reason.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "devplace/io/detail/read_text.hpp"
#include "devplace/io/error.hpp"
#include "devplace/topology/matrix_topology.hpp"

namespace devplace::io {

/// Bandwidths the link kinds stand for (GB/s per direction) and the per-device figures.
struct nvidia_smi_options {
  double nvlink_gbps = 25.0;   ///< one NVLink, one direction (NVLink 2, 3 and 4)
  double pcie_gbps = 15.75;    ///< a PCIe x16 link, one direction (Gen3; Gen4 31.5, Gen5 63)
  double memory_bytes = 32.0 * (1ull << 30);
  double latency_us = 0.0;
};

/// PHB / NODE and SYS as fractions of `pcie_gbps` (see the file comment).
inline constexpr double nvidia_smi_host_bridge_factor = 0.8;
inline constexpr double nvidia_smi_sys_factor = 0.64;

/// The parsed table: GPU names in index order and the link kind of every GPU pair.
struct nvidia_smi_table {
  std::vector<std::string> gpus;                  ///< "GPU0", "GPU1", ...
  std::vector<std::vector<std::string>> link;     ///< link[i][j], "X" on the diagonal
  std::vector<std::size_t> line_of;               ///< line of GPU i's row (1-based)
};

/// Number of NVLinks of a kind `NV#` (0 for any other kind).
[[nodiscard]] inline int nvlink_count(std::string_view kind) {
  if (kind.size() < 3 || kind.substr(0, 2) != "NV") return 0;
  int n = 0;
  const auto [p, ec] = std::from_chars(kind.data() + 2, kind.data() + kind.size(), n);
  return ec == std::errc{} && p == kind.data() + kind.size() && n > 0 ? n : 0;
}

/// Bandwidth (GB/s) of a link kind; nullopt for an unknown kind (and for "X").
[[nodiscard]] inline std::optional<double> nvidia_smi_link_gbps(std::string_view kind, const nvidia_smi_options& o) {
  if (const int n = nvlink_count(kind); n > 0) return n * o.nvlink_gbps;
  if (kind == "PIX" || kind == "PXB") return o.pcie_gbps;
  if (kind == "PHB" || kind == "NODE") return nvidia_smi_host_bridge_factor * o.pcie_gbps;
  if (kind == "SYS" || kind == "SOC") return nvidia_smi_sys_factor * o.pcie_gbps;
  return std::nullopt;
}

namespace detail {

inline std::string strip_escapes(std::string_view s) {  // ANSI "ESC [ ... letter" (nvidia-smi underlines its header)
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      continue;
    }
    out += s[i] == '\r' ? ' ' : s[i];
  }
  return out;
}

inline std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

[[noreturn]] inline void nvidia_smi_fail(const std::string& file, std::size_t line, const std::string& why) {
  throw input_error(file, "line " + std::to_string(line), why);
}

inline std::optional<std::size_t> gpu_index(std::string_view name) {
  if (name.size() < 4 || name.substr(0, 3) != "GPU") return std::nullopt;
  std::size_t n = 0;
  const auto [p, ec] = std::from_chars(name.data() + 3, name.data() + name.size(), n);
  if (ec != std::errc{} || p != name.data() + name.size()) return std::nullopt;
  return n;
}

}  // namespace detail

/// Parses the text of `nvidia-smi topo -m`; `file` names it in errors.
[[nodiscard]] inline nvidia_smi_table parse_nvidia_smi_topo(const std::string& text, const std::string& file) {
  auto fail = [&file](std::size_t line, const std::string& why) { detail::nvidia_smi_fail(file, line, why); };
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(detail::strip_escapes(l));
  }
  // header: the first line whose first word is GPU0
  std::size_t h = 0;
  while (h < lines.size() && (detail::split_ws(lines[h]).empty() || detail::split_ws(lines[h])[0] != "GPU0")) ++h;
  if (h == lines.size())
    fail(1, "no header line starting with GPU0 (expected the output of `nvidia-smi topo -m`)");
  const auto header = detail::split_ws(lines[h]);
  std::vector<std::string> cols;  // device columns: up to the affinity headings
  for (const auto& w : header) {
    if (w == "CPU" || w == "NUMA" || w == "GPU" || w == "Affinity") break;
    cols.push_back(w);
  }
  std::map<std::string, std::size_t> col_of;
  std::vector<std::size_t> gpu_cols;  // column index of GPU g
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (!col_of.emplace(cols[c], c).second) fail(h + 1, "column '" + cols[c] + "' appears twice");
    if (const auto g = detail::gpu_index(cols[c])) {
      if (*g != gpu_cols.size())
        fail(h + 1, "GPU columns must be GPU0, GPU1, ... in order; column " + std::to_string(c + 1) + " is " + cols[c]);
      gpu_cols.push_back(c);
    }
  }
  const std::size_t n = gpu_cols.size();
  nvidia_smi_table t;
  t.gpus.resize(n);
  t.link.assign(n, std::vector<std::string>(n));
  t.line_of.assign(n, 0);
  for (std::size_t g = 0; g < n; ++g) t.gpus[g] = cols[gpu_cols[g]];

  std::size_t rows_seen = 0, last = h + 1;
  for (std::size_t i = h + 1; i < lines.size(); ++i) {
    last = i + 1;
    const auto w = detail::split_ws(lines[i]);
    if (w.empty()) {
      if (rows_seen > 0) break;  // the blank line before the legend
      continue;
    }
    if (w[0].back() == ':' || w[0] == "Legend") break;  // "Legend:", "NIC Legend:"
    const auto c = col_of.find(w[0]);
    if (c == col_of.end())
      fail(i + 1, "row '" + w[0] + "' is not one of the header's columns (" + std::to_string(cols.size()) + " columns: " +
                      cols.front() + " .. " + cols.back() + ")");
    ++rows_seen;
    if (w.size() < cols.size() + 1)
      fail(i + 1, w[0] + ": expected " + std::to_string(cols.size()) + " link entries, got " + std::to_string(w.size() - 1));
    const auto g = detail::gpu_index(w[0]);
    if (!g) continue;  // a NIC row
    if (t.line_of[*g] != 0) fail(i + 1, w[0] + ": a second row for this GPU (the first is on line " +
                                            std::to_string(t.line_of[*g]) + ")");
    t.line_of[*g] = i + 1;
    for (std::size_t k = 0; k < n; ++k) {
      const std::string& kind = w[1 + gpu_cols[k]];
      if (k == *g) {
        if (kind != "X") fail(i + 1, w[0] + ", column " + t.gpus[k] + ": expected X on the diagonal, got '" + kind + "'");
      } else if (!nvidia_smi_link_gbps(kind, {})) {
        fail(i + 1, w[0] + ", column " + t.gpus[k] + ": unknown link kind '" + kind +
                        "' (expected NV#, PIX, PXB, PHB, NODE or SYS)");
      }
      t.link[*g][k] = kind;
    }
  }
  for (std::size_t g = 0; g < n; ++g)
    if (t.line_of[g] == 0) fail(last, "no row for " + t.gpus[g] + " in the table that starts on line " + std::to_string(h + 1));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (t.link[a][b] != t.link[b][a])
        fail(std::max(t.line_of[a], t.line_of[b]), t.gpus[a] + " -> " + t.gpus[b] + " is " + t.link[a][b] + " but " +
                                                        t.gpus[b] + " -> " + t.gpus[a] + " is " + t.link[b][a]);
  return t;
}

/// The bandwidth matrix of a parsed table (device i = GPUi).
[[nodiscard]] inline matrix_topology to_topology(const nvidia_smi_table& t, const nvidia_smi_options& o = {}) {
  const auto n = static_cast<Eigen::Index>(t.gpus.size());
  Eigen::MatrixXd bw = Eigen::MatrixXd::Zero(n, n), lat = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index a = 0; a < n; ++a)
    for (Eigen::Index b = 0; b < n; ++b)
      if (a != b) {
        bw(a, b) = *nvidia_smi_link_gbps(t.link[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)], o);
        lat(a, b) = o.latency_us;
      }
  matrix_topology m(std::move(bw), std::move(lat), std::vector<double>(static_cast<std::size_t>(n), o.memory_bytes));
  m.set_device_names(t.gpus);
  return m;
}

[[nodiscard]] inline matrix_topology read_nvidia_smi_topo_text(const std::string& text, const std::string& file,
                                                               const nvidia_smi_options& o = {}) {
  auto m = to_topology(parse_nvidia_smi_topo(text, file), o);
  m.set_name(std::filesystem::path(file).stem().string());
  return m;
}

/// Reads a file holding the output of `nvidia-smi topo -m`.
[[nodiscard]] inline matrix_topology read_nvidia_smi_topo(const std::filesystem::path& path,
                                                          const nvidia_smi_options& o = {}) {
  return read_nvidia_smi_topo_text(detail::read_text(path), path.string(), o);
}

/// `nodes` copies of `node` (device i = device i mod G of node i / G), pairs in different nodes
/// at `inter_gbps` with `inter_latency_us`. Device names become "node<k>/<name>".
[[nodiscard]] inline matrix_topology replicate_nodes(const matrix_topology& node, std::size_t nodes, double inter_gbps,
                                                     double inter_latency_us = 0.0) {
  const auto g = static_cast<Eigen::Index>(node.num_devices());
  const auto d = g * static_cast<Eigen::Index>(nodes);
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(d, d, inter_gbps), lat = Eigen::MatrixXd::Constant(d, d, inter_latency_us);
  std::vector<double> mem;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < nodes; ++k) {
    const auto o = static_cast<Eigen::Index>(k) * g;
    bw.block(o, o, g, g) = node.bandwidth_matrix();
    lat.block(o, o, g, g) = node.latency_matrix();
    for (Eigen::Index i = 0; i < g; ++i) {
      mem.push_back(node.device_memory_bytes(static_cast<std::size_t>(i)));
      const auto& nn = node.device_names();
      names.push_back("node" + std::to_string(k) + "/" +
                      (nn.empty() ? "gpu" + std::to_string(i) : nn[static_cast<std::size_t>(i)]));
    }
  }
  for (Eigen::Index i = 0; i < d; ++i) bw(i, i) = lat(i, i) = 0;
  matrix_topology m(std::move(bw), std::move(lat), std::move(mem));
  m.set_device_names(std::move(names));
  m.set_name(nodes == 1 ? node.name() : std::to_string(nodes) + "x" + node.name());
  return m;
}

}  // namespace devplace::io
