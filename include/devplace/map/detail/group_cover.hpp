#pragma once
/// \file map/detail/group_cover.hpp
/// The node-group cover of the p2p model: an exact search at a target t for topologies made of
/// *nodes* (one cost inside node k, one larger cost between nodes, no latency). A copy is a
/// partition of its stages into groups, each on a node where it fits (T(G, k) ≤ t, the model's
/// own time); `solve` decides R such partitions on classes of merged nodes and bin-packs the
/// chosen groups into the real nodes. The method, its bound, realisation and cost:
/// docs/mapping-oracles.md, "Node-group cover".
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/class_cover.hpp"
#include "devplace/map/detail/cover_common.hpp"
#include "devplace/map/detail/device_classes.hpp"
#include "devplace/map/link_costs.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

template <int = 0>
class basic_group_cover_search {
 public:
  using clock = std::chrono::steady_clock;

  /// Builds the table of T(G, k) (file comment). `applies()` is false when `g` has unequal replica
  /// counts, more than 64 stages or more stage replicas than devices, or the table would have more
  /// than `max_entries` entries, or `deadline` passed while it was built.
  basic_group_cover_search(const stage_graph& g, const link_costs& L, node_structure n, std::size_t max_entries = std::size_t{1} << 22,
                     clock::time_point deadline = clock::time_point::max())
      : g_(&g), L_(&L), n_(std::move(n)), S_(g.stages()), R_(g.replicas()) {
    if (!g.uniform_replicas() || S_ > 64 || g.vertices() > L.devices() || n_.nodes.size() < 2) return;
    for (std::size_t k = 0; k < n_.nodes.size(); ++k) outside_.push_back(n_.nodes[k == 0 ? 1 : 0].front());
    std::vector<std::size_t> dev(g.vertices(), 0);
    const std::size_t K = n_.nodes.size();
    std::size_t nmax = 0;
    for (const auto& d : n_.nodes) nmax = std::max(nmax, d.size());
    nmax_ = std::min(nmax, S_);
    // groups of 1..nmax stages: C(S, j) each; the entries of node k those of ≤ n_k stages
    std::vector<double> groups_of(nmax_ + 1, 0);
    for (std::size_t j = 1; j <= nmax_; ++j) groups_of[j] = binomial(S_, j);
    double entries = 0;
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 1; j <= std::min(n_.nodes[k].size(), nmax_); ++j) entries += groups_of[j];
    if (entries > static_cast<double>(max_entries)) return;
    buckets_.assign(K * (nmax_ + 1), {});
    full_ = S_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << S_) - 1;
    work_counter work{.deadline = deadline};
    for (std::size_t j = 1; j <= nmax_; ++j) {
      // every j-subset of the stages (Gosper's hack)
      std::uint64_t G = (j == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << j) - 1);
      while (true) {
        if (!work.step()) {
          buckets_.clear();
          return;
        }
        for (std::size_t k = 0; k < K; ++k) {
          if (n_.nodes[k].size() < j) continue;
          const double T = group_time(G, k, dev);
          buckets_[k * (nmax_ + 1) + j].push_back({T, G});
        }
        if (G == full_ || j == S_) break;
        const std::uint64_t c = G & (~G + 1), r = G + c;
        if (r == 0 || r > full_) break;
        G = (((r ^ G) >> 2) / c) | r;
        if (G > full_) break;
      }
    }
    for (auto& b : buckets_) std::sort(b.begin(), b.end(), [](const entry& x, const entry& y) { return x.time < y.time || (x.time == y.time && x.mask < y.mask); });
    applies_ = true;
  }

  [[nodiscard]] bool applies() const noexcept { return applies_; }

  /// The smallest T(G, k) above t (+inf when none): the value at which the answer can change next.
  [[nodiscard]] double next_change(double t) const {
    double next = std::numeric_limits<double>::infinity();
    for (const auto& b : buckets_) {
      const auto it = std::upper_bound(b.begin(), b.end(), t, [](double x, const entry& e) { return x < e.time; });
      if (it != b.end()) next = std::min(next, it->time);
    }
    return next;
  }

  using limits = count_vector_limits;

  /// Decides whether a mapping has every time ≤ t on the classes (file comment). None: no
  /// mapping at t (nor below the next change). Found: when the groups given to each class can be
  /// packed into its nodes (a depth-first bin packing), that mapping; otherwise unknown. Unknown
  /// also when a limit is reached, at `*stop` or at `deadline`.
  [[nodiscard]] cover_answer solve(double t, const limits& lim, const std::atomic<bool>* stop = nullptr,
                                   clock::time_point deadline = clock::time_point::max()) const;

 private:
  class class_pass;
  struct entry {
    double time;
    std::uint64_t mask;
  };

  static double binomial(std::size_t n, std::size_t k) {
    double c = 1;
    for (std::size_t i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
    return c;
  }

  /// T(G, k): the largest time of a stage of G with G on node k (links w_k among its members,
  /// w_x to the others), evaluated by the model on a placement of copy 0 in `dev` (scratch, one
  /// entry per vertex).
  [[nodiscard]] double group_time(std::uint64_t G, std::size_t k, std::vector<std::size_t>& dev) const {
    // copy 0 with G on distinct devices of node k and the other stages on a device of another
    // node: the times of G's stages are the model's own (p2p_cost::time)
    std::size_t next = 0;
    for (std::size_t s = 0; s < S_; ++s) dev[g_->vertex(s, 0)] = (G >> s) & 1 ? n_.nodes[k][next++] : outside_[k];
    double T = 0;
    for (std::uint64_t x = G; x; x &= x - 1)
      T = std::max(T, p2p_cost{}.time(*g_, *L_, std::span<const std::size_t>(dev), g_->vertex(static_cast<std::size_t>(std::countr_zero(x)), 0)));
    return T;
  }

  const stage_graph* g_;
  const link_costs* L_;
  node_structure n_;
  std::vector<std::size_t> outside_;  // per node, a device of another node
  std::size_t S_, R_, nmax_ = 0;
  std::uint64_t full_ = 0;
  bool applies_ = false;
  std::vector<std::vector<entry>> buckets_;  // [k · (nmax + 1) + j]: groups of j stages on node k, by T
};

