#include "devplace/ilp/builders/dfmodel.hpp"

#include <doctest/doctest.h>

#include "support/skip.hpp"

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include "ilp/external.hpp"
#include "ilp/solvers.hpp"
#include "support/random_dag.hpp"

using namespace devplace;
using namespace devplace::ilp;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// --- The oracle --------------------------------------------------------------------------------
// The paper's performance model (seed-dfmodel.md §3.1–3.2, §3.5) written here from the matrix
// equations, sharing no code with the builder or with evaluate_dfmodel_inter_chip: one-hot A and
// s, h_c = f / (n_tp·t_lim·t_flop), h_n = lookup(c_i, s_i) (eq. 5), h_m = s_srcᵀ C_j s_dst (eq. 6),
// H = A[src] (eq. 4), L = ((A[src]U_s) ⊕ (A[dst]U_t)) ⊕ (A[src] ∧ A[dst]) (eq. 3) with the
// upper-triangular U_s[i,j] = i ≤ j, U_t[i,j] = i < j, L' = L ∧ ¬A[dst] for point-to-point hops
// (A5), t_cri = max or sum of Aᵀh_c, Aᵀh_n + Hᵀh_m, L'ᵀh_p (eq. 7, A2). Returns +inf for a labelling
// that sends a tensor backwards (A6) or exceeds the DRAM capacity Lᵀb ≤ d_cap.
double oracle_time(const dfmodel_inter_chip_problem& p, const std::vector<std::size_t>& st,
                   const std::vector<std::size_t>& sc) {
  const std::size_t n = p.kernels.size(), C = p.stages;
  std::vector<std::vector<int>> A(n, std::vector<int>(C, 0)), S(n);
  for (std::size_t i = 0; i < n; ++i) {
    A[i][st[i]] = 1;
    S[i].assign(p.kernels[i].scheme_cost.size(), 0);
    S[i][sc[i]] = 1;
  }
  auto index_of = [&](std::size_t i) {  // Σ_c c·A[i,c]
    std::size_t k = 0;
    for (std::size_t c = 0; c < C; ++c) k += c * static_cast<std::size_t>(A[i][c]);
    return k;
  };
  std::vector<double> comp(C, 0), net(C, 0), p2p(C, 0), dram(C, 0);
  const double rate = p.tp_chips * p.tile_limit * p.tile_flops;
  for (std::size_t i = 0; i < n; ++i) {
    double hn = 0;
    for (std::size_t k = 0; k < S[i].size(); ++k) hn += p.kernels[i].scheme_cost[k] * S[i][k];
    for (std::size_t c = 0; c < C; ++c) {
      comp[c] += A[i][c] * (p.kernels[i].flop / rate);
      net[c] += A[i][c] * hn;
    }
  }
  for (const auto& t : p.tensors) {
    if (index_of(t.src) > index_of(t.dst)) return inf;
    double hm = 0;
    for (std::size_t a = 0; a < S[t.src].size(); ++a)
      for (std::size_t b = 0; b < S[t.dst].size(); ++b)
        if (!t.transition_cost.empty()) hm += S[t.src][a] * t.transition_cost[a][b] * S[t.dst][b];
    for (std::size_t c = 0; c < C; ++c) {
      int xs = 0, xt = 0;  // (A[src]U_s)[c], (A[dst]U_t)[c]
      for (std::size_t r = 0; r < C; ++r) {
        xs += A[t.src][r] * (r <= c ? 1 : 0);
        xt += A[t.dst][r] * (r < c ? 1 : 0);
      }
      const int L = (xs ^ xt) ^ (A[t.src][c] & A[t.dst][c]);
      const int Lp = L & (1 - A[t.dst][c]);
      const double bw = p.boundary_bandwidth.empty() ? p.network_bandwidth
                                                     : (c + 1 < C ? p.boundary_bandwidth[c] : 1.0);
      net[c] += A[t.src][c] * hm;
      p2p[c] += Lp * (t.bytes / bw);
      dram[c] += L * t.bytes;
    }
  }
  double worst = 0;
  for (std::size_t c = 0; c < C; ++c) {
    if (dram[c] > p.dram_capacity) return inf;
    const double cri = p.overlap == dfmodel_overlap::max ? std::max(comp[c], std::max(net[c], p2p[c]))
                                                         : comp[c] + net[c] + p2p[c];
    worst = std::max(worst, cri);
  }
  return worst;
}

