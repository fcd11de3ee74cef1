// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace roofline::cuda::detail {

/// Timed runs of one piece of GPU work: the median and the extremes, in seconds.
struct run_timing {
  double median_s = 0, min_s = 0, max_s = 0;
  int runs = 0;
  double spread() const { return median_s > 0 ? (max_s - min_s) / median_s : 0; }
};

/// Runs `launch` `warmup` times, then `runs` times each between two CUDA events on `stream`.
/// `launch` enqueues asynchronously and throws on a failed launch. Throws cuda_error.
run_timing time_runs(cudaStream_t stream, int warmup, int runs,
                     const std::function<void()> &launch);

} // namespace roofline::cuda::detail
