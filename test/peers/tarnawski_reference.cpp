// Tarnawski et al. 2020 max-load DP (peers/tarnawski.hpp) against the algorithm it replaced, kept
// here as a test-only reference: every ideal J pushes to every ideal I ⊋ J, grown one supernode
// at a time by `downset_growth`, with no bound (so no pruning at all), and the ideal pairs counted
// by enumerating them. Random small instances with colour classes, backward nodes, unsupported
// nodes, memory caps and 0–2 CPUs; the production DP must give the same value, the same counts,
// a split whose loads (recomputed) reach that value, and the same result on 1, 2 and 8 threads.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "devplace/algorithm/downset_growth.hpp"
#include "devplace/peers/tarnawski.hpp"
#include "support/random_dag.hpp"

using namespace devplace;

namespace {

struct tw3_reference {
  double value = 0;
  std::uint64_t ideals = 0, pairs = 0;
};

tw3_reference tw3_reference_dp(const io::tarnawski_instance& in, std::size_t C, std::size_t F) {
  using bitset = detail::dynamic_bitset;
  namespace pd = peers::detail;
  const auto con = transform::contract_classes(pd::tw_class_graph(in));
  const downset_enumerator e(con.successors);
  const pd::tw_model m = pd::tw_build_model(in, con, e);
  std::vector<bitset> ideals;
  (void)e.for_each([&](const bitset& f) { ideals.push_back(f); return downset_action::proceed; });
  std::stable_sort(ideals.begin(), ideals.end(), [](const bitset& a, const bitset& b) { return a.count() < b.count(); });
  std::vector<std::uint64_t> keys(ideals.size(), 0);
  for (std::size_t i = 0; i < ideals.size(); ++i) ideals[i].for_each([&](std::size_t p) { keys[i] ^= m.zobrist[p]; });
  pd::tw_index index;
  index.build(ideals, keys);
  const std::size_t L = (C + 1) * (F + 1);
  std::vector<double> dp(ideals.size() * L, std::numeric_limits<double>::infinity());
  std::fill(dp.begin(), dp.begin() + static_cast<std::ptrdiff_t>(L), 0.0);
  const downset_growth grow(e);
  for (std::size_t j = 0; j < ideals.size(); ++j) {
    double* dj = &dp[j * L];
    for (std::size_t c = 0; c <= C; ++c)  // J is final: fewer devices
      for (std::size_t f = 0; f <= F; ++f) {
        const std::size_t x = c * (F + 1) + f;
        if (c > 0) dj[x] = std::min(dj[x], dj[x - (F + 1)]);
        if (f > 0) dj[x] = std::min(dj[x], dj[x - 1]);
      }
    pd::tw_acc a0{&m, &ideals[j]};
    a0.key = keys[j];
    (void)grow.for_each_superset(ideals[j], a0, [&](const bitset& I, const pd::tw_acc& a) {
      const double cpu = a.cpu, acc = a.acc_load();
      double* di = &dp[index.find(a.key, I) * L];
      for (std::size_t c = 0; c <= C; ++c)
        for (std::size_t f = 0; f <= F; ++f) {
          const std::size_t x = c * (F + 1) + f;
          if (c > 0) di[x] = std::min(di[x], std::max(dj[x - (F + 1)], cpu));
          if (f > 0) di[x] = std::min(di[x], std::max(dj[x - 1], acc));
        }
      return downset_action::proceed;
    });
  }
  tw3_reference r{dp[(ideals.size() - 1) * L + L - 1], ideals.size(), 0};
  for (const auto& J : ideals)
    (void)e.for_each_superset(J, no_accumulator{}, [&](const bitset&, const no_accumulator&) {
      ++r.pairs;
      return downset_action::proceed;
    }, true);
  return r;
}

// A forward DAG, some nodes grouped into colour classes, some with a backward node in their class
// (edges mirrored), random latencies (fractional), sizes, costs and unsupported nodes.
io::tarnawski_instance tw3_random_instance(std::mt19937_64& rng, int trial) {
  const std::size_t n = 3 + rng() % 12;
  const auto adj = devplace::test::random_adjacency(rng, n, devplace::test::all_shapes[trial % 5]);
  io::tarnawski_instance in;
  std::uniform_real_distribution<double> lat(0.0, 10.0);
  in.max_size_per_fpga = double(20 + rng() % 60);
  in.max_cpus = rng() % 3;
  in.max_fpgas = (in.max_cpus == 0 ? 1 : 0) + rng() % 4;
  std::vector<std::int64_t> cls(n);
  for (std::size_t v = 0; v < n; ++v) cls[v] = rng() % 4 == 0 && v > 0 ? cls[rng() % v] : static_cast<std::int64_t>(v);
  auto node = [&](std::size_t v, bool backward) {
    in.nodes.push_back({static_cast<std::int64_t>(in.nodes.size()), "", trial % 3 == 0 ? double(rng() % 9) : lat(rng),
                        trial % 3 == 0 ? double(rng() % 30) : 3 * lat(rng), double(rng() % 12), rng() % 9 != 0, backward,
                        rng() % 5 == 0 && !backward ? std::nullopt : std::optional<std::int64_t>(cls[v])});
    in.output_cost.push_back(trial % 3 == 0 ? double(rng() % 4) : lat(rng) / 3);
  };
  for (std::size_t v = 0; v < n; ++v) node(v, false);
  std::vector<long> bw(n, -1);
  if (trial % 2)
    for (std::size_t v = 0; v < n; ++v)
      if (rng() % 3) { bw[v] = static_cast<long>(in.nodes.size()); node(v, true); }
  for (std::size_t u = 0; u < n; ++u)
    for (int w : adj[u]) {
      in.edges.push_back({u, static_cast<std::size_t>(w)});
      if (bw[u] >= 0 && bw[static_cast<std::size_t>(w)] >= 0)
        in.edges.push_back({static_cast<std::size_t>(bw[static_cast<std::size_t>(w)]), static_cast<std::size_t>(bw[u])});
    }
  return in;
}

}  // namespace

