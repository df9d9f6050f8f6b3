// DFModel on user types: a user's model (its own kernel records, successor lists and ports, read
// through ADL functions), the member-only archetype, and a user network give exactly what the
// same instance written out as `dfmodel::workload` / `dfmodel::network` gives; and the sharding
// and fusion searches on the user types equal an enumeration, written here, of every choice.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "archetypes/dfmodel_archetypes.hpp"
#include "devplace/dfmodel/fusion.hpp"

namespace df = devplace::dfmodel;
using devplace::status;

namespace shop {  // the user's code: nothing of DFModel's structs

enum class op_type { matmul_weight, matmul_activations, pointwise, pointwise_binary };

struct layer {
  std::string name;
  op_type op = op_type::pointwise;
  std::int64_t batch_heads = 1, rows = 1, inner = 1, tokens = 1;
  bool backward = false, gradient_all_reduce = false;
};

struct model {
  std::vector<layer> layers;
  std::vector<std::vector<std::size_t>> consumers;
  std::map<std::pair<std::size_t, std::size_t>, int> operand;  // (producer, consumer) -> input index
  df::llm_params figures;
};

std::size_t num_vertices(const model& m) { return m.layers.size(); }
const std::vector<std::size_t>& out_edges(const model& m, std::size_t u) { return m.consumers[u]; }
df::loops kernel_loops(const model& m, std::size_t v) {
  const auto& l = m.layers[v];
  return {l.batch_heads, l.rows, l.inner, l.tokens};
}
df::kernel_op kernel_operation(const model& m, std::size_t v) {
  switch (m.layers[v].op) {
    case op_type::matmul_weight: return df::kernel_op::gemm_weight;
    case op_type::matmul_activations: return df::kernel_op::gemm_two_inputs;
    case op_type::pointwise: return df::kernel_op::elementwise;
    case op_type::pointwise_binary: return df::kernel_op::elementwise_two_inputs;
  }
  return df::kernel_op::elementwise;
}
std::string kernel_name(const model& m, std::size_t v) { return m.layers[v].name; }
bool is_backward(const model& m, std::size_t v) { return m.layers[v].backward; }
bool reduces_gradient(const model& m, std::size_t v) { return m.layers[v].gradient_all_reduce; }
int input_port(const model& m, std::size_t u, std::size_t v) { return m.operand.at({u, v}); }
df::llm_params step_figures(const model& m) { return m.figures; }

/// Two-level fabric: chips on boards (a ring) and boards on a switch.
struct fabric {
  std::size_t chips_per_board = 2, boards = 2;
  double board_gbps = 50, switch_gbps = 12.5;
  std::size_t dimension_count() const { return 2; }
  std::size_t dimension_size(std::size_t d) const { return d == 0 ? chips_per_board : boards; }
  double dimension_link_gbps(std::size_t d) const { return d == 0 ? board_gbps : switch_gbps; }
  df::dim_kind dimension_shape(std::size_t d) const { return d == 0 ? df::dim_kind::ring : df::dim_kind::switched; }
  df::parallelism dimension_parallelism(std::size_t d) const { return d == 0 ? df::parallelism::tp : df::parallelism::dp; }
};

}  // namespace shop

static_assert(df::workload_graph<shop::model> && df::network_model<shop::fabric>);
static_assert(!df::workload_graph<df::workload> && !df::network_model<df::network>);

namespace {

/// A random small model: a chain with skip tensors into two-input kernels (whose skip input is
/// port 0 or 1 at random), mixed operations and shapes.
shop::model random_model(std::mt19937_64& rng, std::size_t n) {
  std::uniform_int_distribution<int> pick(0, 3), size(1, 4);
  shop::model m;
  m.figures = {.hidden = 128, .heads = 2, .head_dim = 64, .seq = 16, .layers = 3, .global_batch = 4, .micro_batch = 1, .word_bytes = 2};
  m.consumers.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    shop::layer l;
    l.name = "L" + std::to_string(i);
    const bool two = i >= 2 && pick(rng) < 2;
    l.op = pick(rng) < 2 ? (two ? shop::op_type::matmul_activations : shop::op_type::matmul_weight)
                         : (two ? shop::op_type::pointwise_binary : shop::op_type::pointwise);
    const bool gemm = l.op == shop::op_type::matmul_weight || l.op == shop::op_type::matmul_activations;
    l.batch_heads = pick(rng) == 0 ? 2 : 1;
    l.rows = 32 * size(rng);
    l.inner = gemm ? 32 * size(rng) : 1;
    l.tokens = 16;
    l.gradient_all_reduce = l.op == shop::op_type::matmul_weight && pick(rng) == 0;
    m.layers.push_back(l);
    if (i == 0) continue;
    const int skip_port = pick(rng) % 2;
    m.consumers[i - 1].push_back(i);
    m.operand[{i - 1, i}] = two ? 1 - skip_port : 0;
    if (two) m.consumers[i - 2].push_back(i), m.operand[{i - 2, i}] = skip_port;
  }
  return m;
}

