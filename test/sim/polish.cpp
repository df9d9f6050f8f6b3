// The simulation polish (sim/polish.hpp) against independent checks: every result re-simulated
// by `simulate`, never slower than its input on seeded random instances; its local optimum
// checked by enumerating the whole neighbourhood here; and the brute-force best over all
// injections on tiny instances.
#include "devplace/sim/polish.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <vector>

#include "archetypes/minimal_topology.hpp"
#include "devplace/topology/matrix_topology.hpp"

using namespace devplace;

namespace {

using pl_rows = std::vector<std::vector<std::size_t>>;

struct pl_instance {
  pipeline_model m;
  archetypes::minimal_topology t;
  simulation_options so;
};

/// S stages of R replicas on D devices: random times, bytes, bandwidths (symmetric when asked),
/// a random injection and random simulation settings.
pl_instance pl_random(std::mt19937_64& rng, std::size_t D, std::size_t S, std::size_t R, bool symmetric = false) {
  std::uniform_real_distribution<double> ms(0.5, 5.0), bytes(1e5, 4e6), gbps(0.5, 20.0), u(0, 1);
  pl_instance x;
  x.m.stages = S;
  x.m.replicas = R;
  x.m.message_bytes.assign(S, std::vector<double>(S, -1.0));
  for (std::size_t s = 0; s < S; ++s) {
    x.m.forward_ms.push_back(ms(rng));
    x.m.backward_ms.push_back(2 * ms(rng));
    x.m.param_bytes.push_back(u(rng) < 0.3 ? 0.0 : bytes(rng));
    for (std::size_t t = s + 1; t < S; ++t)
      if (t == s + 1 || u(rng) < 0.3) x.m.message_bytes[s][t] = bytes(rng);
  }
  x.t.bw.assign(D, std::vector<double>(D, 0.0));
  for (std::size_t a = 0; a < D; ++a)
    for (std::size_t b = 0; b < D; ++b)
      if (a != b) x.t.bw[a][b] = symmetric && b < a ? x.t.bw[b][a] : gbps(rng);
  std::vector<std::size_t> perm(D);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  x.m.device_of.assign(S, {});
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t r = 0; r < R; ++r) x.m.device_of[s].push_back(perm[s * R + r]);
  x.so = {.micro_batches = 1 + rng() % 3, .recompute = u(rng) < 0.5, .blocking_sends = u(rng) < 0.3};
  return x;
}

double pl_simulated_ms(pipeline_model m, const pl_rows& rows, const archetypes::minimal_topology& t, const simulation_options& so) {
  m.device_of = rows;
  return simulate(m, t, so).iteration_ms;
}

/// Every mapping one swap, move or stage swap away from `p`, enumerated here on its own.
std::vector<pl_rows> pl_neighbours(const pl_rows& p, std::size_t D) {
  std::vector<std::pair<std::size_t, std::size_t>> slots;
  std::set<std::size_t> used;
  for (std::size_t s = 0; s < p.size(); ++s)
    for (std::size_t r = 0; r < p[s].size(); ++r) slots.emplace_back(s, r), used.insert(p[s][r]);
  std::vector<pl_rows> out;
  for (std::size_t a = 0; a < slots.size(); ++a) {
    for (std::size_t b = a + 1; b < slots.size(); ++b) {
      pl_rows q = p;
      std::swap(q[slots[a].first][slots[a].second], q[slots[b].first][slots[b].second]);
      out.push_back(q);
    }
    for (std::size_t d = 0; d < D; ++d)
      if (!used.count(d)) {
        pl_rows q = p;
        q[slots[a].first][slots[a].second] = d;
        out.push_back(q);
      }
  }
  for (std::size_t s = 0; s < p.size(); ++s)
    for (std::size_t t = s + 1; t < p.size(); ++t)
      if (p[s].size() == p[t].size()) {
        pl_rows q = p;
        std::swap(q[s], q[t]);
        out.push_back(q);
      }
  return out;
}

/// Every injection of S × R slots into D devices.
std::vector<pl_rows> pl_all_mappings(std::size_t D, std::size_t S, std::size_t R) {
  std::vector<pl_rows> out;
  std::vector<std::size_t> cur;
  std::vector<char> used(D, 0);
  auto rec = [&](auto&& self) -> void {
    if (cur.size() == S * R) {
      pl_rows q(S);
      for (std::size_t v = 0; v < cur.size(); ++v) q[v / R].push_back(cur[v]);
      out.push_back(q);
      return;
    }
    for (std::size_t d = 0; d < D; ++d)
      if (!used[d]) {
        used[d] = 1, cur.push_back(d);
        self(self);
        used[d] = 0, cur.pop_back();
      }
  };
  rec(rec);
  return out;
}

