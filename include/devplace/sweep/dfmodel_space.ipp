#pragma once
/// \file sweep/dfmodel_space.ipp
/// The definition of `sweep::prepare_dfmodel_space` (sweep/dfmodel_space.hpp): it reads DFModel
/// setups and runs the DFModel model, so it is compiled where it is included and called
/// (header-only mode: sweep/dfmodel_space.hpp does not include it; devplace/sweep.hpp and
/// sweep/registry.ipp do) or once in `devplace::core` (compiled mode; see config.hpp).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devplace/dfmodel/setup.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/dfmodel/setup.ipp"  // dfmodel::read_setup_json is called below
#endif
#include "devplace/sweep/dfmodel_space.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

namespace detail {

struct dfmodel_data {
  std::vector<std::string> names;  ///< as written in the space file
  std::vector<dfmodel::setup> setups;
  // The axes; an empty one is left out (one "keep" value).
  std::vector<std::size_t> chips;
  std::vector<double> link_gbps, dram_gbps, sram_bytes;
  [[nodiscard]] std::size_t n(std::size_t axis) const {
    const std::size_t sizes[] = {chips.size(), link_gbps.size(), dram_gbps.size(), sram_bytes.size()};
    return std::max<std::size_t>(1, sizes[axis]);
  }
};

/// Point i's setup index and axis positions (sram fastest).
struct dfmodel_point {
  std::size_t setup = 0, axis[4] = {};
};

template <int = 0>
dfmodel_point dfmodel_decode(const dfmodel_data& d, std::size_t i) {
  dfmodel_point p;
  for (int a = 3; a >= 0; --a) {
    p.axis[a] = i % d.n(static_cast<std::size_t>(a));
    i /= d.n(static_cast<std::size_t>(a));
  }
  p.setup = i;
  return p;
}

template <int = 0>
std::shared_ptr<const dfmodel_data> read_dfmodel_data(const space_file& f) {
  const io::detail::reader rd(f.file);
  known_fields(rd, f.space, "/space", {"setups", "chips", "link_gbps", "dram_gbps", "sram_bytes"});
  auto d = std::make_shared<dfmodel_data>();
  d->names = strings(rd, f.space, "setups", "/space");
  for (const auto& n : d->names) d->setups.push_back(dfmodel::read_setup_json(resolve(f, n)));
  d->chips = counts(rd, f.space, "chips", "/space", {});
  d->link_gbps = positives(rd, f.space, "link_gbps", "/space", {});
  d->dram_gbps = positives(rd, f.space, "dram_gbps", "/space", {});
  d->sram_bytes = positives(rd, f.space, "sram_bytes", "/space", {});
  if (!d->chips.empty())
    for (std::size_t s = 0; s < d->setups.size(); ++s) {
      const auto& dims = d->setups[s].sys.net.dims;
      if (std::none_of(dims.begin(), dims.end(), [](const dfmodel::dimension& x) { return x.size == 0; }))
        rd.fail("/space/chips", "setup " + d->names[s] + " has no free network dimension (size 0) to size");
    }
  return d;
}

/// The setup of point `p`, with the swept figures in place.
template <int = 0>
dfmodel::setup dfmodel_setup(const dfmodel_data& d, const dfmodel_point& p) {
  auto s = d.setups[p.setup];
  if (!d.chips.empty()) s.chips = d.chips[p.axis[0]];
  if (!d.link_gbps.empty())
    for (auto& x : s.sys.net.dims) x.link_gbps = d.link_gbps[p.axis[1]];
  if (!d.dram_gbps.empty()) s.sys.mem.dram_gbps = d.dram_gbps[p.axis[2]];
  if (!d.sram_bytes.empty()) s.sys.acc.sram_bytes = d.sram_bytes[p.axis[3]];
  return s;
}

template <int = 0>
json dfmodel_summary(const dfmodel::run_result& r) {
  const auto& m = r.mapping;
  if (m.status != status::optimal && m.status != status::feasible) return json::object();
  json sizes = json::array();
  for (const auto& x : r.net.dims) sizes.push_back(x.size);
  return {{"network_sizes", sizes}, {"tp", m.tp}, {"pp", m.pp}, {"dp", m.dp}, {"num_tile", m.num_tile},
          {"final_s", m.final_s}, {"util", m.util}, {"cost", m.cost}, {"power", m.power}, {"configs", m.configs.size()}};
}

/// The space of `f`: its points, their inputs and their evaluation.
template <int = 0>
point_space dfmodel_space(const space_file& f) {
  const auto d = detail::read_dfmodel_data(f);
  point_space s;
  s.size = d->setups.size() * d->n(0) * d->n(1) * d->n(2) * d->n(3);
  s.inputs = [d](std::size_t i) {
    const auto p = detail::dfmodel_decode(*d, i);
    json j{{"setup", d->names[p.setup]}, {"name", d->setups[p.setup].name}};
    if (!d->chips.empty()) j["chips"] = d->chips[p.axis[0]];
    if (!d->link_gbps.empty()) j["link_gbps"] = d->link_gbps[p.axis[1]];
    if (!d->dram_gbps.empty()) j["dram_gbps"] = d->dram_gbps[p.axis[2]];
    if (!d->sram_bytes.empty()) j["sram_bytes"] = d->sram_bytes[p.axis[3]];
    return j;
  };
  s.evaluate = [d](std::size_t i) {
    const auto p = detail::dfmodel_decode(*d, i);
    const auto setup = detail::dfmodel_setup(*d, p);
    const auto& dims = setup.sys.net.dims;
    const bool free = std::any_of(dims.begin(), dims.end(), [](const dfmodel::dimension& x) { return x.size == 0; });
    if (free && dfmodel::size_assignments(setup.sys.net, setup.chips).empty())  // these chips cannot be arranged
      return point_result{std::string(to_string(status::infeasible)), json::object()};
    const auto r = dfmodel::run_setup(setup);
    return point_result{std::string(to_string(r.mapping.status)), detail::dfmodel_summary(r)};
  };
  return s;
}

}  // namespace detail

/// The body of `prepare_dfmodel_space` (sweep/dfmodel_space.hpp declares this type and calls `run`).
template <int>
struct detail::prepare_dfmodel_space_defined_in_sweep_dfmodel_space_ipp {
  static point_space run(const space_file& f, const prepare_context&) { return dfmodel_space(f); }
};

}  // namespace devplace::sweep
