// Piper's model (peers/piper.hpp, peers/piper_cost.hpp): the 23 ResNet rows of
// shared/data/peers/piper/REFERENCE_RESULTS.md (read at run time) with the set and pair counts,
// and brute-force oracles on small random instances.
#include "devplace/peers/piper.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/piper.ipp"  // the Piper reader's definitions (compiled mode: devplace::core)
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

namespace {

const fs::path piper_dir = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "piper";
constexpr double gib = 1 << 30;

struct piper_reference_row {
  std::size_t k = 0;
  double memory_gib = 0, piper = 0, equi = 0;  // equi 0 = OOM
};

// | k | M (GiB) | Piper TPS | equi TPS | ratio | time |
std::vector<piper_reference_row> piper_reference_rows() {
  std::ifstream in(piper_dir / "REFERENCE_RESULTS.md");
  std::vector<piper_reference_row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[0] != '|' || !std::isdigit(static_cast<unsigned char>(line[2]))) continue;
    std::vector<std::string> c;
    std::size_t a = 1;
    for (std::size_t b; (b = line.find('|', a)) != std::string::npos; a = b + 1) c.push_back(line.substr(a, b - a));
    piper_reference_row r{std::stoul(c[0]), std::stod(c[1]), std::stod(c[2]), 0};
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
  const auto rows = piper_reference_rows();
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

namespace {

// A random Piper instance: n nodes in topological id order, degrees t = 1 (every node) and 2
// (some nodes), one or two options per (node, t).
io::piper_instance random_piper(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  io::piper_instance in;
  in.mbs_in_batch = std::vector<std::size_t>{1, 2, 4, 6}[rng() % 4];
  in.max_devices = 1 + rng() % 5;
  in.bandwidth = 0.5 + u(rng);
  in.max_memory_per_device = 4.0 + 8.0 * u(rng);
  in.in_edges.assign(n, {});
  in.out_edges.assign(n, {});
  for (std::size_t j = 1; j < n; ++j)
    for (std::size_t i = 0; i < j; ++i)
      if (u(rng) < 0.45 || (i + 1 == j && in.in_edges[j].empty() && u(rng) < 0.5)) {
        in.out_edges[i].push_back(in.edges.size());
        in.in_edges[j].push_back(in.edges.size());
        in.edges.emplace_back(i, j);
        in.edge_bytes.push_back(std::floor(4 * u(rng)));
      }
  for (std::size_t v = 0; v < n; ++v) {
    io::piper_node node;
    node.id = static_cast<std::int64_t>(10 * v + 3);
    for (int t : {1, 2}) {
      if (t == 2 && u(rng) < 0.3) continue;
      const std::size_t count = 1 + rng() % 2;
      for (std::size_t l = 0; l < count; ++l) {
        io::piper_option o;
        o.id = l == 0 ? "vanilla" : "activation recomp";
        o.time_per_sample = std::floor(1 + 8 * u(rng)) / t + l;  // recomputation is slower
        o.parameter_size = std::floor(6 * u(rng));
        o.memory_a = l == 0 ? std::floor(1 + 3 * u(rng)) : std::floor(2 * u(rng));
        o.memory_b = std::floor(3 * u(rng));
        for (std::size_t k = 0; k < in.in_edges[v].size(); ++k) o.sync_fw.push_back(std::floor(2 * u(rng)));
        for (std::size_t k = 0; k < in.out_edges[v].size(); ++k) o.sync_bw.push_back(std::floor(2 * u(rng)));
        node.tmpcs[t].push_back(o);
      }
    }
    in.nodes.push_back(node);
  }
  return in;
}

// τ of node v with option l in stage x (a bitmask), straight from spec §2.2.
double oracle_tau(const io::piper_instance& in, unsigned x, int t, std::size_t d, std::size_t v, std::size_t l) {
  const auto& o = in.nodes[v].tmpcs.at(t)[l];
  double bytes = 0;
  for (std::size_t k = 0; k < in.in_edges[v].size(); ++k) {
    const auto e = in.in_edges[v][k];
    if (!(x >> in.edges[e].first & 1u)) bytes += 2 * (in.edge_bytes[e] + o.sync_fw[k]);
  }
  for (std::size_t k = 0; k < in.out_edges[v].size(); ++k) {
    const auto e = in.out_edges[v][k];
    if (!(x >> in.edges[e].second & 1u)) bytes += 2 * (in.edge_bytes[e] + o.sync_bw[k]);
  }
  const double dd = static_cast<double>(d);
  const double resync = 4.0 * (dd - 1) * o.parameter_size / dd / static_cast<double>(in.mbs_in_batch);
  return (bytes / dd + resync) / in.bandwidth + o.time_per_sample / dd;
}

double oracle_stage_tps(const io::piper_instance& in, unsigned x, int t, std::size_t d, const std::vector<std::size_t>& choice,
                        const std::vector<std::size_t>& nodes) {
  double tps = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) tps += oracle_tau(in, x, t, d, nodes[i], choice[i]);
  return tps;
}

// KS of one stage: the greedy choice of spec §2.2 (heuristic = true), or the exact optimum over
// every choice (heuristic = false). Infinity when nothing fits.
double oracle_ks(const io::piper_instance& in, unsigned x, int t, std::size_t d, std::size_t y, bool heuristic) {
  std::vector<std::size_t> nodes;
  for (std::size_t v = 0; v < in.nodes.size(); ++v)
    if (x >> v & 1u) nodes.push_back(v);
  const double cap = in.max_memory_per_device;
  auto memory = [&](const std::vector<std::size_t>& c) {
    double m = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto& o = in.nodes[nodes[i]].tmpcs.at(t)[c[i]];
      m += o.memory_a * static_cast<double>(y) + o.memory_b;
    }
    return m;
  };
  auto tau = [&](std::size_t i, std::size_t l) { return oracle_tau(in, x, t, d, nodes[i], l); };
  double best = peers::piper_infinity;
  if (!heuristic) {
    const std::size_t total = std::size_t{1} << nodes.size();
    for (std::size_t mask = 0; mask < total; ++mask) {
      std::vector<std::size_t> c(nodes.size());
      bool ok = true;
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        c[i] = mask >> i & 1u;
        ok = ok && c[i] < in.nodes[nodes[i]].tmpcs.at(t).size();
      }
      if (ok && memory(c) <= cap) best = std::min(best, oracle_stage_tps(in, x, t, d, c, nodes));
    }
    return best;
  }
  std::vector<std::size_t> fast(nodes.size(), 0), low(nodes.size(), 0);
  auto mem_of = [&](std::size_t i, std::size_t l) {
    const auto& o = in.nodes[nodes[i]].tmpcs.at(t)[l];
    return o.memory_a * static_cast<double>(y) + o.memory_b;
  };
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t l = 1; l < in.nodes[nodes[i]].tmpcs.at(t).size(); ++l) {
      if (tau(i, fast[i]) > tau(i, l)) fast[i] = l;
      if (mem_of(i, low[i]) > mem_of(i, l)) low[i] = l;
    }
  if (memory(fast) <= cap) return oracle_stage_tps(in, x, t, d, fast, nodes);
  if (memory(low) > cap) return best;
  std::vector<std::tuple<double, std::size_t, std::size_t>> swaps;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t l = 0; l < in.nodes[nodes[i]].tmpcs.at(t).size(); ++l)
      if (mem_of(i, fast[i]) - mem_of(i, l) > 1e-9)
        swaps.emplace_back((tau(i, l) - tau(i, fast[i])) / (mem_of(i, fast[i]) - mem_of(i, l)), i, l);
  std::sort(swaps.begin(), swaps.end());
  auto h = fast;
  double excess = memory(fast) - cap;
  for (const auto& [r, i, l] : swaps) {
    excess -= mem_of(i, h[i]) - mem_of(i, l);
    h[i] = l;
    if (excess < 1e-9) break;
  }
  return oracle_stage_tps(in, x, t, d, h, nodes);
}

