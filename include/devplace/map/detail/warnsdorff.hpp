#pragma once
/// \file map/detail/warnsdorff.hpp
/// Warnsdorff's value order of `mapping_search` (Algorithm 2's restarts): for the two built-in
/// forms of model (copies, rings), per target, the devices each device reaches within a stage's budget, and the key of a
/// candidate: the free devices it can still reach for its open links (fewest first).
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "devplace/map/cost_models.hpp"
#include "devplace/map/detail/search_state.hpp"
#include "devplace/map/stage_graph.hpp"

namespace devplace::detail {

template <class C>
inline constexpr bool warnsdorff_model = cost_model_form_v<C> == model_form::rings || cost_model_form_v<C> == model_form::copies;

/// For the models of the copies and rings forms (map/cost_models.hpp, `model_form`): the devices a device can reach within a stage's budget
/// (allreduce: the ring volume; p2p: its smallest message), to order candidates by how few
/// free onward devices they leave (Warnsdorff's rule), which finds rings and tilings sooner.
/// O(S·D²): built once per target, when the first Warnsdorff round needs it; false when `stop`
/// or `deadline` interrupted it.
template <class C>
bool init_reach(mapping_search_state& st, const stage_graph& g, const link_costs& L, std::size_t D, std::size_t W,
                const std::atomic<bool>* stop, std::chrono::steady_clock::time_point deadline) {
  st.reach_ready = true;
  if constexpr (warnsdorff_model<C>) {
    const std::size_t S = g.stages();
    st.reach.assign(S * D * W, 0);
    for (std::size_t s = 0; s < S; ++s) {
      double x = 0;
      if constexpr (cost_model_form_v<C> == model_form::rings) {
        x = g.allreduce_bytes(s);
      } else {
        for (auto n : g.neighbours(s)) x = g.message_bytes(s, n);  // the last is the smallest
      }
      for (std::size_t a = 0; a < D; ++a) {
        if ((a & 63u) == 0 && ((stop && stop->load(std::memory_order_relaxed)) || std::chrono::steady_clock::now() >= deadline)) return false;
        for (std::size_t b = 0; b < D; ++b) {
          const double link = cost_model_form_v<C> == model_form::rings ? L.ring_transfer_ms(a, b, x, g.replicas(s))
                                                                : L.transfer_ms(a, b, x);
          if (a != b && g.replica_compute_ms(s) + link <= st.t) st.reach[(s * D + a) * W + b / 64] |= std::uint64_t{1} << (b % 64);
        }
      }
    }
  } else {
    (void)st, (void)g, (void)L, (void)D, (void)W, (void)stop, (void)deadline;
  }
  return true;
}

/// Warnsdorff key of placing v on d: the free devices d can still reach for v's open links.
template <class C>
[[nodiscard]] double onward_devices(const mapping_search_state& st, const stage_graph& g, std::size_t D, std::size_t W, std::size_t v,
                                 std::size_t d) {
  if constexpr (warnsdorff_model<C>) {
    const std::size_t s = g.stage_of_vertex(v), q = g.replica_of_vertex(v), R = g.replicas(s);
    bool open = false;
    if (!g.uniform_replicas()) return 0;  // the key below reads replica q of every neighbour
    if constexpr (cost_model_form_v<C> == model_form::rings) {
      open = R >= 3 && st.dev[g.vertex(s, (q + 1) % R)] == unplaced;
    } else {
      for (auto n : g.neighbours(s))
        if (st.dev[g.vertex(n, q)] == unplaced) open = true;
    }
    if (!open) return 0;
    std::size_t n = 0;
    const std::uint64_t* r = &st.reach[(s * D + d) * W];
    for (std::size_t w = 0; w < W; ++w) n += static_cast<std::size_t>(std::popcount(r[w] & ~st.used[w]));
    return static_cast<double>(n);
  } else {
    (void)st, (void)g, (void)D, (void)W, (void)v, (void)d;
    return 0;
  }
}

}  // namespace devplace::detail
