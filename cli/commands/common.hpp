#pragma once
// Shared plumbing of the CLI commands.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstddef>
#include <stdexcept>
#include <initializer_list>
#include <string>
#include <vector>

#include "commands/commands.hpp"
#include "devplace/io/atomic_write.hpp"
#include "devplace/map/cost_models.hpp"
#include "devplace/plan.hpp"
#include "devplace/sim/from_plan.hpp"

namespace devplace::cli {

/// The mapping cost model a `--cost auto|p2p|allreduce|combined` value names.
inline cost_choice parse_cost(const std::string& s) {
  return s == "p2p"         ? cost_choice::p2p
         : s == "allreduce" ? cost_choice::allreduce
         : s == "combined"  ? cost_choice::combined
                            : cost_choice::automatic;
}

/// Throws `failure` when S stages x R replicas need more devices than the topology's D.
inline void require_devices(std::size_t S, std::size_t R, std::size_t D) {
  if (S * R > D)
    throw failure("the plan needs " + std::to_string(S) + " stages x " + std::to_string(R) + " replicas = " +
                  std::to_string(S * R) + " devices, the topology has " + std::to_string(D));
}

/// The same for a plan with per-stage replica counts (`stage_replicas`): Σ_s R_s devices.
inline void require_devices(const std::vector<std::size_t>& stage_replicas, std::size_t D) {
  std::size_t used = 0;
  for (auto r : stage_replicas) used += r;
  if (used > D)
    throw failure("the plan needs " + std::to_string(used) + " devices (stage_replicas), the topology has " +
                  std::to_string(D));
}

/// "R = 4", or with per-stage counts "R_s = 3 1 2".
inline std::string replicas_text(const plan& p) {
  const std::string v = p.virtual_stages > 1 ? ", v = " + std::to_string(p.virtual_stages) : std::string();
  if (p.stage_replicas.empty()) return "R = " + std::to_string(p.replicas) + v;
  std::string s = "R_s =";
  for (auto r : p.stage_replicas) s.append(" ").append(std::to_string(r));
  return s + v;
}

/// Throws `io::output_error` (exit status 1, one line) unless every non-empty path can be
/// written; commands call it first, so that an unwritable output is found before the work.
inline void require_writable(std::initializer_list<std::string> paths) {
  for (const auto& p : paths)
    if (!p.empty()) io::check_writable(p);
}

/// Checks a time limit: a number of seconds >= 0 (CLI::NonNegativeNumber would print DBL_MAX).
inline CLI::Validator seconds_validator() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          std::size_t used = 0;
          const double x = std::stod(v, &used);
          if (used == v.size() && x >= 0 && !std::isnan(x)) return {};
        } catch (const std::exception&) {
        }
        return "expected a number of seconds >= 0, got " + v;
      },
      "SECONDS");
}

/// "iteration X ms, Y samples/s, bubble Z" of a simulated plan, the same digits in every command
/// (`plan` and `simulate` print the same line for the same plan).
inline std::string simulation_line(const plan& p) {
  if (!p.simulation) return "not simulated";
  char buf[160];
  std::snprintf(buf, sizeof buf, "iteration %.6f ms, %.6f samples/s, bubble %.4f", p.simulation->iteration_ms,
                p.simulation->samples_per_s, p.simulation->bubble_fraction);
  return buf;
}

}  // namespace devplace::cli
