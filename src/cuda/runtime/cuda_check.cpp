// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/detail/cuda_check.hpp"

#include "roofline/cuda/cuda_error.hpp"

#include <string>

namespace roofline::cuda::detail {

namespace {

[[noreturn]] void fail(const char *library, int status, const std::string &name,
                       const char *expression, const char *file, int line) {
  throw cuda_error(library, status,
                   std::string(library) + " error " + name + " in " + expression + " at " + file +
                       ":" + std::to_string(line));
}

} // namespace

void check(cudaError_t status, const char *expression, const char *file, int line) {
  if (status != cudaSuccess)
    fail("CUDA", status,
         std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")",
         expression, file, line);
}

void check(cublasStatus_t status, const char *expression, const char *file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cuBLAS", status, cublasGetStatusName(status), expression, file, line);
}

void check(CUptiResult status, const char *expression, const char *file, int line) {
  if (status == CUPTI_SUCCESS)
    return;
  const char *name = nullptr;
  if (cuptiGetResultString(status, &name) != CUPTI_SUCCESS || name == nullptr)
    name = "(unknown CUPTI error)";
  std::string text = name;
  // The two failures a user can fix, with their fixes.
  if (status == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    text += " (GPU counters need root, CAP_SYS_ADMIN/CAP_PERFMON, or the driver option "
            "NVreg_RestrictProfilingToAdminUsers=0; see developer.nvidia.com/ERR_NVGPUCTRPERM)";
  else if (status == CUPTI_ERROR_HARDWARE_BUSY)
    text += " (another profiler holds the GPU counters: ncu, nsys GPU metrics or DCGM profiling; "
            "`dcgmi profile --pause` frees them from DCGM)";
  fail("CUPTI", status, text, expression, file, line);
}

} // namespace roofline::cuda::detail