/// The state of one decision on the classes (`group_cover_search::pass`), a member per step:
/// the classes of nodes, the class sets where each group fits, the partitions of a copy into
/// groups (one per signature), their count vectors, and the bin packing that realises a packing.
template <int I>
class basic_group_cover_search<I>::class_pass {
 public:
  class_pass(const basic_group_cover_search& gc, const limits& lim, const std::atomic<bool>* stop, clock::time_point deadline)
      : gc_(gc), n_(gc.n_), lim_(lim), K_(gc.n_.nodes.size()),
        work_{.most = work_counter::at_most(lim.listing_steps), .stop = stop, .deadline = deadline}, room_(K_) {}

  /// The groups fitting on each node at t, and the classes: nodes of equal size and equal fitting
  /// groups (only those of ≤ 2 devices unless `merge_large`). Whether a merged class has nodes of
  /// more than 2 devices (the decision is then relaxed).
  bool find_classes(double t, bool merge_large) {
    std::vector<std::uint64_t> fit_hash(K_, 0);
    for (std::size_t k = 0; k < K_; ++k)
      for (std::size_t j = 1; j <= std::min(gc_.nmax_, n_.nodes[k].size()); ++j)
        for (const auto& e : gc_.buckets_[k * (gc_.nmax_ + 1) + j]) {
          if (e.time > t) break;
          fit_[e.mask].push_back(static_cast<std::uint32_t>(k));
          fit_hash[k] += mix64(e.mask);
        }
    class_of_.resize(K_);
    std::map<std::pair<std::size_t, std::uint64_t>, std::uint32_t> ids;
    for (std::size_t k = 0; k < K_; ++k) {
      const bool merge = merge_large || n_.nodes[k].size() <= 2;
      auto [it, fresh] = ids.emplace(std::pair{n_.nodes[k].size(), merge ? fit_hash[k] : mix64(k) ^ 0x5555},
                                     static_cast<std::uint32_t>(members_.size()));
      if (fresh) members_.emplace_back();
      members_[it->second].push_back(static_cast<std::uint32_t>(k));
      class_of_[k] = it->second;
    }
    bool relaxed = false;
    for (const auto& m : members_) relaxed = relaxed || (m.size() > 1 && n_.nodes[m[0]].size() > 2);
    return relaxed;
  }

