#pragma once
/// \file io/detail/llm_json_impl.hpp
/// The definitions behind io/llm_json.hpp (own formats and Calculon's).
#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "devplace/io/detail/json_reader.hpp"
#include "devplace/llm/execution.hpp"
#include "devplace/llm/model.hpp"
#include "devplace/llm/system.hpp"

namespace devplace::io {

inline constexpr const char* llm_model_format = "devplace.llm-model/1";
inline constexpr const char* llm_system_format = "devplace.llm-system/1";
inline constexpr const char* llm_execution_format = "devplace.llm-execution/1";

namespace detail {

/// Rejects members other than `allowed` (and `format`, `name`, `units`, `source`): a misspelt
/// field is an error, not a silent default.
template <int = 0>
void only_fields(const reader& r, const json& doc, const std::string& ptr,
                        std::initializer_list<std::string_view> allowed) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "format" || k == "name" || k == "units" || k == "source" || k == "notes") continue;
    bool ok = false;
    for (auto a : allowed) ok = ok || k == a;
    if (!ok) r.fail(child(ptr, k), "unknown field");
  }
}

template <int = 0>
std::int64_t positive_int(const reader& r, const json& doc, std::string_view key, const std::string& ptr) {
  const std::string p = child(ptr, key);
  const auto x = r.integer(r.field(doc, key, ptr), p);
  if (x < 1) r.fail(p, "expected an integer >= 1, got " + std::to_string(x));
  return x;
}

/// A number in (0, 1] at `ptr`.
template <int = 0>
double fraction(const reader& r, const json& v, const std::string& ptr) {
  const double x = r.positive(v, ptr);
  if (x > 1) r.fail(ptr, "expected a fraction in (0, 1]");
  return x;
}

template <int = 0>
llm::dtype parse_dtype(const reader& r, const std::string& s, const std::string& ptr) {
  if (s == "fp32" || s == "float32") return llm::dtype::fp32;
  if (s == "fp16" || s == "float16") return llm::dtype::fp16;
  if (s == "bf16" || s == "bfloat16") return llm::dtype::bf16;
  if (s == "fp8" || s == "float8") return llm::dtype::fp8;
  r.fail(ptr, "unknown datatype '" + s + "' (expected fp32, fp16, bf16 or fp8)");
}

template <int = 0>
llm::efficiency_table parse_table(const reader& r, const json& v, const std::string& ptr) {
  llm::efficiency_table t;
  r.array(v, ptr);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = child(ptr, i);
    const auto& row = r.array(v[i], p);
    if (row.size() != 2) r.fail(p, "expected [threshold, fraction]");
    const double x = r.non_negative(row[0], child(p, 0)), e = r.positive(row[1], child(p, 1));
    if (e > 1) r.fail(child(p, 1), "expected a fraction in (0, 1], got " + row[1].dump());
    t.rows.emplace_back(x, e);
  }
  std::sort(t.rows.begin(), t.rows.end());
  return t;
}




