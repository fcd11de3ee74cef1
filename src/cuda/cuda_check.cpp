// SPDX-License-Identifier: Apache-2.0
#include "cuda_check.hpp"

#include "roofline/cuda/cuda_error.hpp"

#include <string>

namespace roofline::cuda::detail {

namespace {

[[noreturn]] void fail(const char* library, int status, const std::string& name, const char* expression,
                       const char* file, int line) {
  throw cuda_error(library, status,
                   std::string(library) + " error " + name + " in " + expression + " at " + file + ":" +
                       std::to_string(line));
}

} // namespace

void check(cudaError_t status, const char* expression, const char* file, int line) {
  if (status != cudaSuccess)
    fail("CUDA", status, std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")",
         expression, file, line);
}

void check(cublasStatus_t status, const char* expression, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cuBLAS", status, cublasGetStatusName(status), expression, file, line);
}

} // namespace roofline::cuda::detail
