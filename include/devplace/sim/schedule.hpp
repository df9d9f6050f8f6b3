#pragma once
/// \file sim/schedule.hpp
/// The order in which one device of a pipeline runs its forward and backward passes: GPipe,
/// 1F1B, and Megatron-LM's interleaved 1F1B with v model chunks per device (Narayanan et al.
/// 2021). The pipeline simulator (sim/pipeline_simulator.hpp) chains each device's tasks in this
/// order.
///
/// A device at pipeline rank k of S ranks holds the chunks k, k + S, ..., k + (v − 1) S of the
/// S · v chunks the model is cut into (v = 1 for GPipe and 1F1B: chunk k is stage k). Over MB
/// micro-batches it runs MB · v forward and MB · v backward passes:
///   * GPipe: F for m = 0..MB−1, then B for m = MB−1..0 (flush);
///   * 1F1B: min(S − k, MB) forwards, then one backward, one forward, ..., then the remaining
///     backwards, so at most min(S − k, MB) micro-batches are in flight;
///   * interleaved (v ≥ 2; v = 1 is 1F1B): the i-th forward (i = 0..MB·v−1) is local chunk
///     j = (i mod S v) / S on micro-batch (i / S v) · S + i mod S, the i-th backward the same with
///     j replaced by v − 1 − j. W = min((S − k − 1) · 2 + (v − 1) · S, MB · v) warm-up forwards,
///     then forward W + i and backward i alternate (i = 0, 1, ...), then the remaining backwards.
///     MB must be a multiple of S (Megatron runs the micro-batches in groups of S).
/// Complexity: O(MB · v) per device.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace devplace {

enum class pipeline_schedule { gpipe, one_f_one_b, interleaved };

[[nodiscard]] constexpr std::string_view to_string(pipeline_schedule s) noexcept {
  switch (s) {
    case pipeline_schedule::gpipe: return "gpipe";
    case pipeline_schedule::one_f_one_b: return "1f1b";
    case pipeline_schedule::interleaved: return "interleaved";
  }
  return "?";
}

/// One pass of a device's order: forward or backward of its local chunk `chunk` (0..v−1, the
/// model chunk rank + chunk · S) on micro-batch `micro_batch`.
struct schedule_step {
  bool backward = false;
  std::size_t chunk = 0, micro_batch = 0;
  friend bool operator==(const schedule_step&, const schedule_step&) = default;
};

/// Throws std::invalid_argument unless the schedule can run S ranks × v chunks over MB
/// micro-batches: S ≥ 1, MB ≥ 1, v ≥ 1, v = 1 for GPipe and 1F1B, and MB a multiple of S for an
/// interleaved schedule with v ≥ 2.
inline void check_schedule(pipeline_schedule s, std::size_t S, std::size_t v, std::size_t MB) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("schedule: " + what); };
  if (S == 0 || MB == 0 || v == 0) fail("needs at least one rank, one micro-batch and one chunk per device");
  if (s != pipeline_schedule::interleaved && v != 1)
    fail(std::string(to_string(s)) + " runs one chunk per device (virtual stages " + std::to_string(v) +
         " need the interleaved schedule)");
  if (s == pipeline_schedule::interleaved && v > 1 && MB % S != 0)
    fail("the interleaved schedule needs the micro-batches (" + std::to_string(MB) + ") to be a multiple of the " +
         std::to_string(S) + " pipeline ranks");
}

/// The passes of the device at rank `rank` of S, with v chunks per device, over MB micro-batches,
/// in the order it runs them (see the file comment). Throws as `check_schedule` does, and for
/// rank ≥ S.
[[nodiscard]] inline std::vector<schedule_step> device_order(pipeline_schedule s, std::size_t S, std::size_t rank,
                                                             std::size_t v, std::size_t MB) {
  check_schedule(s, S, v, MB);
  if (rank >= S) throw std::invalid_argument("schedule: rank " + std::to_string(rank) + " >= S = " + std::to_string(S));
  std::vector<schedule_step> order;
  order.reserve(2 * MB * v);
  if (s == pipeline_schedule::gpipe) {
    for (std::size_t m = 0; m < MB; ++m) order.push_back({false, 0, m});
    for (std::size_t m = MB; m-- > 0;) order.push_back({true, 0, m});
    return order;
  }
  if (v == 1) {  // 1F1B (and interleaved with one chunk)
    const std::size_t warm = std::min(S - rank, MB);
    std::size_t f = 0, b = 0;
    for (; f < warm; ++f) order.push_back({false, 0, f});
    while (b < MB) {
      order.push_back({true, 0, b++});
      if (f < MB) order.push_back({false, 0, f++});
    }
    return order;
  }
  const std::size_t total = MB * v, group = S * v;
  auto step = [&](std::size_t i, bool backward) {
    const std::size_t j = (i % group) / S;
    return schedule_step{backward, backward ? v - 1 - j : j, (i / group) * S + i % S};
  };
  const std::size_t warm = std::min((S - rank - 1) * 2 + (v - 1) * S, total);
  for (std::size_t i = 0; i < warm; ++i) order.push_back(step(i, false));
  for (std::size_t i = 0; i + warm < total; ++i) {
    order.push_back(step(warm + i, false));
    order.push_back(step(i, true));
  }
  for (std::size_t i = total - warm; i < total; ++i) order.push_back(step(i, true));
  return order;
}

}  // namespace devplace