template <int = 0>
llm::model llm_model_from_json(const json& doc, const std::string& file) {
  const reader r(file);
  r.object(doc, "");
  llm::model m;
  if (const json* n = reader::optional(doc, "name")) m.name = r.string(*n, "/name");
  if (!reader::optional(doc, "format") && reader::optional(doc, "num_blocks")) {  // Calculon's model file
    m.hidden = positive_int(r, doc, "hidden", "");
    m.ffn = positive_int(r, doc, "feedforward", "");
    m.seq = positive_int(r, doc, "seq_size", "");
    m.heads = positive_int(r, doc, "attn_heads", "");
    m.kv_heads = m.heads;
    m.head_dim = positive_int(r, doc, "attn_size", "");
    m.layers = positive_int(r, doc, "num_blocks", "");
    m.ffn_kind = llm::ffn_kind::gelu;
    if (const json* v = reader::optional(doc, "vocab_size")) m.vocab = r.integer(*v, "/vocab_size");
    if (m.vocab < 1) r.fail("/vocab_size", "expected an integer >= 1");
    return m;
  }
  r.format(doc, llm_model_format);
  only_fields(r, doc, "", {"hidden", "ffn", "ffn_kind", "layers", "heads", "kv_heads", "head_dim", "seq", "vocab",
                           "tied_embeddings"});
  m.hidden = positive_int(r, doc, "hidden", "");
  m.ffn = positive_int(r, doc, "ffn", "");
  const std::string kind = r.string(r.field(doc, "ffn_kind", ""), "/ffn_kind");
  if (kind == "gelu") m.ffn_kind = llm::ffn_kind::gelu;
  else if (kind == "swiglu") m.ffn_kind = llm::ffn_kind::swiglu;
  else if (kind == "squared_relu") m.ffn_kind = llm::ffn_kind::squared_relu;
  else r.fail("/ffn_kind", "unknown MLP kind '" + kind + "' (expected gelu, swiglu or squared_relu)");
  m.layers = positive_int(r, doc, "layers", "");
  m.heads = positive_int(r, doc, "heads", "");
  m.kv_heads = positive_int(r, doc, "kv_heads", "");
  m.head_dim = positive_int(r, doc, "head_dim", "");
  m.seq = positive_int(r, doc, "seq", "");
  m.vocab = positive_int(r, doc, "vocab", "");
  m.tied_embeddings = r.boolean(r.field(doc, "tied_embeddings", ""), "/tied_embeddings");
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    r.fail("/kv_heads", "must divide heads (" + std::to_string(m.heads) + "), got " + std::to_string(m.kv_heads));
  return m;
}

/// One datatype's rate: {"tflops": P, "achievable": e, "efficiency": [[GFLOP, e], ...]}; Calculon
/// writes the table as `gflops_efficiency`.
template <int = 0>
llm::unit_rate parse_rate(const reader& r, const json& v, const std::string& ptr, bool calculon) {
  r.object(v, ptr);
  llm::unit_rate u;
  u.tflops = r.positive(r.field(v, "tflops", ptr), child(ptr, "tflops"));
  if (calculon) {
    if (const json* t = reader::optional(v, "gflops_efficiency")) u.efficiency = parse_table(r, *t, child(ptr, "gflops_efficiency"));
    return u;
  }
  only_fields(r, v, ptr, {"tflops", "achievable", "efficiency"});
  if (const json* a = reader::optional(v, "achievable")) {
    u.achievable = fraction(r, *a, child(ptr, "achievable"));
  }
  if (const json* t = reader::optional(v, "efficiency")) u.efficiency = parse_table(r, *t, child(ptr, "efficiency"));
  return u;
}

template <int = 0>
void parse_rates(const reader& r, const json& v, const std::string& ptr, bool calculon,
                        std::array<llm::unit_rate, llm::num_dtypes>& out) {
  r.object(v, ptr);
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string p = child(ptr, it.key());
    const llm::dtype t = parse_dtype(r, it.key(), p);
    out[static_cast<std::size_t>(t)] = parse_rate(r, it.value(), p, calculon);
    // Calculon names one 16-bit rate "float16" for both 16-bit formats.
    if (calculon && t == llm::dtype::fp16 && !(out[static_cast<std::size_t>(llm::dtype::bf16)].tflops > 0))
      out[static_cast<std::size_t>(llm::dtype::bf16)] = out[static_cast<std::size_t>(t)];
  }
}

