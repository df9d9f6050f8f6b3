// Down-sets (fronted subgraphs): the vertex sets closed under predecessors. A pipeline's stages
// are the differences of a chain of down-sets, so their number is the size of the exact DP's
// search space (docs/downsets.md).
//
//   ./build/examples/example_count_downsets
#include <devplace/algorithm/downsets.hpp>

#include <iostream>
#include <vector>

int main() {
  // A chain of 4 operators: the prefixes, 4 + 1 = 5 down-sets (the empty set included).
  const std::vector<std::vector<int>> chain{{1}, {2}, {3}, {}};
  // Four independent operators: every subset, 2^4 = 16.
  const std::vector<std::vector<int>> antichain(4);
  // A diamond 0 -> {1, 2} -> 3: {}, {0}, {0,1}, {0,2}, {0,1,2}, {0,1,2,3} = 6.
  const std::vector<std::vector<int>> diamond{{1, 2}, {3}, {3}, {}};

  std::cout << "chain " << devplace::count_downsets(chain).count << ", antichain "
            << devplace::count_downsets(antichain).count << ", diamond " << devplace::count_downsets(diamond).count
            << '\n';
  // prints: chain 5, antichain 16, diamond 6

  // List them: each is given as its vertices in ascending order, the empty set first.
  std::cout << "diamond's down-sets:";
  devplace::for_each_downset(diamond, [](const std::vector<std::size_t>& f) {
    std::cout << " {";
    for (std::size_t i = 0; i < f.size(); ++i) std::cout << (i ? "," : "") << f[i];
    std::cout << '}';
  });
  std::cout << '\n';
  // (the six sets above, in the order the enumeration reaches them)
  // prints: diamond's down-sets: {} {0} {0,1} {0,1,2} {0,2} {0,1,2,3}

  // Two diamonds side by side multiply: 6 * 6 = 36. A cap turns a huge count into a status.
  const std::vector<std::vector<int>> two{{1, 2}, {3}, {3}, {}, {5, 6}, {7}, {7}, {}};
  const auto capped = devplace::count_downsets(two, {.max_downsets = 10});
  std::cout << "two diamonds " << devplace::count_downsets(two).count << "; capped at 10: "
            << devplace::to_string(capped.status) << '\n';
  // prints: two diamonds 36; capped at 10: work_limit
  return 0;
}
