#include "devplace/ilp/builders/phaze_schedule.hpp"

#include <doctest/doctest.h>

#include "support/skip.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <filesystem>
#include <limits>
#include <random>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ilp/external.hpp"
#include "ilp/solvers.hpp"
#include "support/random_dag.hpp"

using namespace devplace;
using ilp::phaze_op_kind;

namespace {

struct layer {
  std::vector<std::vector<int>> adj;
  std::vector<ilp::phaze_operator> ops;
  ilp::phaze_schedule_options opt;
  [[nodiscard]] std::span<const ilp::phaze_operator> span() const { return std::span<const ilp::phaze_operator>(ops); }
};

/// A seeded random layer: one of five DAG shapes, 1–`max_cores` cores of each type, integer
/// latencies ℓ ∈ [1, 9], ℓ̂ ∈ [1, ℓ + 1] (so intra-op parallelism is sometimes slower), TC/VC
/// operators and, when `fused`, fused ones; with `zeros` a quarter of the operators take 0.
layer random_layer(std::mt19937_64& rng, std::size_t n, int trial, bool fused, bool zeros = false,
                   std::size_t max_cores = 2) {
  layer l;
  l.adj = test::random_adjacency(rng, n, test::all_shapes[trial % 5]);
  l.opt.tensor_cores = 1 + rng() % max_cores;
  l.opt.vector_cores = 1 + rng() % max_cores;
  for (std::size_t i = 0; i < n; ++i) {
    ilp::phaze_operator op;
    const auto k = rng() % (fused ? 3 : 2);
    op.kind = k == 0 ? phaze_op_kind::tensor : k == 1 ? phaze_op_kind::vector : phaze_op_kind::fused;
    op.latency = double(1 + rng() % 9);
    op.parallel_latency = double(1 + rng() % static_cast<unsigned>(op.latency + 1));
    if (zeros && rng() % 4 == 0) op.latency = op.parallel_latency = 0;
    l.ops.push_back(op);
  }
  return l;
}

std::size_t incomparable_pairs(const layer& l) {
  const reachability_index reach(l.adj);
  std::size_t p = 0;
  for (std::size_t i = 0; i < l.ops.size(); ++i)
    for (std::size_t j = i + 1; j < l.ops.size(); ++j) p += reach.comparable(i, j) ? 0 : 1;
  return p;
}

// Two exact oracles that share no code with the builder (or with each other). Both use the
// semantics of the ILP: an operator runs either intra-op parallel (ℓ̂) or on one core of its type
// (a fused one on the pair (c, c), c < min(#TC, #VC)) with ℓ; two incomparable operators that
// share a core, or of which one is intra-op parallel, are ordered (one finishes before the other
// starts).

/// Oracle 1 (disjunctive graph): for every choice of y and of cores, every orientation of the
/// conflicting incomparable pairs; the makespan of an acyclic orientation is its longest path.
/// Exponential in the number of conflicts: n ≤ 5.
double disjunctive_oracle(const layer& l) {
  const std::size_t n = l.ops.size(), tc = l.opt.tensor_cores, vc = l.opt.vector_cores, pairs = std::min(tc, vc);
  const reachability_index reach(l.adj);
  std::vector<int> y(n, 0), core(n, -1);
  double best = std::numeric_limits<double>::infinity();
  std::vector<double> dur(n);
  std::vector<std::pair<std::size_t, std::size_t>> conflicts;
  std::vector<std::vector<char>> before(n, std::vector<char>(n, 0));

  auto longest = [&]() -> double {  // longest path over `before`, or inf on a cycle
    std::vector<std::size_t> indeg(n, 0), order;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (before[i][j]) ++indeg[j];
    for (std::size_t i = 0; i < n; ++i)
      if (!indeg[i]) order.push_back(i);
    std::vector<double> start(n, 0.0);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      for (std::size_t j = 0; j < n; ++j)
        if (before[i][j]) {
          start[j] = std::max(start[j], start[i] + dur[i]);
          if (!--indeg[j]) order.push_back(j);
        }
    }
    if (order.size() < n) return std::numeric_limits<double>::infinity();
    double mk = 0;
    for (std::size_t i = 0; i < n; ++i) mk = std::max(mk, start[i] + dur[i]);
    return mk;
  };
  std::function<void(std::size_t)> orient = [&](std::size_t k) {
    if (k == conflicts.size()) {
      best = std::min(best, longest());
      return;
    }
    const auto [i, j] = conflicts[k];
    before[i][j] = 1;
    orient(k + 1);
    before[i][j] = 0;
    before[j][i] = 1;
    orient(k + 1);
    before[j][i] = 0;
  };
  std::function<void(std::size_t)> choose = [&](std::size_t i) {
    if (i == n) {
      for (std::size_t a = 0; a < n; ++a) {
        dur[a] = y[a] ? l.ops[a].parallel_latency : l.ops[a].latency;
        for (std::size_t b = 0; b < n; ++b) before[a][b] = reach.reaches(a, b) ? 1 : 0;
      }
      conflicts.clear();
      auto uses_tc = [&](std::size_t a) { return !y[a] && l.ops[a].kind != phaze_op_kind::vector ? core[a] : -1; };
      auto uses_vc = [&](std::size_t a) { return !y[a] && l.ops[a].kind != phaze_op_kind::tensor ? core[a] : -1; };
      for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = a + 1; b < n; ++b) {
          if (reach.comparable(a, b)) continue;
          const bool clash = y[a] || y[b] || (uses_tc(a) >= 0 && uses_tc(a) == uses_tc(b)) ||
                             (uses_vc(a) >= 0 && uses_vc(a) == uses_vc(b));
          if (clash) conflicts.emplace_back(a, b);
        }
      orient(0);
      return;
    }
    y[i] = 1;
    core[i] = -1;
    choose(i + 1);
    y[i] = 0;
    const std::size_t k = l.ops[i].kind == phaze_op_kind::tensor ? tc : l.ops[i].kind == phaze_op_kind::vector ? vc : pairs;
    for (std::size_t c = 0; c < k; ++c) {
      core[i] = static_cast<int>(c);
      choose(i + 1);
    }
    core[i] = -1;
  };
  choose(0);
  return best;
}

