// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

namespace roofline::cuda::detail {

/// The kernels one run of some GPU work launched, through CUPTI's Activity API.
struct traced_kernels {
  std::vector<std::string> names; ///< demangled, in start order, each once
  double time_s = 0;              ///< the kernels' durations, summed
  int launches = 0;               ///< kernels launched, repeats counted
};

/// Runs `launch` (work on `stream` of the current context) once with kernel tracing on, no
/// counters. Best effort: empty when CUPTI refuses tracing (e.g. another tool holds it).
/// Synchronizes `stream`.
traced_kernels trace_kernels(const std::function<void()> &launch, cudaStream_t stream);

/// As above, tracing the kernels `launch` runs on `context` (which the caller knows is current).
traced_kernels trace_kernels(const std::function<void()> &launch, cudaStream_t stream,
                             CUcontext context);

} // namespace roofline::cuda::detail
