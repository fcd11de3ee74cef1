// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "kernel_trace.hpp"
#include "roofline/model/precision.hpp"

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace roofline::cuda::detail {

/// What one profiled range measured. Values are totals over every kernel the range launched; a
/// quantity whose metric the chip lacks stays 0 (metrics() lists what is collected).
struct counter_values {
  double duration_s = 0;       ///< gpu__time_duration.sum: GPU time from range push to pop, seconds
  double dram_read_bytes = 0;  ///< dram__bytes_read.sum
  double dram_write_bytes = 0; ///< dram__bytes_write.sum
  double l2_bytes = 0;         ///< lts__t_bytes.sum: bytes requested from L2 (reads and writes)
  /// Sum of the chip's sm__ops_path_tensor_src_*.sum metrics that were collected. These count math
  /// ops with an FMA as 2, so they are FLOPs (integer ops for int8), tile-quantization waste
  /// included.
  double tensor_flops = 0;
  /// SIMT FLOPs: fadd + fmul + 2·ffma (fp32) and dadd + dmul + 2·dfma (fp64), thread instructions
  /// with predicate on (smsp__sass_thread_inst_executed_op_*_pred_on.sum).
  double fp32_flops = 0, fp64_flops = 0;
  double sm_clock_hz = 0; ///< sm__cycles_elapsed.avg.per_second (clocks are not locked)
  int passes = 0;         ///< replay passes this measurement took
  /// The kernels, traced on a run of their own (empty when tracing failed): their summed time
  /// leaves out the launch gaps the range's duration holds, large for short kernels.
  traced_kernels kernels;
};

/// Hardware counters for one piece of GPU work through CUPTI's range profiler (CUDA ≥ 12.6,
/// compute capability ≥ 7.5): one user range around the work, replayed by re-running it (user
/// replay). Only one session may be alive per CUDA context, and none while another profiler (ncu,
/// nsys GPU metrics, DCGM) holds the counters. Not thread-safe.
class counter_session {
public:
  /// Sets up the range profiler on `device`'s primary context (the runtime's), which it makes
  /// current on the calling thread (cudaSetDevice(device)). `tensor_precisions` picks the
  /// tensor-core metrics by operand precision (fp32 adds none); empty: every family the chip
  /// counts. Each tensor family needs about one replay pass of its own (GH100: all of them → 7
  /// passes; one → 2–3). Throws cuda_error (library "CUPTI") when CUPTI is unavailable, not
  /// permitted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), busy (CUPTI_ERROR_HARDWARE_BUSY), or the
  /// device is not supported (CUPTI_ERROR_NOT_SUPPORTED); cuda_error (library "CUDA") when the
  /// device cannot be used.
  explicit counter_session(int device, const std::vector<precision> &tensor_precisions = {});
  ~counter_session();
  counter_session(const counter_session &) = delete;
  counter_session &operator=(const counter_session &) = delete;

  /// Profiles one range around `launch`, which enqueues work on `stream` of the session's context
  /// (it must be current). `launch` runs passes() + 1 times: once with kernel tracing on (for the
  /// kernel names, outside the counters; skipped when CUPTI refuses tracing), then once per replay
  /// pass, so the work must be idempotent (GEMMs with beta = 0 are). Warm-up is the caller's job:
  /// without one, lazy module loading lands inside the range. Counters see the whole context, so no
  /// other work may run on it meanwhile. Every pass starts with whatever the previous run left in
  /// L2: rotate operand buffers in `launch` for cold-cache numbers. Synchronizes `stream`. Throws
  /// cuda_error on a failed CUPTI or CUDA call, roofline::error when the context is not current or
  /// the profiler drops the range; whatever `launch` throws passes through.
  /// `before_each_run`, when given, runs (and is synchronized) before every run of `launch`,
  /// outside the range: e.g. to evict L2 so that each pass starts cold, as ncu's cache control
  /// does.
  counter_values measure(const std::function<void()> &launch, cudaStream_t stream,
                         const std::function<void()> &before_each_run = {});

  int passes() const;                              ///< replay passes per measure() call
  const std::vector<std::string> &metrics() const; ///< the metric names in use
  const std::string &chip() const;                 ///< CUPTI's chip name, e.g. "GH100"

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

} // namespace roofline::cuda::detail