  /// The set of classes where each group fits (by id), and the groups by their lowest stage.
  void find_class_sets() {
    std::map<std::vector<std::uint32_t>, std::uint32_t> ids;
    for (auto& [G, nodes] : fit_) {
      std::vector<std::uint32_t> cls;
      for (auto k : nodes) cls.push_back(class_of_[k]);
      std::sort(cls.begin(), cls.end());
      cls.erase(std::unique(cls.begin(), cls.end()), cls.end());
      auto [it, fresh] = ids.emplace(cls, static_cast<std::uint32_t>(sets_.size()));
      if (fresh) sets_.push_back(std::move(cls));
      set_of_.emplace(G, it->second);
    }
    by_low_.assign(gc_.S_, {});
    for (const auto& [G, id] : set_of_) by_low_[static_cast<std::size_t>(std::countr_zero(G))].push_back(G);
    for (auto& b : by_low_) std::sort(b.begin(), b.end());
  }

  /// The partitions of a copy into fitting groups, depth-first (the group of the lowest open
  /// stage), one per signature: the sorted (size, class set) of its groups.
  void list_partitions(std::uint64_t covered) {
    if (!work_.step()) return;
    if (covered == gc_.full_) {
      std::vector<std::uint64_t> gs(cur_);
      std::sort(gs.begin(), gs.end(), [&](std::uint64_t x, std::uint64_t y) { return key_of(x) < key_of(y); });
      signature sg;
      for (auto G : gs) sg.push_back(key_of(G));
      partitions_.emplace(std::move(sg), std::move(gs));
      return;
    }
    for (auto G : by_low_[static_cast<std::size_t>(std::countr_zero(~covered & gc_.full_))])
      if (!(G & covered)) {
        cur_.push_back(G);
        list_partitions(covered | G);
        cur_.pop_back();
        if (work_.aborted) return;
      }
  }

  /// The count vectors over the classes of every partition (a copy puts at most m groups into a
  /// class of m nodes), each listed once with the partition and classes that gave it first.
  void list_vectors() {
    const std::size_t C = members_.size();
    cap_.assign(C, 0);
    for (std::size_t c = 0; c < C; ++c) cap_[c] = static_cast<std::uint32_t>(members_[c].size() * n_.nodes[members_[c][0]].size());
    for (const auto& part : partitions_) {
      sg_ = &part.first;
      groups_ = &part.second;
      cls_.assign(sg_->size(), 0);
      load_.assign(C, 0);
      count_.assign(C, 0);
      assign(0);
      if (work_.aborted) break;
    }
  }

  /// A packing is realised when each class's groups bin-pack into its nodes (depth-first,
  /// largest group first, nodes of equal room tried once; within a class every node takes the
  /// same groups). Without merged classes of more than 2 devices that cannot fail; with them, a
  /// packing that does not realise is searched past (`placing_tries` rejections at most).
  bool realise(std::span<const std::size_t> solution) {
    items_.clear();
    for (std::size_t r = 0; r < solution.size(); ++r) {
      const auto& [groups, first] = witness_[solution[r]];
      for (std::size_t x = 0; x < groups->size(); ++x) items_.push_back({(*groups)[x], r, witness_classes_[first + x]});
    }
    std::stable_sort(items_.begin(), items_.end(), [](const item& x, const item& y) {
      return x.cls < y.cls || (x.cls == y.cls && std::popcount(x.group) > std::popcount(y.group));
    });
    for (std::size_t k = 0; k < K_; ++k) room_[k] = n_.nodes[k].size();
    node_of_item_.assign(items_.size(), 0);
    // each class on its own (its items are consecutive): a class that does not pack rejects
    std::uint64_t budget = lim_.placing_nodes;
    for (std::size_t begin = 0, end = 0; begin < items_.size(); begin = end) {
      end = begin;
      while (end < items_.size() && items_[end].cls == items_[begin].cls) ++end;
      if (!place(begin, end, budget)) return false;
    }
    return true;
  }

