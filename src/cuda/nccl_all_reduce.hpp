// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/interconnect.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace roofline::cuda {

/// The sizes a sweep times by default, bytes per GPU: 4 KiB × 4^i up to 1 GiB (ten sizes).
std::vector<std::int64_t> default_all_reduce_sizes();

/// Times NCCL's all-reduce (bf16 sum, out-of-place) over every GPU of this host, driven from this
/// one process, for each of `sizes_bytes` (bytes per GPU: positive and even; measured in
/// increasing order). Each size's result is first checked against the sum of the inputs, on
/// samples spread over the buffer; a sample's time is the slowest GPU's, the median of the runs.
/// `progress` (may be empty) receives a line when NCCL is up and one per size.
///
/// NCCL is loaded at run time (dlopen), so that programs that use one GPU never need it: from
/// $ROOFLINE_NCCL_LIBRARY when set (that file only), else libnccl.so.2 on the loader's path, else
/// the CUDA toolkit's library directories this was built with. NVLink multicast (NVLS) stays off:
/// NCCL_NVLS_ENABLE is set to 0 when unset.
///
/// Throws roofline::error when NCCL cannot be loaded, when the host has fewer than two GPUs, when a
/// size is not positive and even, or when a result is wrong; cuda_error when a CUDA or NCCL call
/// fails.
all_reduce_table measure_all_reduce(const std::vector<std::int64_t> &sizes_bytes,
                                    const std::function<void(const std::string &)> &progress);

} // namespace roofline::cuda
