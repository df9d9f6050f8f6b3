#pragma once
/// \file viz/trace.hpp
/// `trace_builder`: a document in the Chrome Trace Event format, the JSON that Perfetto
/// (ui.perfetto.dev), chrome://tracing and PyTorch's profiler share.
///
/// The document is `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}` with
///   * metadata events (ph "M") naming processes and threads and ordering them;
///   * complete events (ph "X"): name, category, pid, tid, ts and dur in µs (dur ≥ 0), args;
///   * flow events (ph "s" then "f", same id and category) drawn as arrows from the slice
///     enclosing the start to the slice enclosing the finish ("bp": "e").
/// A producer picks its own mapping of what it times onto processes and threads; the simulated
/// iteration (viz/sim_trace.hpp) uses one process per node and threads per device.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace devplace::viz {

class trace_builder {
 public:
  /// Names process `pid` and sets its place in the viewer's list (lower first).
  template <int = 0>
  void process(int pid, const std::string& name, int sort_index) {
    meta("process_name", pid, 0, {{"name", name}});
    meta("process_sort_index", pid, 0, {{"sort_index", sort_index}});
  }

  /// Names thread `tid` of process `pid` and sets its place within the process.
  template <int = 0>
  void thread(int pid, int tid, const std::string& name, int sort_index) {
    meta("thread_name", pid, tid, {{"name", name}});
    meta("thread_sort_index", pid, tid, {{"sort_index", sort_index}});
  }

  /// A complete event: `name` on thread (pid, tid) from ts_us for dur_us. Throws
  /// std::invalid_argument naming the event when ts is not finite or dur is negative or not finite.
  template <int = 0>
  void complete(const std::string& name, const std::string& category, int pid, int tid, double ts_us, double dur_us,
                nlohmann::json args = nlohmann::json::object()) {
    if (!std::isfinite(ts_us) || !std::isfinite(dur_us) || dur_us < 0)
      throw std::invalid_argument("trace: event \"" + name + "\": ts must be finite and dur finite and >= 0");
    events_.push_back({{"name", name}, {"cat", category}, {"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", ts_us},
                       {"dur", dur_us}, {"args", std::move(args)}});
  }

  /// An arrow from the slice enclosing ts_us on (pid, tid) to the slice enclosing to_ts_us on
  /// (to_pid, to_tid); returns its id.
  template <int = 0>
  std::size_t flow(const std::string& name, const std::string& category, int pid, int tid, double ts_us, int to_pid,
                   int to_tid, double to_ts_us) {
    if (!std::isfinite(ts_us) || !std::isfinite(to_ts_us))
      throw std::invalid_argument("trace: flow \"" + name + "\": ts must be finite");
    const std::size_t id = ++flows_;
    events_.push_back({{"name", name}, {"cat", category}, {"ph", "s"}, {"id", id}, {"pid", pid}, {"tid", tid}, {"ts", ts_us},
                       {"bp", "e"}});
    events_.push_back({{"name", name}, {"cat", category}, {"ph", "f"}, {"id", id}, {"pid", to_pid}, {"tid", to_tid},
                       {"ts", to_ts_us}, {"bp", "e"}});
    return id;
  }

  /// A key of the document's "otherData" object (shown by the viewers as the trace's metadata).
  template <int = 0>
  void other_data(const std::string& key, nlohmann::json value) { other_[key] = std::move(value); }

  [[nodiscard]] const nlohmann::json& events() const noexcept { return events_; }

  /// The document.
  template <int = 0>
  [[nodiscard]] nlohmann::json json() const {
    return {{"traceEvents", events_}, {"displayTimeUnit", "ms"}, {"otherData", other_}};
  }
  /// The document as text, one event per line.
  template <int = 0>
  [[nodiscard]] std::string str() const {
    std::string out = "{\"traceEvents\": [\n";
    for (std::size_t i = 0; i < events_.size(); ++i) out += events_[i].dump() + (i + 1 < events_.size() ? ",\n" : "\n");
    return out + "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": " + other_.dump() + "}\n";
  }

 private:
  template <int = 0>
  void meta(const char* what, int pid, int tid, nlohmann::json args) {
    events_.push_back({{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}});
  }

  nlohmann::json events_ = nlohmann::json::array();
  nlohmann::json other_ = nlohmann::json::object();
  std::size_t flows_ = 0;
};

}  // namespace devplace::viz