/// The optimum by enumeration: every stage labelling (C^n) × every scheme choice (Π z_i) through
/// the oracle. `fixed_scheme0` keeps every kernel on scheme 0 (to tell whether schemes matter).
double brute_force(const dfmodel_inter_chip_problem& p, bool fixed_scheme0 = false) {
  const std::size_t n = p.kernels.size(), C = p.stages;
  std::vector<std::size_t> st(n, 0), sc(n, 0);
  double best = inf;
  for (;;) {
    bool monotone = true;  // skip the scheme loop for labellings the oracle would reject anyway
    for (const auto& t : p.tensors) monotone = monotone && st[t.src] <= st[t.dst];
    if (monotone) {
      std::fill(sc.begin(), sc.end(), 0);
      for (;;) {
        best = std::min(best, oracle_time(p, st, sc));
        std::size_t k = 0;
        while (k < n && (fixed_scheme0 || sc[k] + 1 == p.kernels[k].scheme_cost.size())) sc[k++] = 0;
        if (k == n) break;
        ++sc[k];
      }
    }
    std::size_t k = 0;
    while (k < n && st[k] + 1 == C) st[k++] = 0;
    if (k == n) break;
    ++st[k];
  }
  return best;
}

dfmodel_inter_chip_problem random_problem(std::mt19937_64& rng, std::size_t n, int trial) {
  dfmodel_inter_chip_problem p;
  const auto adj = test::random_adjacency(rng, n, test::all_shapes[trial % 5]);
  for (std::size_t i = 0; i < n; ++i) {
    dfmodel_kernel k;
    k.flop = double(rng() % 40);
    k.scheme_cost.clear();
    const std::size_t z = 1 + rng() % 3;
    for (std::size_t s = 0; s < z; ++s) k.scheme_cost.push_back(double(rng() % 12));
    p.kernels.push_back(k);
  }
  for (std::size_t u = 0; u < n; ++u)
    for (int v : adj[u]) {
      dfmodel_tensor t{u, static_cast<std::size_t>(v), double(rng() % 30), {}};
      if (rng() % 3 != 0) {
        t.transition_cost.assign(p.kernels[u].scheme_cost.size(), std::vector<double>(p.kernels[t.dst].scheme_cost.size()));
        for (auto& row : t.transition_cost)
          for (auto& c : row) c = double(rng() % 8);
      }
      p.tensors.push_back(t);
    }
  p.stages = 2 + rng() % 2;
  p.tp_chips = double(1 + rng() % 2);
  p.tile_limit = 2;
  p.tile_flops = 1;
  p.network_bandwidth = double(1 + rng() % 4);
  p.overlap = trial % 2 ? dfmodel_overlap::sum : dfmodel_overlap::max;
  if (trial % 4 == 1)  // a heterogeneous pipeline: one bandwidth per stage boundary
    for (std::size_t c = 0; c + 1 < p.stages; ++c) p.boundary_bandwidth.push_back(0.5 * double(1 + rng() % 6));
  if (trial % 3 == 0) p.dram_capacity = double(rng() % 20);  // a DRAM budget that sometimes forbids the best cut
  return p;
}

struct instance {
  dfmodel_inter_chip_problem p;
  double optimum;
};

/// Seeded random instances with their brute-force optimum, computed once for every solver.
/// `small` ones (n ≤ 4) are those the enumeration MILP solver can take.
const std::vector<instance>& random_instances(bool small) {
  static const auto make = [](bool sm) {
    std::mt19937_64 rng(sm ? 4041 : 404);
    std::vector<instance> out;
    for (int trial = 0; trial < (sm ? 14 : 40); ++trial) {
      auto p = random_problem(rng, sm ? 3 + rng() % 2 : 3 + rng() % 4, trial);
      const double opt = brute_force(p);
      out.push_back({std::move(p), opt});
    }
    return out;
  };
  static const std::vector<instance> big = make(false), little = make(true);
  return small ? little : big;
}

}  // namespace