bool pl_injective(const pl_rows& p, std::size_t D) {
  std::set<std::size_t> seen;
  for (const auto& row : p)
    for (auto d : row)
      if (d >= D || !seen.insert(d).second) return false;
  return true;
}

}  // namespace

TEST_CASE("polish: never slower than its input, re-simulated, on seeded random instances") {
  std::mt19937_64 rng(20261128);
  std::size_t improved = 0;
  for (int i = 0; i < 120; ++i) {
    const std::size_t D = 2 + rng() % 7, S = 1 + rng() % std::min<std::size_t>(D, 4), R = 1 + rng() % (D / S);
    const pl_instance x = pl_random(rng, D, S, R);
    CAPTURE(i);
    const double input_ms = simulate(x.m, x.t, x.so).iteration_ms;
    const auto r = polish_mapping(x.m, x.t, x.so);
    REQUIRE(r.device_of.size() == S);
    for (const auto& row : r.device_of) CHECK(row.size() == R);
    CHECK(pl_injective(r.device_of, D));
    CHECK(r.initial_iteration_ms == input_ms);
    const double out_ms = pl_simulated_ms(x.m, r.device_of, x.t, x.so);
    CHECK(r.iteration_ms == out_ms);
    CHECK(out_ms <= input_ms);
    CHECK(r.local_optimum);
    CHECK(r.status == status::feasible);
    if (out_ms < input_ms) ++improved;
  }
  CHECK(improved > 30);  // the instances leave room: a polish that never changes anything fails here
}

TEST_CASE("polish: no swap, move or stage swap of the result simulates faster (the neighbourhood enumerated)") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 60; ++i) {
    const std::size_t D = 3 + rng() % 4, S = 1 + rng() % 3, R = 1 + rng() % (D / S);
    const pl_instance x = pl_random(rng, D, S, R);
    CAPTURE(i);
    const auto r = polish_mapping(x.m, x.t, x.so);
    REQUIRE(r.local_optimum);
    for (const auto& q : pl_neighbours(r.device_of, D)) CHECK(pl_simulated_ms(x.m, q, x.t, x.so) >= r.iteration_ms);
  }
}

TEST_CASE("polish: the brute-force best when it is one change away, and never beyond it") {
  // S = 2 stages of one replica on 3 devices with symmetric links: the iteration depends only
  // on the pair of devices, and every pair is one move from every other, so the local optimum
  // is the best of all 6 injections. On the other tiny instances a local optimum may be worse:
  // counted, and checked never to beat brute force.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 40; ++i) {
    const pl_instance x = pl_random(rng, 3, 2, 1, true);
    double best = std::numeric_limits<double>::infinity();
    for (const auto& q : pl_all_mappings(3, 2, 1)) best = std::min(best, pl_simulated_ms(x.m, q, x.t, x.so));
    CHECK(polish_mapping(x.m, x.t, x.so).iteration_ms == best);
  }
  std::size_t reached = 0, cases = 0;
  for (int i = 0; i < 40; ++i) {
    const std::size_t D = 3 + rng() % 3, S = 1 + rng() % 2, R = 1 + rng() % std::min<std::size_t>(2, D / S);
    const pl_instance x = pl_random(rng, D, S, R);
    CAPTURE(i);
    double best = std::numeric_limits<double>::infinity();
    pl_rows best_rows;
    for (const auto& q : pl_all_mappings(D, S, R))
      if (const double t = pl_simulated_ms(x.m, q, x.t, x.so); t < best) best = t, best_rows = q;
    const auto r = polish_mapping(x.m, x.t, x.so);
    CHECK(r.iteration_ms >= best);
    const auto next = pl_neighbours(r.device_of, D);
    if (std::find(next.begin(), next.end(), best_rows) != next.end()) CHECK(r.iteration_ms == best);
    reached += r.iteration_ms == best;
    ++cases;
  }
  MESSAGE("tiny random instances: the polish reached the brute-force best in " << reached << " of " << cases);
  CHECK(reached * 2 > cases);
}

