// devplace sweep --space S.json --out R.jsonl [--threads N] [--stop-after N]
// Evaluates every point of a design space (docs/sweep.md) into one JSON line per point, in point
// order; resumes from the lines already written. Under an MPI launcher (mpirun, srun --mpi=pmix)
// in a build with MPI, the ranks share the points: rank 0 hands them out and merges.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>

#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "devplace/sweep/driver.hpp"
#include "devplace/sweep/registry.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/sweep/registry.ipp"  // every generator's definition (compiled mode: devplace::core)
#endif
#ifdef DEVPLACE_HAS_MPI
#include "devplace/sweep/mpi.hpp"
#endif
#ifdef DEVPLACE_HAS_GLPK
#include "devplace/ilp/backends/glpk.hpp"
#endif

namespace devplace::cli {

namespace sweep_cmd {

inline std::size_t env_count(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : 0;
}

/// True when an MPI launcher started this process (OpenMPI's mpirun, a PMI / PMIx launcher).
inline bool launched_by_mpi() {
  for (const char* n : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(n)) return true;
  return false;
}

/// The number of tasks the launcher says it started (1 when none says).
inline std::size_t launched_tasks() {
  std::size_t n = 1;
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) n = std::max(n, env_count(v));
  return n;
}

inline std::string duration_text(double s) {
  char buf[64];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%dh %02dm", int(s / 3600), int(s / 60) % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%dm %02ds", int(s / 60), int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}

inline void print_progress(const sweep::progress& p) {
  std::fprintf(stderr, "\rsweep: %zu of %zu points, %.2f points/s, %s left   ", p.done, p.total, p.rate(),
               p.rate() > 0 ? duration_text(p.eta_s()).c_str() : "?");
  std::fflush(stderr);
}

/// Counts of the status words of a result file.
inline std::map<std::string, std::size_t> status_counts(const std::string& out) {
  std::map<std::string, std::size_t> n;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) ++n[nlohmann::json::parse(line).at("status").get<std::string>()];
  return n;
}

struct args_t {
  std::string space, out;
  unsigned threads = 1;
  std::size_t stop_after = 0;
};

/// Runs the sweep on `ch`; rank 0 prints the summary.
inline void run(const args_t& a, const sweep::space_file& f, const sweep::point_space& s, sweep::channel& ch, unsigned threads) {
  sweep::run_options o{.out = a.out, .threads = threads};
  if (a.stop_after > 0) o.stop_after = a.stop_after;
  const bool tty = ch.rank() == 0 && isatty(fileno(stderr));
  if (tty) o.on_progress = print_progress;
  const auto r = sweep::run(s, o, ch);
  if (ch.rank() != 0) return;
  if (tty) std::fprintf(stderr, "\n");
  std::printf("space            %s (%s, %zu points)\n", f.name.empty() ? f.file.c_str() : f.name.c_str(), f.generator.c_str(), r.total);
  std::printf("points           %zu done before, %zu evaluated now by %d process%s, %zu of %zu done\n", r.done_before,
              r.done - r.done_before, ch.size(), ch.size() == 1 ? "" : "es", r.done, r.total);
  if (!r.complete) {
    std::printf("stopped          before the end (--stop-after %zu); run the same command again to continue\n", a.stop_after);
    return;
  }
  std::string counts;
  for (const auto& [k, n] : status_counts(a.out)) counts += (counts.empty() ? "" : ", ") + k + " " + std::to_string(n);
  std::printf("statuses         %s\n", counts.c_str());
  std::printf("wrote            %s\n", a.out.c_str());
}

}  // namespace sweep_cmd

void register_sweep(CLI::App& app) {
  auto a = std::make_shared<sweep_cmd::args_t>();
  auto* cmd = app.add_subcommand("sweep", "Evaluate every point of a design space into JSON lines (resumable; MPI ranks under mpirun)");
  cmd->add_option("--space", a->space, "Space file (devplace.sweep.space/1 JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", a->out, "Result file: one JSON line per point, in point order")->required();
  cmd->add_option("--threads", a->threads, "Evaluation threads per process (0: one per hardware thread)");
  cmd->add_option("--stop-after", a->stop_after, "Evaluate at most N points in this run, then stop (resume later)")
      ->check(CLI::PositiveNumber);
  cmd->callback([a] {
    require_writable({a->out});
    const auto f = sweep::read_space_file(a->space);
    sweep::prepare_context ctx;
#ifdef DEVPLACE_HAS_GLPK
    ctx.ilp = [](const ilp::model& m, const ilp::solve_options& o) { return ilp::glpk_solver{}.solve(m, o); };
#endif
    const auto s = sweep::prepare(f, ctx);
    const std::size_t tasks = sweep_cmd::launched_tasks();
#ifdef DEVPLACE_HAS_MPI
    if (sweep_cmd::launched_by_mpi()) {
      sweep::mpi_environment mpi;
      sweep::mpi_channel ch;
      if (static_cast<std::size_t>(ch.size()) != tasks && tasks > 1)
        throw failure("started as one of " + std::to_string(tasks) + " tasks, but MPI sees " + std::to_string(ch.size()) +
                      " rank(s): under srun, pass --mpi=pmix (or the site's MPI plugin)");
      const unsigned threads = ch.rank() != 0 && !mpi.serialized() ? 1 : a->threads;
      try {
        sweep_cmd::run(*a, f, s, ch, threads);
      } catch (const std::exception& e) {
        if (ch.size() == 1) throw;
        std::cerr << "devplace: rank " << ch.rank() << ": " << e.what() << '\n';
        sweep::mpi_environment::abort(1);
      }
      return;
    }
#endif
    if (tasks > 1)
      throw failure("started as one of " + std::to_string(tasks) + " tasks, but " +
#ifdef DEVPLACE_HAS_MPI
                    std::string("no MPI launcher set up this process (under srun, pass --mpi=pmix)")
#else
                    std::string("this devplace was built without MPI: every task would run the whole sweep")
#endif
      );
    sweep::solo_channel ch;
    sweep_cmd::run(*a, f, s, ch, a->threads);
  });
}

}  // namespace devplace::cli
