#pragma once
/// \file io/plan_json.ipp
/// The definitions of io/plan_json.hpp's readers and writer: they parse and build JSON, so they are
/// compiled where this file is included and they are called (header-only mode: io/plan_json.hpp
/// does not include it; devplace/io.hpp does) or once in `devplace::core` (compiled mode; see
/// config.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "devplace/io/atomic_write.hpp"
#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/plan_json.hpp"

namespace devplace::io::detail {

/// The optional `virtual_stages` v of an interleaved plan (after `stages`, `stage_replicas` and
/// `micro_batches`): v ≥ 1 dividing `stages`; with v > 1 the interleaved schedule runs the
/// micro-batches in groups of S = stages / v, so MB must be a multiple of S, and a chunk's
/// replica count is its pipeline rank's.
template <int = 0>
void read_virtual_stages(const reader& r, const nlohmann::json& doc, plan& p) {
  const auto* x = reader::optional(doc, "virtual_stages");
  if (!x) return;
  const auto v = r.count(*x, "/virtual_stages");
  if (v == 0) r.fail("/virtual_stages", "expected an integer >= 1");
  if (p.stages % v != 0)
    r.fail("/virtual_stages", std::to_string(v) + " chunks per device do not divide the " + std::to_string(p.stages) +
                                  " stages (stages = pipeline ranks x virtual_stages)");
  p.virtual_stages = static_cast<std::size_t>(v);
  const std::size_t ranks = pipeline_ranks(p);
  if (p.virtual_stages > 1 && p.micro_batches % ranks != 0)
    r.fail("/micro_batches", "expected a multiple of the " + std::to_string(ranks) + " pipeline ranks (the interleaved " +
                                 "schedule runs the micro-batches in groups of S), got " + std::to_string(p.micro_batches));
  for (std::size_t s = ranks; s < p.stage_replicas.size(); ++s)
    if (p.stage_replicas[s] != p.stage_replicas[s - ranks])
      r.fail(child("/stage_replicas", s), "expected " + std::to_string(p.stage_replicas[s - ranks]) + " (chunk " +
                                              std::to_string(s) + " runs on the devices of pipeline rank " +
                                              std::to_string(s % ranks) + ")");
}

/// An optional number, string or flag `key` of object `o` (at JSON pointer `base`); 0, "" or
/// false when absent.
template <int = 0>
double plan_number(const reader& r, const nlohmann::json& o, const char* key, const std::string& base) {
  const auto* x = reader::optional(o, key);
  return x ? r.number(*x, child(base, key)) : 0.0;
}
template <int = 0>
std::string plan_string(const reader& r, const nlohmann::json& o, const char* key, const std::string& base) {
  const auto* x = reader::optional(o, key);
  return x ? r.string(*x, child(base, key)) : std::string();
}
template <int = 0>
bool plan_flag(const reader& r, const nlohmann::json& o, const char* key, const std::string& base) {
  const auto* x = reader::optional(o, key);
  return x ? r.boolean(*x, child(base, key)) : false;
}

/// Per-stage replica counts (a general-DP plan): S counts >= 1, the largest equal to `replicas`.
template <int = 0>
void read_stage_replicas(const reader& r, const nlohmann::json& x, plan& p) {
  const auto& a = r.array(x, "/stage_replicas");
  if (a.size() != p.stages)
    r.fail("/stage_replicas", "expected " + std::to_string(p.stages) + " entries (one per stage), got " +
                                  std::to_string(a.size()));
  std::size_t largest = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const auto c = r.count(a[k], child("/stage_replicas", k));
    if (c == 0) r.fail(child("/stage_replicas", k), "expected an integer >= 1");
    p.stage_replicas.push_back(static_cast<std::size_t>(c));
    largest = std::max(largest, p.stage_replicas.back());
  }
  if (largest != p.replicas)
    r.fail("/replicas", "expected " + std::to_string(largest) + " (the largest of stage_replicas), got " +
                            std::to_string(p.replicas));
}

/// One stage_of entry per operator of `g`, and no edge from a higher stage to a lower one.
template <int = 0>
void check_plan_against(const reader& r, const op_graph& g, const plan& p) {
  if (p.stage_of.size() != g.num_vertices())
    r.fail("/stage_of", "expected " + std::to_string(g.num_vertices()) + " entries (one per operator of the graph), got " +
                            std::to_string(p.stage_of.size()));
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (auto v : g.out_edges(u))
      if (p.stage_of[u] > p.stage_of[v])
        r.fail(child("/stage_of", v), "edge " + std::to_string(g.op(u).id) + " -> " + std::to_string(g.op(v).id) +
                                          " runs from stage " + std::to_string(p.stage_of[u]) + " back to stage " +
                                          std::to_string(p.stage_of[v]));
}

