// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/interconnect.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace roofline::cuda {

/// The sizes a sweep times by default, bytes per GPU: 4 KiB × 4^i up to 1 GiB (ten sizes).
std::vector<std::int64_t> default_all_reduce_sizes();

/// How the all-reduces are issued and timed. Every way uses one communicator per GPU (made
/// together by ncclCommInitAll), times back-to-back all-reduces between CUDA events on each GPU's
/// own stream, and takes a run's time as the slowest GPU's.
enum class all_reduce_timing {
  /// Eager grouped calls (ncclGroupStart, every GPU's ncclAllReduce, ncclGroupEnd) from one
  /// thread, call by call: what the table holds. Below 4 MiB it agrees with PyTorch's
  /// graph-replayed all-reduces, and with what a tensor-parallel step sees, better than the
  /// device-time floor below (docs/benchmarks.md, issue 17).
  eager_one_thread,
  /// Device time: one thread captures the same grouped calls into one CUDA graph per GPU, as
  /// nccl-tests' `-G` does with several GPUs a thread, and replays them back to back, so that no
  /// host work stands between the calls. A diagnostic: NCCL's floor, about half of what a step
  /// sees for messages below 1 MiB.
  graph_replay,
  /// Eager calls from one host thread per GPU, with that GPU current, each calling its own
  /// communicator's all-reduce on its own stream outside any group, as serving frameworks and
  /// nccl-tests' `-t N` run NCCL; the threads start each run together. A diagnostic: NCCL's eager
  /// pace without one thread issuing for every GPU.
  eager_thread_per_gpu,
};

/// Times NCCL's all-reduce (bf16 sum, out-of-place) over every GPU of this host, driven from this
/// one process as `timing` says, for each of `sizes_bytes` (bytes per GPU: positive and even;
/// measured in increasing order). Each size's result is first checked against the sum of the
/// inputs, on samples spread over the buffer (with graph_replay, the first replay's result too);
/// a sample's time, in seconds per all-reduce, is the median of the runs. The table's origin says
/// how the runs were timed. When graph_replay cannot capture NCCL's calls into a CUDA graph, every
/// size is timed again as eager_one_thread instead, and the origin says so and why. `progress`
/// (may be empty) receives a line when NCCL is up and one per size.
///
/// NCCL is loaded at run time (dlopen), so that programs that use one GPU never need it: from
/// $ROOFLINE_NCCL_LIBRARY when set (that file only), else libnccl.so.2 on the loader's path, in
/// the CUDA toolkit's library directories this was built with, or in a pip wheel's nvidia/nccl/lib
/// (shared_library.hpp). NVLink multicast (NVLS) stays off:
/// NCCL_NVLS_ENABLE is set to 0 when unset.
///
/// Throws roofline::error when NCCL cannot be loaded, when the host has fewer than two GPUs, when a
/// size is not positive and even, or when a result is wrong; cuda_error when a CUDA or NCCL call
/// fails.
all_reduce_table measure_all_reduce(const std::vector<std::int64_t> &sizes_bytes,
                                    const std::function<void(const std::string &)> &progress,
                                    all_reduce_timing timing = all_reduce_timing::eager_one_thread);

} // namespace roofline::cuda