/// Oracle 2 (seed-phaze.md §2.7, enumeration over schedules): the serial schedule-generation
/// scheme over every precedence-feasible order and every mode (y, core) of every operator; each
/// operator starts when its placed predecessors and the placed operators it conflicts with have
/// finished. Ordering an optimal schedule by (start, duration) gives one branch whose operators
/// start no later, so the minimum is the optimum. Branch and bound prunes a branch whose placed
/// finish time plus the least remaining path (latencies min(ℓ, ℓ̂)) reaches the incumbent.
/// Returns the optimum and a witness schedule. n ≤ 8 in the tests.
struct oracle_result {
  double makespan = std::numeric_limits<double>::infinity();
  ilp::phaze_schedule witness;
};

oracle_result schedule_oracle(const layer& l) {
  const std::size_t n = l.ops.size(), tc = l.opt.tensor_cores, vc = l.opt.vector_cores, pairs = std::min(tc, vc);
  const reachability_index reach(l.adj);
  std::vector<std::vector<std::size_t>> preds(n);
  for (std::size_t u = 0; u < n; ++u)
    for (int v : l.adj[u]) preds[static_cast<std::size_t>(v)].push_back(u);
  std::vector<double> tail(n, 0.0);  // least time from i's finish to the end: Σ min latencies on a path
  for (std::size_t u = n; u-- > 0;)
    for (std::size_t v = u + 1; v < n; ++v)
      if (reach.reaches(u, v))
        tail[u] = std::max(tail[u], std::min(l.ops[v].latency, l.ops[v].parallel_latency) + tail[v]);
  // (ids are a topological order: test::random_adjacency and the hand examples have u < v on edges)

  std::vector<char> placed(n, 0), par(n, 0);
  std::vector<double> st(n, 0), du(n, 0);
  std::vector<long> tcore(n, -1), vcore(n, -1);
  oracle_result best;
  std::function<void(std::size_t, double)> dfs = [&](std::size_t depth, double cur) {
    if (depth == n) {
      if (cur < best.makespan) {
        best.makespan = cur;
        auto& w = best.witness;
        w.status = status::optimal;
        w.makespan = cur;
        w.start = st;
        w.duration = du;
        w.parallel.assign(par.begin(), par.end());
        w.tensor_core = tcore;
        w.vector_core = vcore;
      }
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (placed[i] || std::any_of(preds[i].begin(), preds[i].end(), [&](std::size_t p) { return !placed[p]; }))
        continue;
      const auto kind = l.ops[i].kind;
      const std::size_t cores = kind == phaze_op_kind::tensor ? tc : kind == phaze_op_kind::vector ? vc : pairs;
      for (std::size_t mode = 0; mode <= cores; ++mode) {  // mode 0: intra-op parallel; else core mode − 1
        par[i] = mode == 0;
        const long c = static_cast<long>(mode) - 1;
        tcore[i] = mode > 0 && kind != phaze_op_kind::vector ? c : -1;
        vcore[i] = mode > 0 && kind != phaze_op_kind::tensor ? c : -1;
        du[i] = par[i] ? l.ops[i].parallel_latency : l.ops[i].latency;
        double s = 0;
        for (std::size_t j = 0; j < n; ++j) {
          if (!placed[j]) continue;
          const bool conflict = reach.reaches(j, i) || par[i] || par[j] || (tcore[i] >= 0 && tcore[i] == tcore[j]) ||
                                (vcore[i] >= 0 && vcore[i] == vcore[j]);
          if (conflict) s = std::max(s, st[j] + du[j]);
        }
        st[i] = s;
        const double fin = s + du[i];
        if (std::max(cur, fin + tail[i]) >= best.makespan) continue;
        placed[i] = 1;
        dfs(depth + 1, std::max(cur, fin));
        placed[i] = 0;
      }
      par[i] = 0;
      tcore[i] = vcore[i] = -1;
    }
  };
  dfs(0, 0.0);
  return best;
}

}  // namespace

