#pragma once
/// \file sweep/llm_space.ipp
/// The definition of `sweep::prepare_llm_space` (sweep/llm_space.hpp): it reads LLM systems and
/// models and runs the execution search, so it is compiled where it is included and called
/// (header-only mode: sweep/llm_space.hpp does not include it; devplace/sweep.hpp and
/// sweep/registry.ipp do) or once in `devplace::core` (compiled mode; see config.hpp).
#include <memory>
#include <string>
#include <vector>

#include "devplace/io/llm_json.hpp"
#include "devplace/llm/search.hpp"
#include "devplace/sweep/llm_space.hpp"
#include "devplace/sweep/space.hpp"

namespace devplace::sweep {

namespace detail {

struct llm_data {
  std::vector<std::string> system_names, model_names;
  std::vector<llm::hardware> systems;
  std::vector<llm::model> models;
  std::vector<std::size_t> gpus, batches;
  llm::dtype dtype = llm::dtype::bf16;
  std::int64_t max_cp = 1;
};

struct llm_point {
  std::size_t system = 0, model = 0, gpus = 0, batch = 0;
};

template <int = 0>
llm_point llm_decode(const llm_data& d, std::size_t i) {
  llm_point p;
  p.batch = i % d.batches.size();
  i /= d.batches.size();
  p.gpus = i % d.gpus.size();
  i /= d.gpus.size();
  p.model = i % d.models.size();
  p.system = i / d.models.size();
  return p;
}

template <int = 0>
std::shared_ptr<const llm_data> read_llm_data(const space_file& f) {
  const io::detail::reader rd(f.file);
  known_fields(rd, f.space, "/space", {"systems", "models", "gpus", "global_batch", "dtype", "max_cp"});
  auto d = std::make_shared<llm_data>();
  d->system_names = strings(rd, f.space, "systems", "/space");
  d->model_names = strings(rd, f.space, "models", "/space");
  for (const auto& n : d->system_names) d->systems.push_back(io::read_llm_system(resolve(f, n)));
  for (const auto& n : d->model_names) d->models.push_back(io::read_llm_model(resolve(f, n)));
  if (!io::detail::reader::optional(f.space, "gpus")) rd.fail("/space/gpus", "missing required field");
  if (!io::detail::reader::optional(f.space, "global_batch")) rd.fail("/space/global_batch", "missing required field");
  d->gpus = counts(rd, f.space, "gpus", "/space", {});
  d->batches = counts(rd, f.space, "global_batch", "/space", {});
  if (const json* t = io::detail::reader::optional(f.space, "dtype")) {
    const std::string s = rd.string(*t, "/space/dtype");
    if (s == "fp16") d->dtype = llm::dtype::fp16;
    else if (s == "bf16") d->dtype = llm::dtype::bf16;
    else if (s == "fp8") d->dtype = llm::dtype::fp8;
    else rd.fail("/space/dtype", "expected fp16, bf16 or fp8, got '" + s + "'");
  }
  if (const json* c = io::detail::reader::optional(f.space, "max_cp")) {
    d->max_cp = static_cast<std::int64_t>(rd.count(*c, "/space/max_cp"));
    if (d->max_cp < 1) rd.fail("/space/max_cp", "expected an integer >= 1");
  }
  return d;
}

/// The space of `f`: its points, their inputs and their evaluation.
template <int = 0>
point_space llm_space(const space_file& f) {
  const auto d = detail::read_llm_data(f);
  point_space s;
  s.size = d->systems.size() * d->models.size() * d->gpus.size() * d->batches.size();
  s.inputs = [d](std::size_t i) {
    const auto p = detail::llm_decode(*d, i);
    return json{{"system", d->system_names[p.system]}, {"model", d->model_names[p.model]},
                {"gpus", d->gpus[p.gpus]}, {"global_batch", d->batches[p.batch]},
                {"dtype", std::string(llm::to_string(d->dtype))}};
  };
  s.evaluate = [d](std::size_t i) {
    const auto p = detail::llm_decode(*d, i);
    llm::search_space sp;
    sp.gpus = static_cast<std::int64_t>(d->gpus[p.gpus]);
    sp.global_batch = static_cast<std::int64_t>(d->batches[p.batch]);
    sp.dtype = d->dtype;
    sp.max_cp = d->max_cp;
    const auto& hw = d->systems[p.system];
    if (!(hw.gpu.mat(d->dtype).tflops > 0) && d->dtype == llm::dtype::fp8)
      return point_result{std::string(to_string(status::infeasible)), json{{"reason", "the GPU has no fp8 rate"}}};
    const auto r = llm::search_executions(d->models[p.model], hw, sp);
    if (r.top.empty()) return point_result{std::string(to_string(r.status)), json::object()};
    const auto& best = r.top.front();
    return point_result{std::string(to_string(r.status)),
                        json{{"execution", io::to_json(best.exec)},
                             {"iteration_s", best.eval.iteration_s},
                             {"tokens_per_s_per_gpu", best.eval.tokens_per_s_per_gpu},
                             {"model_tflops_per_gpu", best.eval.model_tflops_per_gpu},
                             {"memory_gib_per_gpu", best.eval.memory_gib_per_gpu},
                             {"executions_evaluated", r.evaluated}}};
  };
  return s;
}

}  // namespace detail

/// The body of `prepare_llm_space` (sweep/llm_space.hpp declares this type and calls `run`).
template <int>
struct detail::prepare_llm_space_defined_in_sweep_llm_space_ipp {
  static point_space run(const space_file& f, const prepare_context&) { return llm_space(f); }
};

}  // namespace devplace::sweep
