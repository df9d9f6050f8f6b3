// MCM partitioning (Xie et al. 2022): operators onto the chips of a one-way ring, valid when data
// flows up the ring (eq. 2), the used chips are a prefix (eq. 3) and every chip-graph edge is
// the only path between its chips (eq. 4); then a search for the fastest valid partition
// (docs/mcm.md).
//
//   ./build/examples/example_mcm_partition
#include <devplace/mcm/search.hpp>
#include <devplace/views/with_costs.hpp>

#include <algorithm>
#include <iostream>
#include <vector>

namespace mcm = devplace::mcm;

int main() {
  // Counting: a chain 0 -> 1 -> 2 on 3 chips has 4 valid partitions: 000, 001, 011, 012
  // (002 skips chip 1, 010 flows backwards).
  const std::vector<std::vector<int>> chain{{1}, {2}, {}};
  std::cout << "valid partitions of a 3-chain on 3 chips: " << mcm::count_valid(chain, 3).valid << '\n';
  // prints: valid partitions of a 3-chain on 3 chips: 4

  // A diamond 0 -> {1, 2} -> 3 with 2, 3, 3, 2 ms of compute.
  const std::vector<std::vector<int>> diamond{{1, 2}, {3}, {3}, {}};
  const std::vector<double> ms{2, 3, 3, 2};
  const auto g = devplace::views::with_costs(diamond, devplace::costs{.forward_ms = [&](const auto&, std::size_t v) { return ms[v]; }});

  // Splitting the branches, 0 | 1 | 2 3, would give 4 ms per chip, but its chip graph has 0->1,
  // 0->2 and 1->2: 0->2 is not the only path from chip 0 to chip 2, so eq. 4 rejects it.
  const std::vector<int> split{0, 1, 2, 2};
  std::cout << "0|1|2,3: " << mcm::validate(g, split, 3).message << '\n';
  // prints: 0\|1\|2,3: .*eq4

  // The best valid partition by brute force over all 3^4 assignments: the slowest chip's time.
  double best = 1e9;
  for (int code = 0; code < 81; ++code) {
    std::vector<int> f{code % 3, code / 3 % 3, code / 9 % 3, code / 27};
    if (!mcm::validate(g, f, 3)) continue;
    double load[3] = {0, 0, 0};
    for (std::size_t v = 0; v < 4; ++v) load[f[v]] += ms[v];
    best = std::min(best, *std::max_element(load, load + 3));
  }
  // By hand: 1 and 2 on one chip cost 6 ms. Apart, on chips a < b, 3 must go on chip b (eq. 2
  // and 4: a chip above b would be reached from a both directly and through b), and 0 on chip a
  // or below: below, a chip graph 0->a, 0->b, a->b breaks eq. 4 again, so 0 shares chip a:
  // loads 2 + 3 and 3 + 2, 5 ms.
  std::cout << "brute force: " << best << " ms\n";
  // prints: brute force: 5 ms

  // The search: random valid partitions (each sample repaired into validity by the constraint
  // engine), evaluated as 1 / (slowest chip), against the chain-DP baseline.
  const auto ring = mcm::one_way_ring(3);
  const mcm::compute_evaluator eval(g, ring);
  mcm::uniform_policy random;  // Random search; annealing_policy, softmax_policy (RL) and
                               // cross_entropy_policy learn from the samples
  const auto r = mcm::search(g, ring, random, eval, {.samples = 200, .seed = 1});
  std::cout << "search: " << r.best.bottleneck_ms << " ms, valid: " << bool(mcm::validate(g, r.chip_of, 3)) << '\n';
  // prints: search: 5 ms, valid: 1
  return 0;
}