TEST_CASE("PHAZE: the two exhaustive oracles agree, and the witness schedule is valid") {
  // Cross-checks the oracles themselves on layers small enough for the disjunctive one.
  std::mt19937_64 rng(76);
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const auto l = random_layer(rng, 2 + rng() % 4, trial, trial % 2 == 1, trial % 5 == 4, 3);
    const auto r = schedule_oracle(l);
    CHECK(r.makespan == doctest::Approx(disjunctive_oracle(l)).epsilon(1e-12));
    CHECK(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, r.witness) == "");
  }
}

TEST_CASE_TEMPLATE("PHAZE scheduling ILP optimum equals the exhaustive oracle", S, DEVPLACE_ILP_ALL_SOLVERS) {
  // The model alone (z families in, no lazy loop), solved once; the reference solver enumerates
  // the binaries, so it gets the smaller layers.
  std::mt19937_64 rng(77);
  const bool reference = std::is_same_v<S, test::reference_solver>;
  std::size_t pairs_seen = 0;
  for (int trial = 0; trial < (reference ? 10 : 30); ++trial) {
    CAPTURE(trial);
    const std::size_t n = reference ? 2 + rng() % 3 : 4 + rng() % 4;  // 2–4 or 4–7 operators
    const auto l = random_layer(rng, n, trial, trial % 2 == 1);
    pairs_seen += incomparable_pairs(l);
    const double want = schedule_oracle(l).makespan;
    const auto p = ilp::build_phaze_schedule_ilp(l.adj, l.span(), l.opt);
    const auto sol = S{}.solve(p.model(), {});
    REQUIRE(sol.status == ilp::solve_status::optimal);
    CHECK(p.model().max_violation(sol.values) <= 1e-6);
    CHECK(sol.objective == doctest::Approx(want).epsilon(1e-7));
    const auto s = p.decode(sol);
    CHECK(s.status == status::optimal);
    CHECK(s.makespan == doctest::Approx(want).epsilon(1e-9));
    CHECK(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, s) == "");
  }
  CHECK(pairs_seen >= (reference ? 5u : 60u));  // the instances have real branching
}

