// Piper's model (peers/piper.hpp, peers/piper_cost.hpp): the 23 ResNet rows of
// shared/data/peers/piper/REFERENCE_RESULTS.md (read at run time) with the set and pair counts,
// and brute-force oracles on small random instances.
#include "devplace/peers/piper.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

namespace {

const fs::path piper_dir = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "piper";
constexpr double gib = 1 << 30;

struct reference_row {
  std::size_t k = 0;
  double memory_gib = 0, piper = 0, equi = 0;  // equi 0 = OOM
};

// | k | M (GiB) | Piper TPS | equi TPS | ratio | time |
std::vector<reference_row> reference_rows() {
  std::ifstream in(piper_dir / "REFERENCE_RESULTS.md");
  std::vector<reference_row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[0] != '|' || !std::isdigit(static_cast<unsigned char>(line[2]))) continue;
    std::vector<std::string> c;
    std::size_t a = 1;
    for (std::size_t b; (b = line.find('|', a)) != std::string::npos; a = b + 1) c.push_back(line.substr(a, b - a));
    reference_row r{std::stoul(c[0]), std::stod(c[1]), std::stod(c[2]), 0};
    if (c[3].find("OOM") == std::string::npos) r.equi = std::stod(c[3]);
    rows.push_back(r);
  }
  return rows;
}

// The printed digits: the table has 3 decimals (setprecision(3) fixed).
bool printed_equal(double value, double printed) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", value);
  return std::stod(buf) == printed;
}

}  // namespace

TEST_CASE("Piper on ResNet: the 23 reference rows (TPS, equi, 242 sets, 28,729 pairs)") {
  if (!devplace::test::require_path(piper_dir / "REFERENCE_RESULTS.md")) return;
  const auto rows = reference_rows();
  REQUIRE(rows.size() == 23);
  const auto in = io::read_piper(piper_dir / "inputs" / "resnet.json");
  for (const auto& r : rows) {
    CAPTURE(r.k);
    CAPTURE(r.memory_gib);
    peers::piper_options o;
    o.devices = r.k;
    o.memory_bytes = r.memory_gib * gib;
    o.bandwidth = 25.0 * gib;
    const auto res = peers::piper_plan(in, o);
    REQUIRE(res.status == status::optimal);
    CHECK(res.sets == 242);
    CHECK(res.set_pairs == 28729);
    CHECK(printed_equal(res.tps, r.piper));
    CHECK(std::abs(res.tps - res.dp_value) <= 1e-9 * res.tps);
    const auto equi = peers::piper_equi(in, res.params);
    if (r.equi == 0) CHECK(equi.tps >= peers::piper_infinity);
    else CHECK(printed_equal(equi.tps, r.equi));
  }
}
