#pragma once
/// \file peers/detail/tarnawski_lattice.hpp
/// The ideal lattice of the Tarnawski et al. 2020 DP (peers/tarnawski.hpp): an open-addressing
/// index of the ideals by their 64-bit (Zobrist) key, the downward links I → I ∖ {m} for every
/// maximal position m, and upstream's ideal-pair count by inclusion–exclusion over those links.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/peers/detail/tarnawski_model.hpp"

namespace devplace::peers::detail {

/// Open-addressing index of the ideals by their 64-bit key; lookups verify the bitset.
struct tw_index {
  std::vector<std::uint64_t> keys;
  std::vector<std::int64_t> ids;
  std::uint64_t mask = 0;
  const std::vector<bitset>* ideals = nullptr;
  bool unique = false;  ///< all keys distinct: a key identifies the ideal (lookups are of ideals)
  template <int = 0>
  void build(const std::vector<bitset>& is, const std::vector<std::uint64_t>& ks) {
    ideals = &is;
    std::size_t cap = 16;
    while (cap < 2 * is.size()) cap *= 2;
    mask = cap - 1;
    keys.assign(cap, 0);
    ids.assign(cap, -1);
    for (std::size_t i = 0; i < is.size(); ++i) {
      std::uint64_t h = ks[i] & mask;
      while (ids[h] >= 0) h = (h + 1) & mask;
      keys[h] = ks[i];
      ids[h] = static_cast<std::int64_t>(i);
    }
    std::vector<std::uint64_t> sorted = ks;
    std::sort(sorted.begin(), sorted.end());
    unique = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  }
  [[nodiscard]] std::size_t find(std::uint64_t key, const bitset& b) const {
    for (std::uint64_t h = key & mask;; h = (h + 1) & mask) {
      if (ids[h] < 0) throw std::logic_error("tarnawski: an ideal is missing from the index");
      if (keys[h] == key && (unique || (*ideals)[static_cast<std::size_t>(ids[h])] == b))
        return static_cast<std::size_t>(ids[h]);
    }
  }
};

/// The ideal lattice downwards, over ideal ids (ideals sorted by size): for ideal i the links
/// `pos[k]`, `id[k]` for k in [off[i], off[i+1]) are its maximal positions m and the id of
/// I ∖ {m}. `layer[s]` is the first id of the ideals with s supernodes (`layer[f+1]` = N).
struct tw_lattice {
  std::vector<std::uint32_t> off, pos, id;
  std::vector<std::size_t> layer;
};

template <int = 0>
tw_lattice tw_build_lattice(const downset_enumerator& e, const tw_model& m, const std::vector<bitset>& ideals,
                                   const std::vector<std::uint64_t>& keys, const tw_index& index) {
  tw_lattice lat;
  lat.off.reserve(ideals.size() + 1);
  lat.layer.assign(m.f + 2, ideals.size());
  bitset below(m.f);
  for (std::size_t i = 0; i < ideals.size(); ++i) {
    lat.off.push_back(static_cast<std::uint32_t>(lat.pos.size()));
    const std::size_t s = ideals[i].count();
    lat.layer[s] = std::min(lat.layer[s], i);
    ideals[i].for_each([&](std::size_t p) {
      for (auto q : e.successors(p))
        if (ideals[i].test(q)) return;  // not maximal
      below = ideals[i];
      below.reset(p);
      lat.pos.push_back(static_cast<std::uint32_t>(p));
      lat.id.push_back(static_cast<std::uint32_t>(index.find(keys[i] ^ m.zobrist[p], below)));
    });
  }
  lat.off.push_back(static_cast<std::uint32_t>(lat.pos.size()));
  for (std::size_t s = m.f + 1; s-- > 0;) lat.layer[s] = std::min(lat.layer[s], lat.layer[s + 1]);
  return lat;
}

/// Upstream's "ideal pairs" (J ⊆ I, J = I included) without enumerating them: the ideals below I
/// are I itself and the union over I's maximal positions m of those below I ∖ {m}; by
/// inclusion–exclusion, below(I) = 1 + Σ_{∅≠S⊆max(I)} (−1)^{|S|+1} below(I ∖ S). Σ_I 2^{|max(I)|}
/// terms (at most the number of pairs).
template <int = 0>
std::uint64_t tw_count_pairs(const tw_lattice& lat) {
  const std::size_t n = lat.off.size() - 1;
  std::vector<std::int64_t> below(n, 1);
  auto link = [&](std::size_t id, std::uint32_t p) {
    for (std::size_t k = lat.off[id];; ++k)
      if (lat.pos[k] == p) return static_cast<std::size_t>(lat.id[k]);
  };
  std::uint64_t total = n ? 1 : 0;  // ∅ ⊆ ∅
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint32_t b = lat.off[i], k = lat.off[i + 1] - b;
    std::int64_t sum = 1;
    // Subsets S as an explicit stack: (id of I ∖ S, next index into the maximal positions, |S| odd).
    struct frame { std::size_t id; std::uint32_t next; bool odd; };
    std::vector<frame> st{{i, 0, false}};
    while (!st.empty()) {
      frame& fr = st.back();
      if (fr.next == k) { st.pop_back(); continue; }
      const std::uint32_t idx = fr.next++;
      const frame child{link(fr.id, lat.pos[b + idx]), idx + 1, !fr.odd};
      sum += child.odd ? below[child.id] : -below[child.id];
      st.push_back(child);
    }
    below[i] = sum;
    total += static_cast<std::uint64_t>(sum);
  }
  return total;
}

}  // namespace devplace::peers::detail