TEST_CASE_TEMPLATE("PHAZE: the lazy resource loop, transitivity and symmetry breaking keep the optimum", S,
                   DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  // Layers of 4–6 operators with at least 3 incomparable pairs (chains need no core rows), of the
  // branching shapes (sparse, fan, multi-source).
  constexpr int branching_shape[] = {0, 3, 4};
  std::mt19937_64 rng(78);
  int second_solve = 0;
  constexpr int trials = 20;
  for (int trial = 0; trial < trials; ++trial) {
    CAPTURE(trial);
    layer l;
    for (int attempt = 0; attempt < 100; ++attempt) {
      l = random_layer(rng, 4 + rng() % 3, branching_shape[trial % 3], trial % 2 == 0);
      if (incomparable_pairs(l) >= 3) break;
    }
    REQUIRE(incomparable_pairs(l) >= 3);
    const double want = schedule_oracle(l).makespan;
    const auto lazy = ilp::solve_phaze_schedule(l.adj, l.span(), S{}, l.opt, {}, true);
    REQUIRE(lazy.status == status::optimal);
    CHECK(lazy.makespan == doctest::Approx(want).epsilon(1e-9));
    CHECK(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, lazy) == "");
    CHECK((lazy.solves == 1 || lazy.solves == 2));
    if (lazy.solves == 2) ++second_solve;
    auto o = l.opt;
    o.transitivity = ilp::phaze_transitivity::always;
    o.symmetry_breaking = false;
    const auto full = ilp::solve_phaze_schedule(l.adj, l.span(), S{}, o, {}, false);
    REQUIRE(full.status == status::optimal);
    CHECK(full.solves == 1);
    CHECK(full.makespan == doctest::Approx(want).epsilon(1e-9));
    CHECK(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, full) == "");
    o.transitivity = ilp::phaze_transitivity::never;
    o.symmetry_breaking = true;
    const auto sym = ilp::solve_phaze_schedule(l.adj, l.span(), S{}, o, {}, false);
    REQUIRE(sym.status == status::optimal);
    CHECK(sym.makespan == doctest::Approx(want).epsilon(1e-9));
    CHECK(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, sym) == "");
  }
  // Both branches of the loop ran: some relaxed optima needed the core rows, some did not.
  CHECK(second_solve > 0);
  CHECK(second_solve < trials);
}

TEST_CASE_TEMPLATE("PHAZE: zero-latency operators, with and without transitivity, lazy or not", S,
                   DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  std::mt19937_64 rng(79);
  for (int trial = 0; trial < 16; ++trial) {
    CAPTURE(trial);
    const auto l = random_layer(rng, 4 + rng() % 3, trial, trial % 2 == 0, true);
    const double want = schedule_oracle(l).makespan;
    for (auto tr : {ilp::phaze_transitivity::automatic, ilp::phaze_transitivity::never}) {
      auto o = l.opt;
      o.transitivity = tr;
      for (bool lazy : {false, true}) {
        CAPTURE(lazy);
        const auto s = ilp::solve_phaze_schedule(l.adj, l.span(), S{}, o, {}, lazy);
        REQUIRE(s.status == status::optimal);
        CHECK(s.makespan == doctest::Approx(want).epsilon(1e-9));
        CHECK(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, s) == "");
      }
    }
  }
}

