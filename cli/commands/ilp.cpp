// devplace ilp --problem mapping|partition|repair --graph G [--topology T] [--plan P]
//              [--cost auto|p2p|allreduce] [--stages S] [--replicas R] [--micro-batches MB]
//              [--device-memory BYTES] [--bandwidth GBPS] [--write model.lp|model.mps]
//              [--solve cbc|glpk] [--time-limit SECONDS] [--threads N] [--warm-start] [--out plan.json]
// Builds the MILP of a mapping (the plan's S x R stage replicas on the topology's devices), a
// partition (S stages, R replicas) or a repair (the valid partition closest to the plan's
// stage_of), writes it in the LP or MPS format (by the file's extension), and solves it with CBC
// or GLPK when this program was built with them. The objective of a written mapping or partition
// model is the plan's objective in ms, the number `devplace map` / `devplace partition` report.
#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <string>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/ilp/builders/mapping.hpp"
#include "devplace/ilp/builders/partition.hpp"
#include "devplace/ilp/lp_writer.hpp"
#include "devplace/ilp/mps_writer.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/read_graph.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif
#include "devplace/io/topology_json.hpp"
#ifdef DEVPLACE_HAS_CBC
#include "devplace/ilp/backends/cbc.hpp"
#endif
#ifdef DEVPLACE_HAS_GLPK
#include "devplace/ilp/backends/glpk.hpp"
#endif

namespace devplace::cli {

struct ilp_args {
  std::string problem, graph, format = "auto", topology, plan_file, cost = "auto", write, solve, out;
  std::size_t stages = 0, replicas = 0, micro_batches = 1;
  double device_memory = std::numeric_limits<double>::infinity(), bandwidth = 10.0;
  double time_limit = std::numeric_limits<double>::infinity();
  unsigned threads = 1;
  bool warm_start = false;
};

/// The backends this program was built with, for messages.
inline std::string ilp_backends_built() {
  std::string s;
#ifdef DEVPLACE_HAS_CBC
  s += "cbc";
#endif
#ifdef DEVPLACE_HAS_GLPK
  s += s.empty() ? "glpk" : ", glpk";
#endif
  return s.empty() ? "none" : s;
}

/// Solves `m` with the named backend; throws `failure` if this build does not have it.
inline ilp::solution ilp_solve(const ilp::model& m, const std::string& backend, const ilp::solve_options& o) {
#ifdef DEVPLACE_HAS_CBC
  if (backend == "cbc") return ilp::cbc_solver{}.solve(m, o);
#endif
#ifdef DEVPLACE_HAS_GLPK
  if (backend == "glpk") return ilp::glpk_solver{}.solve(m, o);
#endif
  (void)m;
  (void)o;
  throw failure("--solve " + backend + ": this devplace was built without that solver (built with: " +
                ilp_backends_built() + ")");
}

inline void ilp_write_model(const ilp::model& m, const std::string& path, std::ostream& os) {
  const auto ext = std::filesystem::path(path).extension().string();
  try {
    if (ext == ".lp")
      ilp::write_lp(std::filesystem::path(path), m);
    else if (ext == ".mps")
      ilp::write_mps(std::filesystem::path(path), m);
    else
      throw failure("--write " + path + ": the file name must end in .lp or .mps");
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const failure*>(&e)) throw;
    throw failure(e.what());
  }
  os << "written         " << path << " (" << (ext == ".lp" ? "CPLEX LP" : "free MPS") << ")\n";
}

inline void ilp_print_model(const ilp::model& m, const std::string& what, std::ostream& os) {
  os << "ilp model       " << what << ": " << m.num_vars() << " columns (" << m.num_integral() << " integer), "
     << m.num_rows() << " rows, " << m.num_nonzeros() << " nonzeros\n";
}

inline void ilp_print_solution(const ilp::solution& s, std::ostream& os) {
  os << "ilp solve       " << s.solver << ": " << ilp::to_string(s.status);
  if (s.has_values()) os << ", objective " << s.objective;
  if (!std::isnan(s.best_bound)) os << ", bound " << s.best_bound;
  os << " in " << s.time_s << " s" << (s.message.empty() ? "" : " (" + s.message + ")") << '\n';
}

