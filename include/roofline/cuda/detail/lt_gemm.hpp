// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "kernels.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/precision.hpp"

#include <cublasLt.h>

#include <cstddef>
#include <string>

namespace roofline::cuda::detail {

/// The storage types cuBLASLt is called with for a precision.
struct gemm_types {
  kernels::element_type input;  ///< A and B
  kernels::element_type output; ///< C (fp8 writes bf16, int8 writes int32)
};

gemm_types types_for(precision p);

/// What cuBLASLt's heuristic chose (enum values of cublasLt.h).
struct lt_algorithm {
  int algo_id = 0, tile_id = 0, stages_id = 0, split_k = 1;
  float waves = 0;
  std::size_t workspace_bytes = 0;
};

/// One cuBLASLt matmul plan: row-major C[M,N] = A[M,K]·Bᵀ with B stored as [N,K] (the weight
/// layout of frameworks, and the "TN" layout cuBLASLt needs for fp8 and int8), batch_count times
/// with dense strides. Uses the heuristic's best algorithm, or its `rank`-th (0 = best); throws
/// cuda_error when there is none of that rank.
class lt_gemm {
public:
  lt_gemm(cublasLtHandle_t handle, const gemm_shape &shape, precision p, void *workspace,
          std::size_t workspace_bytes, int rank = 0);
  ~lt_gemm();
  lt_gemm(const lt_gemm &) = delete;
  lt_gemm &operator=(const lt_gemm &) = delete;

  /// Enqueues one call (alpha = 1, beta = 0).
  void run(const void *a, const void *b, void *c, cudaStream_t stream) const;

  const lt_algorithm &algorithm() const noexcept { return m_algorithm; }
  const gemm_shape &shape() const noexcept { return m_shape; }
  precision prec() const noexcept { return m_precision; }

  std::size_t a_elements() const;
  std::size_t b_elements() const;
  std::size_t c_elements() const;

private:
  void release() noexcept;

  cublasLtHandle_t m_handle;
  gemm_shape m_shape;
  precision m_precision;
  void *m_workspace;
  std::size_t m_workspace_bytes;
  cublasLtMatmulDesc_t m_operation = nullptr;
  cublasLtMatrixLayout_t m_first =
      nullptr; ///< cuBLASLt's "A": our B buffer, K×N column-major, transposed
  cublasLtMatrixLayout_t m_second = nullptr; ///< cuBLASLt's "B": our A buffer, K×M column-major
  cublasLtMatrixLayout_t m_c = nullptr;      ///< N×M column-major = row-major C[M,N]
  cublasLtMatmulAlgo_t m_algo{};
  lt_algorithm m_algorithm;
};

} // namespace roofline::cuda::detail
