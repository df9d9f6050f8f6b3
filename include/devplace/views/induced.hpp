#pragma once
/// \file views/induced.hpp
/// `views::induced(g, vertices)`: the subgraph of `g` induced by a vertex subset, renumbered to
/// the dense ids 0 .. k-1 (in increasing order of the base ids), so it is itself a `dag`.
/// Successor (and, for a bidirectional base, predecessor) ranges are lazy range-v3 pipelines
/// over the base's ranges: filter to the subset, translate to local ids.
///
/// Building costs O(n) time and memory for the id maps (shared between copies of the view);
/// iterating the successors of u costs O(out_degree of u in the base).
/// `to_base(u)` / `to_local(v)` translate ids (`to_local` gives `npos` outside the subset).
#include <cstddef>
#include <limits>
#include <memory>
#include <ranges>
#include <utility>
#include <vector>

#include <range/v3/view/filter.hpp>
#include <range/v3/view/transform.hpp>

#include "devplace/views/all.hpp"

namespace devplace {

template <dag_view V>
class induced_view {
 public:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  /// `vertices`: any range of base vertex ids (duplicates ignored; ids must be < n).
  template <std::ranges::input_range R>
  induced_view(V base, const R& vertices) : base_(std::move(base)) {
    const std::size_t n = devplace::num_vertices(base_);
    auto m = std::make_shared<maps>();
    m->local.assign(n, npos);
    for (auto v : vertices) m->local[static_cast<std::size_t>(v)] = 0;
    for (std::size_t v = 0; v < n; ++v)
      if (m->local[v] != npos) {
        m->local[v] = m->global.size();
        m->global.push_back(v);
      }
    maps_ = std::move(m);
  }

  [[nodiscard]] const V& base() const noexcept { return base_; }
  [[nodiscard]] std::size_t num_vertices() const noexcept { return maps_->global.size(); }
  [[nodiscard]] std::size_t to_base(std::size_t u) const noexcept { return maps_->global[u]; }
  [[nodiscard]] std::size_t to_local(std::size_t v) const noexcept { return maps_->local[v]; }

  [[nodiscard]] auto out_edges(std::size_t u) const { return local_range(devplace::out_edges(base_, to_base(u))); }
  [[nodiscard]] auto in_edges(std::size_t u) const requires bidirectional_dag<V> {
    return local_range(devplace::in_edges(base_, to_base(u)));
  }

  [[nodiscard]] double forward_ms(std::size_t v) const requires profiled_dag<V> { return devplace::forward_ms(base_, to_base(v)); }
  [[nodiscard]] double backward_ms(std::size_t v) const requires profiled_dag<V> { return devplace::backward_ms(base_, to_base(v)); }
  [[nodiscard]] double compute_ms(std::size_t v) const requires profiled_dag<V> { return devplace::compute_ms(base_, to_base(v)); }
  [[nodiscard]] double memory_bytes(std::size_t v) const requires profiled_dag<V> { return devplace::memory_bytes(base_, to_base(v)); }
  [[nodiscard]] double param_bytes(std::size_t v) const requires profiled_dag<V> { return devplace::param_bytes(base_, to_base(v)); }
  [[nodiscard]] double edge_bytes(std::size_t u, std::size_t v) const requires profiled_dag<V> {
    return devplace::edge_bytes(base_, to_base(u), to_base(v));
  }

 private:
  struct maps {
    std::vector<std::size_t> global;  // local -> base
    std::vector<std::size_t> local;   // base -> local or npos
  };
  struct in_subset {
    const maps* m;
    template <class I>
    bool operator()(I v) const { return m->local[static_cast<std::size_t>(v)] != npos; }
  };
  struct to_local_id {
    const maps* m;
    template <class I>
    std::size_t operator()(I v) const { return m->local[static_cast<std::size_t>(v)]; }
  };
  template <class R>
  auto local_range(R&& r) const {
    return std::forward<R>(r) | ranges::views::filter(in_subset{maps_.get()}) |
           ranges::views::transform(to_local_id{maps_.get()});
  }

  V base_;
  std::shared_ptr<const maps> maps_;
};

template <class V>
inline constexpr bool enable_dag_view<induced_view<V>> = true;

namespace views {
namespace detail {
struct induced_fn {
  template <class G, std::ranges::input_range R>
    requires dag<std::remove_cvref_t<G>> && requires(G&& g) { views::all(std::forward<G>(g)); }
  [[nodiscard]] auto operator()(G&& g, const R& vertices) const {
    return induced_view<views::all_t<G>>(views::all(std::forward<G>(g)), vertices);
  }
};
}  // namespace detail
inline constexpr detail::induced_fn induced{};
}  // namespace views

}  // namespace devplace