TEST_CASE_TEMPLATE("PHAZE examples by hand", S, DEVPLACE_ILP_ALL_SOLVERS) {
  const S solver{};
  SUBCASE("two independent matmuls and a join") {
    // 0 -> 2 <- 1; ops 0, 1 on tensor cores (ℓ = 4, ℓ̂ = 3), op 2 a vector op (ℓ = 1, ℓ̂ = 1).
    const std::vector<std::vector<int>> adj{{2}, {2}, {}};
    const std::vector<ilp::phaze_operator> ops{
        {phaze_op_kind::tensor, 4, 3}, {phaze_op_kind::tensor, 4, 3}, {phaze_op_kind::vector, 1, 1}};
    ilp::phaze_schedule_options o{.tensor_cores = 2, .vector_cores = 1};
    // Two tensor cores: 0 and 1 side by side on one core each (4), then 2 (1): 5. Any intra-op
    // parallel matmul runs alone: 3 + 4 + 1 = 8 or 3 + 3 + 1 = 7.
    auto s = ilp::solve_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), solver, o);
    REQUIRE(s.status == status::optimal);
    CHECK(s.makespan == doctest::Approx(5.0));
    CHECK(s.solves == 1);  // the relaxed optimum fits on the cores
    CHECK_FALSE(s.parallel[0]);
    CHECK_FALSE(s.parallel[1]);
    CHECK(s.tensor_core[0] != s.tensor_core[1]);
    // One tensor core: serial, each intra-op parallel at 3: 3 + 3 + 1 = 7 (not 4 + 4 + 1 = 9 nor
    // 3 + 4 + 1 = 8).
    o.tensor_cores = 1;
    s = ilp::solve_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), solver, o);
    REQUIRE(s.status == status::optimal);
    CHECK(s.makespan == doctest::Approx(7.0));
    CHECK(s.parallel[0]);
    CHECK(s.parallel[1]);
  }
  SUBCASE("three matmuls on two tensor cores need the lazy second solve") {
    // Three independent TC ops, ℓ = 2, ℓ̂ = 1.9, two TCs. Without the z rows all three overlap
    // on cores (T = 2), which needs three TCs, so the loop re-solves with them. Then: two side by
    // side (2) and the third intra-op parallel alone (1.9): 3.9; versus the third after them on a
    // core: 4; two intra-op: 1.9 + 1.9 + 2 = 5.8; all intra-op: 5.7.
    const std::vector<std::vector<int>> adj{{}, {}, {}};
    const std::vector<ilp::phaze_operator> ops(3, {phaze_op_kind::tensor, 2, 1.9});
    const ilp::phaze_schedule_options o{.tensor_cores = 2, .vector_cores = 1};
    const auto s = ilp::solve_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), solver, o);
    REQUIRE(s.status == status::optimal);
    CHECK(s.solves == 2);
    CHECK(s.makespan == doctest::Approx(3.9));
    CHECK(std::count(s.parallel.begin(), s.parallel.end(), true) == 1);
    CHECK(ilp::validate_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), o, s) == "");
  }
  SUBCASE("a fused operator needs a TC+VC pair") {
    // Two TCs, one VC: one pair (TC0, VC0). Independent ops: fused A and B (ℓ = 3, ℓ̂ = 2.5), a
    // TC op C (ℓ = 3, ℓ̂ = 2). A and B both need pair 0 unless intra-op parallel; TC1 is free for C.
    //   A, B serial on pair 0, C on TC1 beside them:              3 + 3 = 6
    //   A intra-op alone (2.5), then B on pair 0 beside C on TC1:  2.5 + 3 = 5.5   <- optimum
    //   A, B intra-op (2.5 + 2.5), C on a core or intra-op:       5 + 2 = 7 at best
    //   C intra-op alone (2), then A, B serial on pair 0:          2 + 6 = 8
    const std::vector<std::vector<int>> adj{{}, {}, {}};
    const std::vector<ilp::phaze_operator> ops{
        {phaze_op_kind::fused, 3, 2.5}, {phaze_op_kind::fused, 3, 2.5}, {phaze_op_kind::tensor, 3, 2}};
    const ilp::phaze_schedule_options o{.tensor_cores = 2, .vector_cores = 1};
    for (bool lazy : {false, true}) {
      CAPTURE(lazy);
      const auto s = ilp::solve_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), solver, o, {}, lazy);
      REQUIRE(s.status == status::optimal);
      CHECK(s.makespan == doctest::Approx(5.5));
      CHECK(s.parallel[0] != s.parallel[1]);
      CHECK_FALSE(s.parallel[2]);
      CHECK(s.tensor_core[2] == 1);  // TC0 belongs to the pair the other fused op uses
      CHECK(ilp::validate_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), o, s) == "");
    }
  }
  SUBCASE("a zero-latency operator holds its core at an instant") {
    // p -> z -> b, a independent; 1 TC, 1 VC. p, b vector ops (ℓ = 1), a a TC op (ℓ = 5), z a TC
    // op with ℓ = ℓ̂ = 0; intra-op parallelism costs 10 for p, a, b. As in the ILP, z is ordered
    // against a on TC0 (or, parallel, against everything), so z cannot sit inside a: either a
    // after z (z at 1 after p, a from 1 to 6) or z after a (z at 5, b from 5 to 6): 6. (The
    // relaxed model without core rows reaches 5 with z at 1 inside a; the lazy loop must see
    // that z has no free core then and re-solve.)
    const std::vector<std::vector<int>> adj{{2}, {}, {3}, {}};  // p = 0, a = 1, z = 2, b = 3
    const std::vector<ilp::phaze_operator> ops{{phaze_op_kind::vector, 1, 10},
                                               {phaze_op_kind::tensor, 5, 10},
                                               {phaze_op_kind::tensor, 0, 0},
                                               {phaze_op_kind::vector, 1, 10}};
    const ilp::phaze_schedule_options o{.tensor_cores = 1, .vector_cores = 1};
    for (bool lazy : {false, true}) {
      CAPTURE(lazy);
      const auto s = ilp::solve_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), solver, o, {}, lazy);
      REQUIRE(s.status == status::optimal);
      CHECK(s.makespan == doctest::Approx(6.0));
      CHECK(s.solves == (lazy ? 2u : 1u));
      CHECK(ilp::validate_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), o, s) == "");
    }
  }
  SUBCASE("a diamond with a slow branch") {
    // 0 -> {1, 2} -> 3, all vector ops, ℓ = (1, 5, 2, 1), ℓ̂ = (1, 4, 2, 1).
    // One VC: everything is serial; each op takes min(ℓ, ℓ̂): 1 + 4 + 2 + 1 = 8.
    // Two VCs: 1 and 2 side by side on one VC each: 1 + max(5, 2) + 1 = 7; making 1 intra-op
    // (4, alone) gives 1 + 4 + 2 + 1 = 8, so 7.
    const std::vector<std::vector<int>> adj{{1, 2}, {3}, {3}, {}};
    const std::vector<ilp::phaze_operator> ops{{phaze_op_kind::vector, 1, 1},
                                               {phaze_op_kind::vector, 5, 4},
                                               {phaze_op_kind::vector, 2, 2},
                                               {phaze_op_kind::vector, 1, 1}};
    ilp::phaze_schedule_options o{.tensor_cores = 1, .vector_cores = 1};
    CHECK(ilp::solve_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), solver, o).makespan ==
          doctest::Approx(8.0));
    o.vector_cores = 2;
    const auto s = ilp::solve_phaze_schedule(adj, std::span<const ilp::phaze_operator>(ops), solver, o);
    REQUIRE(s.status == status::optimal);
    CHECK(s.makespan == doctest::Approx(7.0));
    CHECK(s.start[3] == doctest::Approx(6.0));
  }
}

