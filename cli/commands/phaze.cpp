// devplace phaze place --graph G --devices K --batch B [--accelerator A.json] [--out plan.json]
// devplace phaze sweep --cores cores.json --graph G [--threads N] [--ilp-time-limit S] [--out sweep.json]
// PHAZE (docs/phaze.md): `place` estimates the operator latencies on one accelerator (default the
// TPUv4-like one), schedules every layer (ILP with a time limit when GLPK is there, else the list
// scheduler) and runs the placement DP over micro-batch sizes, HBM sizes and recomputation;
// `sweep` runs the architecture search over a cores.json (list scheduling per layer, or the ILP
// under --ilp-time-limit).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/atomic_write.hpp"
#include "devplace/io/read_graph.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif
#include "devplace/phaze/cores_json.hpp"
#include "devplace/phaze/sweep.hpp"
#include "devplace/phaze/workload.hpp"
#ifdef DEVPLACE_HAS_GLPK
#include "devplace/ilp/backends/glpk.hpp"
#endif

namespace devplace::cli {

namespace phaze_cmd {

struct common_args {
  std::string graph, out;
  std::size_t devices = 1024, batch = 4096, layers = 24;
  std::vector<std::size_t> micro_batches{1, 2, 4, 8};
  std::vector<double> hbm_gib{32, 64, 80};
  double bandwidth_gbps = 4.294967296;
};

inline void add_common(CLI::App* cmd, common_args& a) {
  cmd->add_option("--graph", a.graph, "Operator graph (devplace.graph/1 JSON or another supported format)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--devices,-K", a.devices, "Accelerators K")->check(CLI::PositiveNumber);
  cmd->add_option("--batch,-B", a.batch, "Global batch in samples (B x micro-batch size)")->check(CLI::PositiveNumber);
  cmd->add_option("--layers", a.layers, "Layers when the graph has no layer ids: contiguous blocks of the topological order")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batches", a.micro_batches, "Micro-batch sizes to try")->check(CLI::PositiveNumber);
  cmd->add_option("--hbm-gib", a.hbm_gib, "HBM sizes to try, GiB")->check(CLI::PositiveNumber);
  cmd->add_option("--bandwidth-gbps", a.bandwidth_gbps, "Network bandwidth between accelerators, GB/s")->check(CLI::PositiveNumber);
  cmd->add_option("--out", a.out, "Write the result as JSON");
}

inline phaze::architecture_options architecture(const common_args& a) {
  phaze::architecture_options o;
  o.placement.devices = a.devices;
  o.placement.global_batch = a.batch;
  o.placement.bandwidth_gbps = a.bandwidth_gbps;
  o.micro_batches = a.micro_batches;
  o.hbm_bytes.clear();
  for (double g : a.hbm_gib) o.hbm_bytes.push_back(g * double(1ull << 30));
  o.workload.layers = a.layers;
  return o;
}

inline nlohmann::json config_json(const phaze::core_config& c) {
  return {{"num_tc", c.num_tc}, {"num_vc", c.num_vc}, {"width", c.pe_x}, {"depth", c.pe_y}, {"width_vc", c.pe_vc()},
          {"GLB_Buffer", c.glb_bytes}, {"area", c.area}, {"glb_bw_words", phaze::glb_bandwidth_words(c, c.num_tc)},
          {"l2_tc_bytes", phaze::l2_tensor_bytes(c)}, {"l2_vc_bytes", phaze::l2_vector_bytes(c)}};
}

inline const char* method_name(phaze::schedule_method m) {
  return m == phaze::schedule_method::ilp_optimal ? "ilp_optimal" : m == phaze::schedule_method::ilp_incumbent ? "ilp_incumbent" : "list";
}

inline nlohmann::json result_json(const phaze::architecture_result& r) {
  const auto& p = r.plan;
  nlohmann::json stages = nlohmann::json::array(), layers = nlohmann::json::array();
  for (const auto& s : p.stages)
    stages.push_back({{"layers", s.layers}, {"devices", s.devices}, {"position", s.position},
                      {"latency_ms", s.latency_ms}, {"memory_bytes", s.memory_bytes}});
  for (const auto& l : r.report.layers)
    layers.push_back({{"forward_ms", l.forward.makespan_ms}, {"backward_ms", l.backward.makespan_ms},
                      {"forward", method_name(l.forward.method)}, {"backward", method_name(l.backward.method)},
                      {"operators", l.operators}, {"incomparable_pairs", l.incomparable}});
  return {{"status", std::string(to_string(p.status))}, {"p", p.pipeline_stages()}, {"d", p.data_parallel},
          {"t", p.tensor_width}, {"micro_batch", p.micro_batch}, {"micro_batches", p.micro_batches},
          {"recompute", p.recompute}, {"hbm_bytes", r.hbm_bytes}, {"max_load_ms", p.max_load_ms},
          {"resync_ms", p.resync_ms}, {"time_per_batch_ms", p.time_per_batch_ms}, {"samples_per_s", p.samples_per_s},
          {"devices_used", p.devices_used}, {"stages", stages}, {"layers", layers}};
}

inline void print_result(const phaze::architecture_result& r) {
  const auto& p = r.plan;
  std::printf("{p, d, t}        {%zu, %zu, %zu}  (%zu devices)\n", p.pipeline_stages(), p.data_parallel, p.tensor_width,
              p.devices_used);
  std::printf("micro-batch      %zu x %zu, %s, HBM %.0f GiB\n", p.micro_batch, p.micro_batches,
              p.recompute ? "recomputation" : "stashing", r.hbm_bytes / double(1ull << 30));
  std::printf("time per batch   %.6f ms (max load %.6f ms, resync %.6f ms)\n", p.time_per_batch_ms, p.max_load_ms, p.resync_ms);
  std::printf("throughput       %.3f samples/s (%s)\n", p.samples_per_s, std::string(to_string(p.status)).c_str());
  std::size_t proved = 0;
  for (const auto& l : r.report.layers) proved += l.forward.proved() + l.backward.proved();
  std::printf("layer schedules  %zu of %zu passes proved optimal by the ILP, the rest list-scheduled\n", proved,
              2 * r.report.layers.size());
}

/// Which layers the run uses: the graph's own layer ids or equal blocks.
inline void print_layers(const phaze::layer_split& s) {
  std::printf("layers           %zu (%s)\n", s.members.size(),
              s.from_ids ? "the graph's layer ids" : "equal blocks of the topological order");
}

inline const char* layers_from(const phaze::layer_split& s) { return s.from_ids ? "layer_ids" : "equal_blocks"; }

inline void write_json(const std::string& path, const nlohmann::json& j) {
  if (!path.empty()) io::atomic_write(path, j.dump(2) + "\n");
}

}  // namespace phaze_cmd

void register_phaze(CLI::App& app) {
  auto* cmd = app.add_subcommand("phaze", "PHAZE: accelerator architecture and TP x PP x DP placement search");
  cmd->require_subcommand(1);

  struct place_args : phaze_cmd::common_args {
    std::string accelerator;
    double ilp_time_limit = 2;
  };
  auto pa = std::make_shared<place_args>();
  auto* place = cmd->add_subcommand("place", "Best {p, d, t} plan of a graph on K copies of one accelerator");
  phaze_cmd::add_common(place, *pa);
  place->get_option("--devices")->required();
  place->get_option("--batch")->required();
  place->add_option("--accelerator", pa->accelerator, "Accelerator (one cores.json object); default TPUv4-like")->check(CLI::ExistingFile);
  place->add_option("--ilp-time-limit", pa->ilp_time_limit, "Seconds per layer pass for the scheduling ILP (0: list scheduling only)")
      ->check(seconds_validator());
  place->callback([pa] {
    const auto g = io::read_graph(pa->graph);
    const auto core = pa->accelerator.empty() ? phaze::tpu_v4_like() : phaze::read_accelerator_json(pa->accelerator);
    auto o = phaze_cmd::architecture(*pa);
    o.workload.scheduling.ilp_time_limit_s = pa->ilp_time_limit;
    const auto split = phaze::workload_layers(g, pa->layers);
    phaze_cmd::print_layers(split);
    phaze::architecture_result r;
#ifdef DEVPLACE_HAS_GLPK
    if (pa->ilp_time_limit > 0) r = phaze::evaluate_architecture(g, split, core, o, ilp::glpk_solver{});
    else r = phaze::evaluate_architecture(g, split, core, o);
#else
    r = phaze::evaluate_architecture(g, split, core, o);
#endif
    if (!r.plan.has_solution())
      throw failure("no PHAZE plan fits: every stage split exceeds the HBM sizes given (" +
                    std::string(to_string(r.plan.status)) + ")");
    phaze_cmd::print_result(r);
    auto j = phaze_cmd::result_json(r);
    j["format"] = "devplace.phaze.plan/1";
    j["accelerator"] = phaze_cmd::config_json(core);
    j["layers_from"] = phaze_cmd::layers_from(split);
    phaze_cmd::write_json(pa->out, j);
  });

  struct sweep_args : phaze_cmd::common_args {
    std::string cores;
    std::size_t hysteresis = 6;
    unsigned threads = 1;
    double ilp_time_limit = 0;
  };
  auto sa = std::make_shared<sweep_args>();
  auto* sweep = cmd->add_subcommand("sweep", "Architecture search over a cores.json (Algorithm 1, hysteresis stop)");
  phaze_cmd::add_common(sweep, *sa);
  sweep->add_option("--cores", sa->cores, "PHAZE's cores.json (configurations with their areas)")->required()->check(CLI::ExistingFile);
  sweep->add_option("--hysteresis", sa->hysteresis, "Stop when the last H area buckets' best throughputs do not increase")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--threads", sa->threads, "Worker threads (0: one per hardware thread)");
  sweep->add_option("--ilp-time-limit", sa->ilp_time_limit,
                    "Seconds per layer pass for the scheduling ILP in every configuration (default 0: list scheduling only)")
      ->check(seconds_validator());
  sweep->callback([sa] {
    const auto g = io::read_graph(sa->graph);
    const auto cores = phaze::read_cores_json(sa->cores);
    auto o = phaze_cmd::architecture(*sa);
    o.workload.scheduling.ilp_time_limit_s = sa->ilp_time_limit;
    const auto split = phaze::workload_layers(g, sa->layers);
    phaze_cmd::print_layers(split);
    const bool tty = isatty(fileno(stderr));
    // One configuration's evaluation: with the ILP (GLPK keeps per-thread state) when a time limit is given.
    const auto evaluate = [&](const phaze::core_config& c) {
#ifdef DEVPLACE_HAS_GLPK
      if (sa->ilp_time_limit > 0) return phaze::evaluate_architecture(g, split, c, o, ilp::glpk_solver{});
#else
      if (sa->ilp_time_limit > 0) throw failure("--ilp-time-limit needs GLPK, which this build does not have");
#endif
      return phaze::evaluate_architecture(g, split, c, o);
    };
    phaze::sweep_options so{.hysteresis = sa->hysteresis, .threads = sa->threads};
    if (tty) so.progress = [](std::size_t done, std::size_t total) { std::fprintf(stderr, "\rexplored %zu of %zu", done, total); };
    const auto eval = [&](const phaze::core_config& c) { return evaluate(c).samples_per_s; };
    const auto r = phaze::sweep_architectures(std::span<const phaze::core_config>(cores), eval, so);
    if (tty) std::fprintf(stderr, "\n");
    if (!r.has_solution()) throw failure(sa->cores + ": no configuration to explore");
    const auto& best = cores[r.best];
    const auto plan = evaluate(best);
    std::printf("explored         %zu of %zu configurations in %zu area buckets (%s)\n", r.explored.size(), cores.size(),
                r.bucket_maxima.size(), r.status == status::optimal ? "converged" : std::string(to_string(r.status)).c_str());
    std::printf("best             {%zu, %zu, %zu, %zu, %zu}, glb %.0f MiB, area %.2f\n", best.num_tc, best.num_vc, best.pe_x,
                best.pe_y, best.pe_vc(), best.glb_bytes / double(1 << 20), best.area);
    phaze_cmd::print_result(plan);
    nlohmann::json explored = nlohmann::json::array();
    for (const auto& e : r.explored) explored.push_back({{"config", phaze_cmd::config_json(cores[e.config])}, {"samples_per_s", e.throughput}});
    nlohmann::json j{{"format", "devplace.phaze.sweep/1"}, {"status", std::string(to_string(r.status))},
                     {"hysteresis", sa->hysteresis}, {"ilp_time_limit_s", sa->ilp_time_limit},
                     {"layers_from", phaze_cmd::layers_from(split)}, {"explored", explored}, {"bucket_maxima", r.bucket_maxima},
                     {"best", phaze_cmd::config_json(best)}, {"plan", phaze_cmd::result_json(plan)}};
    phaze_cmd::write_json(sa->out, j);
  });
}

}  // namespace devplace::cli
