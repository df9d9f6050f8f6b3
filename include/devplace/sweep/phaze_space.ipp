#pragma once
/// \file sweep/phaze_space.ipp
/// The definition of `sweep::prepare_phaze_space` (sweep/phaze_space.hpp): it reads operator graphs
/// and PHAZE configurations and runs PHAZE's architecture evaluation, so it is compiled where it is
/// included and called (header-only mode: sweep/phaze_space.hpp does not include it;
/// devplace/sweep.hpp and sweep/registry.ipp do) or once in `devplace::core` (compiled mode; see
/// config.hpp).
#include <memory>
#include <string>
#include <vector>

#include "devplace/io/read_graph.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph is called below
#endif
#include "devplace/phaze/cores_json.hpp"
#include "devplace/phaze/evaluation_cache.hpp"
#include "devplace/phaze/workload.hpp"
#include "devplace/sweep/phaze_space.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

namespace detail {

/// What every PHAZE point shares: the graphs with their layer splits, the configurations.
struct phaze_data {
  std::vector<std::string> graph_names;  ///< as written in the space file
  std::vector<op_graph> graphs;
  std::vector<phaze::layer_split> splits;
  std::vector<phaze::core_config> configs;
  std::vector<std::size_t> devices;
  std::vector<std::size_t> group_start;  ///< per configuration: the first of its run (same cores and arrays)
  phaze::architecture_options options;
  prepare_context::ilp_type ilp;         ///< set when the per-layer ILP runs
  mutable phaze::evaluation_cache cache;
};

template <int = 0>
json phaze_config_json(const phaze::core_config& c) {
  return {{"num_tc", c.num_tc}, {"num_vc", c.num_vc}, {"width", c.pe_x}, {"depth", c.pe_y},
          {"GLB_Buffer", c.glb_bytes}, {"area", c.area}};
}

template <int = 0>
std::vector<phaze::core_config> phaze_configs(const io::detail::reader& rd, const space_file& f) {
  const json* file = io::detail::reader::optional(f.space, "cores");
  const json* inl = io::detail::reader::optional(f.space, "configurations");
  if ((file != nullptr) == (inl != nullptr)) rd.fail("/space", "expected exactly one of 'cores' (a file) and 'configurations'");
  if (file) return phaze::read_cores_json(resolve(f, rd.string(*file, "/space/cores")));
  rd.array(*inl, "/space/configurations");
  if (inl->empty()) rd.fail("/space/configurations", "expected at least one configuration");
  std::vector<phaze::core_config> out;
  for (std::size_t i = 0; i < inl->size(); ++i)
    out.push_back(phaze::detail::read_core_entry(rd, (*inl)[i], io::detail::child("/space/configurations", i), true));
  return out;
}

/// Per configuration, the first configuration of its run of equal {num_tc, num_vc, PE_x, PE_y}.
template <int = 0>
std::vector<std::size_t> phaze_groups(const std::vector<phaze::core_config>& configs) {
  std::vector<std::size_t> start(configs.size(), 0);
  for (std::size_t c = 1; c < configs.size(); ++c) {
    const auto &a = configs[c - 1], &b = configs[c];
    const bool same = a.num_tc == b.num_tc && a.num_vc == b.num_vc && a.pe_x == b.pe_x && a.pe_y == b.pe_y;
    start[c] = same ? start[c - 1] : c;
  }
  return start;
}

template <int = 0>
std::shared_ptr<const phaze_data> read_phaze_data(const space_file& f, const prepare_context& ctx) {
  const io::detail::reader rd(f.file);
  const std::string p = "/space";
  known_fields(rd, f.space, p, {"cores", "configurations", "graphs", "devices", "batch", "layers", "micro_batches",
                                "hbm_gib", "bandwidth_gbps", "ilp_time_limit_s"});
  auto d = std::make_shared<phaze_data>();
  d->configs = phaze_configs(rd, f);
  d->group_start = phaze_groups(d->configs);
  d->graph_names = strings(rd, f.space, "graphs", p);
  std::size_t blocks = 24;
  if (const json* l = io::detail::reader::optional(f.space, "layers")) {
    blocks = static_cast<std::size_t>(rd.count(*l, "/space/layers"));
    if (blocks == 0) rd.fail("/space/layers", "expected an integer >= 1, got 0");
  }
  for (const auto& g : d->graph_names) {
    d->graphs.push_back(io::read_graph(resolve(f, g)));
    d->splits.push_back(phaze::workload_layers(d->graphs.back(), blocks));
  }
  d->devices = counts(rd, f.space, "devices", p, {1024});
  auto& o = d->options;
  o.placement.devices = 1;  // set per point
  o.placement.global_batch = 4096;
  if (const json* b = io::detail::reader::optional(f.space, "batch")) {
    o.placement.global_batch = static_cast<std::size_t>(rd.count(*b, "/space/batch"));
    if (o.placement.global_batch == 0) rd.fail("/space/batch", "expected an integer >= 1, got 0");
  }
  o.micro_batches = counts(rd, f.space, "micro_batches", p, {1, 2, 4, 8});
  bool divides = false;
  for (auto b : o.micro_batches) divides = divides || o.placement.global_batch % b == 0;
  if (!divides) rd.fail("/space/micro_batches", "no micro-batch size divides the global batch");
  o.hbm_bytes.clear();
  for (double g : positives(rd, f.space, "hbm_gib", p, {32, 64, 80})) o.hbm_bytes.push_back(g * double(1ull << 30));
  if (const json* bw = io::detail::reader::optional(f.space, "bandwidth_gbps"))
    o.placement.bandwidth_gbps = rd.positive(*bw, "/space/bandwidth_gbps");
  o.workload.layers = blocks;
  o.workload.scheduling.ilp_time_limit_s = 0;
  if (const json* t = io::detail::reader::optional(f.space, "ilp_time_limit_s")) {
    o.workload.scheduling.ilp_time_limit_s = rd.non_negative(*t, "/space/ilp_time_limit_s");
    if (o.workload.scheduling.ilp_time_limit_s > 0 && !ctx.ilp)
      rd.fail("/space/ilp_time_limit_s", "the per-layer ILP needs an ILP solver, which this program does not have");
    if (o.workload.scheduling.ilp_time_limit_s > 0) d->ilp = ctx.ilp;
  }
  return d;
}

template <int = 0>
json phaze_plan_json(const phaze::architecture_result& r, bool ilp) {
  const auto& p = r.plan;
  if (!p.has_solution()) return json::object();
  json j{{"samples_per_s", p.samples_per_s}, {"time_per_batch_ms", p.time_per_batch_ms}, {"p", p.pipeline_stages()},
          {"d", p.data_parallel}, {"t", p.tensor_width}, {"micro_batch", p.micro_batch}, {"recompute", p.recompute},
          {"hbm_bytes", r.hbm_bytes}, {"max_load_ms", p.max_load_ms}, {"resync_ms", p.resync_ms},
          {"devices_used", p.devices_used}};
  if (ilp) j["proved_passes"] = r.report.proved_passes();
  return j;
}

/// The space of `f`: its points, their inputs and their evaluation.
template <int = 0>
point_space phaze_space(const space_file& f, const prepare_context& ctx) {
  const auto d = detail::read_phaze_data(f, ctx);
  const std::size_t nc = d->configs.size(), nk = d->devices.size();
  point_space s;
  s.size = d->graphs.size() * nk * nc;
  s.inputs = [d, nc, nk](std::size_t i) {
    const std::size_t c = i % nc, k = (i / nc) % nk, g = i / (nc * nk);
    return json{{"graph", d->graph_names[g]}, {"devices", d->devices[k]}, {"configuration", c},
                {"accelerator", detail::phaze_config_json(d->configs[c])}};
  };
  s.evaluate = [d, nc, nk](std::size_t i) {
    const std::size_t c = i % nc, k = (i / nc) % nk, g = i / (nc * nk);
    auto o = d->options;
    o.placement.devices = d->devices[k];
    o.workload.cache = &d->cache;
    const auto r = d->ilp ? phaze::evaluate_architecture(d->graphs[g], d->splits[g], d->configs[c], o, function_solver{d->ilp})
                          : phaze::evaluate_architecture(d->graphs[g], d->splits[g], d->configs[c], o);
    return point_result{std::string(to_string(r.plan.status)), detail::phaze_plan_json(r, static_cast<bool>(d->ilp))};
  };
  s.group = [d, nc](std::size_t i) { return i - i % nc + d->group_start[i % nc]; };
  return s;
}

}  // namespace detail

/// The body of `prepare_phaze_space` (sweep/phaze_space.hpp declares this type and calls `run`).
template <int>
struct detail::prepare_phaze_space_defined_in_sweep_phaze_space_ipp {
  static point_space run(const space_file& f, const prepare_context& ctx) { return phaze_space(f, ctx); }
};

}  // namespace devplace::sweep
