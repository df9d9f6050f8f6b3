// The sweep driver (sweep/driver.hpp, sweep/results.hpp) on synthetic spaces whose lines are known
// in advance: every point's line, in point order, for several threads and thread "ranks"; a point
// that throws; stopped and resumed runs (with a line cut short) giving the same file, without
// evaluating a point twice; lines of another space refused; a group of points goes to one asker.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "devplace/sweep/driver.hpp"
#include "sweep/thread_ranks.hpp"

using namespace devplace;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A space of n points: inputs {i, tag}, status by i mod 3, point 5 mod 11 throws. `calls` counts
/// evaluations.
sweep::point_space synthetic(std::size_t n, std::atomic<std::size_t>& calls, int tag = 0) {
  sweep::point_space s;
  s.size = n;
  s.inputs = [tag](std::size_t i) { return json{{"i", i}, {"tag", tag}}; };
  s.evaluate = [&calls](std::size_t i) {
    calls.fetch_add(1);
    if (i % 11 == 5) throw std::runtime_error("point " + std::to_string(i) + " failed");
    return sweep::point_result{i % 3 == 0 ? "infeasible" : "optimal", json{{"y", (i * 2654435761u) % 1000}}};
  };
  return s;
}

/// The line point i must have (time fields aside), written out independently of the driver.
json expected_line(std::size_t i, int tag = 0) {
  json j{{"index", i}, {"inputs", {{"i", i}, {"tag", tag}}}};
  if (i % 11 == 5) {
    j["status"] = "error";
    j["result"] = json::object();
    j["error"] = "point " + std::to_string(i) + " failed";
  } else {
    j["status"] = i % 3 == 0 ? "infeasible" : "optimal";
    j["result"] = {{"y", (i * 2654435761u) % 1000}};
  }
  return j;
}

/// The lines of `file`, with their time fields checked (>= 0) and removed.
std::vector<json> read_lines(const fs::path& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    auto j = json::parse(line);
    REQUIRE(j.contains("wall_time_s"));
    REQUIRE(j.contains("cpu_time_s"));
    CHECK(j["wall_time_s"].get<double>() >= 0);
    CHECK(j["cpu_time_s"].get<double>() >= 0);
    j.erase("wall_time_s");
    j.erase("cpu_time_s");
    out.push_back(std::move(j));
  }
  return out;
}

void check_complete(const fs::path& out, std::size_t n, int tag = 0) {
  const auto lines = read_lines(out);
  REQUIRE(lines.size() == n);
  for (std::size_t i = 0; i < n; ++i) CHECK(lines[i] == expected_line(i, tag));
  CHECK_FALSE(fs::exists(sweep::parts_directory(out)));
}

