// SPDX-License-Identifier: Apache-2.0
#pragma once

// The few CUDA driver-API calls roofline::measure makes (CUPTI takes driver handles), reached
// through the runtime's entry-point query rather than by linking libcuda: that would stop every
// binary that links roofline::measure (the CLI too) from starting on a machine without a driver.

#include <cuda.h>

namespace roofline::cuda::detail {

/// The calling thread's current CUDA context; nullptr when it has none. Throws cuda_error (library
/// "CUDA") when the driver call fails or the driver lacks it.
CUcontext current_context();

/// The driver's handle of CUDA device `device` (the runtime's ordinal). Throws cuda_error (library
/// "CUDA") as current_context() does.
CUdevice device_handle(int device);

} // namespace roofline::cuda::detail