TEST_CASE("DFModel oracle: the random instances are not trivial") {
  for (bool small : {false, true}) {
    int schemes_matter = 0, cut_matters = 0, dram_binding = 0, infeasible = 0;
    for (const auto& [p, opt] : random_instances(small)) {
      if (std::isinf(opt)) ++infeasible;
      if (brute_force(p, true) > opt + 1e-9) ++schemes_matter;
      auto one = p;
      one.stages = 1;
      one.boundary_bandwidth.clear();
      if (brute_force(one) > opt + 1e-9) ++cut_matters;
      if (std::isfinite(p.dram_capacity)) {
        auto q = p;
        q.dram_capacity = inf;
        if (brute_force(q) < opt - 1e-9) ++dram_binding;
      }
    }
    CAPTURE(small);
    CHECK(infeasible == 0);  // everything in one stage is always valid
    CHECK(schemes_matter >= 5);
    CHECK(cut_matters >= 5);
    CHECK(dram_binding >= 1);
  }
}

TEST_CASE("DFModel evaluate_dfmodel_inter_chip agrees with the oracle") {
  std::mt19937_64 rng(77);
  int valid = 0, invalid = 0;
  for (const auto& [p, opt] : random_instances(false)) {
    for (int k = 0; k < 30; ++k) {
      std::vector<std::size_t> st(p.kernels.size()), sc(p.kernels.size());
      for (std::size_t i = 0; i < st.size(); ++i) {
        st[i] = rng() % p.stages;
        sc[i] = rng() % p.kernels[i].scheme_cost.size();
      }
      const auto e = evaluate_dfmodel_inter_chip(p, st, sc);
      const double want = oracle_time(p, st, sc);
      CHECK(e.valid == std::isfinite(want));
      if (e.valid) {
        ++valid;
        CHECK(e.objective == doctest::Approx(want).epsilon(1e-12));
      } else {
        ++invalid;
      }
    }
  }
  CHECK(valid >= 100);
  CHECK(invalid >= 100);
}

TEST_CASE_TEMPLATE("DFModel inter-chip MILP optimum equals brute force", S, DEVPLACE_ILP_ALL_SOLVERS) {
  const bool reference = std::is_same_v<S, test::reference_solver>;
  int trial = 0;
  for (const auto& [p, want] : random_instances(reference)) {
    CAPTURE(trial++);
    REQUIRE(std::isfinite(want));
    const auto ilp = build_dfmodel_inter_chip_ilp(p);
    const auto sol = S{}.solve(ilp.model(), {});
    const auto r = ilp.decode(sol);
    REQUIRE(r.status == status::optimal);
    CHECK(ilp.model().max_violation(sol.values) <= 1e-6);
    CHECK(r.figures.valid);
    CHECK(r.objective == doctest::Approx(want).epsilon(1e-9));                         // the decoded mapping
    CHECK(oracle_time(p, r.stage_of, r.scheme_of) == doctest::Approx(want).epsilon(1e-9));
    CHECK(sol.objective == doctest::Approx(want).epsilon(1e-7));                       // the MILP's T
    CHECK(r.lower_bound == doctest::Approx(want).epsilon(1e-9));
  }
}

namespace {

/// The hand-computed instance: a chain k0 -> k1 -> k2 -> k3 on two stages.
dfmodel_inter_chip_problem hand_problem(dfmodel_overlap o) {
  dfmodel_inter_chip_problem p;
  p.kernels = {{4, {0}}, {6, {2, 9}}, {6, {13, 1}}, {4, {0}}};
  p.tensors = {{0, 1, 6, {}}, {1, 2, 8, {{0, 10}, {4, 3}}}, {2, 3, 2, {}}};
  p.stages = 2;
  p.tp_chips = 1;
  p.tile_limit = 1;
  p.tile_flops = 1;  // h_c = f
  p.network_bandwidth = 2;  // h_p = 3, 4, 1
  p.overlap = o;
  return p;
}

}  // namespace