fs::path fresh_dir(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("devplace_test_sweep_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("sweep: every point has its line, in point order, for 1, 2 and 4 threads") {
  const auto dir = fresh_dir("threads");
  for (unsigned threads : {1u, 2u, 4u}) {
    std::atomic<std::size_t> calls{0};
    const auto s = synthetic(37, calls);
    const auto out = dir / ("t" + std::to_string(threads) + ".jsonl");
    std::vector<sweep::progress> seen;
    sweep::run_options o{.out = out, .threads = threads, .on_progress = [&](const sweep::progress& p) { seen.push_back(p); },
                         .progress_interval_s = 0};
    sweep::solo_channel one;
    const auto r = sweep::run(s, o, one);
    CHECK(r.complete);
    CHECK(r.done_before == 0);
    CHECK(r.evaluated == 37);
    CHECK(r.done == 37);
    CHECK(calls == 37);
    check_complete(out, 37);
    REQUIRE_FALSE(seen.empty());
    CHECK(seen.back().done == 37);
    CHECK(seen.back().this_run == 37);
    for (std::size_t k = 1; k < seen.size(); ++k) CHECK(seen[k].done >= seen[k - 1].done);
  }
}

TEST_CASE("sweep: thread ranks share the points and merge the same file") {
  const auto dir = fresh_dir("ranks");
  for (int ranks : {1, 2, 4}) {
    std::atomic<std::size_t> calls{0};
    const auto s = synthetic(29, calls);
    const auto out = dir / ("r" + std::to_string(ranks) + ".jsonl");
    test::rank_hub hub(ranks);
    std::vector<sweep::run_report> reps(static_cast<std::size_t>(ranks));
    std::size_t final_done = 0;
    {
      std::vector<std::thread> ts;
      for (int r = 0; r < ranks; ++r)
        ts.emplace_back([&, r] {
          test::thread_rank ch(hub, r);
          sweep::run_options o{.out = out, .threads = r == 0 ? 1u : 2u};
          if (r == 0) o.on_progress = [&](const sweep::progress& p) { final_done = p.done; };
          reps[static_cast<std::size_t>(r)] = sweep::run(s, o, ch);
        });
      for (auto& t : ts) t.join();
    }
    std::size_t evaluated = 0;
    for (const auto& r : reps) evaluated += r.evaluated;
    CHECK(evaluated == 29);
    CHECK(calls == 29);
    CHECK(reps[0].complete);
    CHECK(final_done == 29);
    check_complete(out, 29);
  }
}

TEST_CASE("sweep: stopped runs resume to the same file without evaluating a point twice") {
  const auto dir = fresh_dir("resume");
  std::atomic<std::size_t> calls{0};
  const auto s = synthetic(23, calls);
  const auto out = dir / "r.jsonl";
  sweep::solo_channel one;
  auto r = sweep::run(s, {.out = out, .threads = 2, .stop_after = 5}, one);
  CHECK_FALSE(r.complete);
  CHECK(r.done == 5);
  CHECK_FALSE(fs::exists(out));
  r = sweep::run(s, {.out = out, .threads = 1, .stop_after = 7}, one);
  CHECK(r.done_before == 5);
  CHECK(r.done == 12);
  CHECK(calls == 12);
  // A process killed while writing leaves the start of a line: that point is evaluated again.
  const auto lines = sweep::collect_lines(s, out);
  std::size_t pending = 0;
  while (lines[pending]) ++pending;
  const std::string cut = expected_line(pending).dump();
  std::ofstream(sweep::parts_directory(out) / "run2-rank0.jsonl", std::ios::app) << cut.substr(0, cut.size() / 2);
  r = sweep::run(s, {.out = out, .threads = 3}, one);
  CHECK(r.done_before == 12);
  CHECK(r.complete);
  CHECK(calls == 23);
  check_complete(out, 23);
  // Run again on a complete output: nothing is evaluated and the file stays the same.
  std::ifstream before_in(out);
  const std::string before((std::istreambuf_iterator<char>(before_in)), std::istreambuf_iterator<char>());
  r = sweep::run(s, {.out = out}, one);
  CHECK(r.done_before == 23);
  CHECK(calls == 23);
  std::ifstream after_in(out);
  CHECK(std::string((std::istreambuf_iterator<char>(after_in)), std::istreambuf_iterator<char>()) == before);
}

TEST_CASE("sweep: lines written for another space are refused, naming the file and the line") {
  const auto dir = fresh_dir("other");
  std::atomic<std::size_t> calls{0};
  const auto out = dir / "r.jsonl";
  sweep::solo_channel one;
  (void)sweep::run(synthetic(6, calls, 0), {.out = out, .stop_after = 2}, one);
  const auto other = synthetic(6, calls, 1);
  try {
    (void)sweep::run(other, {.out = out}, one);
    FAIL("expected io::input_error");
  } catch (const io::input_error& e) {
    CHECK(e.location() == "line 1");
    CHECK(std::string(e.what()).find("run1-rank0.jsonl") != std::string::npos);
    CHECK(std::string(e.what()).find("differ from the space's") != std::string::npos);
  }
  // An index beyond a smaller space is refused too.
  try {
    (void)sweep::run(synthetic(1, calls, 0), {.out = out}, one);
    FAIL("expected io::input_error");
  } catch (const io::input_error& e) {
    CHECK(std::string(e.what()).find("index below 1") != std::string::npos);
  }
}

TEST_CASE("sweep: a group's points go to one rank or thread, and the file is the same") {
  const auto dir = fresh_dir("groups");
  for (int ranks : {1, 3}) {
    std::atomic<std::size_t> calls{0};
    auto s = synthetic(41, calls);
    // Groups of uneven lengths: runs of i / 4 and a few singletons.
    s.group = [](std::size_t i) { return i % 9 == 8 ? 1000 + i : i / 4; };
    std::mutex mu;
    std::vector<std::thread::id> by(41);
    const auto inner = s.evaluate;
    s.evaluate = [&, inner](std::size_t i) {
      {
        std::lock_guard lk(mu);
        by[i] = std::this_thread::get_id();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the other askers wait meanwhile
      return inner(i);
    };
    const auto out = dir / ("g" + std::to_string(ranks) + ".jsonl");
    for (std::size_t stop : {6, 41}) {  // a resumed run starts inside a group
      test::rank_hub hub(ranks);
      std::vector<std::thread> ts;
      for (int r = 0; r < ranks; ++r)
        ts.emplace_back([&, r] {
          test::thread_rank ch(hub, r);
          (void)sweep::run(s, {.out = out, .threads = r == 0 ? 2u : 1u, .stop_after = stop}, ch);
        });
      for (auto& t : ts) t.join();
    }
    CHECK(calls == 41);
    check_complete(out, 41);
    // Every thread that evaluates is one asker (rank 0's two threads, each other rank's one):
    // the points of a group evaluated by one run went to one thread, in order.
    for (std::size_t i = 7; i < 41; ++i)
      if (s.group(i) == s.group(i - 1)) CHECK_MESSAGE(by[i] == by[i - 1], "point ", i);
  }
}
