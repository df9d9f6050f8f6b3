#pragma once
/// \file dfmodel/setup.ipp
/// The definitions of dfmodel/setup.hpp's reader and `result_json`: they parse and build JSON, so
/// they are compiled where this file is included and they are called (header-only mode:
/// dfmodel/setup.hpp does not include it; devplace/dfmodel.hpp does) or once in `devplace::core`
/// (compiled mode; see config.hpp).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "devplace/dfmodel/setup.hpp"
#include "devplace/io/detail/json_reader.hpp"

namespace devplace::dfmodel::detail {

using io::detail::child;
using io::detail::reader;
using json = nlohmann::json;

template <class E>
E pick(const reader& rd, const json& v, const std::string& ptr, const std::map<std::string, E>& names) {
  const std::string s = rd.string(v, ptr);
  const auto it = names.find(s);
  if (it != names.end()) return it->second;
  std::string all;
  for (const auto& [k, e] : names) all += (all.empty() ? "" : ", ") + k;
  rd.fail(ptr, "unknown value '" + s + "' (expected one of " + all + ")");
}

template <int = 0>
double opt_num(const reader& rd, const json& v, std::string_view key, const std::string& ptr, double dflt) {
  const json* x = reader::optional(v, key);
  return x ? rd.non_negative(*x, child(ptr, key)) : dflt;
}
template <int = 0>
std::int64_t opt_int(const reader& rd, const json& v, std::string_view key, const std::string& ptr, std::int64_t dflt) {
  const json* x = reader::optional(v, key);
  return x ? static_cast<std::int64_t>(rd.count(*x, child(ptr, key))) : dflt;
}

template <int = 0>
system read_system(const reader& rd, const json& v, const std::string& p) {
  system s;
  const json& a = rd.field(v, "accelerator", p);
  const std::string pa = child(p, "accelerator");
  s.acc.cores = rd.positive(rd.field(a, "cores", pa), child(pa, "cores"));
  s.acc.systolic_width = rd.positive(rd.field(a, "systolic_width", pa), child(pa, "systolic_width"));
  s.acc.systolic_height = rd.positive(rd.field(a, "systolic_height", pa), child(pa, "systolic_height"));
  s.acc.freq_ghz = rd.positive(rd.field(a, "freq_ghz", pa), child(pa, "freq_ghz"));
  s.acc.sram_bytes = rd.positive(rd.field(a, "sram_bytes", pa), child(pa, "sram_bytes"));
  const json& m = rd.field(v, "memory", p);
  const std::string pm = child(p, "memory");
  s.mem.dram_gbps = rd.positive(rd.field(m, "dram_gbps", pm), child(pm, "dram_gbps"));
  s.mem.dram_bytes = opt_num(rd, m, "dram_bytes", pm, 0);
  const std::string pn = child(p, "network");
  const json& n = rd.array(rd.field(v, "network", p), pn);
  if (n.empty() || n.size() > 3) rd.fail(pn, "expected 1 to 3 dimensions");
  for (std::size_t d = 0; d < n.size(); ++d) {
    const std::string pd = child(pn, d);
    dimension x;
    x.kind = pick<dim_kind>(rd, rd.field(n[d], "kind", pd), child(pd, "kind"),
                            {{"ring", dim_kind::ring}, {"fully_connected", dim_kind::fully_connected}, {"switch", dim_kind::switched}});
    x.size = rd.count(rd.field(n[d], "size", pd), child(pd, "size"));  // 0 = free (searched)
    x.link_gbps = rd.positive(rd.field(n[d], "link_gbps", pd), child(pd, "link_gbps"));
    if (const json* q = reader::optional(n[d], "parallelism"))
      x.par = pick<parallelism>(rd, *q, child(pd, "parallelism"),
                                {{"TP", parallelism::tp}, {"PP", parallelism::pp}, {"DP", parallelism::dp}, {"none", parallelism::none}});
    for (std::size_t e = 0; e < d; ++e)
      if (x.par != parallelism::none && s.net.dims[e].par == x.par)
        rd.fail(child(pd, "parallelism"), std::string(to_string(x.par)) + " is already carried by dimension " + std::to_string(e));
    s.net.dims.push_back(x);
  }
  try {
    network probe = s.net;
    for (auto& d : probe.dims) d.size = std::max<std::size_t>(d.size, 1);
    (void)cost_units(probe);
  } catch (const std::invalid_argument&) {
    rd.fail(pn, "no cost model for this composition (ring, fully_connected, switch; see docs/dfmodel.md)");
  }
  if (const json* c = reader::optional(v, "cost")) {
    const std::string pc = child(p, "cost");
    auto& k = s.cost;
    k.link_unit_price = opt_num(rd, *c, "link_unit_price", pc, k.link_unit_price);
    k.switch_unit_price = opt_num(rd, *c, "switch_unit_price", pc, k.switch_unit_price);
    k.dram_unit_price = opt_num(rd, *c, "dram_unit_price", pc, k.dram_unit_price);
    k.accelerator_price = opt_num(rd, *c, "accelerator_price", pc, k.accelerator_price);
    k.switch_unit_power = opt_num(rd, *c, "switch_unit_power", pc, k.switch_unit_power);
    k.dram_unit_power = opt_num(rd, *c, "dram_unit_power", pc, k.dram_unit_power);
    k.accelerator_power = opt_num(rd, *c, "accelerator_power", pc, k.accelerator_power);
    if (const json* lp = reader::optional(*c, "link_unit_power")) {
      const std::string pl = child(pc, "link_unit_power");
      rd.array(*lp, pl);
      if (lp->size() != 3) rd.fail(pl, "expected 3 numbers (x, y, z)");
      for (std::size_t d = 0; d < 3; ++d) k.link_unit_power[d] = rd.non_negative((*lp)[d], child(pl, d));
    }
  }
  return s;
}

template <int = 0>
llm_params read_llm(const reader& rd, const json& v, const std::string& p) {
  llm_params l;
  l.hidden = opt_int(rd, v, "hidden", p, l.hidden);
  l.heads = opt_int(rd, v, "heads", p, l.heads);
  l.head_dim = opt_int(rd, v, "head_dim", p, l.head_dim);
  l.seq = opt_int(rd, v, "seq", p, l.seq);
  l.layers = opt_int(rd, v, "layers", p, l.layers);
  l.global_batch = opt_int(rd, v, "global_batch", p, l.global_batch);
  l.micro_batch = opt_int(rd, v, "micro_batch", p, l.micro_batch);
  l.word_bytes = opt_num(rd, v, "word_bytes", p, l.word_bytes);
  for (auto [key, x] : {std::pair<const char*, std::int64_t>{"hidden", l.hidden}, {"heads", l.heads}, {"head_dim", l.head_dim},
                        {"seq", l.seq}, {"layers", l.layers}, {"global_batch", l.global_batch}, {"micro_batch", l.micro_batch}})
    if (x < 1) rd.fail(child(p, key), "expected an integer >= 1");
  if (!(l.word_bytes > 0)) rd.fail(child(p, "word_bytes"), "expected a number > 0");
  return l;
}

template <int = 0>
kernel read_kernel(const reader& rd, const json& v, const std::string& p) {
  kernel k;
  k.name = rd.string(rd.field(v, "name", p), child(p, "name"));
  k.kind = pick<kernel_kind>(rd, rd.field(v, "kind", p), child(p, "kind"),
                             {{"systolic", kernel_kind::systolic}, {"simd", kernel_kind::simd}});
  k.op = pick<kernel_op>(rd, rd.field(v, "op", p), child(p, "op"),
                         {{"gemm_weight", kernel_op::gemm_weight}, {"gemm_two_inputs", kernel_op::gemm_two_inputs},
                          {"elementwise", kernel_op::elementwise}, {"elementwise_two_inputs", kernel_op::elementwise_two_inputs}});
  for (auto [key, dst] : {std::pair<const char*, std::int64_t*>{"outer", &k.outer}, {"m", &k.m}, {"k", &k.k}, {"n", &k.n}}) {
    *dst = opt_int(rd, v, key, p, 1);
    if (*dst < 1) rd.fail(child(p, key), "expected an integer >= 1");
  }
  if (const json* t = reader::optional(v, "tiling"))
    k.tiling = pick<loop_dim>(rd, *t, child(p, "tiling"),
                              {{"outer", loop_dim::outer}, {"M", loop_dim::m}, {"K", loop_dim::k}, {"N", loop_dim::n}, {"none", loop_dim::none}});
  if (const json* b = reader::optional(v, "backward")) k.backward = rd.boolean(*b, child(p, "backward"));
  if (const json* b = reader::optional(v, "periodic_all_reduce")) k.periodic_all_reduce = rd.boolean(*b, child(p, "periodic_all_reduce"));
  return k;
}

template <int = 0>
workload read_workload(const reader& rd, const json& v, const std::string& p) {
  const llm_params l = read_llm(rd, rd.field(v, "llm", p), child(p, "llm"));
  if (const json* g = reader::optional(v, "generator")) {
    if (rd.string(*g, child(p, "generator")) != "gpt3_layer") rd.fail(child(p, "generator"), "unknown generator (expected gpt3_layer)");
    return gpt3_layer(l);
  }
  workload w;
  w.llm = l;
  const std::string pk = child(p, "kernels"), pt = child(p, "tensors");
  const json& ks = rd.array(rd.field(v, "kernels", p), pk);
  if (ks.empty() || ks.size() > 64) rd.fail(pk, "expected 1 to 64 kernels");
  for (std::size_t i = 0; i < ks.size(); ++i) w.kernels.push_back(read_kernel(rd, ks[i], child(pk, i)));
  const json& ts = rd.array(rd.field(v, "tensors", p), pt);
  for (std::size_t j = 0; j < ts.size(); ++j) {
    const std::string pj = child(pt, j);
    tensor t;
    t.src = rd.count(rd.field(ts[j], "src", pj), child(pj, "src"));
    t.dst = rd.count(rd.field(ts[j], "dst", pj), child(pj, "dst"));
    t.port = static_cast<int>(opt_int(rd, ts[j], "port", pj, 0));
    if (t.src >= ks.size() || t.dst >= ks.size()) rd.fail(pj, "src and dst must be kernel indices < " + std::to_string(ks.size()));
    if (t.src >= t.dst) rd.fail(pj, "kernels must be listed in topological order (src < dst)");
    if (t.port > 1) rd.fail(child(pj, "port"), "expected 0 or 1");
    w.tensors.push_back(t);
  }
  return w;
}

template <int = 0>
void read_mode(const reader& rd, const json& v, const std::string& p, setup& s) {
  auto& m = s.mode;
  m.mode = pick<execution>(rd, rd.field(v, "execution", p), child(p, "execution"),
                           {{"dataflow", execution::dataflow}, {"kernel_by_kernel", execution::kernel_by_kernel}});
  m.configs = static_cast<std::size_t>(opt_int(rd, v, "configs", p, static_cast<std::int64_t>(m.configs)));
  if (m.configs == 0) rd.fail(child(p, "configs"), "expected an integer >= 1");
  if (const json* x = reader::optional(v, "perfect_overlap")) m.perfect_overlap = rd.boolean(*x, child(p, "perfect_overlap"));
  m.compute_util = opt_num(rd, v, "compute_util", p, m.compute_util);
  if (m.compute_util > 1) rd.fail(child(p, "compute_util"), "expected a number in [0, 1]");
  m.all_reduce_factor = opt_num(rd, v, "all_reduce_factor", p, m.all_reduce_factor);
  if (!(m.all_reduce_factor > 0)) rd.fail(child(p, "all_reduce_factor"), "expected a number > 0");
  m.tile_size = opt_int(rd, v, "tile_size", p, 0);
  if (const json* sh = reader::optional(v, "shard")) {
    const std::string ps = child(p, "shard");
    rd.object(*sh, ps);
    for (const auto& item : sh->items()) {  // no structured binding: lambdas capture `name` (clang 14)
      const std::string& name = item.key();
      const json& x = item.value();
      auto it = std::find_if(s.work.kernels.begin(), s.work.kernels.end(), [&](const kernel& k) { return k.name == name; });
      if (it == s.work.kernels.end()) rd.fail(child(ps, name), "no kernel of this name");
      it->scheme = static_cast<int>(pick<loop_dim>(rd, x, child(ps, name),
                                                   {{"OUTER", loop_dim::outer}, {"M", loop_dim::m}, {"K", loop_dim::k},
                                                    {"N", loop_dim::n}, {"NO", loop_dim::none}}));
      const auto free = allowed_schemes_free(*it);
      if (std::find(free.begin(), free.end(), static_cast<loop_dim>(*it->scheme)) == free.end())
        rd.fail(child(ps, name), "this kernel cannot use that scheme (size 1, tiled, or a weight left unsharded)");
    }
  }
  if (const json* pin = reader::optional(v, "pin")) {
    const std::string pp = child(p, "pin");
    rd.object(*pin, pp);
    for (const auto& item : pin->items()) {
      const std::string& name = item.key();
      const json& c = item.value();
      auto it = std::find_if(s.work.kernels.begin(), s.work.kernels.end(), [&](const kernel& k) { return k.name == name; });
      if (it == s.work.kernels.end()) rd.fail(child(pp, name), "no kernel of this name");
      it->config = static_cast<int>(rd.count(c, child(pp, name)));
      if (m.mode == execution::dataflow && static_cast<std::size_t>(it->config) >= m.configs)
        rd.fail(child(pp, name), "config must be < configs (" + std::to_string(m.configs) + ")");
    }
  }
}


/// The bodies of dfmodel/setup.hpp's reader and writer (the header declares this type and calls its members).
template <int>
struct setup_json_defined_in_dfmodel_setup_ipp {
  static setup from_text(const std::string& text, const std::string& file) {
    const auto doc = io::detail::parse_json(text, file);
    const reader rd(file);
    rd.object(doc, "");
    rd.format(doc, "devplace.dfmodel.setup/1");
    setup s;
    if (const auto* n = reader::optional(doc, "name")) s.name = rd.string(*n, "/name");
    s.sys = read_system(rd, rd.field(doc, "system", ""), "/system");
    s.work = read_workload(rd, rd.field(doc, "workload", ""), "/workload");
    read_mode(rd, rd.field(doc, "mode", ""), "/mode", s);
    const auto& sysj = rd.field(doc, "system", "");
    if (const auto* c = reader::optional(sysj, "chips")) s.chips = rd.count(*c, "/system/chips");
    const bool any_free = std::any_of(s.sys.net.dims.begin(), s.sys.net.dims.end(), [](const dimension& d) { return d.size == 0; });
    if (any_free) {
      if (s.chips == 0) rd.fail("/system/chips", "needed (>= 1) when a network dimension has size 0 (free)");
      if (size_assignments(s.sys.net, s.chips).empty()) rd.fail("/system/chips", "no sizes of the free dimensions give this many chips");
      return s;
    }
    if (s.chips != 0 && s.chips != num_chips(s.sys.net)) rd.fail("/system/chips", "differs from the product of the dimension sizes");
    s.chips = num_chips(s.sys.net);
    if (static_cast<std::int64_t>(s.work.llm.global_batch) %
            (s.work.llm.micro_batch * static_cast<std::int64_t>(degree(s.sys.net, parallelism::dp))) != 0)
      rd.fail("/workload/llm/global_batch", "must be a multiple of micro_batch · DP");
    return s;
  }

