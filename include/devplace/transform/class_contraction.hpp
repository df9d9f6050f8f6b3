#pragma once
/// \file transform/class_contraction.hpp
/// Contracting co-location classes (Tarnawski et al. 2020's "colour classes"): every node
/// carries a class; all forward nodes of one class become one forward *supernode* and all its
/// backward nodes one backward supernode, which always goes with the forward one. Graphs whose
/// parameters, saved statistics or masks are separate nodes (ONNX-style operator graphs) shrink
/// to their real operators this way, so that the exact down-set DPs can run on them: BERT-L-3's
/// 235 nodes (64 sources, ~10^21 down-sets) become 128 supernodes with 1,428 down-sets.
///
/// The steps, in the order of the authors' `throughput-dp/dp.cpp` (docs/peers/tarnawski.md):
/// 1. contract the classes; parallel edges and edges inside a supernode disappear;
/// 2. orphaned backward classes (backward nodes, no forward node) get an empty artificial forward
///    supernode, and every backward→backward edge ub → vb touching an orphan adds the artificial
///    *mirror* edge fwd(vb) → fwd(ub) (it constrains down-sets, it carries no data);
/// 3. forward strongly connected components (over true and artificial forward edges) are fused
///    into one class each, and the classes are contracted again;
/// 4. trivial-node merge, repeated until none applies: a forward supernode whose two latencies
///    are < `trivial_threshold`, that has no backward neighbour, exactly one forward-neighbour
///    entry (true and artificial edge lists counted separately) and whose backward part has a
///    total latency < `trivial_threshold`, joins the class of that neighbour.
/// The result lists the forward supernodes (the elements the DPs order), the precedence edges
/// between them (true + artificial) and, for every input node, its forward supernode (backward
/// nodes: that of their class). Complexity: O((n + m) log m) per contraction, one contraction
/// per trivial merge.
#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"

namespace devplace::transform {

struct class_graph {
  std::vector<std::size_t> cls;                           ///< class of every node, dense ids 0..K-1
  std::vector<bool> backward;                             ///< backward flag of every node
  std::vector<std::pair<std::size_t, std::size_t>> edges;  ///< u -> v
  std::vector<std::array<double, 2>> latency;             ///< two latencies per node (trivial merge)
};

struct class_contraction_options {
  bool orphaned_backward = true;  ///< step 2
  bool fuse_forward_sccs = true;  ///< step 3
  bool merge_trivial = true;      ///< step 4
  double trivial_threshold = 1e-6;
};

struct class_contraction {
  std::size_t num_forward = 0;                 ///< forward supernodes
  std::vector<std::vector<int>> successors;    ///< precedence among forward supernodes (true + artificial)
  std::vector<std::size_t> supernode_of;       ///< per input node: its forward supernode
  std::vector<bool> artificial;                ///< per forward supernode: no forward input node in it
  std::size_t orphans = 0, mirror_edges = 0, fused_classes = 0, trivial_merges = 0;
};

namespace detail {

struct class_state {
  const class_graph* g;
  std::size_t K;
  std::vector<std::size_t> parent;
  std::vector<bool> artificial_fwd;  ///< per class
  std::vector<std::pair<std::size_t, std::size_t>> art_edges;  ///< forward class -> forward class
  // contraction products
  std::vector<long> fwd, bwd;  ///< per root: supernode index or -1
  std::size_t nf = 0, nb = 0;
  std::set<std::pair<long, long>> true_edges, art;  ///< supernodes: forward i = i, backward i = nf + i