// Hand computation. h_c = (4, 6, 6, 4); kernel costs c_1 = (2, 9), c_2 = (13, 1); conversion of
// k1 -> k2: C = [[0, 10], [4, 3]] (row = scheme of k1, column = scheme of k2), charged at k1's
// stage; h_p = (6, 8, 2) / 2 = (3, 4, 1). The monotone labellings of the chain on 2 stages are
// 0000 (=1111), 0111, 0011, 0001.
// max (eq. 7):
//   0000: compute 20 -> >= 20.   0111: stage 1 computes 16 -> >= 16.   0001: stage 0 computes 16.
//   0011: compute (10, 10), p2p (4, 0), network (c_1 + C, c_2):
//         (s1, s2) = (0,0): (2, 13) -> 13; (0,1): (12, 1) -> 12; (1,0): (13, 13) -> 13; (1,1): (12, 1) -> 12.
//   optimum 12 at 0011 with s2 = 1 (s1 either).
// sum (A2):
//   0011: (10 + net0 + 4, 10 + net1): (0,0): (16, 23) -> 23; (0,1): 26; (1,0): 27; (1,1): 26.
//   0111: stage 1 = 16 + min(c_1 + C + c_2) = 16 + 13 = 29.   0001: stage 0 = 16 + 13 + 1 = 30.
//   0000: 20 + 13 = 33.   optimum 23, only at 0011 with schemes (0, 0, 0, 0).
TEST_CASE_TEMPLATE("DFModel by hand: a four-kernel chain on two stages", S, DEVPLACE_ILP_ALL_SOLVERS) {
  SUBCASE("max overlap") {
    const auto p = hand_problem(dfmodel_overlap::max);
    CHECK(brute_force(p) == 12);
    const auto r = solve_dfmodel_inter_chip(p, S{});
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective == doctest::Approx(12));
    CHECK(r.stage_of == std::vector<std::size_t>{0, 0, 1, 1});
    CHECK(r.scheme_of[2] == 1);
    const auto e = evaluate_dfmodel_inter_chip(p, {0, 0, 1, 1}, {0, 0, 1, 0});
    REQUIRE(e.valid);
    CHECK(e.compute == std::vector<double>{10, 10});
    CHECK(e.network == std::vector<double>{12, 1});
    CHECK(e.p2p == std::vector<double>{4, 0});
    CHECK(e.critical == std::vector<double>{12, 10});
    CHECK(e.dram == std::vector<double>{8, 8});  // k1 -> k2 is alive in both stages (eq. 3)
  }
  SUBCASE("sum overlap") {
    const auto p = hand_problem(dfmodel_overlap::sum);
    CHECK(brute_force(p) == 23);
    const auto r = solve_dfmodel_inter_chip(p, S{});
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective == doctest::Approx(23));
    CHECK(r.stage_of == std::vector<std::size_t>{0, 0, 1, 1});
    CHECK(r.scheme_of == std::vector<std::size_t>{0, 0, 0, 0});
  }
  SUBCASE("a DRAM capacity of 7 forbids the cut of k1 -> k2 (8 bytes)") {
    // 0011 is out; 0111 keeps 6 bytes alive, 0001 2 bytes: the best is then 16 (compute-bound).
    auto p = hand_problem(dfmodel_overlap::max);
    p.dram_capacity = 7;
    const auto r = solve_dfmodel_inter_chip(p, S{});
    REQUIRE(r.status == status::optimal);
    CHECK(r.objective == doctest::Approx(16));
    CHECK(brute_force(p) == 16);
  }
}

namespace {
/// A user topology that is not a matrix: device d talks to e at 1 + d + 2e GB/s.
struct toy_topology {
  [[nodiscard]] std::size_t num_devices() const { return 3; }
  [[nodiscard]] double bandwidth_gbps(std::size_t a, std::size_t b) const { return double(1 + a + 2 * b); }
};
}  // namespace

