// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/ceilings.hpp"

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

namespace roofline::cuda::detail {

/// What GPU `device` draws, read through NVML (issue 39), as ceilings: its idle power; DRAM's
/// energy per byte (our copy kernel over 1 GiB, held back to back); a bf16 GEMM's (8192³,
/// cuBLASLt) sustained rate once the power controller has settled and its energy per FLOP beyond
/// the idle draw and its own DRAM bytes. About 9 s. Where NVML cannot be read (no driver library,
/// no permission), each result is there, failed, with the reason; no result throws.
std::vector<ceiling_result> measure_power(int device, cudaStream_t stream,
                                          const std::function<void(const std::string &)> &progress);

} // namespace roofline::cuda::detail