TEST_CASE_TEMPLATE("PHAZE: an attention layer with two heads matches the exhaustive oracle", S, DEVPLACE_ILP_BACKENDS) {
  if (!devplace::test::backend_available<S>()) return;
  // 0 LN (VC) -> 1 Q, 2 K, 3 V (TC GEMMs); head h: score (fused, Q·K) -> softmax (VC) -> context
  // (TC, also reads V); 10 projection (TC) after both contexts; 11 residual (VC). 2 TCs, 2 VCs.
  // ℓ̂ ≈ ℓ/2 + 0.5 (a little better than two cores); 12 operators, 16 incomparable pairs.
  layer l;
  l.adj = {{1, 2, 3}, {4, 7}, {4, 7}, {6, 9}, {5}, {6}, {10}, {8}, {9}, {10}, {11}, {}};
  const auto op = [](phaze_op_kind k, double lat) { return ilp::phaze_operator{k, lat, lat / 2 + 0.5}; };
  l.ops = {op(phaze_op_kind::vector, 1), op(phaze_op_kind::tensor, 4), op(phaze_op_kind::tensor, 4),
           op(phaze_op_kind::tensor, 4), op(phaze_op_kind::fused, 3), op(phaze_op_kind::vector, 2),
           op(phaze_op_kind::tensor, 3), op(phaze_op_kind::fused, 3), op(phaze_op_kind::vector, 2),
           op(phaze_op_kind::tensor, 3), op(phaze_op_kind::tensor, 4), op(phaze_op_kind::vector, 1)};
  l.opt = {.tensor_cores = 2, .vector_cores = 2};
  CHECK(incomparable_pairs(l) == 16);
  const auto want = schedule_oracle(l);
  REQUIRE(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, want.witness) == "");
  // The lazy loop needs both solves: without core rows Q, K, V and the heads all overlap, and the
  // critical path 1 + 4 + 3 + 2 + 3 + 2.5 (projection intra-op) + 1 = 16.5 is below the optimum
  // (the oracle's, 18.5 at the time of writing; not hard-coded). CBC needs ~1 s per solve here, so
  // it runs the lazy loop only (which ends with the full model).
  const bool cbc = std::string_view(S::name()) == "cbc";
  for (bool lazy : {true, false}) {
    if (cbc && !lazy) continue;
    CAPTURE(lazy);
    const auto s = ilp::solve_phaze_schedule(l.adj, l.span(), S{}, l.opt, {}, lazy);
    REQUIRE(s.status == status::optimal);
    CHECK(s.solves == (lazy ? 2u : 1u));
    CHECK(s.makespan == doctest::Approx(want.makespan).epsilon(1e-9));
    CHECK(ilp::validate_phaze_schedule(l.adj, l.span(), l.opt, s) == "");
  }
}