// min over every chain of stages (first stage = sources), every (t, d) per stage and every
// budget σ_i ≥ d_i + σ_{i+1} of the suffix sum of d (y = ⌈σ/d⌉), of the max stage KS.
double oracle_plan(const io::piper_instance& in, bool heuristic) {
  const std::size_t n = in.nodes.size(), K = in.max_devices, N = in.mbs_in_batch, S = std::min(N, K);
  std::vector<unsigned> succ(n, 0);
  for (const auto& [a, b] : in.edges) succ[a] |= 1u << b;
  auto successor_closed = [&](unsigned set) {
    for (std::size_t v = 0; v < n; ++v)
      if ((set >> v & 1u) && (succ[v] & ~set)) return false;
    return true;
  };
  std::map<std::tuple<unsigned, std::size_t, std::size_t>, double> memo;
  std::function<double(unsigned, std::size_t, std::size_t)> rec = [&](unsigned D, std::size_t k, std::size_t smax) {
    if (D == 0) return 0.0;
    const auto key = std::make_tuple(D, k, smax);
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
    double best = peers::piper_infinity;
    for (unsigned X = D; X; X = (X - 1) & D) {
      if (!successor_closed(D & ~X)) continue;
      for (int t : {1, 2}) {
        bool all = true;
        for (std::size_t v = 0; v < n; ++v)
          if (X >> v & 1u) all = all && in.nodes[v].tmpcs.contains(t);
        if (!all) continue;
        for (std::size_t d = 1; t * d <= k; ++d) {
          if (N % d) continue;
          for (std::size_t sigma = d; sigma <= smax; ++sigma) {
            const double stage = oracle_ks(in, X, t, d, (sigma + d - 1) / d, heuristic);
            if (stage >= peers::piper_infinity) continue;
            best = std::min(best, std::max(stage, rec(D & ~X, k - t * d, sigma - d)));
          }
        }
      }
    }
    return memo[key] = best;
  };
  return rec((1u << n) - 1, K, S);
}

}  // namespace

