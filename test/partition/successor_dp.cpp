// The DP skeleton over successor-closed sets (partition/successor_dp.hpp) against brute force on
// small seeded random DAGs: the sets (every vertex subset tested for closure), the pairs and
// their stages, and the table of both stage-count modes and two combine rules against a search
// over every chain of sets ∅ ⊊ D_1 ⊊ … ⊊ D (every ordered partition into convex stages) × every
// option of every stage, evaluated directly. Backtracked chains re-evaluate to the table's value.
#include "devplace/partition/successor_dp.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <optional>
#include <random>
#include <vector>

#include "devplace/dag/csr_dag.hpp"
#include "support/random_dag.hpp"

using namespace devplace;

namespace {

constexpr double sdp_inf = std::numeric_limits<double>::infinity();

struct sdp_instance {
  std::size_t n = 0;
  std::vector<std::vector<int>> adj;
  std::vector<double> weight;
};

bool sdp_closed(const sdp_instance& in, std::uint32_t mask) {
  for (std::size_t u = 0; u < in.n; ++u)
    if (mask >> u & 1u)
      for (int v : in.adj[u])
        if (!(mask >> v & 1u)) return false;
  return true;
}

std::uint32_t sdp_mask(const std::vector<std::size_t>& vs) {
  std::uint32_t m = 0;
  for (auto v : vs) m |= 1u << v;
  return m;
}

std::uint64_t sdp_hash(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The options of a stage (by its vertex mask): (devices, units) and an integer cost in s that may
/// rise and fall, infinite beyond a cutoff.
struct sdp_option {
  std::size_t a = 1, u = 1;
  std::uint64_t h = 0;
  [[nodiscard]] double cost(std::size_t s) const {
    if (s > u + h % 4) return sdp_inf;
    return double(1 + (h >> 3) % 9) + double((s * 5 + (h >> 8)) % 3);
  }
};

std::vector<sdp_option> sdp_options(std::uint32_t mask, std::uint64_t salt) {
  const std::uint64_t h = sdp_hash(mask * 1315423911ull + salt);
  std::vector<sdp_option> o{{1 + h % 2, 1, sdp_hash(h)}};
  if (h >> 20 & 1u) o.push_back({1, 2, sdp_hash(h + 1)});
  if (h >> 21 & 1u) o.push_back({3, 1, sdp_hash(h + 2)});
  return o;
}

struct sdp_rule {
  bool plus = false;
  [[nodiscard]] double operator()(double rest, double stage) const { return plus ? rest + stage : std::max(rest, stage); }
};

/// Every chain of closed sets from ∅ to `target` with stages of weight ≤ `max_weight`; best[a][p]
/// = the least value over chains using exactly a devices whose first stage sits at position p.
/// A stage of u units after (inside the pipeline: before) a stage at position q sits at q + u, or
/// with `slack` (the at_most mode's definition) at any position ≥ q + u.
void sdp_chains(const sdp_instance& in, const std::vector<std::uint32_t>& closed, std::uint32_t cur, std::uint32_t target,
                std::size_t a, std::size_t u, double value, std::size_t K, std::size_t S, std::uint64_t salt, sdp_rule rule,
                double max_weight, bool slack, std::vector<std::vector<double>>& best) {
  if (cur == target) {
    best[a][u] = std::min(best[a][u], value);
    return;
  }
  for (auto J : closed) {
    if ((J & cur) != cur || J == cur || (J & target) != J) continue;
    const std::uint32_t X = J & ~cur;
    double w = 0;
    for (std::size_t v = 0; v < in.n; ++v)
      if (X >> v & 1u) w += in.weight[v];
    if (w > max_weight) continue;
    for (const auto& o : sdp_options(X, salt)) {
      if (a + o.a > K) continue;
      // The stage sits at position p = u + o.u, or (slack) any later one.
      for (std::size_t p = u + o.u; p <= (slack ? S : std::min(S, u + o.u)); ++p) {
        const double c = o.cost(p);
        if (c == sdp_inf) continue;
        sdp_chains(in, closed, J, target, a + o.a, p, rule(value, c), K, S, salt, rule, max_weight, slack, best);
      }
    }
  }
}

/// The table's dp[set][k][s] as the brute force defines it for the mode.
double sdp_expected(const std::vector<std::vector<double>>& best, std::size_t k, std::size_t s, stage_count mode) {
  double v = sdp_inf;
  for (std::size_t a = 0; a <= k; ++a)
    for (std::size_t u = 0; u < best[a].size(); ++u)
      if (u == s || (mode == stage_count::at_most && u < s)) v = std::min(v, best[a][u]);
  return v;
}

}  // namespace

TEST_CASE("successor_sets: the sets, their order, the pairs and stages equal brute force (random DAGs)") {
  std::mt19937_64 rng(0x5ce1e7);
  int cases = 0;
  for (std::size_t n = 1; n <= 8; ++n)
    for (auto sh : test::all_shapes)
      for (int rep = 0; rep < 2; ++rep) {
        sdp_instance in{n, test::random_adjacency(rng, n, sh), {}};
        for (std::size_t v = 0; v < n; ++v) in.weight.push_back(double(rng() % 5));
        const auto g = test::random_op_graph(rng, in.adj);
        const successor_sets sets(g, successor_sets::unlimited, in.weight);
        REQUIRE(sets.outcome() == status::optimal);
        std::vector<std::uint32_t> closed;
        for (std::uint32_t m = 0; m < (1u << n); ++m)
          if (sdp_closed(in, m)) closed.push_back(m);
        REQUIRE(sets.size() == closed.size());
        std::vector<std::uint32_t> got;
        for (std::size_t i = 0; i < sets.size(); ++i) {
          got.push_back(sdp_mask(sets.vertices(i)));
          CHECK(sdp_closed(in, got.back()));
          if (i > 0) CHECK(sets.vertices(i - 1).size() <= sets.vertices(i).size());
        }
        CHECK(got.front() == 0u);
        CHECK(got.back() == (1u << n) - 1);
        std::sort(got.begin(), got.end());
        CHECK(got == closed);
        // Pairs: each D′ ⊊ D once, the stage is D ∖ D′, the weight its sum, membership set.
        auto x = sets.make_stage();
        for (std::size_t D = 0; D < sets.size(); ++D) {
          const std::uint32_t mD = sdp_mask(sets.vertices(D));
          std::uint64_t expect = 0;
          for (auto m : closed) expect += (m & mD) == m && m != mD;
          std::vector<char> seen(sets.size(), 0);
          const auto pairs = sets.for_each_subset(D, x, [&](std::size_t sub, successor_stage& st) {
            const std::uint32_t mS = sdp_mask(sets.vertices(sub));
            CHECK(((mS & mD) == mS && mS != mD));
            CHECK(!seen[sub]);
            seen[sub] = 1;
            CHECK(sdp_mask(st.nodes) == (mD & ~mS));
            CHECK(std::is_sorted(st.nodes.begin(), st.nodes.end()));
            for (std::size_t v = 0; v < n; ++v) CHECK(bool(st.member[v]) == bool((mD & ~mS) >> v & 1u));
            return true;
          });
          CHECK(pairs == expect);
          // The weights reach `keep`; rejected pairs are counted, not visited.
          std::uint64_t visited = 0;
          const auto pairs2 = sets.for_each_subset(
              D, x,
              [&](std::size_t sub, double w) {
                double sum = 0;
                const std::uint32_t X = mD & ~sdp_mask(sets.vertices(sub));
                for (std::size_t v = 0; v < n; ++v)
                  if (X >> v & 1u) sum += in.weight[v];
                CHECK(w == sum);
                return sub % 2 == 0;
              },
              [&](std::size_t sub, successor_stage&) {
                CHECK(sub % 2 == 0);
                ++visited;
                return true;
              });
          CHECK(pairs2 == expect);
          std::uint64_t even = 0;
          for (std::size_t i = 0; i < sets.size(); ++i) even += seen[i] && i % 2 == 0;
          CHECK(visited == even);
          for (auto c : x.member) CHECK(c == 0);
        }
        ++cases;
      }
  CHECK(cases == 80);
  // The cap: work_limit with exactly max_sets sets.
  sdp_instance in{4, {{}, {}, {}, {}}, {}};
  const auto g = test::random_op_graph(rng, in.adj);  // 16 sets
  const successor_sets capped(g, 5);
  CHECK(capped.outcome() == status::work_limit);
  CHECK(capped.size() == 5);
  CHECK(successor_sets(g, 16).outcome() == status::optimal);
}

TEST_CASE("successor_dp_table: both stage-count modes and two combine rules equal brute force over chains, and backtracking") {
  std::mt19937_64 rng(0xd0d0);
  int checked = 0, finite = 0;
  for (std::size_t n = 1; n <= 6; ++n)
    for (auto sh : test::all_shapes) {
      sdp_instance in{n, test::random_adjacency(rng, n, sh), {}};
      for (std::size_t v = 0; v < n; ++v) in.weight.push_back(double(rng() % 4));
      std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> from;
      for (std::size_t u = 0; u < n; ++u)
        for (int v : in.adj[u]) from.emplace_back(static_cast<csr_dag::vertex_type>(u), static_cast<csr_dag::vertex_type>(v));
      const csr_dag g(n, from);
      const successor_sets sets(g, successor_sets::unlimited, in.weight);
      std::vector<std::uint32_t> closed;
      for (std::uint32_t m = 0; m < (1u << n); ++m)
        if (sdp_closed(in, m)) closed.push_back(m);
      for (stage_count mode : {stage_count::exact, stage_count::at_most})
        for (bool plus : {false, true})
          for (double max_weight : {sdp_inf, 3.0}) {
            const std::uint64_t salt = rng();
            const std::size_t K = 1 + rng() % 4, S = 1 + rng() % 4;
            const sdp_rule rule{plus};
            successor_dp_table<sdp_rule> table(sets.size(), K, S, mode, rule);
            auto x = sets.make_stage();
            successor_dp_fill(sets, table, x, sets.size(), [&](std::size_t, double w) { return w <= max_weight; },
                              [&](std::size_t, std::size_t sub, const successor_stage& st, auto& tb) {
                                for (const auto& o : sdp_options(sdp_mask(st.nodes), salt))
                                  tb.relax(sub, o.a, o.u, [&](std::size_t s) { return o.cost(s); });
                              });
            // The same table with a finite "infinity" (Piper's 1e30 convention; here 1000): the same
            // values where finite, 1000 elsewhere, and the same first finite rows.
            successor_dp_table<sdp_rule> capped(sets.size(), K, S, mode, rule, 1000.0);
            successor_dp_fill(sets, capped, x, sets.size(), [&](std::size_t, double w) { return w <= max_weight; },
                              [&](std::size_t, std::size_t sub, const successor_stage& st, auto& tb) {
                                for (const auto& o : sdp_options(sdp_mask(st.nodes), salt))
                                  tb.relax(sub, o.a, o.u, [&](std::size_t s) { return std::min(o.cost(s), 1000.0); });
                              });
            for (std::size_t D = 0; D < sets.size(); ++D) {
              if (mode == stage_count::at_most) CHECK(capped.first_finite(D) == table.first_finite(D));
              for (std::size_t k = 0; k <= K; ++k)
                for (std::size_t s = 0; s <= S; ++s)
                  CHECK(capped.at(D, k, s) == (table.at(D, k, s) == sdp_inf ? 1000.0 : table.at(D, k, s)));
            }
            for (std::size_t D = 0; D < sets.size(); ++D) {
              std::vector<std::vector<double>> best(K + 1, std::vector<double>(S + 1, sdp_inf));
              sdp_chains(in, closed, 0, sdp_mask(sets.vertices(D)), 0, 0, 0.0, K, S, salt, rule, max_weight,
                         mode == stage_count::at_most, best);
              for (std::size_t k = 0; k <= K; ++k)
                for (std::size_t s = 0; s <= S; ++s) {
                  const double want = sdp_expected(best, k, s, mode);
                  CHECK_MESSAGE(table.at(D, k, s) == want, "n=" << n << " mode=" << int(mode) << " plus=" << plus << " D=" << D << " k=" << k << " s=" << s);
                  ++checked;
                }
            }
            // Backtrack every finite cell of V; the chain re-evaluates to the cell.
            const std::size_t V = sets.full();
            for (std::size_t k0 = 0; k0 <= K; ++k0)
              for (std::size_t s0 = 0; s0 <= S; ++s0) {
                const double target = table.at(V, k0, s0);
                if (target == sdp_inf) continue;
                ++finite;
                std::vector<std::pair<std::uint32_t, double>> stages;  // (mask, cost)
                std::size_t used_a = 0, used_u = 0;
                std::map<std::size_t, std::tuple<double, std::size_t, std::size_t>> pending;  // sub -> (cost, a, u)
                std::size_t k_cur = k0, s_cur = s0;
                // In at_most mode a cell's value may come from a smaller (k, s): move there first.
                auto settle = [&](std::size_t set, std::size_t& k, std::size_t& s) {
                  if (mode == stage_count::exact) return;
                  const double v = table.at(set, k, s);
                  for (std::size_t kk = 0; kk <= k; ++kk)
                    for (std::size_t ss = 0; ss <= s; ++ss)
                      if (table.at(set, kk, ss) == v) {
                        k = kk, s = ss;
                        return;
                      }
                };
                settle(V, k_cur, s_cur);
                const std::size_t slack_k = k0 - k_cur, slack_s = s0 - s_cur;
                successor_dp_backtrack(
                    sets, x, V, k_cur, s_cur, plus ? backtrack_pick::smallest_subset : backtrack_pick::first_visited,
                    [&](std::size_t set, std::size_t sub, const successor_stage& st, std::size_t k, std::size_t s)
                        -> std::optional<successor_step> {
                      double w = 0;
                      for (auto v : st.nodes) w += in.weight[v];
                      if (w > max_weight) return std::nullopt;
                      for (const auto& o : sdp_options(sdp_mask(st.nodes), salt)) {
                        if (o.a > k || o.u > s) continue;
                        const double c = o.cost(s);
                        const double rest = table.at(sub, k - o.a, s - o.u);
                        if (c == sdp_inf || rest == sdp_inf || rule(rest, c) != table.at(set, k, s)) continue;
                        std::size_t k2 = k - o.a, s2 = s - o.u;
                        settle(sub, k2, s2);
                        pending[sub] = {c, o.a, o.u};
                        return successor_step{k - k2, s - s2};
                      }
                      return std::nullopt;
                    },
                    [&](std::size_t sub, const successor_stage& st, successor_step) {
                      const auto [c, a, u] = pending.at(sub);
                      stages.emplace_back(sdp_mask(st.nodes), c);
                      used_a += a, used_u += u;
                      pending.clear();
                    });
                // Stages were found first to last; the value folds from the last.
                double v = 0;
                std::uint32_t cover = 0;
                for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
                  CHECK((cover & it->first) == 0u);
                  cover |= it->first;
                  v = rule(v, it->second);
                }
                CHECK(cover == (1u << n) - 1);
                CHECK(v == target);
                CHECK(used_a <= k0 - slack_k);
                if (mode == stage_count::exact) CHECK(used_u == s0);
                else CHECK(used_u <= s0 - slack_s);
              }
          }
    }
  CHECK(checked > 5000);
  CHECK(finite > 200);
}

