// detail::dary_heap against std::priority_queue: the same elements come out in the same order
// (a strict total order on the pairs, so ties in the first key are decided by the second).
#include "devplace/detail/dary_heap.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <queue>
#include <random>
#include <set>
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

TEST_CASE("indexed_dary_heap: set, re-key and erase by id, checked against a std::set of (key, id)") {
  std::mt19937_64 gen(11);
  constexpr std::size_t ids = 300;
  devplace::detail::indexed_dary_heap<int, std::less<>> heap(ids);
  std::set<std::pair<int, std::size_t>> ref;
  std::vector<int> key_of(ids, -1);  // -1: not in
  int pops = 0, rekeys = 0;
  for (int step = 0; step < 30000; ++step) {
    const std::size_t id = gen() % ids;
    const auto op = gen() % 4;
    if (op <= 1) {  // insert or change the key (up or down)
      const int k = static_cast<int>(gen() % 1000);
      if (key_of[id] >= 0) {
        ref.erase({key_of[id], id});
        ++rekeys;
      }
      ref.insert({k, id});
      key_of[id] = k;
      heap.set(id, k);
    } else if (op == 2) {
      if (key_of[id] >= 0) ref.erase({key_of[id], id});
      key_of[id] = -1;
      heap.erase(id);
    } else if (!ref.empty()) {
      // Equal keys may come out in any order: compare the key, then remove that id from both.
      REQUIRE(heap.top_key() == ref.begin()->first);
      const std::size_t top = heap.top_id();
      REQUIRE(key_of[top] == ref.begin()->first);
      heap.pop();
      ref.erase({key_of[top], top});
      key_of[top] = -1;
      ++pops;
    }
    REQUIRE(heap.size() == ref.size());
    REQUIRE(heap.contains(id) == (key_of[id] >= 0));
  }
  CHECK(pops > 3000);
  CHECK(rekeys > 3000);
}
