#pragma once
/// \file map/mapper.ipp
/// The definition of `map_devices` with a `cost_choice` (map/mapper.hpp): it instantiates the
/// mapper for every cost model, so it is compiled where it is included, inline (header-only mode)
/// or once in `devplace::core` (compiled mode; see config.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "devplace/map/mapper.hpp"

namespace devplace {

/// The body of `map_devices` with a `cost_choice` (map/map_devices.hpp declares this type and
/// calls `run`): the model chosen by `o.cost` (automatic: the paper's ratio rule; combined with
/// `o.micro_batches`).
template <int>
struct detail::map_devices_defined_in_map_mapper_ipp {
  static mapping_result run(const stage_graph& g, const link_costs& L, const mapper_options& o) {
    DEVPLACE_EXPECTS(o.micro_batches >= 1, "map_devices: micro_batches must be >= 1");
    detail::check_mapping_fits(g, L.devices());
    switch (select_cost_model(g, o.cost)) {
      case cost_choice::allreduce: return map_devices(g, L, allreduce_cost{}, o);
      case cost_choice::combined: {
        // Warm starts: the p2p and allreduce optima (Parmesan's ensemble), a quarter of the time
        // each; the combined search gets what is left. The ring-closure tables (D³ per hop) are
        // built once, within an eighth of the limit, for the allreduce warm start and the combined
        // search (each rebuilt them before, in a quarter of its own set-up time).
        using clock = std::chrono::steady_clock;
        const auto t0 = clock::now();
        const bool limited = std::isfinite(o.timeout_s) && o.timeout_s < 1e9;
        auto at = [&](double share) { return limited ? detail::deadline_after(t0, o.timeout_s * share) : clock::time_point::max(); };
        const auto ring = allreduce_cost{}.prepare(g, L, at(1.0 / 8));
        mapper_options part = o, rest = o;
        part.timeout_s = o.timeout_s / 4;
        // No local search inside the warm starts: under their own model it only picks another of
        // their optima, often worse under the combined one (mesh2d@256 (8, 32): an allreduce optimum
        // at 38.3 ms combined instead of 30.5); the combined search polishes every start under its
        // own model instead.
        part.local_search = false;
        std::uint64_t nodes = 0;
        std::size_t changes = 0;
        std::vector<oracle_stats> stats;  // the warm starts' oracles
        // Each optimum is offered as found and polished under its own model (moves and swaps, to
        // the half of the limit): one of the two is often the better start under the combined model
        // (random_blk_2 (4, 16): the polished allreduce optimum at 1,108 ms combined, the raw one at
        // 1,555 ms; mesh2d@256 (8, 32) the other way round, above).
        auto offer = [&](const mapping_result& m, const auto& model) {
          if (!m.has_solution()) return;
          rest.warm_starts.push_back(flatten(g, m.device_of));
          nodes += m.nodes_explored, changes += m.local_search_changes;
          add_oracle_stats(stats, m.oracles);
          if (!o.local_search) return;
          auto p = improve_mapping_flat(g, L, model, std::span<const std::size_t>(rest.warm_starts.back()), {.deadline = at(0.5)});
          if (p.moves + p.swaps > 0) rest.warm_starts.push_back(std::move(p.dev));
        };
        offer(map_devices(g, L, p2p_cost{}, part), p2p_cost{});
        offer(map_devices(g, L, ring, part), ring);
        if (limited) rest.timeout_s = std::max(0.0, o.timeout_s - std::chrono::duration<double>(clock::now() - t0).count());
        auto r = map_devices(g, L, combined_cost{.micro_batches = o.micro_batches, .ring = ring}, rest);
        r.time_s = std::chrono::duration<double>(clock::now() - t0).count();  // the whole run, warm starts included
        r.nodes_explored += nodes, r.local_search_changes += changes;
        add_oracle_stats(r.oracles, stats);
        return r;
      }
      default: return map_devices(g, L, p2p_cost{}, o);
    }
  }
};

}  // namespace devplace