/// S rows of device ids, row s with one id per replica of stage s, no device used twice; with
/// virtual_stages v > 1, rows S/v and on repeat the row S/v above.
template <int = 0>
void read_device_of(const reader& r, const nlohmann::json& dof, plan& p) {
  r.array(dof, "/device_of");
  if (dof.size() != p.stages)
    r.fail("/device_of", "expected " + std::to_string(p.stages) + " rows (one per stage), got " + std::to_string(dof.size()));
  std::set<std::uint64_t> used;
  const std::size_t ranks = pipeline_ranks(p);
  for (std::size_t s = 0; s < p.stages; ++s) {
    const std::string rp = child("/device_of", s);
    r.array(dof[s], rp);
    const std::size_t want = p.stage_replicas.empty() ? p.replicas : p.stage_replicas[s];
    if (dof[s].size() != want)
      r.fail(rp, "expected " + std::to_string(want) + " device ids (one per replica" +
                     (p.stage_replicas.empty() ? std::string() : " of stage_replicas[" + std::to_string(s) + "]") +
                     "), got " + std::to_string(dof[s].size()));
    std::vector<std::size_t> row;
    for (std::size_t k = 0; k < want; ++k) {
      const auto d = r.count(dof[s][k], child(rp, k));
      if (s < ranks && !used.insert(d).second) r.fail(child(rp, k), "device " + std::to_string(d) + " is used twice");
      row.push_back(static_cast<std::size_t>(d));
    }
    if (s >= ranks && row != p.device_of[s - ranks])
      r.fail(rp, "expected the devices of row " + std::to_string(s - ranks) + " (with virtual_stages = " +
                     std::to_string(p.virtual_stages) + ", chunk " + std::to_string(s) + " runs on pipeline rank " +
                     std::to_string(s % ranks) + ")");
    p.device_of.push_back(std::move(row));
  }
}

template <int = 0>
plan_settings read_plan_settings(const reader& r, const nlohmann::json& x) {
  r.object(x, "/settings");
  plan_settings st;
  if (const auto* v = reader::optional(x, "micro_batch_size")) {
    st.micro_batch_size = r.number(*v, "/settings/micro_batch_size");
    if (!(st.micro_batch_size > 0)) r.fail("/settings/micro_batch_size", "expected a number > 0");
  }
  if (const auto* v = reader::optional(x, "schedule")) {
    st.schedule = r.string(*v, "/settings/schedule");
    if (st.schedule != "gpipe" && st.schedule != "1f1b" && st.schedule != "interleaved")
      r.fail("/settings/schedule", "expected \"gpipe\", \"1f1b\" or \"interleaved\"");
  }
  st.recompute = plan_flag(r, x, "recompute", "/settings");
  st.blocking_sends = plan_flag(r, x, "blocking_sends", "/settings");
  if (const auto* v = reader::optional(x, "phase1_bandwidth_gbps")) {
    st.phase1_bandwidth_gbps = r.number(*v, "/settings/phase1_bandwidth_gbps");
    if (!(st.phase1_bandwidth_gbps > 0)) r.fail("/settings/phase1_bandwidth_gbps", "expected a number > 0");
  }
  if (const auto* v = reader::optional(x, "cost")) {
    st.cost = r.string(*v, "/settings/cost");
    if (st.cost != "auto" && st.cost != "p2p" && st.cost != "allreduce" && st.cost != "combined" && st.cost != "iteration")
      r.fail("/settings/cost", "expected \"auto\", \"p2p\", \"allreduce\", \"combined\" or \"iteration\"");
  }
  if (const auto* v = reader::optional(x, "dp_bucket_bytes")) {
    st.dp_bucket_bytes = r.number(*v, "/settings/dp_bucket_bytes");
    if (!(st.dp_bucket_bytes >= 0) || !std::isfinite(st.dp_bucket_bytes))
      r.fail("/settings/dp_bucket_bytes", "expected a number >= 0");
  }
  return st;
}