TEST_CASE("PHAZE model size by hand") {
  // The join 0 -> 2 <- 1 (ops as above), 2 TCs, 1 VC. One incomparable pair {0, 1}.
  const std::vector<std::vector<int>> adj{{2}, {2}, {}};
  const std::vector<ilp::phaze_operator> ops{
      {phaze_op_kind::tensor, 4, 3}, {phaze_op_kind::tensor, 4, 3}, {phaze_op_kind::vector, 1, 1}};
  const std::span<const ilp::phaze_operator> sp(ops);
  ilp::phaze_schedule_options o{.tensor_cores = 2, .vector_cores = 1};
  const auto p = ilp::build_phaze_schedule_ilp(adj, sp, o);
  // Columns: T, t_0..2, y_0..2, x_01, x_10, z^tc for ops 0 and 1 (2 each), z^vc for op 2 (1): 14.
  CHECK(p.model().num_vars() == 14);
  // Rows: (1) ×3, (7) one per edge ×2, (3) ×1, (8) ×2, (9) ×2, (10)/(11) ×3, (15) for {0, 1} on
  // TC0 and TC1 ×2: 15. No (4): all latencies are positive.
  CHECK(p.model().num_rows() == 15);
  // H = Σ min(ℓ, ℓ̂) = 3 + 3 + 1 = 7 (everything serial); T ≤ H.
  CHECK(p.big_m() == doctest::Approx(7.0));
  CHECK(p.model().get(p.makespan_var()).upper == doctest::Approx(7.0));
  // Symmetry breaking: the first TC operator may only use TC0.
  const auto& cols = p.model().variables();
  const auto z01 = std::find_if(cols.begin(), cols.end(), [](const ilp::variable& v) { return v.name == "ztc_0_1"; });
  REQUIRE(z01 != cols.end());
  CHECK(z01->upper == 0.0);
  // With (4) always: every triple of this graph involves a constant that makes its row vacuous
  // (x_02 = x_12 = 1, x_20 = x_21 = 0), so none is added.
  o.transitivity = ilp::phaze_transitivity::always;
  CHECK(ilp::build_phaze_schedule_ilp(adj, sp, o).model().num_rows() == 15);
  // Three independent operators: 6 x columns; the triple rows x_ik >= x_ij + x_jk - 1 for the 6
  // ordered triples are all real.
  const std::vector<std::vector<int>> free3{{}, {}, {}};
  const std::vector<ilp::phaze_operator> ops3(3, {phaze_op_kind::tensor, 1, 1});
  o.tensor_core_rows = o.vector_core_rows = false;
  o.transitivity = ilp::phaze_transitivity::never;
  const auto base = ilp::build_phaze_schedule_ilp(free3, std::span<const ilp::phaze_operator>(ops3), o).model().num_rows();
  o.transitivity = ilp::phaze_transitivity::always;
  CHECK(ilp::build_phaze_schedule_ilp(free3, std::span<const ilp::phaze_operator>(ops3), o).model().num_rows() == base + 6);
  // base: (1) ×3, (3) ×3, (8) ×6, (9) ×6 = 18.
  CHECK(base == 18);
}