/// The same instance written out as DFModel's own struct, field by field.
df::workload as_workload(const shop::model& m) {
  df::workload w;
  w.llm = m.figures;
  for (const auto& l : m.layers) {
    df::kernel k;
    k.name = l.name;
    const bool gemm = l.op == shop::op_type::matmul_weight || l.op == shop::op_type::matmul_activations;
    k.kind = gemm ? df::kernel_kind::systolic : df::kernel_kind::simd;
    k.op = l.op == shop::op_type::matmul_weight        ? df::kernel_op::gemm_weight
           : l.op == shop::op_type::matmul_activations ? df::kernel_op::gemm_two_inputs
           : l.op == shop::op_type::pointwise          ? df::kernel_op::elementwise
                                                       : df::kernel_op::elementwise_two_inputs;
    k.outer = l.batch_heads, k.m = l.rows, k.k = l.inner, k.n = l.tokens;
    k.backward = l.backward;
    k.periodic_all_reduce = l.gradient_all_reduce;
    w.kernels.push_back(k);
  }
  for (std::size_t u = 0; u < m.consumers.size(); ++u)
    for (std::size_t v : m.consumers[u]) w.tensors.push_back({u, v, m.operand.at({u, v})});
  return w;
}

df::system system_on(df::network net) {
  df::system s;
  s.acc = {.cores = 16, .systolic_width = 4, .systolic_height = 4, .freq_ghz = 1, .sram_bytes = 60000};
  s.mem = {.dram_gbps = 10, .dram_bytes = 0};
  s.net = std::move(net);
  return s;
}

/// Oracle: the least sharding bytes over every vector of allowed schemes.
double fewest_bytes(const shop::model& m) {
  const auto w = as_workload(m);
  std::vector<std::vector<df::loop_dim>> allowed;
  for (const auto& k : w.kernels) allowed.push_back(df::allowed_schemes(k));
  std::vector<std::size_t> pick(allowed.size(), 0);
  double best = std::numeric_limits<double>::infinity();
  for (;;) {
    std::vector<df::loop_dim> s;
    for (std::size_t i = 0; i < pick.size(); ++i) s.push_back(allowed[i][pick[i]]);
    best = std::min(best, df::evaluate_sharding(m, s).bytes);
    std::size_t i = 0;
    while (i < pick.size() && ++pick[i] == allowed[i].size()) pick[i++] = 0;
    if (i == pick.size()) return best;
  }
}

/// Oracle: the fastest feasible step over every config vector in {0..C-1}^n that lets tensors
/// flow forward, and every tile count (divisors of seq).
double fastest_step(const shop::model& m, const df::sharding& sh, const df::system& sys, const df::mapping_options& o) {
  const std::size_t n = m.layers.size();
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> cfg(n, 0);
  for (;;) {
    bool forward = true;
    for (std::size_t u = 0; u < n; ++u)
      for (std::size_t v : m.consumers[u]) forward = forward && cfg[u] <= cfg[v];
    for (std::int64_t T = 1; forward && T <= m.figures.seq; ++T) {
      if (m.figures.seq % T != 0) continue;
      const auto r = df::evaluate_mapping(m, sh, sys, o, cfg, T);
      if (r.status == status::feasible) best = std::min(best, r.final_ns);
    }
    std::size_t i = 0;
    while (i < n && ++cfg[i] == static_cast<int>(o.configs)) cfg[i++] = 0;
    if (i == n) return best;
  }
}

}  // namespace