TEST_CASE("DFModel over any dag and any topology") {
  // adjacency lists model `dag`; k0 fans out to k1 and k2, which meet in k3
  const std::vector<std::vector<int>> g = {{1, 2}, {3}, {3}, {}};
  const std::vector<double> flop = {2, 1, 1, 2};
  auto p = make_dfmodel_inter_chip_problem(g, by_vertex(flop), [](const auto&, int u, int v) { return 10.0 * u + v; }, 3);
  REQUIRE(p.kernels.size() == 4);
  REQUIRE(p.tensors.size() == 4);
  CHECK(p.kernels[3].flop == 2);
  CHECK(p.tensors[1].src == 0);
  CHECK(p.tensors[1].dst == 2);
  CHECK(p.tensors[1].bytes == 2);
  CHECK(p.tensors[3].bytes == 23);
  // stages on devices 2, 0, 1: boundary 0 is 2 -> 0 (3 GB/s), boundary 1 is 0 -> 1 (3 GB/s)
  CHECK(dfmodel_boundary_bandwidths(toy_topology{}, {2, 0, 1}) == std::vector<double>{3, 3});
  CHECK(dfmodel_boundary_bandwidths(toy_topology{}, {0, 1, 2}) == std::vector<double>{3, 6});
  CHECK_THROWS_AS((void)dfmodel_boundary_bandwidths(toy_topology{}, {0, 3}), std::invalid_argument);
  p.boundary_bandwidth = dfmodel_boundary_bandwidths(toy_topology{}, {0, 1, 2});
  p.kernels[1].scheme_cost = {3, 1};
  p.tensors[0].transition_cost = {{0, 2}};
  // stages 0,1,1,2 with scheme 1 of k1: compute (2, 2, 2); network (0 + conversion 2, 1, 0); p2p:
  // k0's 1 + 2 bytes leave stage 0 at 3 GB/s = 1, k1, k2 -> k3 (13 + 23 bytes) cross boundary 1
  // at 6 GB/s = 6.
  const auto e = evaluate_dfmodel_inter_chip(p, {0, 1, 1, 2}, {0, 1, 0, 0});
  REQUIRE(e.valid);
  CHECK(e.compute == std::vector<double>{2, 2, 2});
  CHECK(e.network == std::vector<double>{2, 1, 0});
  CHECK(e.p2p[0] == doctest::Approx(1));
  CHECK(e.p2p[1] == doctest::Approx(6));
  CHECK(e.objective == doctest::Approx(6));
  const double want = brute_force(p);
  CHECK(want < 6);  // keeping k3 with k1, k2 avoids the slow boundary
  const auto r = solve_dfmodel_inter_chip(p, test::reference_solver{});
  REQUIRE(r.status == status::optimal);
  CHECK(r.objective == doctest::Approx(want));
}

TEST_CASE("DFModel input errors are reported") {
  dfmodel_inter_chip_problem p;
  p.kernels = {{1, {}}};
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.kernels = {{1, {0}}, {1, {0, 1}}};
  p.tensors = {{0, 1, 1, {{0}}}};  // 1 x 1, consumer has 2 schemes
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.tensors = {{0, 0, 1, {}}};
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.tensors = {{0, 1, -1, {}}};
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.tensors = {{0, 1, 1, {}}, {1, 0, 1, {}}};  // a cycle
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  CHECK_THROWS_AS((void)evaluate_dfmodel_inter_chip(p, {0, 0}, {0, 0}), std::invalid_argument);
  p.tensors = {{0, 1, 1, {}}};
  p.stages = 2;
  CHECK_NOTHROW((void)build_dfmodel_inter_chip_ilp(p));
  p.dram_capacity = std::nan("");
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.dram_capacity = inf;
  p.tp_chips = inf;
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.tp_chips = 1;
  p.boundary_bandwidth = {1, 1};  // two stages have one boundary
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.boundary_bandwidth = {0};
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
  p.boundary_bandwidth = {};
  const auto ilp = build_dfmodel_inter_chip_ilp(p);
  solution wrong;
  wrong.status = solve_status::optimal;
  wrong.values = {0, 1};
  CHECK_THROWS_AS((void)ilp.decode(wrong), std::invalid_argument);
  p.stages = 0;
  CHECK_THROWS_AS((void)build_dfmodel_inter_chip_ilp(p), std::invalid_argument);
}

TEST_CASE("DFModel: the cbc and glpsol programs read the written LP and MPS models and find the brute-force optimum") {
  if (!test::have_program(test::cbc_program) && !test::have_program(test::glpsol_program)) {
    devplace::test::skip("neither the cbc nor the glpsol program is installed: file acceptance not tested");
    return;
  }
  const auto dir = test::scratch_dir("dfmodel_files");
  int trial = 0;
  for (const auto& [p, want] : random_instances(false)) {
    if (trial++ >= 6) break;
    CAPTURE(trial);
    const auto ilp = build_dfmodel_inter_chip_ilp(p);
    test::check_written_model(ilp.model(), dir, want);
  }
  std::filesystem::remove_all(dir);
}
