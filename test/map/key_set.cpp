// The key set of the cover searches' memos (map/detail/cover_common.hpp) against std::map: random
// keys of every length, inserted and looked up in random order, some with their own
// fingerprints and some all under one fingerprint (every lookup then collides, and only the
// comparison of whole keys keeps the answers right).
#include "devplace/map/detail/cover_common.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

using namespace devplace;

TEST_CASE("key set: finds and inserts exactly as std::map, with its own and with colliding fingerprints") {
  std::mt19937_64 rng(91);
  for (const bool collide : {false, true}) {
    detail::key_set s;
    s.clear();
    std::map<std::vector<std::uint32_t>, std::size_t> oracle;
    std::size_t hits = 0;
    for (int it = 0; it < 20'000; ++it) {
      std::vector<std::uint32_t> key(rng() % 5);  // short keys over a small alphabet: many repeats
      for (auto& w : key) w = static_cast<std::uint32_t>(rng() % 4);
      const auto expected = oracle.find(key);
      const std::size_t found = collide ? s.find(key, 7) : s.find(key);
      CAPTURE(it);
      REQUIRE((found != detail::key_set::npos) == (expected != oracle.end()));
      if (expected != oracle.end()) {
        CHECK(found == expected->second);
        ++hits;
      }
      if (rng() % 2) {
        const auto [index, inserted] = collide ? s.insert(key, 7) : s.insert(key);
        CHECK(inserted == (expected == oracle.end()));
        if (inserted) oracle.emplace(key, index);
        CHECK(index == oracle.at(key));
      }
      CHECK(s.size() == oracle.size());
    }
    CHECK(oracle.size() == 1 + 4 + 16 + 64 + 256);  // every key of length ≤ 4 inserted
    CHECK(hits > 1'000);
    CHECK(s.bytes() > 0);
  }
}