  /// The device of every vertex from the last realised packing.
  [[nodiscard]] std::vector<std::size_t> mapping() const {
    std::vector<std::size_t> dev(gc_.g_->vertices(), 0);
    std::vector<std::size_t> next_free(K_, 0);
    for (std::size_t i = 0; i < items_.size(); ++i) {
      const auto k = node_of_item_[i];
      for (std::uint64_t m = items_[i].group; m; m &= m - 1)
        dev[gc_.g_->vertex(static_cast<std::size_t>(std::countr_zero(m)), items_[i].copy)] = n_.nodes[k][next_free[k]++];
    }
    return dev;
  }

  /// One decision on the classes: nodes of one size and fitting groups merged, all of them with
  /// `merge_large`, else those of ≤ 2 devices (merged nodes of more than 2 devices may not pack
  /// what their class is given; without them the decision is exact).
  [[nodiscard]] cover_answer decide(double t, bool merge_large) {
    cover_answer a;
    merge_large = find_classes(t, merge_large);
    find_class_sets();
    list_partitions(0);
    if (!work_.aborted) list_vectors();
    a.nodes = work_.count;
    if (work_.aborted) return a;
    class_cover_packing pack(cap_, entries_, starts_);
    if (merge_large) pack.set_accept([this](std::span<const std::size_t> x) { return realise(x); }, lim_.placing_tries);
    const auto o = pack.solve(gc_.R_, lim_.packing_nodes, work_.stop, work_.deadline);
    a.nodes += pack.nodes() + tries_;
    a.rejected = pack.rejections();
    if (o == class_cover_packing::outcome::stopped) {
      a.unrealised = merge_large && pack.rejections() >= lim_.placing_tries;
      return a;  // unknown
    }
    if (o == class_cover_packing::outcome::none) {
      if (pack.rejections() > 0) {
        a.unrealised = true;
        return a;  // unknown: some packings did not realise
      }
      a.answer = cover_answer::kind::none;
      a.next_change = gc_.next_change(t);
      return a;
    }
    if (!merge_large && !realise(std::span<const std::size_t>(pack.solution()))) return a;  // cannot happen (see above)
    a.dev = mapping();
    a.answer = cover_answer::kind::found;
    return a;
  }

 private:
  using signature = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  struct item {
    std::uint64_t group;
    std::size_t copy;
    std::uint32_t cls;
  };

  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> key_of(std::uint64_t G) const {
    return {static_cast<std::uint32_t>(std::popcount(G)), set_of_.at(G)};
  }

  /// The groups i.. of the current partition on classes where they fit (equal groups on
  /// non-decreasing classes); each complete vector not seen before is listed.
  void assign(std::size_t i) {
    if (!work_.step()) return;
    const signature& sg = *sg_;
    if (i == sg.size()) {
      const std::size_t first = entries_.size();  // the vector's nonzero counts, its key in `seen_`
      key_.clear();
      for (std::size_t c = 0; c < load_.size(); ++c)
        if (load_[c]) entries_.push_back({static_cast<std::uint32_t>(c), load_[c]}), key_.push_back(static_cast<std::uint32_t>(c)), key_.push_back(load_[c]);
      const bool seen = seen_.find(key_) != key_set::npos;
      if (seen || seen_.size() >= lim_.vectors) {
        work_.aborted = !seen;
        entries_.resize(first);
        return;
      }
      starts_.push_back(entries_.size());
      seen_.insert(key_);
      witness_.push_back({groups_, witness_classes_.size()});
      witness_classes_.insert(witness_classes_.end(), cls_.begin(), cls_.end());
      return;
    }
    const bool same = i > 0 && sg[i] == sg[i - 1];
    for (const auto c : sets_[sg[i].second]) {
      if ((same && c < cls_[i - 1]) || count_[c] == members_[c].size() || load_[c] + sg[i].first > cap_[c]) continue;
      ++count_[c], load_[c] += sg[i].first, cls_[i] = c;
      assign(i + 1);
      --count_[c], load_[c] -= sg[i].first;
      if (work_.aborted) return;
    }
  }