/// devplace ilp --problem mapping: the mapping MILP of the plan's stages on the topology.
inline void run_ilp_mapping(const ilp_args& a, const op_graph& g, const ilp::solve_options& so, std::ostream& os) {
  if (a.topology.empty()) throw CLI::ValidationError("--problem mapping needs --topology");
  if (a.plan_file.empty()) throw CLI::ValidationError("--problem mapping needs --plan (with stage_of)");
  const matrix_topology topo = io::read_topology_json(a.topology);
  plan p = io::read_plan_json(a.plan_file, &g);
  const std::size_t S = p.stages, R = p.replicas, D = topo.num_devices();
  if ((a.stages && a.stages != S) || (a.replicas && a.replicas != R))
    throw failure("--stages/--replicas disagree with the plan (S = " + std::to_string(S) + ", R = " + std::to_string(R) + ")");
  require_devices(S, R, D);
  const stage_graph sg = make_stage_graph(g, p.stage_of, S, R);
  const link_costs L(topo);
  const cost_choice requested = parse_cost(a.cost);
  const auto model = ilp::build_mapping_ilp(sg, L, {.cost = requested});
  ilp_print_model(model.model(), "mapping, cost " + std::string(to_string(model.cost())) + ", S = " + std::to_string(S) +
                                     ", R = " + std::to_string(R) + ", D = " + std::to_string(D),
                  os);
  if (!a.write.empty()) ilp_write_model(model.model(), a.write, os);
  if (a.solve.empty()) return;
  ilp::solve_options mso = so;
  if (a.warm_start) {
    if (p.device_of.empty()) throw CLI::ValidationError("--warm-start needs a plan with device_of (from devplace map)");
    mso.start = model.start(p.device_of);
    os << "warm start      the plan's device_of, objective " << model.model().objective_value(mso.start) << " ms\n";
  }
  const auto sol = ilp_solve(model.model(), a.solve, mso);
  ilp_print_solution(sol, os);
  const auto r = model.decode(sol);
  if (r.device_of.empty())
    throw failure("ilp mapping: no mapping (" + std::string(to_string(r.status)) + ")");
  p.device_of = r.device_of;
  p.mapping = mapping_summary{.objective_ms = r.objective_ms, .lower_bound_ms = r.lower_bound_ms, .cost = r.cost,
                              .method = "ilp-" + a.solve, .optimal = r.optimal,
                              .status = std::string(to_string(r.status)), .time_s = r.time_s};
  if (!topo.name().empty()) p.topology = topo.name();
  if (p.graph.empty()) p.graph = g.name();
  os << "mapping         ilp-" << a.solve << ", cost " << r.cost << ", S = " << S << ", R = " << R << ": objective "
     << r.objective_ms << " ms, lower bound " << r.lower_bound_ms << " ms (" << to_string(r.status)
     << (r.optimal ? ", proved optimal" : "") << ") in " << r.time_s << " s\n";
  os << "  stage  devices\n";
  for (std::size_t s = 0; s < p.device_of.size(); ++s) {
    os << "  " << std::setw(5) << s << " ";
    for (auto d : p.device_of[s]) os << ' ' << d;
    os << '\n';
  }
  if (!a.out.empty()) {
    io::write_plan_json(p, a.out);
    os << "written         " << a.out << '\n';
  }
}

/// devplace ilp --problem partition|repair: the partitioning MILP, or the repair of the plan's stage_of.
inline void run_ilp_partition(const ilp_args& a, const op_graph& g, const ilp::solve_options& so, std::ostream& os) {
  plan p;
  if (a.problem == "repair") {
    if (a.plan_file.empty()) throw CLI::ValidationError("--problem repair needs --plan (the candidate stage_of)");
    p = io::read_plan_json(a.plan_file, &g);
  }
  partition_options po{.stages = a.stages ? a.stages : p.stages,
                       .cost = {.replicas = a.replicas ? a.replicas : std::max<std::size_t>(p.replicas, 1),
                                .micro_batches = a.micro_batches, .device_memory_bytes = a.device_memory,
                                .bandwidth_gbps = a.bandwidth}};
  if (po.stages == 0) throw CLI::ValidationError("--problem " + a.problem + " needs --stages");
  if (!a.topology.empty() && std::isinf(a.device_memory)) {
    const matrix_topology topo = io::read_topology_json(a.topology);
    for (std::size_t d = 0; d < topo.num_devices(); ++d)
      po.cost.device_memory_bytes = std::min(po.cost.device_memory_bytes, topo.device_memory_bytes(d));
  }
  const bool repair = a.problem == "repair";
  std::vector<std::size_t> candidate = p.stage_of;
  const auto model = repair ? ilp::build_partition_repair_ilp(g, po, candidate) : ilp::build_partition_ilp(g, po);
  ilp_print_model(model.model(),
                  std::string(repair ? "repair" : "partition") + ", S = " + std::to_string(po.stages) +
                      ", R = " + std::to_string(po.cost.replicas) + ", " + std::to_string(g.num_vertices()) + " operators",
                  os);
  if (!a.write.empty()) ilp_write_model(model.model(), a.write, os);
  if (a.solve.empty()) return;
  const auto sol = ilp_solve(model.model(), a.solve, so);
  ilp_print_solution(sol, os);
  const auto rr = repair ? model.decode_repair(sol) : ilp::partition_repair_result{model.decode(sol), 0};
  const auto& r = rr.partition;
  if (r.stage_of.empty())
    throw failure("ilp " + a.problem + ": no partition into " + std::to_string(po.stages) + " stages (" +
                  std::string(to_string(r.status)) + ")");
  plan out;
  out.graph = g.name();
  out.stages = po.stages;
  out.replicas = po.cost.replicas;
  out.micro_batches = po.cost.micro_batches;
  out.stage_of = r.stage_of;
  out.partition = partition_summary{.objective_ms = r.objective_ms, .stage_time_ms = r.stage_time_ms,
                                    .stage_memory_bytes = r.stage_memory_bytes,
                                    .method = (repair ? "ilp-repair-" : "ilp-") + a.solve,
                                    .optimal = !repair && r.status == status::optimal,
                                    .status = std::string(to_string(r.status)), .time_s = r.time_s};
  os << "partition       " << out.partition->method << ", S = " << po.stages << ", R = " << po.cost.replicas
     << ": objective " << r.objective_ms << " ms (" << to_string(r.status)
     << (out.partition->optimal ? ", proved optimal" : "") << ") in " << r.time_s << " s\n";
  if (repair) os << "repair          " << rr.changed << " of " << g.num_vertices() << " operators moved\n";
  if (!a.out.empty()) {
    io::write_plan_json(out, a.out);
    os << "written         " << a.out << '\n';
  }
}

