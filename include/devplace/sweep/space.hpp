#pragma once
/// \file sweep/space.hpp
/// The vocabulary of a design-space sweep (docs/sweep.md): the space file, a *generator* (a named
/// way to enumerate a space's points and to evaluate one), the *prepared space* a generator
/// returns, and one point's result.
///
/// A space file is `devplace.sweep.space/1` JSON:
///
///   {"format": "devplace.sweep.space/1", "generator": "phaze", "name": "bert-k1024",
///    "space": { ...what the generator reads... }}
///
/// Relative paths inside `space` are resolved against the space file's directory. A prepared
/// space has `size` points numbered 0 … size − 1 in a fixed order; `inputs(i)` describes point i
/// and `evaluate(i)` computes it. Both are pure functions of i (the same answer in every process,
/// on every rank, at every call), which is what lets a driver hand points to any process, in any
/// order, and resume a stopped sweep.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "devplace/ilp/concepts.hpp"
#include "devplace/io/detail/json_reader.hpp"
#include "devplace/io/error.hpp"

namespace devplace::sweep {

using json = nlohmann::json;

/// A parsed space file; the generator reads `space`.
struct space_file {
  std::string file;             ///< the path as given (messages name it)
  std::filesystem::path base;   ///< the directory relative paths are resolved against
  std::string generator, name;
  json space;                   ///< the generator's part, at JSON pointer `/space`
};

/// One point's outcome: a status word (`optimal`, `feasible`, `infeasible`, `work_limit`,
/// `time_limit`, …) and the generator's result object.
struct point_result {
  std::string status;
  json result = json::object();
};

/// A space ready to run: `size` points, each described and evaluated by a pure, thread-safe
/// function of its index. `evaluate` may throw; the driver records that as status `error`.
/// `group` (optional) says which points share work: consecutive points with the same group
/// number are best evaluated one after another by one process (the generator keeps what they
/// share), and the driver hands such a run of points to one rank or thread. It never changes a
/// result.
struct point_space {
  std::size_t size = 0;
  std::function<json(std::size_t)> inputs;
  std::function<point_result(std::size_t)> evaluate;
  std::function<std::size_t(std::size_t)> group;
};

/// An ILP solver behind a function (an `ilp::ilp_solver`), so that a program can give the
/// generators the backend it links without the generators including one.
struct function_solver {
  using function = std::function<ilp::solution(const ilp::model&, const ilp::solve_options&)>;
  function solve_with;
  [[nodiscard]] ilp::solution solve(const ilp::model& m, const ilp::solve_options& o) const { return solve_with(m, o); }
};

/// What a program gives the generators beyond the space file.
struct prepare_context {
  using ilp_type = function_solver::function;
  /// The ILP solver for points that solve ILPs (`phaze` with `ilp_time_limit_s`); empty: none.
  ilp_type ilp;
};

/// A named generator: `prepare` reads the space file's `space` part (throwing io::input_error
/// naming the file, the JSON pointer and the reason) and returns the prepared space.
struct generator {
  std::string_view name;
  std::string_view summary;
  point_space (*prepare)(const space_file&, const prepare_context&);
};

/// Reads a space file's envelope (format, generator, name, space). Throws io::input_error.
[[nodiscard]] inline space_file read_space_file(const std::filesystem::path& path) {
  space_file f;
  f.file = path.string();
  const io::detail::reader rd(f.file);
  const auto doc = io::detail::parse_json(io::detail::read_text(path), f.file);
  rd.object(doc, "");
  rd.format(doc, "devplace.sweep.space/1");
  f.generator = rd.string(rd.field(doc, "generator", ""), "/generator");
  if (const auto* n = io::detail::reader::optional(doc, "name")) f.name = rd.string(*n, "/name");
  f.space = rd.object(rd.field(doc, "space", ""), "/space");
  f.base = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return f;
}

/// A path written in the space file, resolved against its directory.
[[nodiscard]] inline std::filesystem::path resolve(const space_file& f, const std::string& p) {
  const std::filesystem::path q(p);
  return q.is_absolute() ? q : f.base / q;
}

namespace detail {

/// The positive integers of an optional array field (`dflt` when it is absent); not empty.
inline std::vector<std::size_t> counts(const io::detail::reader& rd, const json& obj, std::string_view key,
                                       const std::string& ptr, std::vector<std::size_t> dflt) {
  const json* v = io::detail::reader::optional(obj, key);
  if (!v) return dflt;
  const std::string p = io::detail::child(ptr, key);
  rd.array(*v, p);
  if (v->empty()) rd.fail(p, "expected at least one value");
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const auto x = rd.count((*v)[i], io::detail::child(p, i));
    if (x == 0) rd.fail(io::detail::child(p, i), "expected an integer >= 1, got 0");
    out.push_back(static_cast<std::size_t>(x));
  }
  return out;
}

/// The positive numbers of an optional array field (`dflt` when absent); not empty.
inline std::vector<double> positives(const io::detail::reader& rd, const json& obj, std::string_view key,
                                     const std::string& ptr, std::vector<double> dflt) {
  const json* v = io::detail::reader::optional(obj, key);
  if (!v) return dflt;
  const std::string p = io::detail::child(ptr, key);
  rd.array(*v, p);
  if (v->empty()) rd.fail(p, "expected at least one value");
  std::vector<double> out;
  for (std::size_t i = 0; i < v->size(); ++i) out.push_back(rd.positive((*v)[i], io::detail::child(p, i)));
  return out;
}

/// The strings of a required, non-empty array field.
inline std::vector<std::string> strings(const io::detail::reader& rd, const json& obj, std::string_view key,
                                        const std::string& ptr) {
  const std::string p = io::detail::child(ptr, key);
  const json& v = rd.array(rd.field(obj, key, ptr), p);
  if (v.empty()) rd.fail(p, "expected at least one value");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(rd.string(v[i], io::detail::child(p, i)));
  return out;
}

/// Fails on a member of `obj` that is not in `known` (a misspelt axis would silently sweep nothing).
inline void known_fields(const io::detail::reader& rd, const json& obj, const std::string& ptr,
                         std::initializer_list<std::string_view> known) {
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (auto n : known) ok = ok || k == n;
    if (!ok) {
      std::string all;
      for (auto n : known) all += (all.empty() ? "" : ", ") + std::string(n);
      rd.fail(io::detail::child(ptr, k), "unknown field (expected one of " + all + ")");
    }
  }
}

}  // namespace detail

}  // namespace devplace::sweep