template <int = 0>
llm::hardware calculon_system(const reader& r, const json& doc) {
  llm::hardware s;
  parse_rates(r, r.field(doc, "matrix", ""), "/matrix", true, s.gpu.matrix);
  parse_rates(r, r.field(doc, "vector", ""), "/vector", true, s.gpu.vector);
  const json& mem = r.object(r.field(doc, "mem1", ""), "/mem1");
  double gib = r.positive(r.field(mem, "GiB", "/mem1"), "/mem1/GiB");
  if (gib > 1e6) gib /= double(1ull << 30);  // a byte count written in the GiB field
  s.gpu.hbm_gib = gib;
  s.gpu.hbm_gbps = r.positive(r.field(mem, "GBps", "/mem1"), "/mem1/GBps");
  if (const json* t = reader::optional(mem, "MB_efficiency")) s.gpu.hbm_efficiency = parse_table(r, *t, "/mem1/MB_efficiency");
  const json& nets = r.array(r.field(doc, "networks", ""), "/networks");
  if (nets.empty()) r.fail("/networks", "expected at least one network tier");
  for (std::size_t i = 0; i < nets.size(); ++i) {
    const std::string p = child("/networks", i);
    const json& n = r.object(nets[i], p);
    llm::network_tier t;
    t.name = "tier " + std::to_string(i);
    t.bandwidth_gbps = r.positive(r.field(n, "bandwidth", p), p + "/bandwidth");
    t.efficiency = fraction(r, r.field(n, "efficiency", p), p + "/efficiency");
    t.size = r.count(r.field(n, "size", p), p + "/size");
    t.latency_us = r.non_negative(r.field(n, "latency", p), p + "/latency") * 1e6;
    s.tiers.push_back(t);
  }
  return s;
}

template <int = 0>
llm::hardware llm_system_from_json(const json& doc, const std::string& file) {
  const reader r(file);
  r.object(doc, "");
  llm::hardware s;
  if (!reader::optional(doc, "format") && reader::optional(doc, "networks")) s = calculon_system(r, doc);
  else {
    r.format(doc, llm_system_format);
    only_fields(r, doc, "", {"gpu", "tiers"});
    const json& g = r.object(r.field(doc, "gpu", ""), "/gpu");
    only_fields(r, g, "/gpu", {"matrix", "vector", "sms", "tile", "stages", "attention", "hbm_gib", "hbm_gbps", "hbm_achievable"});
    if (const json* n = reader::optional(g, "name")) s.gpu.name = r.string(*n, "/gpu/name");
    parse_rates(r, r.field(g, "matrix", "/gpu"), "/gpu/matrix", false, s.gpu.matrix);
    parse_rates(r, r.field(g, "vector", "/gpu"), "/gpu/vector", false, s.gpu.vector);
    if (const json* x = reader::optional(g, "sms")) s.gpu.sms = static_cast<int>(r.count(*x, "/gpu/sms"));
    if (const json* x = reader::optional(g, "tile")) {
      const auto& a = r.array(*x, "/gpu/tile");
      if (a.size() != 2 && a.size() != 3) r.fail("/gpu/tile", "expected [tile_m, tile_n] or [tile_m, tile_n, tile_k]");
      s.gpu.tile_m = static_cast<int>(r.count(a[0], "/gpu/tile/0"));
      s.gpu.tile_n = static_cast<int>(r.count(a[1], "/gpu/tile/1"));
      if (s.gpu.tile_m < 1 || s.gpu.tile_n < 1) r.fail("/gpu/tile", "tiles must be >= 1");
      if (a.size() == 3) s.gpu.tile_k = static_cast<int>(r.count(a[2], "/gpu/tile/2"));
    }
    s.gpu.hbm_gib = r.positive(r.field(g, "hbm_gib", "/gpu"), "/gpu/hbm_gib");
    s.gpu.hbm_gbps = r.positive(r.field(g, "hbm_gbps", "/gpu"), "/gpu/hbm_gbps");
    if (const json* a = reader::optional(g, "attention")) {
      r.object(*a, "/gpu/attention");
      only_fields(r, *a, "/gpu/attention", {"kernel", "fwd_achievable", "bwd_achievable"});
      const std::string k = r.string(r.field(*a, "kernel", "/gpu/attention"), "/gpu/attention/kernel");
      if (k != "fused" && k != "unfused") r.fail("/gpu/attention/kernel", "expected fused or unfused, got '" + k + "'");
      s.gpu.fused_attention = k == "fused";
      for (auto [key, dst] : {std::pair{"fwd_achievable", &s.gpu.attention_fwd_achievable},
                              std::pair{"bwd_achievable", &s.gpu.attention_bwd_achievable}})
        if (const json* x = reader::optional(*a, key)) *dst = fraction(r, *x, child("/gpu/attention", key));
    }
    if (const json* x = reader::optional(g, "stages")) s.gpu.stages = static_cast<int>(r.count(*x, "/gpu/stages"));
    if (const json* x = reader::optional(g, "hbm_achievable")) s.gpu.hbm_achievable = fraction(r, *x, "/gpu/hbm_achievable");
    const json& tiers = r.array(r.field(doc, "tiers", ""), "/tiers");
    if (tiers.empty()) r.fail("/tiers", "expected at least one network tier");
    for (std::size_t i = 0; i < tiers.size(); ++i) {
      const std::string p = child("/tiers", i);
      const json& n = r.object(tiers[i], p);
      only_fields(r, n, p, {"size", "bandwidth_gbps", "efficiency", "latency_us"});
      llm::network_tier t;
      if (const json* x = reader::optional(n, "name")) t.name = r.string(*x, p + "/name");
      t.size = r.count(r.field(n, "size", p), p + "/size");
      t.bandwidth_gbps = r.positive(r.field(n, "bandwidth_gbps", p), p + "/bandwidth_gbps");
      t.efficiency = fraction(r, r.field(n, "efficiency", p), p + "/efficiency");
      t.latency_us = r.non_negative(r.field(n, "latency_us", p), p + "/latency_us");
      s.tiers.push_back(t);
    }
  }
  if (const json* n = reader::optional(doc, "name"); n && n->is_string()) s.name = n->get<std::string>();
  try {
    llm::check_system(s);
  } catch (const std::invalid_argument& e) {
    r.fail("/", e.what());
  }
  return s;
}