  static setup from_file(const std::filesystem::path& path) { return from_text(io::detail::read_text(path), path.string()); }

  static nlohmann::json result(const setup& s, const run_result& r) {
    nlohmann::json j;
    j["format"] = "devplace.dfmodel.result/1";
    j["name"] = s.name;
    const auto& m = r.mapping;
    j["status"] = std::string(to_string(m.status));
    j["network_sizes"] = nlohmann::json::array();
    for (const auto& d : r.net.dims) j["network_sizes"].push_back(d.size);
    j["tp"] = m.tp;
    j["pp"] = m.pp;
    j["dp"] = m.dp;
    j["num_tile"] = m.num_tile;
    j["final_s"] = m.final_s;
    j["final_ns"] = m.final_ns;
    j["util"] = m.util;
    j["flop"] = m.flop;
    j["cost"] = m.cost;
    j["power"] = m.power;
    j["pipeline_factor"] = m.pipeline_factor;
    j["p2p_ns"] = m.p2p_ns;
    j["per_config_ii_ns"] = m.per_config_ii_ns;
    j["sharding_bytes"] = r.shard.bytes;
    nlohmann::json ks = nlohmann::json::array();
    for (std::size_t i = 0; i < s.work.kernels.size(); ++i)
      ks.push_back({{"name", s.work.kernels[i].name},
                    {"scheme", i < r.shard.scheme.size() ? std::string(to_string(r.shard.scheme[i])) : ""},
                    {"config", i < m.config_of.size() ? m.config_of[i] : -1}});
    j["kernels"] = ks;
    nlohmann::json cs = nlohmann::json::array();
    for (const auto& c : m.configs)
      cs.push_back({{"kernels", c.kernels}, {"compute_ns", c.compute_ns}, {"memory_ns", c.memory_ns},
                    {"network_ns", c.network_ns}, {"ii_ns", c.ii_ns}, {"sram_bytes", c.sram_bytes}});
    j["configs"] = cs;
    return j;
  }
};

}  // namespace devplace::dfmodel::detail
