// detail::indexed_dary_heap against a std::set of (key, id).
#include "devplace/detail/dary_heap.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <set>
#include <utility>
#include <vector>

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
