// LLM on a user topology: `llm::tiers_of` reads the tiers of any `device_topology` (the archetype,
// and a user cluster type with latencies); on random hierarchies with shuffled device ids it gives
// the tiers they were built from, it refuses what is not a hierarchy, and the execution search on
// a hardware whose tiers come from a user type = on the tiers written out by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "archetypes/minimal_topology.hpp"
#include "devplace/io/llm_json.hpp"
#include "devplace/llm/search.hpp"
#include "devplace/llm/tiers.hpp"

using namespace devplace;

namespace {

/// The user's cluster: `nodes` nodes of `per_node` GPUs, NVLink inside, a NIC per GPU between.
struct cluster {
  std::size_t nodes = 4, per_node = 4;
  double nvlink_gbps = 300, nic_gbps = 25, nvlink_us = 2, nic_us = 5;
  std::size_t num_devices() const { return nodes * per_node; }
  bool same_node(std::size_t a, std::size_t b) const { return a / per_node == b / per_node; }
  double bandwidth_gbps(std::size_t a, std::size_t b) const { return a == b ? 0 : same_node(a, b) ? nvlink_gbps : nic_gbps; }
  double latency_us(std::size_t a, std::size_t b) const { return a == b ? 0 : same_node(a, b) ? nvlink_us : nic_us; }
};
static_assert(device_topology<cluster> && device_topology<archetypes::minimal_topology>);

/// A hierarchy with groups of sizes[0] < sizes[1] < ... (each a multiple of the one before),
/// bandwidths bw[i] between devices first together at level i, device ids shuffled.
archetypes::minimal_topology hierarchy(const std::vector<std::size_t>& sizes, const std::vector<double>& bw, std::mt19937_64& rng) {
  const std::size_t D = sizes.back();
  std::vector<std::size_t> id(D);
  std::iota(id.begin(), id.end(), std::size_t{0});
  std::shuffle(id.begin(), id.end(), rng);
  archetypes::minimal_topology t{std::vector<std::vector<double>>(D, std::vector<double>(D, 0.0))};
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b) {
      if (a == b) continue;
      std::size_t level = 0;
      while (a / sizes[level] != b / sizes[level]) ++level;
      t.bw[id[a]][id[b]] = bw[level];
    }
  return t;
}

}  // namespace

TEST_CASE("llm: tiers_of a shuffled random hierarchy = the tiers it was built from") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    CAPTURE(trial);
    std::vector<std::size_t> sizes{2 + rng() % 3};
    const std::size_t levels = 1 + rng() % 3;
    while (sizes.size() < levels) sizes.push_back(sizes.back() * (2 + rng() % 2));
    std::vector<double> bw{400};
    while (bw.size() < levels) bw.push_back(bw.back() / (2 + static_cast<double>(rng() % 4)));
    const auto tiers = llm::tiers_of(hierarchy(sizes, bw, rng));
    REQUIRE(tiers.size() == levels);
    for (std::size_t i = 0; i < levels; ++i) {
      CHECK(tiers[i].size == sizes[i]);
      CHECK(tiers[i].bandwidth_gbps == bw[i]);
      CHECK(tiers[i].efficiency == 1);
      CHECK(tiers[i].latency_us == 0);  // the archetype has no latency: the CPO's default
    }
  }
}

TEST_CASE("llm: tiers_of refuses a ring, unequal groups and fewer than two devices") {
  archetypes::minimal_topology ring{{{0, 10, 0, 10}, {10, 0, 10, 0}, {0, 10, 0, 10}, {10, 0, 10, 0}}};
  CHECK_THROWS_AS((void)llm::tiers_of(ring), std::invalid_argument);
  archetypes::minimal_topology uneven{{{0, 50, 5}, {50, 0, 5}, {5, 5, 0}}};  // groups of 2 and 1
  CHECK_THROWS_AS((void)llm::tiers_of(uneven), std::invalid_argument);
  archetypes::minimal_topology chain{{{0, 50, 5}, {50, 0, 50}, {5, 50, 0}}};  // 0-1-2 linked at 50, 0-2 at 5
  CHECK_THROWS_AS((void)llm::tiers_of(chain), std::invalid_argument);
  CHECK_THROWS_AS((void)llm::tiers_of(archetypes::minimal_topology{{{0}}}), std::invalid_argument);
}

TEST_CASE("llm: the execution search on tiers of a user cluster type = on the tiers written by hand") {
  llm::model m;
  m.hidden = 256, m.ffn = 1024, m.layers = 8, m.heads = 8, m.kv_heads = 8, m.head_dim = 32, m.seq = 256, m.vocab = 1000;
  const auto base = io::read_llm_system(std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples" / "llm" / "dgx_a100_80g.json");
  llm::hardware mine = base, by_hand = base;
  mine.tiers = llm::tiers_of(cluster{});
  by_hand.tiers = {{.name = "tier0", .size = 4, .bandwidth_gbps = 300, .efficiency = 1, .latency_us = 2},
                   {.name = "tier1", .size = 16, .bandwidth_gbps = 25, .efficiency = 1, .latency_us = 5}};
  REQUIRE(mine.tiers.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(mine.tiers[i].size == by_hand.tiers[i].size);
    CHECK(mine.tiers[i].bandwidth_gbps == by_hand.tiers[i].bandwidth_gbps);
    CHECK(mine.tiers[i].latency_us == by_hand.tiers[i].latency_us);
  }
  llm::search_space sp;
  sp.gpus = 16;
  sp.global_batch = 16;
  const auto a = llm::search_executions(m, mine, sp, {.top_k = 3});
  const auto b = llm::search_executions(m, by_hand, sp, {.top_k = 3});
  REQUIRE(a.status == b.status);
  REQUIRE(a.top.size() == b.top.size());
  REQUIRE_FALSE(a.top.empty());
  for (std::size_t k = 0; k < a.top.size(); ++k) {
    CHECK(a.top[k].exec.tp == b.top[k].exec.tp);
    CHECK(a.top[k].exec.pp == b.top[k].exec.pp);
    CHECK(a.top[k].exec.dp == b.top[k].exec.dp);
    CHECK(a.top[k].exec.micro_batch == b.top[k].exec.micro_batch);
    CHECK(a.top[k].eval.iteration_s == b.top[k].eval.iteration_s);
  }
  CHECK(a.evaluated == b.evaluated);
}