TEST_CASE("Piper DP: brute force over every contiguous split, (t, d), budget and the greedy choice (random instances)") {
  std::mt19937_64 rng(20211206);
  int feasible = 0, binding = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const auto in = random_piper(rng, 2 + rng() % 4);
    CAPTURE(trial);
    const double expected = oracle_plan(in, true);
    for (int rounds : {0, 3}) {
      peers::piper_options o;
      o.bounded_rounds = rounds;
      const auto res = peers::piper_plan(in, o);
      if (expected >= peers::piper_infinity) {
        CHECK(res.status == status::infeasible);
        continue;
      }
      REQUIRE(res.status == status::optimal);
      CHECK(std::abs(res.dp_value - expected) <= 1e-9 * expected);
      CHECK(std::abs(res.tps - expected) <= 1e-9 * expected);
    }
    if (expected < peers::piper_infinity) {
      ++feasible;
      const double exact = oracle_plan(in, false);  // every option choice: never worse than the heuristic
      CHECK(exact <= expected * (1 + 1e-12));
      binding += exact < expected * (1 - 1e-9);
    }
  }
  CHECK(feasible >= 60);
  MESSAGE("feasible instances: " << feasible << ", where the greedy choice is not optimal: " << binding);
}

TEST_CASE("Piper set and pair counts equal a brute-force count of successor-closed sets") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    const auto in = random_piper(rng, 3 + rng() % 6);
    const std::size_t n = in.nodes.size();
    std::vector<unsigned> succ(n, 0);
    for (const auto& [a, b] : in.edges) succ[a] |= 1u << b;
    std::vector<unsigned> sets;
    for (unsigned s = 0; s < (1u << n); ++s) {
      bool closed = true;
      for (std::size_t v = 0; v < n; ++v) closed = closed && (!(s >> v & 1u) || !(succ[v] & ~s));
      if (closed) sets.push_back(s);
    }
    std::uint64_t pairs = 0;
    for (auto a : sets)
      for (auto b : sets) pairs += a != b && (a & b) == b;
    const auto res = peers::piper_plan(in);
    CHECK(res.sets == sets.size());
    CHECK(res.set_pairs == pairs);
  }
}

TEST_CASE("Piper split evaluation and equi: hand-computed values on a chain of two nodes") {
  // a -> b, one option each at t = 1; N = 2, BW = 1, K = 2.
  io::piper_instance in;
  in.mbs_in_batch = 2;
  in.max_devices = 2;
  in.bandwidth = 1;
  in.max_memory_per_device = 100;
  in.edges = {{0, 1}};
  in.edge_bytes = {3};
  in.in_edges = {{}, {0}};
  in.out_edges = {{0}, {}};
  io::piper_node a, b;
  a.tmpcs[1] = {{"vanilla", 4.0, 2.0, 1.0, 0.0, {}, {1.0}}};
  b.tmpcs[1] = {{"vanilla", 6.0, 0.0, 1.0, 0.0, {0.5}, {}}};
  in.nodes = {a, b};
  const peers::piper_params p{2, 100, 1, 2};
  // One stage, d = 2: no cut edge; resync of a = 4·1·2/2/2 = 2; TPS = 2 + (4 + 6)/2 = 7.
  const std::vector<peers::piper_stage> one{{{0, 1}, 1, 2, {0, 0}}};
  CHECK(peers::piper_split_tps(in, p, one) == doctest::Approx(7.0).epsilon(1e-15));
  // Two stages, d = 1: a pays 2·(3 + 1) = 8 bytes, b pays 2·(3 + 0.5) = 7; TPS = max(8 + 4, 7 + 6) = 13.
  const std::vector<peers::piper_stage> two{{{0}, 1, 1, {0}}, {{1}, 1, 1, {0}}};
  CHECK(peers::piper_split_tps(in, p, two) == doctest::Approx(13.0).epsilon(1e-15));
  // Memory: y = ⌈2/1⌉ = 2 for a in the two-stage split: a·y + b = 2 > M = 1.5 → OOM.
  CHECK(peers::piper_split_tps(in, {2, 1.5, 1, 2}, two) == peers::piper_infinity);
  const auto equi = peers::piper_equi(in, p);  // stages 1 (d = 1: 10; d = 2: 7) and 2 (d = 1: 13)
  CHECK(equi.tps == doctest::Approx(7.0).epsilon(1e-15));
  CHECK(equi.stages == 1);
  CHECK(equi.d == 2);
  const auto plan = peers::piper_plan(in, {{2, 100.0, 1.0}});
  CHECK(plan.tps == doctest::Approx(7.0).epsilon(1e-15));
  // Arguments out of range are precondition failures, not results.
  CHECK_THROWS_AS((void)peers::piper_equi(in, {0, 100, 1, 2}), std::invalid_argument);
  CHECK_THROWS_AS((void)peers::piper_split_tps(in, {2, 100, 0, 2}, one), std::invalid_argument);
  CHECK_THROWS_AS((void)peers::piper_plan(in, {{std::size_t{0}, 100.0, 1.0}}), std::invalid_argument);
}