TEST_CASE("dfmodel: sharding and fusion on a user model and network = on workload / network, = enumeration") {
  std::mt19937_64 rng(23);
  const shop::fabric fab;
  const auto sys = df::make_system(fab, system_on({}).acc, system_on({}).mem);
  const auto sys_builtin = system_on(df::two_dim(df::dim_kind::ring, df::dim_kind::switched, 2, 2, 50, 12.5,
                                                 df::parallelism::tp, df::parallelism::dp));
  CHECK(df::system_cost(sys) == df::system_cost(sys_builtin));
  CHECK(df::system_power(sys) == df::system_power(sys_builtin));
  int mapped = 0;
  for (int trial = 0; trial < 12; ++trial) {
    CAPTURE(trial);
    const auto m = random_model(rng, 3 + trial % 3);
    const auto w = as_workload(m);
    const auto sh = df::shard_exhaustive(m);
    const auto sh_builtin = df::shard_exhaustive(w);
    REQUIRE(sh.status == status::optimal);
    CHECK(sh.scheme == sh_builtin.scheme);
    CHECK(sh.bytes == sh_builtin.bytes);
    CHECK(sh.bytes == doctest::Approx(fewest_bytes(m)).epsilon(1e-12));

    const df::mapping_options o{.configs = 2 + static_cast<std::size_t>(trial % 2), .compute_util = trial % 4 == 0 ? 0.0 : 0.8};
    const auto r = df::optimise_mapping(m, sh, sys, o);
    const auto r_builtin = df::optimise_mapping(w, sh_builtin, sys_builtin, o);
    REQUIRE(r.status == r_builtin.status);
    const double oracle = fastest_step(m, sh, sys, o);
    if (r.status != status::optimal) {
      CHECK(oracle == std::numeric_limits<double>::infinity());
      continue;
    }
    CHECK(r.config_of == r_builtin.config_of);
    CHECK(r.num_tile == r_builtin.num_tile);
    CHECK(r.final_ns == r_builtin.final_ns);
    CHECK(r.cost == r_builtin.cost);
    CHECK(r.final_ns == doctest::Approx(oracle).epsilon(1e-12));
    ++mapped;
  }
  CHECK(mapped >= 6);  // most instances fit: the comparisons above ran
}

TEST_CASE("dfmodel: the member-only archetype takes the defaults (ports by source id, names k<v>)") {
  using A = devplace::archetypes::minimal_kernel_graph;
  using O = df::kernel_op;
  // 0: GEMM with weight; 1: element-wise; 2: GEMM of 0 and 1 (0 is the lower id: port 0).
  const A g({{{1, 64, 32, 16}, O::gemm_weight}, {{1, 64, 1, 16}, O::elementwise}, {{1, 64, 16, 16}, O::gemm_two_inputs}},
            {{1, 2}, {2}, {}});
  const auto w = df::to_workload(g);
  REQUIRE(w.tensors.size() == 3);
  CHECK(w.tensors[1].src == 0);
  CHECK(w.tensors[1].port == 0);
  CHECK(w.tensors[2].src == 1);
  CHECK(w.tensors[2].port == 1);
  CHECK(w.kernels[2].name == "k2");
  CHECK(w.kernels[2].kind == df::kernel_kind::systolic);
  CHECK(w.kernels[1].kind == df::kernel_kind::simd);
  CHECK(w.llm.seq == df::llm_params{}.seq);
  devplace::archetypes::minimal_network net{{{df::dim_kind::fully_connected, 4, 25, df::parallelism::tp}}};
  const auto sys = df::make_system(net);
  CHECK(sys.net.dims.size() == 1);
  CHECK(df::degree(sys.net, df::parallelism::tp) == 4);
  // the archetype runs through the searches, and a GEMM of two activations is sharded as one
  const auto sh = df::shard_exhaustive(g);
  CHECK(sh.bytes == df::shard_exhaustive(w).bytes);
  CHECK(df::evaluate_sharding(g, sh.scheme).bytes == sh.bytes);
}

TEST_CASE("dfmodel: a user type that breaks the rules is refused with the reason") {
  using A = devplace::archetypes::minimal_kernel_graph;
  using O = df::kernel_op;
  const A backwards({{{1, 8, 1, 8}, O::elementwise}, {{1, 8, 1, 8}, O::elementwise}}, {{}, {0}});
  CHECK_THROWS_AS((void)df::to_workload(backwards), std::invalid_argument);
  const A empty_loop({{{1, 0, 1, 8}, O::elementwise}}, {{}});
  CHECK_THROWS_AS((void)df::shard_exhaustive(empty_loop), std::invalid_argument);
  devplace::archetypes::minimal_network twice{{{df::dim_kind::ring, 2, 1, df::parallelism::tp},
                                               {df::dim_kind::ring, 2, 1, df::parallelism::tp}}};
  CHECK_THROWS_AS((void)df::make_system(twice), std::invalid_argument);
}
