// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "nvml_library.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <string>

namespace roofline::cuda::detail {

/// Seconds of the host's steady clock since `start`.
double seconds_since(std::chrono::steady_clock::time_point start);

/// Work held back to back past the power controller's settling, read through NVML: the GPU's
/// time per call (events) and the board's energy and draw across a window (NVML's counter).
struct held_run {
  double call_s = 0;            ///< GPU time per call in the window
  double energy_per_call_j = 0; ///< the board's energy per call, idle draw included
  double power_w = 0;           ///< the board's average draw over the window
  unsigned sm_clock_mhz = 0;    ///< at the window's end
  std::string throttle;         ///< why the clock was below its maximum then; "" for no reason
};

/// How long to hold: `warm_s` back to back before the window (the power controller settles in
/// tens of ms; the cap binds within a second), then the `window_s` read.
struct hold_times {
  double warm_s = 2.0, window_s = 2.0;
};

/// Holds `one_call` (`calls_per_launch` calls of the op per invocation: a graph replay of
/// several) back to back on `stream` in batches of about 5 ms (`call_guess_s`: one call's time,
/// to size them), the host at most two batches ahead. The draw is NVML's counter between its
/// first and last step in the window (past window_s until it has stepped twice); the energy per
/// call, that draw over the GPU's time per call. Throws cuda_error, or roofline::error when the
/// counter does not advance.
held_run hold(const nvml_device &nvml, cudaStream_t stream, double call_guess_s,
              const std::function<void()> &one_call, hold_times times = {},
              int calls_per_launch = 1);

/// "612 W, SM clock 1530 MHz (sw power cap)".
std::string held_text(const held_run &run);

} // namespace roofline::cuda::detail
