// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "op_call.hpp"
#include "roofline/analysis/measurement.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/precision.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>

namespace roofline::cuda::detail {

/// The engine that runs a GEMM: cuBLASLt with its handle and workspace (lt_workspace_bytes), or
/// one of our kernels.
struct gemm_runner {
  gemm_engine engine = gemm_engine::cublas;
  cublasLtHandle_t lt = nullptr; ///< for cuBLAS
  void *workspace = nullptr;     ///< for cuBLAS
};

/// A GEMM C = A·Bᵀ of `shape` at `p` made ready to run as `runner` runs it: A, B and C in as many
/// sets as `sets` says (one allocation per operand, every set at cuBLASLt's 256-byte alignment), A
/// and B random. Its check compares sampled outputs with a double-precision reference. Throws
/// op_skipped (operands that do not fit), roofline::error (an engine that does not run `p`),
/// cuda_error.
std::unique_ptr<op_call> make_gemm_call(const gemm_shape &shape, precision p,
                                        const gemm_runner &runner, const operand_sets &sets,
                                        cudaStream_t stream);

} // namespace roofline::cuda::detail
