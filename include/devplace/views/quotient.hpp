#pragma once
/// \file views/quotient.hpp
/// `views::quotient(g, cluster_of)`: the contracted graph of a clustering. Cluster c (ids
/// 0 .. k-1, k = 1 + max cluster_of) becomes one vertex; an edge joins clusters c -> d (c != d)
/// when some base edge runs from a member of c to a member of d; edges inside a cluster vanish.
///
/// Contraction can create a cycle even when the base is acyclic (two clusters that feed each
/// other). `acyclic()` reports it, and `cycle()` lists the clusters of one cycle; a cyclic
/// quotient does not meet the `dag` semantic requirements and must not be given to algorithms.
///
/// Over a `profiled_dag` the quotient is a `profiled_dag`: times, parameter bytes and memory
/// (the eq. 14 internal term Σ max(m_fwd, m_bwd)) add up over members, and the bytes of all base
/// edges between two clusters add up on their quotient edge.
///
/// The quotient must deduplicate edges, so it is materialised once, in O(n + m log m), into a
/// `csr_dag` shared by copies of the view; it keeps no reference to the base graph.
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/dag/csr_dag.hpp"
#include "devplace/views/all.hpp"

namespace devplace {

template <dag_view V>
class quotient_view {
 public:
  template <std::ranges::random_access_range R>
  quotient_view(const V& base, const R& cluster_of) {
    auto d = std::make_shared<data>();
    const std::size_t n = devplace::num_vertices(base);
    std::size_t k = 0;
    for (std::size_t v = 0; v < n; ++v) k = std::max(k, static_cast<std::size_t>(cluster_of[v]) + 1);
    d->members.resize(k);
    std::vector<std::size_t> c(n);
    for (std::size_t v = 0; v < n; ++v) {
      c[v] = static_cast<std::size_t>(cluster_of[v]);
      d->members[c[v]].push_back(v);
    }
    std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> edges;
    std::vector<double> bytes;
    for (std::size_t u = 0; u < n; ++u)
      for (auto w : devplace::out_edges(base, u)) {
        const auto cw = c[static_cast<std::size_t>(w)];
        if (c[u] == cw) continue;
        edges.emplace_back(static_cast<csr_dag::vertex_type>(c[u]), static_cast<csr_dag::vertex_type>(cw));
        if constexpr (profiled_dag<V>) bytes.push_back(devplace::edge_bytes(base, u, w));
      }
    std::vector<csr_dag::edge_type> merged;
    d->g = csr_dag(k, edges, &merged);
    if constexpr (profiled_dag<V>) {
      d->edge_bytes.assign(d->g.num_edges(), 0.0);
      for (std::size_t i = 0; i < merged.size(); ++i) d->edge_bytes[merged[i]] += bytes[i];
      d->fwd.assign(k, 0.0);
      d->bwd.assign(k, 0.0);
      d->mem.assign(k, 0.0);
      d->par.assign(k, 0.0);
      for (std::size_t v = 0; v < n; ++v) {
        d->fwd[c[v]] += devplace::forward_ms(base, v);
        d->bwd[c[v]] += devplace::backward_ms(base, v);
        d->mem[c[v]] += devplace::memory_bytes(base, v);
        d->par[c[v]] += devplace::param_bytes(base, v);
      }
    }
    const auto topo = topological_sort(d->g);
    d->cycle = topo.cycle;
    d_ = std::move(d);
  }

  [[nodiscard]] bool acyclic() const noexcept { return d_->cycle.empty(); }
  [[nodiscard]] const std::vector<std::size_t>& cycle() const noexcept { return d_->cycle; }
  [[nodiscard]] std::span<const std::size_t> members(std::size_t c) const noexcept { return d_->members[c]; }
  [[nodiscard]] const csr_dag& structure() const noexcept { return d_->g; }

  [[nodiscard]] std::size_t num_vertices() const noexcept { return d_->g.num_vertices(); }
  [[nodiscard]] auto out_edges(std::size_t u) const noexcept { return d_->g.out_edges(u); }
  [[nodiscard]] auto in_edges(std::size_t u) const noexcept { return d_->g.in_edges(u); }

  [[nodiscard]] double forward_ms(std::size_t c) const requires profiled_dag<V> { return d_->fwd[c]; }
  [[nodiscard]] double backward_ms(std::size_t c) const requires profiled_dag<V> { return d_->bwd[c]; }
  [[nodiscard]] double compute_ms(std::size_t c) const requires profiled_dag<V> { return d_->fwd[c] + d_->bwd[c]; }
  [[nodiscard]] double memory_bytes(std::size_t c) const requires profiled_dag<V> { return d_->mem[c]; }
  [[nodiscard]] double param_bytes(std::size_t c) const requires profiled_dag<V> { return d_->par[c]; }
  [[nodiscard]] double edge_bytes(std::size_t a, std::size_t b) const requires profiled_dag<V> {
    const auto e = d_->g.find_edge(a, b);
    return e ? d_->edge_bytes[*e] : 0.0;
  }

 private:
  struct data {
    csr_dag g;
    std::vector<std::vector<std::size_t>> members;
    std::vector<double> edge_bytes, fwd, bwd, mem, par;
    std::vector<std::size_t> cycle;
  };
  std::shared_ptr<const data> d_;
};

template <class V>
inline constexpr bool enable_dag_view<quotient_view<V>> = true;

namespace views {
namespace detail {
struct quotient_fn {
  template <class G, std::ranges::random_access_range R>
    requires dag<std::remove_cvref_t<G>> && requires(G&& g) { views::all(std::forward<G>(g)); }
  [[nodiscard]] auto operator()(G&& g, const R& cluster_of) const {
    return quotient_view<views::all_t<G>>(views::all(std::forward<G>(g)), cluster_of);
  }
};
}  // namespace detail
inline constexpr detail::quotient_fn quotient{};
}  // namespace views

}  // namespace devplace
