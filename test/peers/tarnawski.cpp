// Tarnawski et al. 2020 max-load model (peers/tarnawski.hpp) and the colour-class contraction
// (transform/class_contraction.hpp): the reference values of spec/seed-phaze.md §7.3 (read from
// ../shared at run time), the ideal and pair counts, and a brute-force oracle.
#include "devplace/peers/tarnawski.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devplace/algorithm/downset_growth.hpp"
#include "devplace/algorithm/downsets.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/tarnawski_instance.ipp"  // the Tarnawski instance reader's definitions (compiled mode: devplace::core)
#endif
#include "support/random_dag.hpp"
#include "support/skip.hpp"

using namespace devplace;
namespace fs = std::filesystem;

namespace {

const fs::path shared = fs::path(DEVPLACE_SHARED_DIR);
const fs::path inputs = shared / "data" / "peers" / "dnn-partitioning" / "throughput-inputs";

struct row {
  std::string input;
  std::uint64_t ideals = 0, pairs = 0;  // pairs 0 = not given
  double value = 0, rel = 0;            // rel 0 = no value given
};

// Rows of the §7.3 table: | input | ideals | pairs | max-load (full digits) | ...
std::vector<row> reference_rows() {
  std::ifstream in(shared / "spec" / "seed-phaze.md");
  std::vector<row> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("### 7.3", 0) == 0) inside = true;
    else if (line.rfind("### ", 0) == 0) inside = false;
    if (!inside || (line.rfind("| LayerGraphs/", 0) != 0 && line.rfind("| OperatorGraphs/", 0) != 0)) continue;
    std::vector<std::string> c;
    std::size_t a = 1;
    for (std::size_t b; (b = line.find('|', a)) != std::string::npos; a = b + 1) c.push_back(line.substr(a, b - a));
    auto trim = [](std::string s) { s.erase(0, s.find_first_not_of(' ')); s.erase(s.find_last_not_of(' ') + 1); return s; };
    auto integer = [&](std::string s) {
      s = trim(s);
      std::string d;
      for (char ch : s) if (std::isdigit(static_cast<unsigned char>(ch))) d += ch;
      return d.empty() || s.find_first_not_of("0123456789,") != std::string::npos ? 0ull : std::stoull(d);
    };
    row r{trim(c[0]), integer(c[1]), integer(c[2])};
    // "17.7899 (17.78990625)": the full digits in parentheses; "65.3031": 6 significant digits.
    const std::string v = trim(c[3]);
    if (!v.empty() && v.find_first_not_of("0123456789. ()") == std::string::npos) {
      const auto open = v.find('(');
      if (open != std::string::npos) { r.value = std::stod(v.substr(open + 1)); r.rel = 1e-9; }
      else { r.value = std::stod(v); r.rel = 5e-6; }
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("Tarnawski max-load: the reference rows of seed-phaze §7.3 (values, ideals, pairs)") {
  if (!devplace::test::require_path(shared / "spec" / "seed-phaze.md") || !devplace::test::require_path(inputs)) return;
  const auto rows = reference_rows();
  REQUIRE(rows.size() == 16);
  int checked_values = 0;
  for (const auto& r : rows) {
    CAPTURE(r.input);
    const auto in = io::read_tarnawski_instance(inputs / (r.input + ".json"));
    if (r.input.find("inceptionv3") != std::string::npos) {  // counts only: the DP takes tens of seconds
      const auto c = transform::contract_classes(peers::detail::tw_class_graph(in));
      CHECK(count_downsets(c.successors).count == r.ideals);
      continue;
    }
    const auto res = peers::tarnawski_max_load(in);
    REQUIRE(res.status == status::optimal);
    CHECK(res.ideals == r.ideals);
    if (r.pairs) CHECK(res.ideal_pairs == r.pairs);
    if (r.rel > 0) {
      CHECK(std::abs(res.max_load - r.value) <= r.rel * r.value);
      ++checked_values;
    }
    // The devices of the split carry every node once and the worst of them is the max-load.
    std::size_t nodes = 0;
    double worst = 0;
    for (const auto& d : res.devices) { nodes += d.nodes.size(); worst = std::max(worst, d.load); }
    CHECK(nodes == in.nodes.size());
    CHECK(worst == doctest::Approx(res.max_load).epsilon(1e-12));
  }
  CHECK(checked_values == 10);
}

TEST_CASE("Colour-class contraction: BERT-L-3 inference becomes 128 supernodes, 143 edges, 1,428 ideals") {
  const fs::path f = inputs / "OperatorGraphs" / "bert_l-3_inference.json";
  if (!devplace::test::require_path(f)) return;
  const auto in = io::read_tarnawski_instance(f);
  CHECK(in.nodes.size() == 235);
  const auto c = transform::contract_classes(peers::detail::tw_class_graph(in));
  CHECK(c.num_forward == 128);
  std::size_t edges = 0, sources = 0;
  std::vector<int> indeg(c.num_forward, 0);
  for (const auto& s : c.successors) { edges += s.size(); for (int w : s) ++indeg[static_cast<std::size_t>(w)]; }
  for (int d : indeg) sources += d == 0;
  CHECK(edges == 143);
  CHECK(sources == 4);
  CHECK(c.trivial_merges == 0);
  CHECK(count_downsets(c.successors).count == 1428);
}

TEST_CASE("Tarnawski reader: bad inputs name the JSON pointer") {
  auto bad = [](const std::string& text) {
    try {
      (void)io::tarnawski_instance_from_json(nlohmann::json::parse(text), "x.json");
    } catch (const io::input_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = R"({"maxSizePerFPGA": 10, "maxFPGAs": 2, "maxCPUs": 1, )";
  const std::string n0 = R"({"id": 0, "supportedOnFpga": 1, "fpgaLatency": 1, "cpuLatency": 2, "isBackwardNode": 0})";
  const std::string n1 = R"({"id": 1, "supportedOnFpga": true, "fpgaLatency": 1, "cpuLatency": 2, "isBackwardNode": false, "colorClass": 3})";
  CHECK(bad(R"({"maxFPGAs": 2, "maxCPUs": 1, "nodes": [], "edges": []})") == "x.json: /maxSizePerFPGA: missing required field");
  CHECK(bad(head + R"("nodes": [{"id": 0, "supportedOnFpga": 1, "fpgaLatency": 1, "cpuLatency": 2}], "edges": []})") ==
        "x.json: /nodes/0/isBackwardNode: missing required field");
  CHECK(bad(head + R"("nodes": [)" + n0 + "," + n1 + R"(], "edges": [{"sourceId": 0, "destId": 1}]})") ==
        "x.json: /edges/0/cost: missing required field");
  CHECK(bad(head + R"("nodes": [)" + n0 + "," + n1 + R"(], "edges": [{"sourceId": 0, "destId": 7, "cost": 1}]})") ==
        "x.json: /edges/0/destId: unknown node id 7");
  CHECK(bad(head + R"("nodes": [)" + n0 + R"(, {"id": 1, "supportedOnFpga": 1, "fpgaLatency": 1, "cpuLatency": 2, "isBackwardNode": 0, "colorClass": "a"}], "edges": []})") ==
        "x.json: /nodes/1/colorClass: expected an integer, got a string");
}

// ---- brute force: every chain of ideals, every assignment of blocks to CPUs / accelerators ----

TEST_CASE("Tarnawski max-load: brute force over every contiguous split on small random graphs") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 80; ++trial) {
    const std::size_t n = 2 + rng() % 7;
    const auto adj = devplace::test::random_adjacency(rng, n, devplace::test::all_shapes[trial % 5]);
    io::tarnawski_instance in;
    in.max_size_per_fpga = double(10 + rng() % 20);
    in.max_cpus = rng() % 2;
    in.max_fpgas = 1 + rng() % 3;
    for (std::size_t v = 0; v < n; ++v)
      in.nodes.push_back({static_cast<std::int64_t>(v), "", double(rng() % 9), double(rng() % 30), double(rng() % 9),
                          rng() % 6 != 0, false, std::nullopt});
    in.output_cost.assign(n, 0);
    for (std::size_t u = 0; u < n; ++u) {
      in.output_cost[u] = double(rng() % 4);
      for (int w : adj[u]) in.edges.push_back({u, static_cast<std::size_t>(w)});
    }
    std::vector<std::vector<bool>> ideals;
    for_each_downset(adj, [&](const std::vector<std::size_t>& vs) {
      std::vector<bool> s(n, false);
      for (auto v : vs) s[v] = true;
      ideals.push_back(s);
    });
    auto loads = [&](const std::vector<bool>& X) {  // from the definition, on the original edges
      double cpu = 0, fpga = 0, size = 0, comm = 0;
      bool ok = true;
      for (std::size_t v = 0; v < n; ++v)
        if (X[v]) { cpu += in.nodes[v].cpu_latency; fpga += in.nodes[v].fpga_latency; size += in.nodes[v].size; ok = ok && in.nodes[v].supported_on_fpga; }
      for (std::size_t u = 0; u < n; ++u) {
        bool crosses = false;
        for (const auto& e : in.edges) if (e.from == u && X[u] != X[e.to]) crosses = true;
        if (crosses) comm += in.output_cost[u];
      }
      return std::pair{cpu, (ok && size <= in.max_size_per_fpga ? fpga : 1e30) + comm};
    };
    double best = std::numeric_limits<double>::infinity();
    std::function<void(const std::vector<bool>&, std::size_t, std::size_t, double)> go =
        [&](const std::vector<bool>& J, std::size_t c, std::size_t f, double worst) {
          if (std::count(J.begin(), J.end(), true) == static_cast<long>(n)) { best = std::min(best, worst); return; }
          for (const auto& I : ideals) {
            bool sup = true, strict = false;
            for (std::size_t v = 0; v < n; ++v) { sup = sup && (!J[v] || I[v]); strict = strict || (I[v] && !J[v]); }
            if (!sup || !strict) continue;
            std::vector<bool> X(n);
            for (std::size_t v = 0; v < n; ++v) X[v] = I[v] && !J[v];
            const auto [cpu, acc] = loads(X);
            if (c > 0) go(I, c - 1, f, std::max(worst, cpu));
            if (f > 0) go(I, c, f - 1, std::max(worst, acc));
          }
        };
    go(std::vector<bool>(n, false), in.max_cpus, in.max_fpgas, 0.0);
    peers::tarnawski_options opt;
    opt.contraction.merge_trivial = false;  // the oracle works on the graph as it is
    const auto r = peers::tarnawski_max_load(in, opt);
    CAPTURE(trial);
    CHECK(r.ideals == ideals.size());
    REQUIRE(r.status == status::optimal);
    CHECK(r.max_load == doctest::Approx(best).epsilon(1e-12));
  }
}

TEST_CASE("downset_growth visits every superset of a down-set exactly once, one vertex at a time") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = 1 + rng() % 12;
    const auto adj = devplace::test::random_adjacency(rng, n, devplace::test::all_shapes[trial % 5]);
    const downset_enumerator e(adj);
    const downset_growth grow(e);
    std::vector<detail::dynamic_bitset> all;
    (void)e.for_each([&](const detail::dynamic_bitset& f) { all.push_back(f); return downset_action::proceed; });
    for (const auto& base : all) {
      std::size_t want = 0;
      for (const auto& f : all) want += base.is_subset_of(f) && !(f == base);
      struct counter { std::size_t added = 0; void add(std::size_t, const detail::dynamic_bitset&) { ++added; } };
      std::set<std::vector<std::size_t>> seen;
      std::size_t visits = 0;
      (void)grow.for_each_superset(base, counter{}, [&](const detail::dynamic_bitset& f, const counter& c) {
        ++visits;
        CHECK(e.is_downset(f));
        CHECK(base.is_subset_of(f));
        CHECK(c.added == f.count() - base.count());
        seen.insert(e.to_vertices(f));
        return downset_action::proceed;
      });
      CHECK(visits == want);
      CHECK(seen.size() == want);
    }
  }
}
