#pragma once
/// \file dfmodel/setup_txt.hpp
/// Reader of the DFModel authors' `setup.txt` (protobuf text format of their message `DSE`,
/// seed-dfmodel.md §1.1): the `dataflow_graph` kernel list and connections, `system` (accelerator,
/// one topology variant such as `r`, `r_r`, `fc_fc`, `r_sw`, `sw_sw`, `r_r_r`, memory), `cost`, and
/// `miscellany` / `execution` (llm sizes, execution style, num_config, perfect_overlap,
/// compute_util, word). Tensor sizes in the file are ignored (they are recomputed from the
/// shapes); kernels are renumbered in a topological order. Fields this model does not use are
/// skipped. compute_util is rounded to float as the authors' protobuf stores it. Errors are
/// io::input_error with the file, `line N` and the reason.
#include <cctype>
#include <cmath>
#include <functional>
#include <cstdint>
#include <filesystem>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "devplace/dfmodel/setup.hpp"
#include "devplace/io/detail/read_text.hpp"
#include "devplace/io/error.hpp"

namespace devplace::dfmodel {

namespace detail {

struct pb_node {
  std::string key, value;          ///< value: scalar text (strings unquoted); empty for a block
  std::vector<pb_node> children;
  bool block = false;
  int line = 0;
  [[nodiscard]] const pb_node* find(std::string_view k) const {
    for (const auto& c : children)
      if (c.key == k) return &c;
    return nullptr;
  }
};

class pb_parser {
 public:
  pb_parser(std::string text, std::string file) : t_(std::move(text)), file_(std::move(file)) {}
  pb_node parse() {
    pb_node root;
    root.block = true;
    fields(root, false);
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw io::input_error(file_, "line " + std::to_string(line_), why); }
  void skip() {
    while (i_ < t_.size()) {
      if (t_[i_] == '\n') ++line_, ++i_;
      else if (std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
      else if (t_[i_] == '#') { while (i_ < t_.size() && t_[i_] != '\n') ++i_; }
      else break;
    }
  }
  std::string word() {
    const std::size_t b = i_;
    while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_' || t_[i_] == '.' ||
                              t_[i_] == '-' || t_[i_] == '+'))
      ++i_;
    if (b == i_) fail(std::string("unexpected character '") + t_[i_] + "'");
    return t_.substr(b, i_ - b);
  }
  void fields(pb_node& parent, bool nested) {
    while (true) {
      skip();
      if (i_ >= t_.size()) {
        if (nested) fail("missing '}'");
        return;
      }
      if (t_[i_] == '}') {
        if (!nested) fail("unexpected '}'");
        ++i_;
        return;
      }
      pb_node n;
      n.line = line_;
      n.key = word();
      skip();
      if (i_ < t_.size() && t_[i_] == ':') ++i_, skip();
      if (i_ >= t_.size()) fail("missing value of " + n.key);
      if (t_[i_] == '{') {
        ++i_;
        n.block = true;
        fields(n, true);
      } else if (t_[i_] == '"' || t_[i_] == '\'') {
        const char q = t_[i_++];
        const std::size_t b = i_;
        while (i_ < t_.size() && t_[i_] != q && t_[i_] != '\n') ++i_;
        if (i_ >= t_.size() || t_[i_] != q) fail("unterminated string");
        n.value = t_.substr(b, i_ - b);
        ++i_;
      } else {
        n.value = word();
      }
      parent.children.push_back(std::move(n));
    }
  }
  std::string t_, file_;
  std::size_t i_ = 0;
  int line_ = 1;
};

class pb_reader {
 public:
  explicit pb_reader(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void fail(const pb_node& n, const std::string& why) const {
    throw io::input_error(file_, "line " + std::to_string(n.line), n.key + ": " + why);
  }
  const pb_node& need(const pb_node& p, std::string_view k) const {
    const pb_node* c = p.find(k);
    if (!c) throw io::input_error(file_, "line " + std::to_string(p.line), (p.key.empty() ? "file" : p.key) + ": missing " + std::string(k));
    return *c;
  }
  double num(const pb_node& n) const {
    if (n.block) fail(n, "expected a number");
    try {
      std::size_t used = 0;
      const double x = std::stod(n.value, &used);
      if (used != n.value.size() || !std::isfinite(x)) fail(n, "expected a number, got " + n.value);
      return x;
    } catch (const std::logic_error&) {
      fail(n, "expected a number, got " + n.value);
    }
  }
  double num(const pb_node& p, std::string_view k, double dflt) const {
    const pb_node* c = p.find(k);
    return c ? num(*c) : dflt;
  }
  std::int64_t count(const pb_node& p, std::string_view k, std::int64_t dflt) const {
    const pb_node* c = p.find(k);
    if (!c) return dflt;
    const double x = num(*c);
    if (x < 0 || x != std::floor(x)) fail(*c, "expected an integer >= 0, got " + c->value);
    return static_cast<std::int64_t>(x);
  }

 private:
  std::string file_;
};

inline network read_pb_topology(const pb_reader& rd, const pb_node& sys) {
  static const std::map<std::string, std::vector<dim_kind>> variants{
      {"r", {dim_kind::ring}}, {"fc", {dim_kind::fully_connected}}, {"sw", {dim_kind::switched}},
      {"r_r", {dim_kind::ring, dim_kind::ring}}, {"fc_fc", {dim_kind::fully_connected, dim_kind::fully_connected}},
      {"r_fc", {dim_kind::ring, dim_kind::fully_connected}}, {"r_sw", {dim_kind::ring, dim_kind::switched}},
      {"sw_sw", {dim_kind::switched, dim_kind::switched}}, {"r_r_r", {dim_kind::ring, dim_kind::ring, dim_kind::ring}},
      {"r_sw_sw", {dim_kind::ring, dim_kind::switched, dim_kind::switched}},
      {"sw_sw_sw", {dim_kind::switched, dim_kind::switched, dim_kind::switched}}};
  for (const auto& c : sys.children) {
    const auto it = variants.find(c.key);
    if (it == variants.end()) continue;
    network net;
    const char* axis[3] = {"x", "y", "z"};
    for (std::size_t d = 0; d < it->second.size(); ++d) {
      dimension x;
      x.kind = it->second[d];
      x.size = static_cast<std::size_t>(rd.count(c, axis[d], 0));
      if (x.size == 0) rd.fail(c, std::string("dimension ") + axis[d] + " must be given (a free size is not supported)");
      x.link_gbps = rd.num(c, std::string("link_bw_") + axis[d], 0);
      if (const pb_node* p = c.find(std::string("par_") + axis[d])) {
        if (p->value == "TP") x.par = parallelism::tp;
        else if (p->value == "PP") x.par = parallelism::pp;
        else if (p->value == "DP") x.par = parallelism::dp;
        else rd.fail(*p, "expected TP, PP or DP");
      }
      net.dims.push_back(x);
    }
    try {
      check_network(net);
    } catch (const std::invalid_argument& e) {
      rd.fail(c, e.what());
    }
    return net;
  }
  rd.fail(sys, "no known topology variant (r, fc, sw, r_r, fc_fc, r_fc, r_sw, sw_sw, r_r_r, r_sw_sw, sw_sw_sw)");
}

inline kernel read_pb_kernel(const pb_reader& rd, const pb_node& k, const pb_node*& variant) {
  kernel x;
  x.name = rd.need(k, "name").value;
  x.config = static_cast<int>(rd.num(k, "config", -1));
  if (x.config < -1) x.config = -1;
  if (const pb_node* fb = k.find("fwd_bwd")) x.backward = fb->value == "BWD";
  const std::string type = rd.need(k, "type").value;
  if (type != "SYSTOLIC" && type != "SIMD") rd.fail(k, "type must be SYSTOLIC or SIMD");
  x.kind = type == "SYSTOLIC" ? kernel_kind::systolic : kernel_kind::simd;
  static const std::map<std::string, kernel_op> ops{{"gemm_input1_weight", kernel_op::gemm_weight},
                                                    {"gemm_input1_input2", kernel_op::gemm_two_inputs},
                                                    {"elementwise_input1", kernel_op::elementwise},
                                                    {"elementwise_input1_input2", kernel_op::elementwise_two_inputs}};
  variant = nullptr;
  for (const auto& c : k.children)
    if (const auto it = ops.find(c.key); it != ops.end()) x.op = it->second, variant = &c;
  if (!variant) rd.fail(k, "no supported kernel variant (gemm_input1_weight, gemm_input1_input2, elementwise_input1[_input2])");
  const pb_node& v = *variant;
  x.outer = rd.count(v, "outer", 1);
  x.m = rd.count(v, "M", 1);
  x.k = rd.count(v, "K", 1);
  x.n = rd.count(v, "N", 1);
  if (x.outer < 1 || x.m < 1 || x.k < 1 || x.n < 1) rd.fail(v, "outer, M, K, N must be >= 1");
  static const std::map<std::string, loop_dim> tiles{{"OUTER_TILING", loop_dim::outer}, {"M_TILING", loop_dim::m},
                                                     {"K_TILING", loop_dim::k}, {"N_TILING", loop_dim::n},
                                                     {"NO_TILING", loop_dim::none}};
  if (const pb_node* t = v.find("tiling")) {
    const auto it = tiles.find(t->value);
    if (it == tiles.end()) rd.fail(*t, "unknown tiling " + t->value);
    x.tiling = it->second;
  }
  if (const pb_node* c = v.find("communication_type")) x.periodic_all_reduce = c->value == "ALL_REDUCE_PERIODIC";
  return x;
}

/// Kernels and connections, renumbered in a topological order (stable: file order among ready
/// kernels). A consumer with two inputs takes the one whose size matches input_tensor_2_size as
/// port 1 when the sizes tell them apart, otherwise the second connection in file order.
inline void read_pb_graph(const pb_reader& rd, const pb_node& g, workload& w) {
  std::vector<kernel> ks;
  std::vector<const pb_node*> variants;
  std::map<std::int64_t, std::size_t> by_id;
  for (const auto& c : g.children)
    if (c.key == "kernels") {
      const pb_node* v = nullptr;
      ks.push_back(read_pb_kernel(rd, c, v));
      variants.push_back(v);
      const auto id = rd.count(c, "id", -1);
      if (!by_id.emplace(id, ks.size() - 1).second) rd.fail(c, "duplicate kernel id " + std::to_string(id));
    }
  if (ks.empty() || ks.size() > 64) rd.fail(g, "expected 1 to 64 kernels");
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::vector<const pb_node*> enode;
  for (const auto& c : g.children)
    if (c.key == "connections") {
      const auto a = by_id.find(rd.count(c, "startIdx", -1)), b = by_id.find(rd.count(c, "endIdx", -1));
      if (a == by_id.end() || b == by_id.end()) rd.fail(c, "startIdx/endIdx name no kernel");
      edges.emplace_back(a->second, b->second);
      enode.push_back(&c);
    }
  const std::size_t n = ks.size();
  std::vector<std::size_t> indeg(n, 0), order, pos(n);
  for (auto [a, b] : edges) ++indeg[b];
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push(i);
  while (!ready.empty()) {
    const std::size_t u = ready.top();
    ready.pop();
    pos[u] = order.size();
    order.push_back(u);
    for (auto [a, b] : edges)
      if (a == u && --indeg[b] == 0) ready.push(b);
  }
  if (order.size() != n) rd.fail(g, "the connections form a cycle");
  for (std::size_t u : order) w.kernels.push_back(ks[u]);
  std::vector<int> seen(n, 0);
  for (std::size_t j = 0; j < edges.size(); ++j) {
    const auto [a, b] = edges[j];
    int port = seen[b]++ > 0 ? 1 : 0;
    const pb_node* v = variants[b];
    const pb_node *i1 = v->find("input_tensor_1_size"), *i2 = v->find("input_tensor_2_size");
    const pb_node* out = variants[a]->find("output_tensor_size");
    if (i1 && i2 && out && rd.num(*i1) != rd.num(*i2)) port = rd.num(*out) == rd.num(*i2) ? 1 : 0;
    w.tensors.push_back({pos[a], pos[b], port});
  }
}

inline void read_pb_system(const pb_reader& rd, const pb_node& root, setup& s) {
  const pb_node& sys = rd.need(root, "system");
  const pb_node& a = rd.need(sys, "accelerator");
  s.sys.acc.cores = rd.num(rd.need(a, "core"));
  s.sys.acc.systolic_width = rd.num(rd.need(a, "systolic_width"));
  s.sys.acc.systolic_height = rd.num(rd.need(a, "systolic_height"));
  s.sys.acc.sram_bytes = rd.num(rd.need(a, "sram_cap"));
  s.sys.acc.freq_ghz = rd.num(rd.need(a, "freq"));
  const pb_node& m = rd.need(sys, "memory");
  s.sys.mem.dram_gbps = rd.num(rd.need(m, "dram_bw"));
  s.sys.mem.dram_bytes = rd.num(m, "dram_cap", 0);
  s.sys.net = read_pb_topology(rd, sys);
  if (const pb_node* n = sys.find("num_chip"); n && rd.num(*n) != static_cast<double>(num_chips(s.sys.net)))
    rd.fail(*n, "num_chip differs from the product of the topology's dimensions");
  if (const pb_node* c = root.find("cost")) {
    auto& k = s.sys.cost;
    k.link_unit_price = rd.num(*c, "link_unit_price", k.link_unit_price);
    k.switch_unit_price = rd.num(*c, "switch_unit_price", k.switch_unit_price);
    k.dram_unit_price = rd.num(*c, "dram_unit_price", k.dram_unit_price);
    k.accelerator_price = rd.num(*c, "accelerator_price", k.accelerator_price);
    k.link_unit_power = {rd.num(*c, "link_unit_power_x", 0.052), rd.num(*c, "link_unit_power_y", 0.052),
                         rd.num(*c, "link_unit_power_z", 0.052)};
    k.switch_unit_power = rd.num(*c, "switch_unit_power", k.switch_unit_power);
    k.dram_unit_power = rd.num(*c, "dram_unit_power", k.dram_unit_power);
    k.accelerator_power = rd.num(*c, "accelerator_power", k.accelerator_power);
  }
  try {
    check_system(s.sys);
  } catch (const std::invalid_argument& e) {
    rd.fail(sys, e.what());
  }
}

inline void read_pb_execution(const pb_reader& rd, const pb_node& root, setup& s) {
  const pb_node* e = root.find("execution");
  if (!e) e = root.find("miscellany");
  if (!e) e = &rd.need(root, "execution");
  const pb_node& l = rd.need(*e, "llm");
  auto& p = s.work.llm;
  p.hidden = rd.count(l, "hidden_dim", p.hidden);
  p.head_dim = rd.count(l, "head_dim", p.head_dim);
  p.heads = rd.count(l, "num_head", p.heads);
  p.seq = rd.count(l, "seq_len", p.seq);
  p.layers = rd.count(l, "num_layer", p.layers);
  p.global_batch = rd.count(l, "global_batch_size", p.global_batch);
  p.micro_batch = rd.count(l, "micro_batch_size", p.micro_batch);
  p.word_bytes = rd.num(*e, "word", p.word_bytes);
  s.mode.tile_size = rd.count(l, "tile_size", 0);
  const pb_node& style = rd.need(*e, "execution_style");
  if (style.value != "DATAFLOW" && style.value != "KERNEL_BY_KERNEL") rd.fail(style, "expected DATAFLOW or KERNEL_BY_KERNEL");
  s.mode.mode = style.value == "DATAFLOW" ? execution::dataflow : execution::kernel_by_kernel;
  const auto C = rd.count(*e, "num_config", 0);
  s.mode.configs = C > 0 ? static_cast<std::size_t>(C) : s.work.kernels.size();
  if (const pb_node* o = e->find("perfect_overlap")) s.mode.perfect_overlap = o->value == "true" || o->value == "1";
  s.mode.compute_util = static_cast<double>(static_cast<float>(rd.num(*e, "compute_util", 0)));
}

}  // namespace detail

struct setup_txt_options {
  double all_reduce_factor = 2.0;   ///< not in the file: 2 = the code version behind Table VI
};

/// Reads an authors' setup.txt from `text`; `file` names it in errors and gives the setup's name
/// (the directory above `user_input/`, else the file's stem). Throws io::input_error.
[[nodiscard]] inline setup read_setup_txt_text(const std::string& text, const std::string& file,
                                               const setup_txt_options& opt = {}) {
  const std::filesystem::path path(file);
  const auto root = detail::pb_parser(text, file).parse();
  const detail::pb_reader rd(file);
  setup s;
  s.name = path.parent_path().filename() == "user_input" ? path.parent_path().parent_path().filename().string()
                                                         : path.stem().string();
  detail::read_pb_graph(rd, rd.need(root, "dataflow_graph"), s.work);
  detail::read_pb_system(rd, root, s);
  detail::read_pb_execution(rd, root, s);
  s.mode.all_reduce_factor = opt.all_reduce_factor;
  for (const auto& k : s.work.kernels)
    if (s.mode.mode == execution::dataflow && k.config >= static_cast<int>(s.mode.configs))
      throw io::input_error(file, "/", "kernel " + k.name + " is pinned to a config >= num_config");
  try {
    check_workload(s.work);
  } catch (const std::invalid_argument& e) {
    throw io::input_error(file, "/", e.what());
  }
  return s;
}

/// Reads an authors' setup.txt file. Throws io::input_error.
[[nodiscard]] inline setup read_setup_txt(const std::filesystem::path& path, const setup_txt_options& opt = {}) {
  return read_setup_txt_text(io::detail::read_text(path), path.string(), opt);
}

}  // namespace devplace::dfmodel
