// Uneven layer splits against brute force over every composition of the layers.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "devplace/io/llm_json.hpp"
#include "devplace/llm/balance.hpp"

using namespace devplace;
using namespace devplace::llm;

namespace {

// Every split of `layers` into `parts` positive counts.
void compositions(std::int64_t layers, std::int64_t parts, std::vector<std::int64_t>& cur,
                  const std::function<void(const std::vector<std::int64_t>&)>& f) {
  if (parts == 1) {
    cur.push_back(layers);
    f(cur);
    cur.pop_back();
    return;
  }
  for (std::int64_t k = 1; k <= layers - (parts - 1); ++k) {
    cur.push_back(k);
    compositions(layers - k, parts - 1, cur, f);
    cur.pop_back();
  }
}

}  // namespace

TEST_CASE("llm balance: the DP's slowest stage is the least of every split that fits (brute force)") {
  const auto h100 = io::read_llm_system(std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples" / "llm" / "dgx_h100_80g.json");
  int cases = 0, uneven_better = 0;
  for (std::int64_t vocab : {1000, 128256, 400000})
    for (std::int64_t pp : {2, 3, 4})
      for (double hbm : {80.0, 2.0, 1.4, 1.1, 0.9}) {
        model m;
        m.hidden = 1024, m.ffn = 4096, m.layers = 9, m.heads = 8, m.kv_heads = 8, m.head_dim = 128;
        m.seq = 2048, m.vocab = vocab, m.tied_embeddings = false;
        hardware hw = h100;
        hw.gpu.hbm_gib = hbm;
        execution e;
        e.tp = 1, e.pp = pp, e.global_batch = 8, e.recompute = recompute::selective;
        double best = 1e300;  // the least slowest stage over every split that fits
        std::vector<std::int64_t> cur;
        auto slowest = [](const evaluation& r) { return *std::max_element(r.stage_s.begin(), r.stage_s.end()); };
        compositions(m.layers, pp, cur, [&](const std::vector<std::int64_t>& split) {
          execution x = e;
          x.layers_per_stage = split;
          const auto r = evaluate(m, hw, x);
          if (r.fits) best = std::min(best, slowest(r));
        });
        CAPTURE(vocab);
        CAPTURE(pp);
        CAPTURE(hbm);
        const auto split = balance_layers(m, hw, e);
        if (best == 1e300) {
          CHECK_FALSE(split.has_value());
          continue;
        }
        REQUIRE(split.has_value());
        execution x = e;
        x.layers_per_stage = *split;
        const auto r = evaluate(m, hw, x);
        CHECK(r.fits);
        CHECK(slowest(r) == doctest::Approx(best).epsilon(1e-12));
        ++cases;
        // Uniform only where 9 layers split evenly.
        if (m.layers % pp == 0) {
          execution u = e;
          const auto ru = evaluate(m, hw, u);
          if (ru.fits && r.iteration_s < ru.iteration_s * (1 - 1e-9)) ++uneven_better;
        }
      }
  CHECK(cases >= 6);
  CHECK(uneven_better >= 1);  // the large vocabulary pays for an uneven split somewhere
}

TEST_CASE("llm balance: refuses interleaving and more stages than layers") {
  model m;
  m.hidden = 64, m.ffn = 256, m.layers = 4, m.heads = 4, m.kv_heads = 4, m.head_dim = 16, m.seq = 32, m.vocab = 128;
  const auto hw = io::read_llm_system(std::filesystem::path(DEVPLACE_SOURCE_DIR) / "examples" / "llm" / "dgx_a100_80g.json");
  execution e;
  e.pp = 2, e.vp = 2, e.global_batch = 4;
  CHECK_THROWS_AS((void)balance_layers(m, hw, e), std::invalid_argument);
  e.vp = 1;
  e.pp = 5;
  CHECK_THROWS_AS((void)balance_layers(m, hw, e), std::invalid_argument);
}
