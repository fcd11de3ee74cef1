// SPDX-License-Identifier: Apache-2.0
#include "held_run.hpp"

#include "roofline/common/error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace roofline::cuda::detail {

namespace {

using clock_type = std::chrono::steady_clock;

} // namespace

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

held_run hold(const nvml_device &nvml, cudaStream_t stream, double call_guess_s,
              const std::function<void()> &one_call, hold_times times, int calls_per_launch) {
  // Batches of ~5 ms, the host at most two batches ahead: the energy counter is read between
  // batches, so its ticks are seen within a batch of when they happen.
  const double launch_guess_s = std::max(call_guess_s * calls_per_launch, 1e-7);
  const int batch = std::max(1, static_cast<int>(0.005 / launch_guess_s));
  event ahead[2];
  int turn = 0;
  long long launches = 0;
  const auto one_batch = [&] {
    for (int i = 0; i < batch; ++i)
      one_call();
    launches += batch;
    event &marker = ahead[turn++ % 2];
    ROOFLINE_CUDA_CHECK(cudaEventSynchronize(marker.get())); // the batch before last
    ROOFLINE_CUDA_CHECK(cudaEventRecord(marker.get(), stream));
  };
  for (const clock_type::time_point start = clock_type::now(); seconds_since(start) < times.warm_s;)
    one_batch();

  // NVML's counter advances in steps (tens of ms apart): the draw is read between its first and
  // last step inside the window, not between two arbitrary reads, which would be off by up to a
  // step each.
  const event begin, end;
  ROOFLINE_CUDA_CHECK(cudaEventRecord(begin.get(), stream));
  launches = 0;
  const clock_type::time_point start = clock_type::now();
  double previous = nvml.energy_j(), first_j = 0, last_j = 0;
  clock_type::time_point first_at, last_at;
  int steps = 0;
  while (seconds_since(start) < times.window_s || steps < 2) {
    if (seconds_since(start) > 4 * times.window_s + 1)
      throw error("NVML's energy counter did not advance while the GPU was busy");
    one_batch();
    const double now_j = nvml.energy_j();
    if (now_j == previous)
      continue;
    previous = now_j;
    (steps++ == 0 ? first_j : last_j) = now_j;
    (steps == 1 ? first_at : last_at) = clock_type::now();
  }
  ROOFLINE_CUDA_CHECK(cudaEventRecord(end.get(), stream));
  ROOFLINE_CUDA_CHECK(cudaEventSynchronize(end.get()));
  held_run run;
  run.sm_clock_mhz = nvml.sm_clock_mhz();
  run.throttle = nvml.throttle_reasons();
  float gpu_ms = 0;
  ROOFLINE_CUDA_CHECK(cudaEventElapsedTime(&gpu_ms, begin.get(), end.get()));
  run.call_s = gpu_ms * 1e-3 / (static_cast<double>(launches) * calls_per_launch);
  run.power_w = (last_j - first_j) / std::chrono::duration<double>(last_at - first_at).count();
  run.energy_per_call_j = run.power_w * run.call_s; // the GPU busy throughout the window
  return run;
}

std::string held_text(const held_run &run) {
  return fmt::format("{:.0f} W, SM clock {} MHz{}", run.power_w, run.sm_clock_mhz,
                     run.throttle.empty() ? "" : " (" + run.throttle + ")");
}

} // namespace roofline::cuda::detail
