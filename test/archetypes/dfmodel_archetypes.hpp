#pragma once
// Archetypes of the DFModel concepts (include/devplace/dfmodel/concepts.hpp): the least a type
// must provide to model `dfmodel::workload_graph` (a dag whose kernels give their loop sizes and
// operation, as members) and `dfmodel::network_model` (free functions found by ADL only).
#include <cstddef>
#include <forward_list>
#include <utility>
#include <vector>

#include "devplace/dfmodel/concepts.hpp"

namespace devplace::archetypes {

/// A DAG of kernels: successors as a forward list, loops and operation per kernel, nothing else
/// (no names, ports, backward flags or step figures: their defaults apply).
class minimal_kernel_graph {
 public:
  struct kernel_spec {
    dfmodel::loops loops;
    dfmodel::kernel_op op = dfmodel::kernel_op::elementwise;
  };
  minimal_kernel_graph() = default;
  minimal_kernel_graph(std::vector<kernel_spec> kernels, const std::vector<std::vector<int>>& adj)
      : kernels_(std::move(kernels)), succ_(adj.size()) {
    for (std::size_t u = 0; u < adj.size(); ++u)
      for (auto it = adj[u].rbegin(); it != adj[u].rend(); ++it) succ_[u].push_front(*it);
  }
  std::size_t num_vertices() const { return succ_.size(); }
  const std::forward_list<int>& out_edges(std::size_t u) const { return succ_[u]; }
  dfmodel::loops kernel_loops(std::size_t v) const { return kernels_[v].loops; }
  dfmodel::kernel_op kernel_operation(std::size_t v) const { return kernels_[v].op; }

 private:
  std::vector<kernel_spec> kernels_;
  std::vector<std::forward_list<int>> succ_;
};

/// A network through ADL free functions only.
struct minimal_network {
  struct axis {
    dfmodel::dim_kind shape = dfmodel::dim_kind::ring;
    std::size_t chips = 1;
    double gbps = 1;
    dfmodel::parallelism carries = dfmodel::parallelism::none;
  };
  std::vector<axis> axes;
};
inline std::size_t dimension_count(const minimal_network& n) { return n.axes.size(); }
inline std::size_t dimension_size(const minimal_network& n, std::size_t d) { return n.axes[d].chips; }
inline double dimension_link_gbps(const minimal_network& n, std::size_t d) { return n.axes[d].gbps; }
inline dfmodel::dim_kind dimension_shape(const minimal_network& n, std::size_t d) { return n.axes[d].shape; }
inline dfmodel::parallelism dimension_parallelism(const minimal_network& n, std::size_t d) { return n.axes[d].carries; }

static_assert(dfmodel::workload_graph<minimal_kernel_graph>);
static_assert(dfmodel::network_model<minimal_network>);

}  // namespace devplace::archetypes