  /// Bin-packs items i..end (one class) into the class's nodes, within `budget` nodes.
  bool place(std::size_t i, std::size_t end, std::uint64_t& budget) {
    if (i == end) return true;
    ++tries_;
    if (lim_.placing_nodes) {
      if (budget == 0) return false;
      --budget;
    }
    const auto z = static_cast<std::size_t>(std::popcount(items_[i].group));
    const auto& nodes = members_[items_[i].cls];
    for (std::size_t q = 0; q < nodes.size(); ++q) {
      const std::size_t k = nodes[q];
      if (room_[k] < z) continue;
      bool tried = false;  // an earlier node of the class with the same room
      for (std::size_t p = 0; p < q && !tried; ++p) tried = room_[nodes[p]] == room_[k];
      if (tried) continue;
      room_[k] -= z, node_of_item_[i] = k;
      if (place(i + 1, end, budget)) return true;
      room_[k] += z;
    }
    return false;
  }

  const basic_group_cover_search& gc_;
  const node_structure& n_;
  const limits& lim_;
  std::size_t K_;
  // the classes
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> fit_;  // group -> nodes
  std::vector<std::uint32_t> class_of_;
  std::vector<std::vector<std::uint32_t>> members_;  // nodes of each class
  // the class sets of the groups
  std::unordered_map<std::uint64_t, std::uint32_t> set_of_;  // group -> id of its set of classes
  std::vector<std::vector<std::uint32_t>> sets_;
  std::vector<std::vector<std::uint64_t>> by_low_;
  // the partitions, one per signature (-> its groups in signature order), and the listing's work
  std::map<signature, std::vector<std::uint64_t>> partitions_;
  std::vector<std::uint64_t> cur_;
  work_counter work_;  // the steps of the listing; aborted at its limits (or `lim_.vectors`)
  // the count vectors; per vector, its partition's groups and where their classes start in
  // `witness_classes_`
  std::vector<std::uint32_t> cap_;
  std::vector<class_cover_packing::entry> entries_;
  std::vector<std::size_t> starts_{0};
  key_set seen_;                      // the vectors listed, by their entries
  std::vector<std::uint32_t> key_;    // scratch: a vector's entries as a key
  std::vector<std::pair<const std::vector<std::uint64_t>*, std::size_t>> witness_;
  std::vector<std::uint32_t> witness_classes_;
  // the partition being assigned: its signature, groups, classes, loads and counts per class
  const signature* sg_ = nullptr;
  const std::vector<std::uint64_t>* groups_ = nullptr;
  std::vector<std::uint32_t> cls_, load_, count_;
  // the realisation
  std::vector<item> items_;
  std::vector<std::size_t> room_, node_of_item_;
  std::uint64_t tries_ = 0;
};

template <int I>
cover_answer basic_group_cover_search<I>::solve(double t, const limits& lim, const std::atomic<bool>* stop,
                                              clock::time_point deadline) const {
  if (!applies_) return {};
  auto a = class_pass(*this, lim, stop, deadline).decide(t, true);
  if (a.answer != cover_answer::kind::unknown || !a.unrealised) return a;
  // the merged classes did not pack: again with only nodes of ≤ 2 devices merged (items of 1
  // and 2 devices always pack into such nodes when their sum fits), where found is found
  const auto nodes = a.nodes;
  const auto rejected = a.rejected;
  a = class_pass(*this, lim, stop, deadline).decide(t, false);
  a.nodes += nodes, a.rejected += rejected;
  return a;
}

/// A template only so that a file compiles it where the mapper is instantiated (docs/compile-time.md).
using group_cover_search = basic_group_cover_search<>;

}  // namespace devplace::detail