TEST_CASE("polish: the fastest of several candidates, never slower than any of them") {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 30; ++i) {
    const std::size_t D = 4 + rng() % 5, S = 2, R = 1 + rng() % (D / 2);
    const pl_instance x = pl_random(rng, D, S, R);
    std::vector<pl_rows> cands;
    for (int c = 0; c < 3; ++c) cands.push_back(pl_random(rng, D, S, R).m.device_of);
    double fastest = std::numeric_limits<double>::infinity();
    std::size_t first = 0;
    for (std::size_t c = 0; c < cands.size(); ++c)
      if (const double t = pl_simulated_ms(x.m, cands[c], x.t, x.so); t < fastest) fastest = t, first = c;
    const auto r = polish_fastest(x.m, x.t, std::span<const pl_rows>(cands), x.so);
    CHECK(r.iteration_ms == pl_simulated_ms(x.m, r.device_of, x.t, x.so));
    CHECK(r.iteration_ms <= fastest);
    CHECK(r.status == status::feasible);
    // No time at all: the fastest candidate, unchanged.
    const auto z = polish_fastest(x.m, x.t, std::span<const pl_rows>(cands), x.so, {.timeout_s = 0});
    CHECK(z.start == first);
    CHECK(z.device_of == cands[first]);
    CHECK(z.status == status::time_limit);
    CHECK_FALSE(z.local_optimum);
  }
}

TEST_CASE("polish: a stage swap moves a whole ring at once, hand-computed") {
  // Two stages of two replicas on four devices, no free device: stage 0 holds a large ring
  // (P = 4e8 bytes) on the slow pair {2, 3}, stage 1 a tiny one on the fast pair {0, 1}; all
  // cross links equal. Exchanging the rows puts the big ring on the fast pair.
  Eigen::MatrixXd bw = Eigen::MatrixXd::Constant(4, 4, 10.0);
  bw(0, 1) = bw(1, 0) = 100.0;
  bw(2, 3) = bw(3, 2) = 1.0;
  const matrix_topology t(bw);
  pipeline_model m{.stages = 2, .replicas = 2, .forward_ms = {1.0, 1.0}, .backward_ms = {2.0, 2.0},
                   .param_bytes = {4e8, 1e3}, .message_bytes = {{-1.0, 1e3}, {-1.0, -1.0}}, .device_of = {{2, 3}, {0, 1}}};
  const auto only_swaps_moves = polish_mapping(m, t, {.micro_batches = 1}, {.stage_swaps = false});
  const auto with_stage_swaps = polish_mapping(m, t, {.micro_batches = 1}, {.swaps = false, .moves = false});
  CHECK(with_stage_swaps.stage_swaps == 1);
  CHECK(with_stage_swaps.device_of == pl_rows{{0, 1}, {2, 3}});
  CHECK(with_stage_swaps.iteration_ms < with_stage_swaps.initial_iteration_ms);
  // Hand-computed: F0 1 | act ~0 | F1 1 | B1 2 | grad | B0 2, then the 4e8-byte ring at 100 GB/s: 2·(1/2)·4 ms.
  CHECK(with_stage_swaps.iteration_ms == doctest::Approx(6.0 + 4.0).epsilon(1e-3));
  CHECK(only_swaps_moves.iteration_ms <= only_swaps_moves.initial_iteration_ms);
}

TEST_CASE("polish: time limit, stop flag, progress and bad input") {
  std::mt19937_64 rng(5);
  const pl_instance x = pl_random(rng, 8, 2, 4);
  const auto z = polish_mapping(x.m, x.t, x.so, {.timeout_s = 0});
  CHECK(z.status == status::time_limit);
  CHECK(z.device_of == x.m.device_of);
  const std::atomic<bool> stop{true};
  CHECK(polish_mapping(x.m, x.t, x.so, {.stop = &stop}).status == status::time_limit);
  std::size_t calls = 0;
  polish_progress last;
  const auto r = polish_mapping(x.m, x.t, x.so, {.progress = [&](const polish_progress& p) { ++calls, last = p; },
                                                 .progress_interval_s = 0});
  CHECK(calls >= 1);
  CHECK(last.iteration_ms == r.iteration_ms);
  CHECK(last.evaluations == r.evaluations);
  CHECK_THROWS_AS((void)polish_mapping(x.m, x.t, x.so, {.timeout_s = -1}), std::invalid_argument);
  pipeline_model dup = x.m;
  dup.device_of[1][0] = dup.device_of[0][0];
  CHECK_THROWS_AS((void)polish_mapping(dup, x.t, x.so), std::invalid_argument);
  CHECK_THROWS_AS((void)polish_fastest(x.m, x.t, std::span<const pl_rows>(), x.so), std::invalid_argument);
}