template <int = 0>
llm::execution calculon_execution(const reader& r, const json& doc) {
  llm::execution e;
  e.tp = positive_int(r, doc, "tensor_par", "");
  e.pp = positive_int(r, doc, "pipeline_par", "");
  e.dp = positive_int(r, doc, "data_par", "");
  e.global_batch = positive_int(r, doc, "batch_size", "");
  e.micro_batch = positive_int(r, doc, "microbatch_size", "");
  if (const json* v = reader::optional(doc, "pipeline_interleaving")) e.vp = r.integer(*v, "/pipeline_interleaving");
  if (e.vp < 1) r.fail("/pipeline_interleaving", "expected an integer >= 1");
  if (const json* n = reader::optional(doc, "num_procs"); n && r.count(*n, "/num_procs") != std::uint64_t(e.gpus()))
    r.fail("/num_procs", "is " + n->dump() + ", tensor_par * pipeline_par * data_par is " + std::to_string(e.gpus()));
  const std::string rec = r.string(r.field(doc, "activation_recompute", ""), "/activation_recompute");
  if (rec == "full") e.recompute = llm::recompute::full;
  else if (rec == "attn_only") e.recompute = llm::recompute::selective;
  else if (rec == "none") e.recompute = llm::recompute::none;
  else r.fail("/activation_recompute", "unknown mode '" + rec + "' (expected full, attn_only or none)");
  if (const json* v = reader::optional(doc, "tensor_par_comm_type")) {
    const std::string c = r.string(*v, "/tensor_par_comm_type");
    if (c != "ar" && c != "rs_ag" && c != "p2p_rs_ag") r.fail("/tensor_par_comm_type", "unknown type '" + c + "'");
    e.sequence_parallel = c != "ar";
  }
  if (const json* v = reader::optional(doc, "optimizer_sharding")) e.distributed_optimizer = r.boolean(*v, "/optimizer_sharding");
  if (const json* v = reader::optional(doc, "data_par_overlap")) e.dp_overlap = r.boolean(*v, "/data_par_overlap");
  if (const json* v = reader::optional(doc, "tensor_par_overlap")) e.tp_overlap = r.string(*v, "/tensor_par_overlap") != "none";
  e.dtype = parse_dtype(r, r.string(r.field(doc, "datatype", ""), "/datatype"), "/datatype");
  return e;
}

