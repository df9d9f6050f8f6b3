// The classes of devices the mapper's oracles work on (map/detail/device_classes.hpp): the link
// classes of random_blk_2 are its nodes, and none spans a link that breaks a node; the quotient
// link costs against every pair of devices.
#include "devplace/map/detail/device_classes.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "devplace/topology/generators.hpp"

using namespace devplace;

TEST_CASE("link classes: those of random_blk_2 are its nodes, and a link that breaks a node splits it") {
  const auto topo = random_blk_2(64, 1);
  const link_costs L(topo);
  const auto classes = detail::find_link_classes(L);
  std::vector<std::size_t> node_of(64);
  std::vector<std::string> names;
  for (std::size_t d = 0; d < 64; ++d) {
    const auto& n = topo.device_names()[d];
    const auto prefix = n.substr(0, n.find('/'));
    const auto it = std::find(names.begin(), names.end(), prefix);
    node_of[d] = static_cast<std::size_t>(it - names.begin());
    if (it == names.end()) names.push_back(prefix);
  }
  REQUIRE(classes.size() == names.size());
  std::size_t devices = 0;
  for (const auto& c : classes) {
    devices += c.size();
    for (const auto d : c) CHECK(node_of[d] == node_of[c.front()]);
  }
  CHECK(devices == 64);
  // a node of two or more devices whose first device gets a faster link to another node: the
  // devices of that node no longer agree outside it
  const auto big = std::find_if(classes.begin(), classes.end(), [](const auto& c) { return c.size() >= 3; });
  REQUIRE(big != classes.end());
  Eigen::MatrixXd bw = topo.bandwidth_matrix();
  const std::size_t a = big->front(), other = big == classes.begin() ? classes.back().front() : classes.front().front();
  bw(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(other)) *= 3;
  bw(static_cast<Eigen::Index>(other), static_cast<Eigen::Index>(a)) *= 3;
  const link_costs broken_links{matrix_topology(bw)};
  const auto broken = detail::find_link_classes(broken_links);
  std::size_t found = 0;
  for (const auto& c : broken) {
    if (std::find(c.begin(), c.end(), a) == c.end()) continue;
    ++found;
    CHECK(c != *big);  // the node is no longer a class
    for (const auto x : c)  // and the class found is one: its devices agree outside it
      for (std::size_t d = 0; d < 64; ++d)
        if (std::find(c.begin(), c.end(), d) == c.end()) CHECK(broken_links.ms_per_byte(x, d) == broken_links.ms_per_byte(a, d));
  }
  CHECK(found == 1);
}

TEST_CASE("link classes: the quotient link costs are the links between classes and the cheapest inside one") {
  for (const auto& topo : {random_blk_2(64, 1), random_blk_2(32, 7), random_blk_1(32, 3)}) {
    const link_costs L(topo);
    const auto classes = detail::find_link_classes(L);
    const auto w = detail::quotient_link_costs(L, classes);
    const std::size_t K = classes.size();
    REQUIRE(w.size() == K * K);
    for (std::size_t x = 0; x < K; ++x)
      for (std::size_t y = 0; y < K; ++y) {
        double least = std::numeric_limits<double>::infinity();
        for (const auto a : classes[x])
          for (const auto b : classes[y]) {
            if (a == b) continue;
            if (x != y) CHECK(L.ms_per_byte(a, b) == w[x * K + y]);  // one cost between two classes
            least = std::min(least, L.ms_per_byte(a, b));
          }
        CHECK(w[x * K + y] == least);
      }
  }
}
