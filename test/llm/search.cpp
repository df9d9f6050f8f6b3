// The execution search against brute force over small spaces, and its bounds never above the
// optimum of the executions they cover.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "devplace/io/llm_json.hpp"
#include "devplace/llm/search.hpp"

using namespace devplace;
using namespace devplace::llm;

namespace {

model small_model(std::int64_t kv_heads) {
  model m;
  m.hidden = 256;
  m.ffn = 1024;
  m.layers = 8;
  m.heads = 8;
  m.kv_heads = kv_heads;
  m.head_dim = 32;
  m.seq = 256;
  m.vocab = 1000;
  return m;
}

hardware small_gpu(double hbm_gib) {
  hardware h = io::read_llm_system(std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples" / "llm" / "dgx_a100_80g.json");
  h.gpu.hbm_gib = hbm_gib;
  h.tiers[0].size = 4;  // nodes of 4 GPUs, so that groups cross the slower tier
  return h;
}

struct brute {
  double best = 1e300;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>, double> pair_best;
  std::uint64_t fits = 0;
};

// Every execution with tp pp cp dp <= N that check_execution accepts, with every option.
brute brute_force(const model& m, const hardware& hw, const search_space& sp) {
  brute b;
  for (std::int64_t tp = 1; tp <= sp.gpus; ++tp)
    for (std::int64_t pp = 1; tp * pp <= sp.gpus; ++pp)
      for (std::int64_t cp = 1; cp <= sp.max_cp && tp * pp * cp <= sp.gpus; ++cp)
        for (std::int64_t dp = 1; tp * pp * cp * dp <= sp.gpus; ++dp)
          for (std::int64_t mb = 1; mb <= sp.global_batch; ++mb)
            for (std::int64_t vp = 1; vp <= m.layers; ++vp)
              for (auto r : {recompute::none, recompute::selective, recompute::full})
                for (int flags = 0; flags < 16; ++flags) {
                  execution e;
                  e.tp = tp, e.pp = pp, e.cp = cp, e.dp = dp, e.vp = vp, e.micro_batch = mb;
                  e.global_batch = sp.global_batch;
                  e.recompute = r;
                  e.sequence_parallel = flags & 1;
                  e.distributed_optimizer = flags & 2;
                  e.dp_overlap = flags & 4;
                  e.tp_overlap = flags & 8;
                  e.dtype = sp.dtype;
                  try {
                    check_execution(e, m);
                  } catch (const std::invalid_argument&) {
                    continue;
                  }
                  const auto ev = evaluate(m, hw, e);
                  if (!ev.fits) continue;
                  ++b.fits;
                  b.best = std::min(b.best, ev.iteration_s);
                  auto& pb = b.pair_best.try_emplace({tp, pp, cp, dp, mb}, 1e300).first->second;
                  pb = std::min(pb, ev.iteration_s);
                }
  return b;
}

}  // namespace

TEST_CASE("llm search: the optimum equals brute force, and every bound is below what it covers") {
  for (std::int64_t kv : {8, 2})
    for (double hbm : {80.0, 0.12, 0.05})
      for (std::int64_t gpus : {4, 8}) {
        const model m = small_model(kv);
        const hardware hw = small_gpu(hbm);
        search_space sp;
        sp.gpus = gpus;
        sp.global_batch = 8;
        sp.max_cp = 2;
        sp.dtype = dtype::bf16;
        CAPTURE(kv);
        CAPTURE(hbm);
        CAPTURE(gpus);
        const brute b = brute_force(m, hw, sp);
        const auto r = search_executions(m, hw, sp, {.top_k = 3});
        if (b.fits == 0) {
          CHECK(r.status == status::infeasible);
          CHECK(r.top.empty());
          continue;
        }
        REQUIRE(r.status == status::optimal);
        REQUIRE_FALSE(r.top.empty());
        CHECK(r.top.front().eval.iteration_s == doctest::Approx(b.best).epsilon(1e-12));
        CHECK(r.top.size() == std::min<std::size_t>(3, b.fits));
        for (std::size_t i = 1; i < r.top.size(); ++i) CHECK(r.top[i - 1].eval.iteration_s <= r.top[i].eval.iteration_s);
        CHECK(r.evaluated < b.fits * 16);  // the bounds pruned (a loose check that pruning happens at all)
        for (const auto& [key, best] : b.pair_best) {
          const auto [tp, pp, cp, dp, mb] = key;
          const double c = least_layer_compute(m, hw, sp, tp, cp, mb);
          CHECK(pair_lower_bound(m, sp, pp, dp, mb, c) <= best * (1 + 1e-12));
        }
      }
}

TEST_CASE("llm search: a restricted space is searched as declared") {
  const model m = small_model(8);
  const hardware hw = small_gpu(80);
  search_space sp;
  sp.gpus = 8;
  sp.exact_gpus = true;
  sp.global_batch = 8;
  sp.recompute = {recompute::full};
  sp.tp_overlap = {false};
  const auto r = search_executions(m, hw, sp, {.top_k = 5});
  REQUIRE(r.status == status::optimal);
  for (const auto& t : r.top) {
    CHECK(t.exec.gpus() == 8);
    CHECK(t.exec.recompute == recompute::full);
    CHECK_FALSE(t.exec.tp_overlap);
  }
  search_space bad = sp;
  bad.recompute.clear();
  CHECK_THROWS_AS((void)search_executions(m, hw, bad), std::invalid_argument);
  bad = sp;
  bad.dtype = dtype::fp8;  // the A100 has no fp8 rate
  CHECK_THROWS_AS((void)search_executions(m, hw, bad), std::invalid_argument);
}