template <int = 0>
llm::execution llm_execution_from_json(const json& doc, const std::string& file) {
  const reader r(file);
  r.object(doc, "");
  if (!reader::optional(doc, "format") && reader::optional(doc, "tensor_par")) return calculon_execution(r, doc);
  r.format(doc, llm_execution_format);
  only_fields(r, doc, "", {"tp", "pp", "dp", "cp", "vp", "micro_batch", "global_batch", "recompute",
                           "sequence_parallel", "distributed_optimizer", "dp_overlap", "tp_overlap", "dtype",
                           "layers_per_stage"});
  llm::execution e;
  e.tp = positive_int(r, doc, "tp", "");
  e.pp = positive_int(r, doc, "pp", "");
  e.dp = positive_int(r, doc, "dp", "");
  e.cp = positive_int(r, doc, "cp", "");
  e.vp = positive_int(r, doc, "vp", "");
  e.micro_batch = positive_int(r, doc, "micro_batch", "");
  e.global_batch = positive_int(r, doc, "global_batch", "");
  const std::string rec = r.string(r.field(doc, "recompute", ""), "/recompute");
  if (rec == "none") e.recompute = llm::recompute::none;
  else if (rec == "selective") e.recompute = llm::recompute::selective;
  else if (rec == "full") e.recompute = llm::recompute::full;
  else r.fail("/recompute", "unknown mode '" + rec + "' (expected none, selective or full)");
  e.sequence_parallel = r.boolean(r.field(doc, "sequence_parallel", ""), "/sequence_parallel");
  e.distributed_optimizer = r.boolean(r.field(doc, "distributed_optimizer", ""), "/distributed_optimizer");
  e.dp_overlap = r.boolean(r.field(doc, "dp_overlap", ""), "/dp_overlap");
  e.tp_overlap = r.boolean(r.field(doc, "tp_overlap", ""), "/tp_overlap");
  e.dtype = parse_dtype(r, r.string(r.field(doc, "dtype", ""), "/dtype"), "/dtype");
  if (e.dtype == llm::dtype::fp32) r.fail("/dtype", "expected fp16, bf16 or fp8");
  if (const json* l = reader::optional(doc, "layers_per_stage")) {
    r.array(*l, "/layers_per_stage");
    for (std::size_t i = 0; i < l->size(); ++i) e.layers_per_stage.push_back(r.integer((*l)[i], child("/layers_per_stage", i)));
  }
  return e;
}

}  // namespace detail

template <int = 0>
nlohmann::json to_json(const llm::model& m) {
  return {{"format", llm_model_format}, {"name", m.name}, {"hidden", m.hidden}, {"ffn", m.ffn},
          {"ffn_kind", std::string(llm::to_string(m.ffn_kind))}, {"layers", m.layers}, {"heads", m.heads},
          {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}, {"seq", m.seq}, {"vocab", m.vocab},
          {"tied_embeddings", m.tied_embeddings}};
}

template <int = 0>
nlohmann::json to_json(const llm::execution& e) {
  nlohmann::json j = {{"format", llm_execution_format}, {"tp", e.tp}, {"pp", e.pp}, {"dp", e.dp}, {"cp", e.cp},
                      {"vp", e.vp}, {"micro_batch", e.micro_batch}, {"global_batch", e.global_batch},
                      {"recompute", std::string(llm::to_string(e.recompute))},
                      {"sequence_parallel", e.sequence_parallel}, {"distributed_optimizer", e.distributed_optimizer},
                      {"dp_overlap", e.dp_overlap}, {"tp_overlap", e.tp_overlap},
                      {"dtype", std::string(llm::to_string(e.dtype))}};
  if (!e.layers_per_stage.empty()) j["layers_per_stage"] = e.layers_per_stage;
  return j;
}

}  // namespace devplace::io