template <int = 0>
partition_summary read_partition_summary(const reader& r, const nlohmann::json& x) {
  r.object(x, "/partition");
  partition_summary ps;
  ps.objective_ms = plan_number(r, x, "objective_ms", "/partition");
  if (const auto* t = reader::optional(x, "stage_time_ms")) {
    r.array(*t, "/partition/stage_time_ms");
    for (std::size_t k = 0; k < t->size(); ++k) ps.stage_time_ms.push_back(r.number((*t)[k], child("/partition/stage_time_ms", k)));
  }
  if (const auto* t = reader::optional(x, "stage_memory_bytes")) {
    r.array(*t, "/partition/stage_memory_bytes");
    for (std::size_t k = 0; k < t->size(); ++k)
      ps.stage_memory_bytes.push_back(r.number((*t)[k], child("/partition/stage_memory_bytes", k)));
  }
  ps.method = plan_string(r, x, "method", "/partition");
  ps.optimal = plan_flag(r, x, "optimal", "/partition");
  ps.status = plan_string(r, x, "status", "/partition");
  ps.time_s = plan_number(r, x, "time_s", "/partition");
  if (const auto* steps = reader::optional(x, "steps")) {
    r.array(*steps, "/partition/steps");
    for (std::size_t k = 0; k < steps->size(); ++k) {
      const std::string sp = child("/partition/steps", k);
      const auto& o = r.object((*steps)[k], sp);
      partition_step st;
      st.name = plan_string(r, o, "name", sp);
      st.alpha = plan_number(r, o, "alpha", sp);
      if (const auto* c = reader::optional(o, "clusters")) st.clusters = r.count(*c, sp + "/clusters");
      st.objective_ms = plan_number(r, o, "objective_ms", sp);
      st.time_s = plan_number(r, o, "time_s", sp);
      st.status = plan_string(r, o, "status", sp);
      ps.steps.push_back(std::move(st));
    }
  }
  return ps;
}

template <int = 0>
mapping_summary read_mapping_summary(const reader& r, const nlohmann::json& x) {
  r.object(x, "/mapping");
  mapping_summary m;
  m.objective_ms = plan_number(r, x, "objective_ms", "/mapping");
  m.lower_bound_ms = plan_number(r, x, "lower_bound_ms", "/mapping");
  m.cost = plan_string(r, x, "cost", "/mapping");
  m.method = plan_string(r, x, "method", "/mapping");
  m.optimal = plan_flag(r, x, "optimal", "/mapping");
  if (const auto* n = reader::optional(x, "nodes_explored")) m.nodes_explored = r.count(*n, "/mapping/nodes_explored");
  m.status = plan_string(r, x, "status", "/mapping");
  m.time_s = plan_number(r, x, "time_s", "/mapping");
  return m;
}

template <int = 0>
simulation_summary read_simulation_summary(const reader& r, const nlohmann::json& x) {
  r.object(x, "/simulation");
  simulation_summary s;
  s.schedule = plan_string(r, x, "schedule", "/simulation");
  s.iteration_ms = plan_number(r, x, "iteration_ms", "/simulation");
  s.samples_per_s = plan_number(r, x, "samples_per_s", "/simulation");
  s.bubble_fraction = plan_number(r, x, "bubble_fraction", "/simulation");
  return s;
}

/// The bodies of io/plan_json.hpp's functions (the header declares this type and calls its members).
template <int>
struct plan_json_defined_in_io_plan_json_ipp {
  static plan from_json(const nlohmann::json& doc, const std::string& file, const op_graph* g) {
    const reader r(file);
    r.object(doc, "");
    r.format(doc, plan_format);
    plan p;
    if (const auto* x = reader::optional(doc, "graph")) p.graph = r.string(*x, "/graph");
    if (const auto* x = reader::optional(doc, "topology")) p.topology = r.string(*x, "/topology");
    p.stages = static_cast<std::size_t>(r.count(r.field(doc, "stages", ""), "/stages"));
    p.replicas = static_cast<std::size_t>(r.count(r.field(doc, "replicas", ""), "/replicas"));
    if (p.stages == 0) r.fail("/stages", "expected an integer >= 1");
    if (p.replicas == 0) r.fail("/replicas", "expected an integer >= 1");
    // Every stage holds an operator, so S is at most the length of stage_of; checked before
    // anything sized by S (or R) is built, so that a huge count is a message, not an allocation.
    const auto& so = r.array(r.field(doc, "stage_of", ""), "/stage_of");
    if (p.stages > so.size())
      r.fail("/stages", std::to_string(p.stages) + " stages for " + std::to_string(so.size()) +
                            " operators in stage_of (every stage holds at least one operator)");
    if (p.replicas > max_plan_replicas)
      r.fail("/replicas", std::to_string(p.replicas) + " replicas: more than " + std::to_string(max_plan_replicas));
    if (const auto* x = reader::optional(doc, "stage_replicas")) read_stage_replicas(r, *x, p);
    if (const auto* x = reader::optional(doc, "micro_batches")) {
      p.micro_batches = static_cast<std::size_t>(r.count(*x, "/micro_batches"));
      if (p.micro_batches == 0) r.fail("/micro_batches", "expected an integer >= 1");
    }
    read_virtual_stages(r, doc, p);
    for (std::size_t k = 0; k < so.size(); ++k) {
      const auto s = r.count(so[k], child("/stage_of", k));
      if (s >= p.stages)
        r.fail(child("/stage_of", k),
               "stage " + std::to_string(s) + " out of range (stages = " + std::to_string(p.stages) + ")");
      p.stage_of.push_back(static_cast<std::size_t>(s));
    }
    if (g) check_plan_against(r, *g, p);
    if (const auto* dof = reader::optional(doc, "device_of")) read_device_of(r, *dof, p);
    if (const auto* x = reader::optional(doc, "settings")) {
      p.settings = read_plan_settings(r, *x);
      if (p.virtual_stages > 1 && p.settings->schedule != "interleaved")
        r.fail("/settings/schedule", "expected \"interleaved\" (virtual_stages = " + std::to_string(p.virtual_stages) +
                                         " runs several chunks per device), got \"" + p.settings->schedule + "\"");
    }
    if (const auto* x = reader::optional(doc, "partition")) p.partition = read_partition_summary(r, *x);
    if (const auto* x = reader::optional(doc, "mapping")) p.mapping = read_mapping_summary(r, *x);
    if (const auto* x = reader::optional(doc, "simulation")) p.simulation = read_simulation_summary(r, *x);
    return p;
  }

