// The pipeline simulator: one training iteration of a mapped pipeline, event by event
// (docs/simulator.md). GPipe against 1F1B on a two-stage pipeline worked out by hand.
//
//   ./build/examples/example_simulate_pipeline
#include <devplace/sim/pipeline_simulator.hpp>
#include <devplace/topology/generators.hpp>

#include <iostream>

int main() {
  // One node of two devices at 10 GB/s. Two stages, one replica each, on devices 0 and 1:
  // forward 1 ms, backward 2 ms per micro-batch; no parameters to reduce.
  const auto topology = devplace::two_level(1, 2, 10.0, 1.0);
  devplace::pipeline_model m{.stages = 2,
                             .replicas = 1,
                             .forward_ms = {1, 1},
                             .backward_ms = {2, 2},
                             .param_bytes = {0, 0},
                             .message_bytes = {{-1, 0}, {-1, -1}},  // edge 0 -> 1 with 0 bytes
                             .device_of = {{0}, {1}}};

  // GPipe, 4 micro-batches: (MB + S - 1) * (F + B) = 5 * 3 = 15 ms; the devices compute
  // 2 * 4 * 3 = 24 of the 2 * 15 = 30 device-ms, so the bubble is 1 - 24/30 = 0.2.
  const auto gpipe = devplace::simulate(m, topology, {.micro_batches = 4});
  std::cout << "GPipe: " << gpipe.iteration_ms << " ms, bubble " << gpipe.bubble_fraction << ", "
            << gpipe.samples_per_s << " samples/s, stage 0 holds " << gpipe.peak_in_flight[0] << " micro-batches\n";
  // prints: GPipe: 15 ms, bubble 0.2, 266.66[67] samples/s, stage 0 holds 4 micro-batches

  // 1F1B: the same time on equal stages, but stage 0 starts backwards after S = 2 forwards, so it
  // holds the activations of at most 2 micro-batches, not 4.
  const auto one_f_one_b = devplace::simulate(m, topology, {.micro_batches = 4, .schedule = devplace::pipeline_schedule::one_f_one_b});
  std::cout << "1F1B: " << one_f_one_b.iteration_ms << " ms, stage 0 holds " << one_f_one_b.peak_in_flight[0]
            << " micro-batches\n";
  // prints: 1F1B: 15 ms, stage 0 holds 2 micro-batches

  // 10 MB between the stages take 1 ms at 10 GB/s. GPipe: the last forward ends at 4 + 1 + 1 = 6;
  // the backwards of stage 1 run 6..14, each gradient 1 ms, the last backward of stage 0 ends at
  // 15 + 2 = 17 ms.
  m.message_bytes[0][1] = 10e6;
  const auto with_messages = devplace::simulate(m, topology, {.micro_batches = 4});
  std::cout << "GPipe with 10 MB messages: " << with_messages.iteration_ms << " ms\n";
  // prints: GPipe with 10 MB messages: 17 ms
  return 0;
}
