// PipeDream's optimizer (peers/pipedream.hpp): the 48 reference rows of
// shared/data/peers/pipedream/REFERENCE_RESULTS.md (read from the file, never copied here), the
// state counts, and a brute-force oracle over every chain of down-sets on small random DAGs.
#include "devplace/peers/pipedream.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "devplace/algorithm/downsets.hpp"
#include "devplace/io/pipedream.hpp"
#include "support/random_dag.hpp"
#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

namespace {

const fs::path pd_dir = fs::path(DEVPLACE_SHARED_DIR) / "data" / "peers" / "pipedream";

struct pipedream_reference_row {
  std::string model, flags;
  std::size_t states = 0;
  double single = 0, time = 0, dp_speedup = 0;
};

std::string cell(const std::string& s) {
  const auto b = s.find_first_not_of(" `");
  const auto e = s.find_last_not_of(" `");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<pipedream_reference_row> pipedream_reference_rows() {
  std::ifstream in(pd_dir / "REFERENCE_RESULTS.md");
  std::vector<pipedream_reference_row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0 || line.find("`-n") == std::string::npos) continue;
    std::vector<std::string> c;
    std::stringstream ss(line.substr(1));
    std::string part;
    while (std::getline(ss, part, '|')) c.push_back(cell(part));
    REQUIRE(c.size() >= 8);
    rows.push_back({c[0], c[1], std::stoul(c[2]), std::stod(c[3]), std::stod(c[4]), std::stod(c[6])});
  }
  return rows;
}

peers::pipedream_options options_of(const std::string& flags) {
  peers::pipedream_options o;
  std::istringstream in(flags);
  std::string tok, mode;
  std::vector<std::size_t> n;
  std::vector<double> b;
  while (in >> tok) {
    if (tok == "-n" || tok == "-b") mode = tok;
    else if (tok == "--straight_pipeline") o.straight = true;
    else if (mode == "-n") n.push_back(std::stoul(tok));
    else b.push_back(std::stod(tok));
  }
  for (std::size_t i = 0; i < n.size(); ++i) o.levels.push_back({n[i], i < b.size() ? b[i] : 1e9});
  return o;
}

fs::path graph_of(const std::string& model) {
  return pd_dir / "profiler" / (model.rfind("gnmt", 0) == 0 ? "translation" : "image_classification") / "profiles" /
         model / "graph.txt";
}

}  // namespace

TEST_CASE("PipeDream optimizer: the 48 reference rows, states and objective to 1e-9") {
  if (!devplace::test::require_path(pd_dir / "REFERENCE_RESULTS.md")) return;
  const auto rows = pipedream_reference_rows();
  REQUIRE(rows.size() == 48);
  for (const auto& row : rows) {
    CAPTURE(row.model);
    CAPTURE(row.flags);
    const op_graph g = io::read_pipedream(graph_of(row.model));
    const auto r = peers::pipedream_optimize(g, options_of(row.flags));
    REQUIRE(r.status == status::optimal);
    CHECK(r.states == row.states);
    CHECK(std::abs(r.objective_s - row.time) <= 1e-9 * row.time);
    CHECK(r.single_stage_s == doctest::Approx(row.single).epsilon(1e-5));
    CHECK(r.single_stage_s / r.data_parallel_s == doctest::Approx(row.dp_speedup).epsilon(1e-5));
    // The stages partition the kept operators; replicas of the top level use all machines.
    const auto opt = options_of(row.flags);
    std::size_t top = 0, ops = 0;
    for (const auto& s : r.stages) {
      if (s.level + 1 == opt.levels.size()) top += s.replicas;
      if (s.level == 0) ops += s.vertices.size();
    }
    CHECK(top == opt.levels.back().machines);
    CHECK(ops == r.vertices);
  }
}

TEST_CASE("PipeDream optimizer: VGG-16 on 4 GPUs is the split upstream documents (3 + 1)") {
  const fs::path f = graph_of("vgg16");
  if (!devplace::test::require_path(f)) return;
  const auto r = peers::pipedream_optimize(io::read_pipedream(f), {.levels = {{4, 1e9}}});
  REQUIRE(r.stages.size() == 2);
  CHECK(r.stages[0].replicas == 3);
  CHECK(r.stages[1].replicas == 1);
  CHECK(r.stages[0].to_state + 1 == 17);  // [0,17)x3 [17,40)x1 in the reference table
}

TEST_CASE("PipeDream optimizer: invalid options are std::invalid_argument") {
  op_graph_builder b;
  b.add_op({.id = 0, .fwd_ms = 1});
  const op_graph g = std::move(b).build();
  CHECK_THROWS_AS((void)peers::pipedream_optimize(g, {}), std::invalid_argument);
  CHECK_THROWS_AS((void)peers::pipedream_optimize(g, {.levels = {{0, 1e9}}}), std::invalid_argument);
  CHECK_THROWS_AS((void)peers::pipedream_optimize(g, {.levels = {{2, -1}}}), std::invalid_argument);
  const auto r = peers::pipedream_optimize(g, {.levels = {{2, 1e9}}});
  CHECK(r.states == 1);
  CHECK(r.objective_s == doctest::Approx(0.0005));
}

// ---- brute force: every chain of down-sets, replication factors summing to n ------------------

