// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>

// One macro for every CUDA-family status: it forwards to an out-of-line checker overloaded on the
// status type, which throws roofline::cuda::cuda_error with the expression, the error's name and
// file:line.
#define ROOFLINE_CUDA_CHECK(expr) ::roofline::cuda::detail::check((expr), #expr, __FILE__, __LINE__)

namespace roofline::cuda::detail {

void check(cudaError_t status, const char *expression, const char *file, int line);
void check(cublasStatus_t status, const char *expression, const char *file, int line);
/// CUPTI: the message names the error (cuptiGetResultString) and, for the permission and busy
/// errors, what to do about them.
void check(CUptiResult status, const char *expression, const char *file, int line);

} // namespace roofline::cuda::detail
