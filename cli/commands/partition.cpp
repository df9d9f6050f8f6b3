// devplace partition --graph FILE --stages S [--replicas R] [--micro-batches MB]
//                    [--device-memory BYTES] [--bandwidth GBPS]
//                    [--method parmesan|dp|topo-dp|even] [--clusters K] [--alpha A ...]
//                    [--refine paper|objective|none] [--max-downsets N]
//                    [--contract-classes | --no-contract-classes] [--out plan.json]
#include <CLI/CLI.hpp>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/io/plan_json.hpp"
#include "devplace/io/read_graph.hpp"
#include "devplace/partition/even_split.hpp"
#include "devplace/partition/parmesan.hpp"
#include "devplace/partition/pipeline_dp.hpp"
#include "devplace/partition/topo_dp.hpp"
#include "devplace/transform/class_quotient.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif

namespace devplace::cli {

struct partition_args {
  std::string graph, format = "auto", method = "parmesan", refine = "paper", out;
  std::size_t stages = 0, replicas = 1, micro_batches = 1, clusters = 32;
  double device_memory = std::numeric_limits<double>::infinity(), bandwidth = 10.0;
  std::vector<double> alphas{0.01, 1.0, 100.0};
  std::uint64_t max_downsets = 2'000'000;
  unsigned threads = 0;
};

/// Adds the options shared by every command that partitions.
inline void add_partition_options(CLI::App* cmd, partition_args& a) {
  cmd->add_option("--stages,-S", a.stages, "Pipeline stages S")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--replicas,-R", a.replicas, "Data-parallel replicas R of every stage")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--micro-batches", a.micro_batches, "Micro-batches MB per iteration (memory model, eq. 14)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--device-memory", a.device_memory, "Memory of one device in bytes [no limit]")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--bandwidth", a.bandwidth, "Constant bandwidth of the partitioning cost model, GB/s")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--method", a.method,
                  "parmesan: cluster + DP + refine; dp: exact DP over all down-sets; topo-dp: split one "
                  "topological order; even: even compute split")
      ->check(CLI::IsMember({"parmesan", "dp", "topo-dp", "even"}))->capture_default_str();
  cmd->add_option("--clusters,-K", a.clusters, "parmesan: hyper-operators after clustering")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--alpha", a.alphas, "parmesan: alpha values of the clustering cost (eq. 4), best kept")
      ->capture_default_str();
  cmd->add_option("--refine", a.refine, "parmesan: refinement gains (paper: lexicographic, objective: stage time)")
      ->check(CLI::IsMember({"paper", "objective", "none"}))->capture_default_str();
  cmd->add_option("--max-downsets", a.max_downsets, "dp: stop after creating this many down-sets")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--threads", a.threads, "parmesan: alpha values run at once [hardware concurrency]");
}

/// Runs the chosen partitioner; throws `failure` when it finds no partition.
inline plan run_partition(const op_graph& g, const partition_args& a, std::ostream& log) {
  const partition_options po{.stages = a.stages,
                             .cost = {.replicas = a.replicas, .micro_batches = a.micro_batches,
                                      .device_memory_bytes = a.device_memory, .bandwidth_gbps = a.bandwidth},
                             .max_downsets = a.max_downsets};
  if (a.stages > g.num_vertices())
    throw failure("--stages " + std::to_string(a.stages) + " exceeds the " + std::to_string(g.num_vertices()) +
                  " operators of the graph");
  partition_result r;
  std::vector<partition_step> steps;
  std::string method = a.method;
  if (a.method == "dp") {
    r = pipeline_dp(g, po);
    if (r.status == status::work_limit)
      throw failure("dp: the graph has more than " + std::to_string(a.max_downsets) +
                    " down-sets within reach (or more than " + std::to_string(po.max_visits) +
                    " to visit in a pass); use --method parmesan (clustering first) or raise --max-downsets");
  } else if (a.method == "topo-dp") {
    r = topo_dp(g, po);
  } else if (a.method == "even") {
    const auto e = even_split(g, {.stages = a.stages});
    r.status = e.status;
    r.stage_of = e.stage_of;
    if (r.has_solution()) finish_partition(g, po, r);
  } else {
    method = "cluster+dp+refine";
    parmesan_options opt{.partition = po, .clusters = a.clusters, .alphas = a.alphas, .refine = a.refine != "none",
                         .threads = a.threads};
    if (a.refine == "objective") opt.policy = refine_policy::objective;
    const auto pr = parmesan_partition(g, opt);
    for (const auto& st : pr.steps)
      log << "  alpha " << std::setw(6) << st.alpha << ": " << st.clusters << " clusters, "
          << (st.dp_status == status::optimal ? "cluster+dp " : "cluster+topo-dp (the DP cannot beat the reference) ")
          << st.dp_objective_ms << " ms in " << st.dp_time_s << " s, refined " << st.objective_ms << " ms ("
          << st.moves << " moves)\n";
    log << "  reference: fixed-order split of all operators, refined: " << pr.reference_objective_ms << " ms"
        << (pr.from_reference ? " (kept)" : "") << '\n';
    if (pr.from_reference) method = "topo-dp+refine";
    for (const auto& st : pr.steps) {
      steps.push_back({"cluster", st.alpha, st.clusters, 0.0, st.cluster_time_s, "feasible"});
      steps.push_back({st.dp_status == status::optimal ? "dp" : "topo-dp", st.alpha, st.clusters, st.dp_objective_ms,
                       st.dp_time_s, std::string(to_string(st.dp_status))});
      steps.push_back({"refine", st.alpha, st.clusters, st.objective_ms, st.refine_time_s,
                       std::to_string(st.moves) + " moves"});
    }
    steps.push_back({"reference", 0.0, 0, pr.reference_objective_ms, 0.0, pr.from_reference ? "kept" : "not kept"});
    r = pr;
  }
  if (!r.has_solution())
    throw failure(method + ": no partition into " + std::to_string(a.stages) + " stages fits (" +
                  std::string(to_string(r.status)) + "); check --device-memory, --replicas and --micro-batches");
  plan p;
  p.graph = g.name();
  p.stages = a.stages;
  p.replicas = a.replicas;
  p.micro_batches = a.micro_batches;
  p.stage_of = r.stage_of;
  p.partition = partition_summary{.objective_ms = r.objective_ms, .stage_time_ms = r.stage_time_ms,
                                  .stage_memory_bytes = r.stage_memory_bytes, .method = method,
                                  .optimal = r.status == status::optimal, .status = std::string(to_string(r.status)),
                                  .time_s = r.time_s, .steps = steps};
  return p;
}

