// detail::dary_heap against std::priority_queue: the same elements come out in the same order
// (a strict total order on the pairs, so ties in the first key are decided by the second).
#include "devplace/detail/dary_heap.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

TEST_CASE("dary_heap pops what std::priority_queue pops, for 2, 3, 4 and 8 children") {
  using item = std::pair<int, int>;  // (key with many ties, unique id)
  auto run = [](auto heap) {
    std::mt19937_64 gen(7);
    std::priority_queue<item, std::vector<item>, std::greater<>> ref;
    int id = 0, popped = 0;
    for (int step = 0; step < 20000; ++step) {
      if (ref.empty() || gen() % 3 != 0) {
        const item x{static_cast<int>(gen() % 50), id++};
        heap.push(x);
        ref.push(x);
      } else {
        REQUIRE(heap.top() == ref.top());
        heap.pop();
        ref.pop();
        ++popped;
      }
      REQUIRE(heap.size() == ref.size());
    }
    while (!ref.empty()) {
      REQUIRE(heap.top() == ref.top());
      heap.pop();
      ref.pop();
    }
    CHECK(heap.empty());
    CHECK(popped > 5000);
  };
  run(devplace::detail::dary_heap<item, std::less<>, 2>{});
  run(devplace::detail::dary_heap<item, std::less<>, 3>{});
  run(devplace::detail::dary_heap<item, std::less<>, 4>{});
  run(devplace::detail::dary_heap<item, std::less<>, 8>{});
}