inline void run_ilp(const ilp_args& a, std::ostream& os) {
  if (a.write.empty() && a.solve.empty()) throw CLI::ValidationError("nothing to do: give --write FILE and/or --solve cbc|glpk");
  if (a.warm_start && (a.problem != "mapping" || a.solve.empty()))
    throw CLI::ValidationError("--warm-start needs --solve and --problem mapping");
  if (!a.write.empty()) {
    const auto ext = std::filesystem::path(a.write).extension().string();
    if (ext != ".lp" && ext != ".mps")
      throw CLI::ValidationError("--write " + a.write + ": the file name must end in .lp or .mps");
  }
  require_writable({a.write, a.out});
  const op_graph g = io::read_graph(a.graph, a.format);
  const ilp::solve_options so{.time_limit_s = a.time_limit, .threads = a.threads};

  if (a.problem == "mapping")
    run_ilp_mapping(a, g, so, os);
  else
    run_ilp_partition(a, g, so, os);
}

void register_ilp(CLI::App& app) {
  auto a = std::make_shared<ilp_args>();
  auto* cmd = app.add_subcommand("ilp", "Write (and solve) the MILP of a mapping, partition or repair problem");
  cmd->add_option("--problem", a->problem, "mapping: the plan's stages on the devices; partition: S stages; "
                                           "repair: the valid partition closest to the plan's stage_of")
      ->required()->check(CLI::IsMember({"mapping", "partition", "repair"}));
  cmd->add_option("--graph", a->graph, "Graph file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", a->format, "Graph format")
      ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))->capture_default_str();
  cmd->add_option("--topology", a->topology, "Topology file (mapping; partition: device memory)")->check(CLI::ExistingFile);
  cmd->add_option("--plan", a->plan_file, "Plan file with stage_of (mapping, repair)")->check(CLI::ExistingFile);
  cmd->add_option("--cost", a->cost, "mapping: stage-time model p2p (eq. 6), allreduce (eq. 7) or auto")
      ->check(CLI::IsMember({"auto", "p2p", "allreduce"}))->capture_default_str();
  cmd->add_option("--stages,-S", a->stages, "partition: pipeline stages S")->check(CLI::PositiveNumber);
  cmd->add_option("--replicas,-R", a->replicas, "partition: replicas R of every stage [1]")->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batches", a->micro_batches, "partition: micro-batches MB (memory, eq. 14)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--device-memory", a->device_memory, "partition: memory of one device in bytes [topology's, else none]")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--bandwidth", a->bandwidth, "partition: constant bandwidth of the cost model, GB/s")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--write", a->write, "Write the model here: FILE.lp (CPLEX LP) or FILE.mps (free MPS)");
  cmd->add_option("--solve", a->solve, "Solve with this backend (built with: " + ilp_backends_built() + ")")
      ->check(CLI::IsMember({"cbc", "glpk"}));
  cmd->add_option("--time-limit", a->time_limit, "Solver time limit in seconds [none]")->check(seconds_validator());
  cmd->add_option("--threads", a->threads, "Solver threads (CBC)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_flag("--warm-start", a->warm_start, "mapping: start the solver from the plan's device_of (MIP start)");
  cmd->add_option("--out", a->out, "Write the solved plan (devplace.plan/1) here");
  cmd->callback([a] { run_ilp(*a, std::cout); });
}

}  // namespace devplace::cli