  static nlohmann::json to_json(const plan& p) {
    nlohmann::json doc;
    doc["format"] = plan_format;
    doc["graph"] = p.graph;
    doc["topology"] = p.topology;
    doc["stages"] = p.stages;
    doc["replicas"] = p.replicas;
    if (p.virtual_stages > 1) doc["virtual_stages"] = p.virtual_stages;
    if (!p.stage_replicas.empty()) doc["stage_replicas"] = p.stage_replicas;
    doc["micro_batches"] = p.micro_batches;
    doc["stage_of"] = p.stage_of;
    if (!p.device_of.empty()) doc["device_of"] = p.device_of;
    if (p.settings) {
      const auto& x = *p.settings;
      doc["settings"] = {{"micro_batch_size", x.micro_batch_size}, {"schedule", x.schedule}, {"recompute", x.recompute},
                         {"blocking_sends", x.blocking_sends}, {"phase1_bandwidth_gbps", x.phase1_bandwidth_gbps},
                         {"cost", x.cost}};
      if (x.dp_bucket_bytes > 0) doc["settings"]["dp_bucket_bytes"] = x.dp_bucket_bytes;
    }
    if (p.partition) {
      const auto& x = *p.partition;
      doc["partition"] = {{"objective_ms", x.objective_ms}, {"stage_time_ms", x.stage_time_ms},
                          {"stage_memory_bytes", x.stage_memory_bytes}, {"method", x.method},
                          {"optimal", x.optimal}, {"status", x.status}, {"time_s", x.time_s}};
      if (!x.steps.empty()) {
        auto& steps = doc["partition"]["steps"] = nlohmann::json::array();
        for (const auto& st : x.steps)
          steps.push_back({{"name", st.name}, {"alpha", st.alpha}, {"clusters", st.clusters},
                           {"objective_ms", st.objective_ms}, {"time_s", st.time_s}, {"status", st.status}});
      }
    }
    if (p.mapping) {
      const auto& x = *p.mapping;
      doc["mapping"] = {{"objective_ms", x.objective_ms}, {"lower_bound_ms", x.lower_bound_ms}, {"cost", x.cost},
                        {"method", x.method}, {"optimal", x.optimal}, {"nodes_explored", x.nodes_explored},
                        {"status", x.status}, {"time_s", x.time_s}};
    }
    if (p.simulation) {
      const auto& x = *p.simulation;
      doc["simulation"] = {{"schedule", x.schedule}, {"iteration_ms", x.iteration_ms},
                           {"samples_per_s", x.samples_per_s}, {"bubble_fraction", x.bubble_fraction}};
    }
    return doc;
  }

  static plan from_text(const std::string& text, const std::string& file, const op_graph* g) {
    return from_json(parse_json(text, file), file, g);
  }

  static plan from_file(const std::filesystem::path& path, const op_graph* g) {
    return from_text(read_text(path), path.string(), g);
  }

  static void write(const plan& p, const std::filesystem::path& path) {
    atomic_write(path, to_json(p).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
};

}  // namespace devplace::io::detail