TEST_CASE("Tarnawski max-load: the lattice DP equals the previous push DP (no bound) on random instances") {
  std::mt19937_64 rng(2020);
  int finite = 0, with_cpu = 0;
  for (int trial = 0; trial < 150; ++trial) {
    CAPTURE(trial);
    const auto in = tw3_random_instance(rng, trial);
    const auto ref = tw3_reference_dp(in, in.max_cpus, in.max_fpgas);
    const auto r = peers::tarnawski_max_load(in);
    CHECK(r.ideals == ref.ideals);
    CHECK(r.ideal_pairs == ref.pairs);
    REQUIRE(r.status == status::optimal);  // a chain of finite load (1e30 for infeasible accelerators) always exists
    CHECK(r.max_load == doctest::Approx(ref.value).epsilon(1e-12));
    finite += r.max_load < 1e29;
    with_cpu += in.max_cpus > 0;
    // The split: every node once, at most C CPUs and F accelerators, the worst load is the value.
    std::size_t nodes = 0, cpus = 0;
    double worst = 0;
    for (const auto& d : r.devices) { nodes += d.nodes.size(); cpus += d.cpu; worst = std::max(worst, d.load); }
    CHECK(nodes == in.nodes.size());
    CHECK(cpus <= in.max_cpus);
    CHECK(r.devices.size() - cpus <= in.max_fpgas);
    CHECK(worst == doctest::Approx(r.max_load).epsilon(1e-12));
    for (unsigned threads : {2u, 8u}) {
      peers::tarnawski_options o;
      o.threads = threads;
      const auto t = peers::tarnawski_max_load(in, o);
      CHECK(t.max_load == r.max_load);  // bit for bit
      REQUIRE(t.devices.size() == r.devices.size());
      for (std::size_t d = 0; d < t.devices.size(); ++d) {
        CHECK(t.devices[d].nodes == r.devices[d].nodes);
        CHECK(t.devices[d].load == r.devices[d].load);
      }
    }
  }
  CHECK(finite >= 100);  // most instances have a feasible accelerator split
  CHECK(with_cpu >= 75);
}

TEST_CASE("Tarnawski max-load: other device counts than the file's, against the reference") {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const auto in = tw3_random_instance(rng, trial);
    const std::size_t C = rng() % 3, F = (C == 0) + rng() % 5;
    peers::tarnawski_options o;
    o.cpus = C;
    o.fpgas = F;
    o.count_pairs = false;
    const auto r = peers::tarnawski_max_load(in, o);
    CHECK(r.ideal_pairs == 0);
    REQUIRE(r.status == status::optimal);
    CHECK(r.max_load == doctest::Approx(tw3_reference_dp(in, C, F).value).epsilon(1e-12));
  }
}
