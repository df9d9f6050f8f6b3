#pragma once
// Archetype of `dag`: exactly the required expressions, nothing more (no in_edges, no
// num_edges, no random access on the successor range). Every generic algorithm taking a `dag`
// is compiled against it.
#include <cstddef>
#include <forward_list>
#include <vector>

namespace devplace::archetypes {

class minimal_dag {
 public:
  minimal_dag() = default;
  explicit minimal_dag(const std::vector<std::vector<int>>& adj) {
    succ_.resize(adj.size());
    for (std::size_t u = 0; u < adj.size(); ++u)
      for (auto it = adj[u].rbegin(); it != adj[u].rend(); ++it) succ_[u].push_front(*it);
  }
  std::size_t num_vertices() const { return succ_.size(); }
  const std::forward_list<int>& out_edges(std::size_t u) const { return succ_[u]; }

 private:
  std::vector<std::forward_list<int>> succ_;
};

}  // namespace devplace::archetypes
