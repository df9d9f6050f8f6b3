// MCM partitioning on the graphs of Tarnawski et al. 2020 (../shared/data/peers/dnn-partitioning).
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include "devplace/io/tarnawski.hpp"
#include "devplace/mcm/repair.hpp"
#include "devplace/mcm/validate.hpp"
#include "support/skip.hpp"

namespace mcm = devplace::mcm;

namespace {
std::filesystem::path operator_graph(const char* name) {
  return std::filesystem::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "dnn-partitioning" / "throughput-inputs" /
         "OperatorGraphs" / name;
}
}  // namespace

TEST_CASE("mcm B3: no iid uniform draw is valid on bert_l-3_inference (C = 4, 36)") {
  const auto p = operator_graph("bert_l-3_inference.json");
  if (!devplace::test::require_path(p)) return;
  const auto g = devplace::io::read_tarnawski(p);
  CHECK(g.num_vertices() == 235);
  for (std::size_t C : {4u, 36u}) {
    mcm::random_engine rng(2022 + C);
    std::size_t valid = 0, eq2 = 0;
    std::vector<int> f(g.num_vertices());
    for (int k = 0; k < 2000; ++k) {
      for (auto& x : f) x = static_cast<int>(mcm::uniform_below(rng, C));
      const auto v = mcm::validate(g, std::span<const int>(f), C);
      valid += v.valid();
      eq2 += v.rule == mcm::rule::eq2;
    }
    CHECK(valid == 0);
    CHECK(eq2 == 2000);  // every draw already fails eq. 2
  }
}

TEST_CASE("mcm: SAMPLE and FIX repair bert_l-3_inference at C = 4, 8, 36 without the fallback") {
  const auto p = operator_graph("bert_l-3_inference.json");
  if (!devplace::test::require_path(p)) return;
  const auto g = devplace::io::read_tarnawski(p);
  for (std::size_t C : {4u, 8u, 36u}) {
    mcm::constraint_engine e(g, C);
    mcm::random_engine rng(C);
    for (int k = 0; k < 10; ++k) {
      const auto r = mcm::repair_sample(e, Eigen::MatrixXd(), rng);
      CHECK(!r.fallback);
      CHECK(mcm::validate(g, std::span<const int>(r.chip_of), C).valid());
      std::vector<int> y(g.num_vertices());
      for (auto& x : y) x = static_cast<int>(mcm::uniform_below(rng, C));
      const auto rf = mcm::repair_fix(e, y, rng);
      CHECK(!rf.fallback);
      CHECK(mcm::validate(g, std::span<const int>(rf.chip_of), C).valid());
    }
  }
}
