// SPDX-License-Identifier: Apache-2.0
#include "kernel_trace.hpp"

#include "driver_api.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"

#include <cupti_activity.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <utility>

namespace roofline::cuda::detail {

namespace {

/// Kernel names through the Activity API (no cuptiSubscribe: under Nsight tools that would fail
/// with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). CUPTI hands buffers back on its own
/// threads as well as inside cuptiActivityFlushAll, so the collected names sit behind a mutex.
struct kernel_trace {
  std::mutex mutex;
  bool collecting = false;
  std::uint32_t context_id = 0;
  struct record {
    std::uint64_t start, end; ///< ns timestamps
    std::string name;         ///< raw (mangled)
  };
  std::vector<record> kernels;
};

kernel_trace &trace() {
  static kernel_trace *const t =
      new kernel_trace; // never destroyed: CUPTI may return a buffer at exit
  return *t;
}

constexpr std::size_t trace_buffer_bytes = std::size_t{1} << 20;

void CUPTIAPI buffer_requested(std::uint8_t **buffer, std::size_t *size, std::size_t *max_records) {
  *buffer = static_cast<std::uint8_t *>(
      std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, trace_buffer_bytes));
  *size = *buffer != nullptr ? trace_buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t *buffer, std::size_t,
                               std::size_t valid_bytes) {
  if (buffer == nullptr)
    return;
  kernel_trace &t = trace();
  {
    const std::lock_guard<std::mutex> lock(t.mutex);
    CUpti_Activity *record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
      if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
          record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
        continue;
      // Later record versions only append fields: the ones read here sit at the same offsets.
      const auto *kernel = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
      if (t.collecting && kernel->contextId == t.context_id && kernel->name != nullptr)
        t.kernels.push_back({kernel->start, kernel->end, kernel->name});
    }
  }
  std::free(buffer);
}

bool trace_callbacks_registered() {
  static const bool registered =
      cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS;
  return registered;
}

std::string demangle(const std::string &name) {
  int status = 0;
  char *readable = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string result = status == 0 && readable != nullptr ? std::string(readable) : name;
  std::free(readable);
  return result;
}

} // namespace

/// Runs `launch` once with kernel tracing on: the kernels it ran on the context and their time.
/// Tracing is best effort: empty when CUPTI refuses it.
traced_kernels trace_kernels(const std::function<void()> &launch, cudaStream_t stream,
                             CUcontext context) {
  std::uint32_t context_id = 0;
  if (!trace_callbacks_registered() || cuptiGetContextId(context, &context_id) != CUPTI_SUCCESS)
    return {};
  kernel_trace &t = trace();
  {
    const std::lock_guard<std::mutex> lock(t.mutex);
    t.kernels.clear();
    t.context_id = context_id;
    t.collecting = true;
  }
  const auto stop = [&t] {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(
        CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); // blocking: the buffers are back on return
    const std::lock_guard<std::mutex> lock(t.mutex);
    t.collecting = false;
    return std::exchange(t.kernels, {});
  };
  if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    stop();
    return {};
  }
  try {
    launch();
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream)); // records complete before the forced flush
  } catch (...) {
    stop();
    throw;
  }
  auto kernels = stop();
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const auto &x, const auto &y) { return x.start < y.start; });
  traced_kernels traced;
  traced.launches = static_cast<int>(kernels.size());
  for (const auto &kernel : kernels) {
    traced.time_s += static_cast<double>(kernel.end - kernel.start) * 1e-9;
    std::string name = demangle(kernel.name);
    if (std::find(traced.names.begin(), traced.names.end(), name) == traced.names.end())
      traced.names.push_back(std::move(name));
  }
  return traced;
}

traced_kernels trace_kernels(const std::function<void()> &launch, cudaStream_t stream) {
  return trace_kernels(launch, stream, current_context());
}

} // namespace roofline::cuda::detail