TEST_CASE("the PHAZE validator rejects overlaps, wrong cores and wrong durations") {
  const std::vector<std::vector<int>> adj{{}, {}};
  const std::vector<ilp::phaze_operator> ops{{phaze_op_kind::tensor, 2, 1}, {phaze_op_kind::tensor, 2, 1}};
  const ilp::phaze_schedule_options o{.tensor_cores = 1, .vector_cores = 1};
  const std::span<const ilp::phaze_operator> sp(ops);
  ilp::phaze_schedule s;
  s.makespan = 4;
  s.start = {0, 2};
  s.duration = {2, 2};
  s.parallel = {false, false};
  s.tensor_core = {0, 0};
  s.vector_core = {-1, -1};
  CHECK(ilp::validate_phaze_schedule(adj, sp, o, s) == "");
  s.makespan = 5;
  CHECK(ilp::validate_phaze_schedule(adj, sp, o, s) != "");  // not the last finish time
  s.makespan = 4;
  s.start = {0, 1};
  CHECK(ilp::validate_phaze_schedule(adj, sp, o, s) != "");  // overlap on core 0
  s.start = {0, 2};
  s.tensor_core = {0, 1};
  CHECK(ilp::validate_phaze_schedule(adj, sp, o, s) != "");  // core 1 does not exist
  s.tensor_core = {0, 0};
  s.duration = {1, 2};
  CHECK(ilp::validate_phaze_schedule(adj, sp, o, s) != "");  // not parallel, so 2
  s.parallel = {true, false};
  s.start = {1.5, 0};
  s.makespan = 2.5;
  CHECK(ilp::validate_phaze_schedule(adj, sp, o, s) != "");  // the parallel op overlaps
  s.start = {2, 0};
  s.makespan = 3;
  CHECK(ilp::validate_phaze_schedule(adj, sp, o, s) == "");  // now it runs after
  CHECK_THROWS_AS((void)ilp::build_phaze_schedule_ilp(adj, sp.subspan(0, 1), o), std::invalid_argument);
  const std::vector<ilp::phaze_operator> bad{{phaze_op_kind::vector, 1, 1}, {phaze_op_kind::vector, -1, 1}};
  CHECK_THROWS_AS((void)ilp::build_phaze_schedule_ilp(adj, std::span<const ilp::phaze_operator>(bad), o), std::invalid_argument);
  const std::vector<ilp::phaze_operator> vec{{phaze_op_kind::vector, 1, 1}, {phaze_op_kind::vector, 1, 1}};
  CHECK_THROWS_AS((void)ilp::build_phaze_schedule_ilp(adj, std::span<const ilp::phaze_operator>(vec),
                                                       {.tensor_cores = 1, .vector_cores = 0}),
                  std::invalid_argument);
}

TEST_CASE("PHAZE: the cbc and glpsol programs read the written LP and MPS models and find the oracle's makespan") {
  if (!test::have_program(test::cbc_program) && !test::have_program(test::glpsol_program)) {
    devplace::test::skip("neither the cbc nor the glpsol program is installed: file acceptance not tested");
    return;
  }
  std::mt19937_64 rng(79);
  const auto dir = test::scratch_dir("phaze_files");
  for (int trial = 0; trial < 6; ++trial) {
    CAPTURE(trial);
    const auto l = random_layer(rng, 4 + rng() % 3, trial, trial % 2 == 1);
    const double want = schedule_oracle(l).makespan;
    const auto p = ilp::build_phaze_schedule_ilp(l.adj, l.span(), l.opt);
    test::check_written_model(p.model(), dir, want);
  }
  std::filesystem::remove_all(dir);
}