inline void print_partition(const plan& p, std::ostream& os) {
  const auto& s = *p.partition;
  os << "partition       " << s.method << ", S = " << p.stages << ", R = " << p.replicas << ": objective "
     << s.objective_ms << " ms (" << s.status << (s.optimal ? ", proved optimal" : "") << ") in " << s.time_s << " s\n";
  std::vector<std::size_t> size(p.stages, 0);
  for (auto x : p.stage_of) ++size[x];
  os << "  stage  operators  time ms     memory bytes\n";
  for (std::size_t k = 0; k < p.stages; ++k)
    os << "  " << std::setw(5) << k << "  " << std::setw(9) << size[k] << "  " << std::setw(10) << std::setprecision(6)
       << s.stage_time_ms[k] << "  " << std::setw(14) << std::setprecision(6) << s.stage_memory_bytes[k] << '\n';
}

void register_partition(CLI::App& app) {
  auto a = std::make_shared<partition_args>();
  auto* cmd = app.add_subcommand("partition", "Cut an operator graph into S pipeline stages with R replicas each");
  cmd->add_option("--graph", a->graph, "Graph file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--format", a->format, "Graph format")
      ->check(CLI::IsMember({"auto", "devplace", "pipedream", "tarnawski"}))->capture_default_str();
  add_partition_options(cmd, *a);
  auto contract = std::make_shared<bool>(false), no_contract = std::make_shared<bool>(false);
  auto* on = cmd->add_flag("--contract-classes", *contract,
                           "Partition the graph of co-location classes (node groups, Tarnawski colorClass, backward "
                           "nodes) and expand the plan to every operator [default when the graph has groups or "
                           "backward nodes]");
  cmd->add_flag("--no-contract-classes", *no_contract, "Partition the operators as they are, ignoring groups")
      ->excludes(on);
  cmd->add_option("--out", a->out, "Write the plan (devplace.plan/1) here");
  cmd->callback([a, contract, no_contract] {
    require_writable({a->out});
    const op_graph g = io::read_graph(a->graph, a->format);
    plan p;
    if (*contract || (!*no_contract && transform::has_classes(g))) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto q = transform::contract_class_quotient(g);
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::cout << "contracted      " << g.num_vertices() << " operators (" << q.classes << " classes) into "
                << q.graph.num_vertices() << " supernodes, " << q.graph.num_edges() << " edges ("
                << q.contraction.orphans << " orphaned backward classes, " << q.contraction.fused_classes
                << " classes fused) in " << dt << " s\n";
      if (a->stages > q.graph.num_vertices())
        throw failure("--stages " + std::to_string(a->stages) + " exceeds the " + std::to_string(q.graph.num_vertices()) +
                      " supernodes of the contracted graph (" + std::to_string(g.num_vertices()) +
                      " operators; --no-contract-classes partitions the operators)");
      p = run_partition(q.graph, *a, std::cout);
      p.stage_of = transform::expand_stage_of(q, p.stage_of);
      p.partition->time_s += dt;
    } else {
      p = run_partition(g, *a, std::cout);
    }
    print_partition(p, std::cout);
    if (!a->out.empty()) {
      io::write_plan_json(p, a->out);
      std::cout << "written         " << a->out << '\n';
    }
  });
}

}  // namespace devplace::cli