namespace {

struct oracle_graph {
  std::size_t n = 0;
  std::vector<std::vector<int>> out;
  std::vector<double> ct, act, par;
};

// aug(I) computed from the definition, for the maximal antichain of a down-set I.
double out_of(const oracle_graph& o, const std::vector<bool>& in) {
  const std::size_t n = o.n;
  std::vector<std::vector<bool>> anc(n, std::vector<bool>(n, false));  // anc[v][u]: u strict ancestor of v
  for (std::size_t v = 0; v < n; ++v)  // vertex ids are a topological order
    for (std::size_t u = 0; u < v; ++u)
      for (int w : o.out[u])
        if (static_cast<std::size_t>(w) == v || (static_cast<std::size_t>(w) < v && anc[v][static_cast<std::size_t>(w)]))
          anc[v][u] = true;
  std::vector<bool> aug(n, false);
  for (std::size_t a = 0; a < n; ++a) {
    if (!in[a]) continue;
    bool maximal = true;
    for (std::size_t b = 0; b < n; ++b) if (in[b] && anc[b][a]) maximal = false;
    if (!maximal) continue;
    aug[a] = true;
    for (std::size_t p = 0; p < n; ++p)
      if (anc[a][p])
        for (int w : o.out[p])
          if (static_cast<std::size_t>(w) != a && !anc[a][static_cast<std::size_t>(w)]) aug[p] = true;
  }
  double s = 0;
  for (std::size_t v = 0; v < n; ++v) if (aug[v]) s += o.act[v];
  return s;
}

double brute_force(const oracle_graph& o, const std::vector<std::vector<bool>>& ideals, std::size_t machines,
                   double bw, bool straight) {
  const std::size_t full = ideals.size() - 1;  // ideals sorted by size: the last one is V
  auto sum = [&](const std::vector<double>& x, std::size_t a, std::size_t j) {
    double s = 0;
    for (std::size_t v = 0; v < o.n; ++v) if (ideals[j][v] && !(a != SIZE_MAX && ideals[a][v])) s += x[v];
    return s;
  };
  auto subset = [&](std::size_t a, std::size_t b) {  // a ⊊ b
    if (a == b) return false;
    for (std::size_t v = 0; v < o.n; ++v) if (ideals[a][v] && !ideals[b][v]) return false;
    return true;
  };
  double best = std::numeric_limits<double>::infinity();
  // chain: stages (prev, cur] with replicas r; recursion over the last ideal reached.
  std::function<void(std::size_t, std::size_t, double)> go = [&](std::size_t prev, std::size_t left, double worst) {
    for (std::size_t j = 0; j < ideals.size(); ++j) {
      if (prev != SIZE_MAX && !subset(prev, j)) continue;
      for (std::size_t r = 1; r <= (straight ? 1 : left); ++r) {
        const double T = sum(o.ct, prev, j), P = sum(o.par, prev, j);
        const auto dr = static_cast<double>(r);
        double t = (T + (4.0 * (dr - 1) * P) / (bw * dr)) / dr;
        if (prev != SIZE_MAX) {  // the first stage pays no transfer; a later one its input and output
          t = std::max(t, 2.0 * out_of(o, ideals[prev]) / (bw * dr));
          if (j != full) t = std::max(t, 2.0 * out_of(o, ideals[j]) / (bw * dr));
        }
        const double w = std::max(worst, t);
        if (j == full) {
          if (r == left) best = std::min(best, w);
        } else if (r < left) {
          go(j, left - r, w);
        }
      }
    }
  };
  go(SIZE_MAX, machines, 0.0);
  return best;
}

}  // namespace

TEST_CASE("PipeDream optimizer: brute force over every contiguous split, single-source random DAGs") {
  std::mt19937_64 rng(20261123);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 3 + rng() % 6;
    auto adj = devplace::test::random_adjacency(rng, n, devplace::test::all_shapes[trial % 4]);
    for (std::size_t v = 1; v < n; ++v) {  // vertex 0 is the only source
      bool has_in = false;
      for (std::size_t u = 0; u < v; ++u)
        for (int w : adj[u]) has_in = has_in || static_cast<std::size_t>(w) == v;
      if (!has_in) adj[0].push_back(static_cast<int>(v));
    }
    oracle_graph o{n, adj, {}, {}, {}};
    op_graph_builder b;
    for (std::size_t v = 0; v < n; ++v) {
      const double f = double(1 + rng() % 9), bw = double(rng() % 9), a = double(rng() % 5) * 1e6, p = double(rng() % 5) * 1e6;
      b.add_op({.id = static_cast<std::int64_t>(v), .fwd_ms = f, .bwd_ms = bw, .param_bytes = p, .out_bytes = a});
      o.ct.push_back((f + bw) / 1000.0);
      o.act.push_back(a);
      o.par.push_back(p);
    }
    for (std::size_t u = 0; u < n; ++u) for (int w : adj[u]) b.add_edge(u, static_cast<std::size_t>(w), 0);
    const op_graph g = std::move(b).build();
    std::vector<std::vector<bool>> ideals;
    for_each_downset(adj, [&](const std::vector<std::size_t>& vs) {
      if (vs.empty()) return;
      std::vector<bool> in(n, false);
      for (auto v : vs) in[v] = true;
      ideals.push_back(in);
    });
    std::stable_sort(ideals.begin(), ideals.end(), [](const auto& x, const auto& y) {
      return std::count(x.begin(), x.end(), true) < std::count(y.begin(), y.end(), true);
    });
    for (std::size_t machines : {1u, 2u, 3u, 4u})
      for (bool straight : {false, true}) {
        CAPTURE(trial);
        CAPTURE(machines);
        CAPTURE(straight);
        const double bw = 5e9;
        const auto r = peers::pipedream_optimize(g, {.levels = {{machines, bw}}, .straight = straight, .drop_io = false});
        CHECK(r.states == ideals.size());  // one source: every non-empty down-set is a state
        const double want = brute_force(o, ideals, machines, bw, straight);
        if (std::isinf(want)) {
          CHECK(r.status == status::infeasible);
        } else {
          REQUIRE(r.status == status::optimal);
          CHECK(r.objective_s == doctest::Approx(want).epsilon(1e-12));
        }
      }
  }
}
