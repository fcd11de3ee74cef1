// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/device_description.hpp"

namespace roofline::cuda {

/// GPUs the CUDA runtime sees; 0 when there is none or no usable driver. Never throws.
int device_count() noexcept;

/// The device query of GPU `ordinal`. Throws cuda_error.
device_description describe_device(int ordinal = 0);

} // namespace roofline::cuda