  std::size_t find(std::size_t c) {
    while (parent[c] != c) c = parent[c] = parent[parent[c]];
    return c;
  }
  long node_sn(std::size_t v) {
    const std::size_t r = find(g->cls[v]);
    return g->backward[v] ? static_cast<long>(nf) + bwd[r] : fwd[r];
  }
  void contract() {
    fwd.assign(K, -1);
    bwd.assign(K, -1);
    nf = nb = 0;
    for (std::size_t c = 0; c < K; ++c)
      if (artificial_fwd[c] && fwd[find(c)] < 0) fwd[find(c)] = 0;
    for (std::size_t v = 0; v < g->cls.size(); ++v) (g->backward[v] ? bwd : fwd)[find(g->cls[v])] = 0;
    for (std::size_t r = 0; r < K; ++r) {
      if (fwd[r] == 0) fwd[r] = static_cast<long>(nf++);
      if (bwd[r] == 0) bwd[r] = static_cast<long>(nb++);
    }
    true_edges.clear();
    art.clear();
    for (auto [u, v] : g->edges) {
      const long a = node_sn(u), b = node_sn(v);
      if (a != b) true_edges.emplace(a, b);
    }
    for (auto [x, y] : art_edges) {
      const long a = fwd[find(x)], b = fwd[find(y)];
      if (a != b) art.emplace(a, b);
    }
  }
  [[nodiscard]] bool is_forward(long s) const { return s < static_cast<long>(nf); }
};

}  // namespace detail

namespace detail {

/// Step 3: unites the classes of every forward strongly connected component (Kosaraju,
/// iterative). Returns the number of classes that were fused away.
inline std::size_t fuse_forward_sccs(class_state& s) {
  const std::size_t n = s.nf;
  std::vector<std::vector<std::size_t>> out(n), in(n);
  auto add = [&](const std::set<std::pair<long, long>>& es) {
    for (auto [a, b] : es)
      if (s.is_forward(a) && s.is_forward(b)) {
        out[static_cast<std::size_t>(a)].push_back(static_cast<std::size_t>(b));
        in[static_cast<std::size_t>(b)].push_back(static_cast<std::size_t>(a));
      }
  };
  add(s.true_edges);
  add(s.art);
  std::vector<std::size_t> finish;
  std::vector<char> seen(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    if (seen[r]) continue;
    std::vector<std::pair<std::size_t, std::size_t>> st{{r, 0}};
    seen[r] = 1;
    while (!st.empty()) {
      auto& [v, i] = st.back();
      if (i < out[v].size()) {
        const std::size_t w = out[v][i++];
        if (!seen[w]) { seen[w] = 1; st.emplace_back(w, 0); }
      } else {
        finish.push_back(v);
        st.pop_back();
      }
    }
  }
  std::vector<long> comp(n, -1);
  std::size_t fused = 0;
  std::vector<std::size_t> root_of_sn(n);  // a class root per forward supernode
  for (std::size_t c = 0; c < s.K; ++c)
    if (s.find(c) == c && s.fwd[c] >= 0) root_of_sn[static_cast<std::size_t>(s.fwd[c])] = c;
  for (std::size_t k = n; k-- > 0;) {
    const std::size_t r = finish[k];
    if (comp[r] >= 0) continue;
    std::vector<std::size_t> st{r};
    comp[r] = static_cast<long>(r);
    while (!st.empty()) {
      const std::size_t v = st.back();
      st.pop_back();
      for (auto w : in[v])
        if (comp[w] < 0) {
          comp[w] = static_cast<long>(r);
          st.push_back(w);
          const std::size_t a = s.find(root_of_sn[w]), b = s.find(root_of_sn[r]);
          if (a != b) { s.parent[a] = b; ++fused; }
        }
    }
  }
  return fused;
}

/// Step 4: merges the first trivial forward supernode into its only neighbour; false if none.
inline bool merge_one_trivial(class_state& s, double threshold) {
  const std::size_t nf = s.nf;
  std::vector<std::array<double, 2>> lat(nf, {0.0, 0.0});
  std::vector<double> back(nf, 0.0);
  std::vector<std::size_t> root_of_sn(nf);
  for (std::size_t c = 0; c < s.K; ++c)
    if (s.find(c) == c && s.fwd[c] >= 0) root_of_sn[static_cast<std::size_t>(s.fwd[c])] = c;
  for (std::size_t v = 0; v < s.g->cls.size(); ++v) {
    const auto f = static_cast<std::size_t>(s.fwd[s.find(s.g->cls[v])]);
    if (s.g->backward[v]) back[f] += s.g->latency[v][0] + s.g->latency[v][1];
    else { lat[f][0] += s.g->latency[v][0]; lat[f][1] += s.g->latency[v][1]; }
  }
  std::vector<std::size_t> fwd_entries(nf, 0), bwd_entries(nf, 0);
  std::vector<long> neighbour(nf, -1);
  auto note = [&](long a, long b) {  // a is a forward supernode, b its neighbour
    if (!s.is_forward(a)) return;
    const auto x = static_cast<std::size_t>(a);
    if (s.is_forward(b)) { ++fwd_entries[x]; neighbour[x] = b; } else ++bwd_entries[x];
  };
  for (const auto* es : {&s.true_edges, &s.art})
    for (auto [a, b] : *es) { note(a, b); note(b, a); }
  for (std::size_t x = 0; x < nf; ++x) {
    if (lat[x][0] < threshold && lat[x][1] < threshold && bwd_entries[x] == 0 && fwd_entries[x] == 1 &&
        back[x] < threshold) {
      const std::size_t a = s.find(root_of_sn[x]), b = s.find(root_of_sn[static_cast<std::size_t>(neighbour[x])]);
      s.parent[a] = b;
      return true;
    }
  }
  return false;
}

}  // namespace detail

/// Runs steps 1–4 on `g`. Throws `std::invalid_argument` on inconsistent sizes, a class id out
/// of range, or a contracted forward graph that still has a cycle (steps 3 off).
[[nodiscard]] inline class_contraction contract_classes(const class_graph& g, const class_contraction_options& opt = {}) {
  const std::size_t n = g.cls.size();
  if (g.backward.size() != n || g.latency.size() != n)
    throw std::invalid_argument("contract_classes: cls, backward and latency need one entry per node");
  std::size_t K = 0;
  for (auto c : g.cls) K = std::max(K, c + 1);
  for (auto [u, v] : g.edges)
    if (u >= n || v >= n) throw std::invalid_argument("contract_classes: edge endpoint out of range");
  detail::class_state s{&g, K, std::vector<std::size_t>(K), std::vector<bool>(K, false), {}, {}, {}, 0, 0, {}, {}};
  std::iota(s.parent.begin(), s.parent.end(), std::size_t{0});
  class_contraction r;
  s.contract();
  if (opt.orphaned_backward) {
    std::vector<std::size_t> root_of_bwd(s.nb);
    for (std::size_t c = 0; c < K; ++c)
      if (s.find(c) == c && s.bwd[c] >= 0) root_of_bwd[static_cast<std::size_t>(s.bwd[c])] = c;
    std::vector<bool> orphan(K, false);
    for (std::size_t c = 0; c < K; ++c)
      if (s.find(c) == c && s.bwd[c] >= 0 && s.fwd[c] < 0) { orphan[c] = true; s.artificial_fwd[c] = true; ++r.orphans; }
    for (auto [a, b] : s.true_edges) {
      if (s.is_forward(a) || s.is_forward(b)) continue;
      const std::size_t ca = root_of_bwd[static_cast<std::size_t>(a) - s.nf], cb = root_of_bwd[static_cast<std::size_t>(b) - s.nf];
      if (orphan[ca] || orphan[cb]) { s.art_edges.emplace_back(cb, ca); ++r.mirror_edges; }
    }
    s.contract();
  }
  if (opt.fuse_forward_sccs) {
    r.fused_classes = detail::fuse_forward_sccs(s);
    s.contract();
  }
  if (opt.merge_trivial)
    while (detail::merge_one_trivial(s, opt.trivial_threshold)) {
      ++r.trivial_merges;
      s.contract();
    }
  r.num_forward = s.nf;
  r.successors.assign(s.nf, {});
  std::set<std::pair<long, long>> prec;
  for (const auto* es : {&s.true_edges, &s.art})
    for (auto [a, b] : *es)
      if (s.is_forward(a) && s.is_forward(b)) prec.emplace(a, b);
  for (auto [a, b] : prec) r.successors[static_cast<std::size_t>(a)].push_back(static_cast<int>(b));
  r.supernode_of.resize(n);
  r.artificial.assign(s.nf, true);
  for (std::size_t v = 0; v < n; ++v) {
    const long f = s.fwd[s.find(g.cls[v])];
    if (f < 0) throw std::invalid_argument("contract_classes: a backward-only class is left (orphaned_backward off)");
    r.supernode_of[v] = static_cast<std::size_t>(f);
    if (!g.backward[v]) r.artificial[static_cast<std::size_t>(f)] = false;
  }
  if (topological_sort(r.successors).status != status::optimal)
    throw std::invalid_argument("contract_classes: the contracted forward graph has a cycle");
  return r;
}

}  // namespace devplace::transform