TEST_CASE("successor_dp_table: a row limit leaves the rows up to it as without one (random DAGs, both modes)") {
  std::mt19937_64 rng(0x11a1);
  int compared = 0;
  for (std::size_t n = 1; n <= 6; ++n)
    for (auto sh : test::all_shapes) {
      sdp_instance in{n, test::random_adjacency(rng, n, sh), {}};
      std::vector<std::pair<csr_dag::vertex_type, csr_dag::vertex_type>> from;
      for (std::size_t u = 0; u < n; ++u)
        for (int v : in.adj[u]) from.emplace_back(static_cast<csr_dag::vertex_type>(u), static_cast<csr_dag::vertex_type>(v));
      const successor_sets sets(csr_dag(n, from));
      for (stage_count mode : {stage_count::exact, stage_count::at_most}) {
        const std::uint64_t salt = rng();
        const std::size_t K = 1 + rng() % 5, S = 1 + rng() % 4, L = rng() % (K + 1);
        const double bound = rng() % 2 ? sdp_inf : 6.0;
        auto fill = [&](successor_dp_table<>& table, std::size_t limit) {
          auto x = sets.make_stage();
          successor_dp_fill(sets, table, x, sets.size(), [](std::size_t, double) { return true; },
                            [&](std::size_t, std::size_t sub, const successor_stage& st, auto& tb) {
                              for (const auto& o : sdp_options(sdp_mask(st.nodes), salt))
                                tb.relax(sub, o.a, o.u, [&](std::size_t s) { return o.cost(s); }, bound, limit);
                            });
        };
        successor_dp_table<> full(sets.size(), K, S, mode), limited(sets.size(), K, S, mode);
        fill(full, K + 7);  // a limit above K is no limit
        fill(limited, L);
        for (std::size_t D = 0; D < sets.size(); ++D)
          for (std::size_t k = 0; k <= K; ++k)
            for (std::size_t s = 0; s <= S; ++s) {
              INFO("n=" << n << " mode=" << int(mode) << " D=" << D << " k=" << k << " s=" << s << " L=" << L);
              if (k <= L) CHECK(limited.at(D, k, s) == full.at(D, k, s));
              else if (mode == stage_count::at_most) CHECK(limited.at(D, k, s) == limited.at(D, L, s));
              else if (D != 0) CHECK(limited.at(D, k, s) == sdp_inf);
              ++compared;
            }
      }
    }
  CHECK(compared > 2000);
}
