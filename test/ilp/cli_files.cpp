// End to end through the devplace program: `devplace ilp` writes the mapping and partition MILPs
// of real inputs, solves them with both backends, and the cbc and glpsol programs read the written
// LP and MPS files; every optimum must equal what `devplace map` (the backtracking mapper) and
// `devplace partition --method dp` (the exact DP) prove for the same input.
#include <doctest/doctest.h>

#include "support/skip.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "devplace/io/graph_json.hpp"
#include "ilp/external.hpp"
#include "support/random_dag.hpp"

#ifdef DEVPLACE_CLI
namespace {

namespace fs = std::filesystem;
using devplace::test::external_result;

/// Runs the devplace program with `args`; its output goes to `log`. Returns the exit status.
int devplace_run(const std::string& args, const fs::path& log) {
  const std::string cmd = std::string("'") + DEVPLACE_CLI + "' " + args + " > '" + log.string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

/// The objective of a plan section ("mapping" or "partition") and whether it was proved optimal.
std::pair<double, bool> plan_objective(const fs::path& plan, const char* section) {
  const auto j = read_json(plan);
  REQUIRE(j.contains(section));
  return {j[section]["objective_ms"].get<double>(), j[section]["optimal"].get<bool>()};
}

bool same(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

/// Checks the installed cbc and glpsol programs on the written model files against `expected`.
void check_programs(const fs::path& lp, const fs::path& mps, double expected) {
  using namespace devplace::test;
  if (!have_program(cbc_program)) skip("cbc program not installed: its reading of the files is not tested");
  if (!have_program(glpsol_program)) skip("glpsol program not installed: its reading of the files is not tested");
  for (const auto& r : run_programs(lp, mps)) {
    CAPTURE(r.status_line);
    REQUIRE(r.ran);
    CHECK(r.optimal);
    CHECK(same(r.objective, expected));
  }
}

}  // namespace

TEST_CASE("devplace ilp: mapping models of ResNet-152 on DGX-1 agree with devplace map, both backends, cbc and glpsol") {
  const fs::path dir = devplace::test::scratch_dir("cli_map");
  const std::string data = std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/resnet152_mbs64.json";
  const fs::path topo = dir / "dgx1.json", plan = dir / "plan.json";
  REQUIRE(devplace_run("topology --generator dgx1 --out '" + topo.string() + "'", dir / "topo.log") == 0);
  // S = 4, R = 2 on the 8 GPUs of a DGX-1: the ILP has 64 binaries and every pair's 56 link columns.
  REQUIRE(devplace_run("partition --graph '" + data + "' -S 4 -R 2 --method topo-dp --out '" + plan.string() + "'",
                       dir / "partition.log") == 0);
  for (const std::string cost : {"p2p", "allreduce"}) {
    CAPTURE(cost);
    const fs::path ref = dir / ("map_" + cost + ".json");
    const std::string common = "--graph '" + data + "' --topology '" + topo.string() + "' --plan '" + plan.string() +
                               "' --cost " + cost;
    REQUIRE(devplace_run("map " + common + " --threads 2 --timeout 120 --out '" + ref.string() + "'", dir / "map.log") == 0);
    const auto [expected, proved] = plan_objective(ref, "mapping");
    REQUIRE_MESSAGE(proved, "the backtracking mapper did not prove its mapping optimal: " << slurp(dir / "map.log"));
    const fs::path lp = dir / ("map_" + cost + ".lp"), mps = dir / ("map_" + cost + ".mps");
    for (const auto& [backend, file] : {std::pair{std::string("cbc"), lp}, std::pair{std::string("glpk"), mps}}) {
      CAPTURE(backend);
#if !defined(DEVPLACE_HAS_CBC) || !defined(DEVPLACE_HAS_GLPK)
      // Without both backends the program cannot solve; write only.
      REQUIRE(devplace_run("ilp --problem mapping " + common + " --write '" + file.string() + "'", dir / "ilp.log") == 0);
      continue;
#endif
      const fs::path out = dir / ("ilp_" + cost + "_" + backend + ".json");
      REQUIRE_MESSAGE(devplace_run("ilp --problem mapping " + common + " --write '" + file.string() + "' --solve " +
                                       backend + " --time-limit 300 --out '" + out.string() + "'",
                                   dir / "ilp.log") == 0,
                      slurp(dir / "ilp.log"));
      const auto [objective, optimal] = plan_objective(out, "mapping");
      CHECK(optimal);
      CHECK(same(objective, expected));
      CHECK(read_json(out)["mapping"]["method"] == "ilp-" + backend);
      CHECK(read_json(out)["device_of"].size() == 4);
    }
    check_programs(lp, mps, expected);
#if defined(DEVPLACE_HAS_GLPK)
    // Started from the mapper's device_of (the plan `devplace map` wrote): the same proved optimum.
    const fs::path warm = dir / ("warm_" + cost + ".json");
    const std::string mapped = "--graph '" + data + "' --topology '" + topo.string() + "' --plan '" + ref.string() +
                               "' --cost " + cost;
    REQUIRE_MESSAGE(devplace_run("ilp --problem mapping " + mapped + " --solve glpk --warm-start --out '" + warm.string() + "'",
                                 dir / "warm.log") == 0,
                    slurp(dir / "warm.log"));
    CHECK(slurp(dir / "warm.log").find("warm start") != std::string::npos);
    const auto [warm_objective, warm_optimal] = plan_objective(warm, "mapping");
    CHECK(warm_optimal);
    CHECK(same(warm_objective, expected));
#endif
  }
  fs::remove_all(dir);
}

TEST_CASE("devplace ilp: partition models agree with the exact DP, both backends, cbc and glpsol") {
  const fs::path dir = devplace::test::scratch_dir("cli_part");
  std::mt19937_64 rng(606);
  for (int trial = 0; trial < 3; ++trial) {
    CAPTURE(trial);
    const auto shape = devplace::test::all_shapes[static_cast<std::size_t>(trial) % 5];
    const auto g = devplace::test::random_op_graph(rng, devplace::test::random_adjacency(rng, 10, shape));
    const fs::path graph = dir / "g.json";
    devplace::io::write_graph_json(g, graph);
    const std::string common = "--graph '" + graph.string() + "' -S 3 -R 2 --micro-batches 2";
    const fs::path ref = dir / "dp.json";
    REQUIRE(devplace_run("partition " + common + " --method dp --out '" + ref.string() + "'", dir / "dp.log") == 0);
    const auto [expected, proved] = plan_objective(ref, "partition");
    REQUIRE(proved);
    const fs::path lp = dir / "p.lp", mps = dir / "p.mps";
#if defined(DEVPLACE_HAS_CBC) && defined(DEVPLACE_HAS_GLPK)
    for (const auto& [backend, file] : {std::pair{std::string("cbc"), lp}, std::pair{std::string("glpk"), mps}}) {
      CAPTURE(backend);
      const fs::path out = dir / ("ilp_" + backend + ".json");
      REQUIRE_MESSAGE(devplace_run("ilp --problem partition " + common + " --write '" + file.string() + "' --solve " +
                                       backend + " --out '" + out.string() + "'",
                                   dir / "ilp.log") == 0,
                      slurp(dir / "ilp.log"));
      const auto [objective, optimal] = plan_objective(out, "partition");
      CHECK(optimal);
      CHECK(same(objective, expected));
    }
#else
    REQUIRE(devplace_run("ilp --problem partition " + common + " --write '" + lp.string() + "'", dir / "ilp.log") == 0);
    REQUIRE(devplace_run("ilp --problem partition " + common + " --write '" + mps.string() + "'", dir / "ilp.log") == 0);
#endif
    check_programs(lp, mps, expected);
  }
  fs::remove_all(dir);
}

TEST_CASE("devplace ilp: bad requests are clear messages and write nothing") {
  const fs::path dir = devplace::test::scratch_dir("cli_bad");
  const std::string data = std::string(DEVPLACE_SOURCE_DIR) + "/examples/data/resnet152_mbs64.json";
  const fs::path log = dir / "log";
  // Usage errors exit 2, failures while running exit 1 (docs/cli.md).
  CHECK(devplace_run("ilp --problem partition --graph '" + data + "' -S 2 --write '" + (dir / "m.txt").string() + "'", log) == 2);
  CHECK(slurp(log).find("must end in .lp or .mps") != std::string::npos);
  CHECK(devplace_run("ilp --problem partition --graph '" + data + "' -S 2", log) == 2);
  CHECK(slurp(log).find("nothing to do") != std::string::npos);
  CHECK(devplace_run("ilp --problem mapping --graph '" + data + "' --write '" + (dir / "m.lp").string() + "'", log) == 2);
  CHECK(slurp(log).find("needs --topology") != std::string::npos);
  CHECK(devplace_run("ilp --problem partition --graph '" + data + "' --write '" + (dir / "m.lp").string() + "'", log) == 2);
  CHECK(slurp(log).find("needs --stages") != std::string::npos);
  const fs::path plan = dir / "plan.json", topo = dir / "dgx1.json";
  REQUIRE(devplace_run("topology --generator dgx1 --out '" + topo.string() + "'", log) == 0);
  REQUIRE(devplace_run("partition --graph '" + data + "' -S 2 --method topo-dp --out '" + plan.string() + "'", log) == 0);
  CHECK(devplace_run("ilp --problem mapping --graph '" + data + "' --topology '" + topo.string() + "' --plan '" +
                         plan.string() + "' --write '" + (dir / "m.lp").string() + "' --warm-start",
                     log) == 2);
  CHECK(slurp(log).find("--warm-start needs --solve") != std::string::npos);
  CHECK(devplace_run("ilp --problem mapping --graph '" + data + "' --topology '" + topo.string() + "' --plan '" +
                         plan.string() + "' --solve glpk --warm-start",
                     log) == 2);
  CHECK(slurp(log).find("needs a plan with device_of") != std::string::npos);
  CHECK(devplace_run("ilp --problem partition --graph '" + data + "' -S 2 --solve glpk --time-limit -1", log) == 2);
  CHECK(slurp(log).find("--time-limit: expected a number of seconds >= 0, got -1") != std::string::npos);
  CHECK(devplace_run("ilp --problem partition --graph '" + data + "' -S 2 --write /nonexistent-dir/m.lp", log) == 1);
  CHECK(slurp(log).find("/nonexistent-dir/m.lp") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "m.txt"));
  CHECK_FALSE(fs::exists(dir / "m.lp"));
  fs::remove_all(dir);
}
#endif
