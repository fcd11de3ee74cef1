// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/detail/lt_gemm.hpp"

#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"

#include <cstdint>
#include <vector>

namespace roofline::cuda::detail {

using kernels::element_type;

gemm_types types_for(precision p) {
  switch (p) {
  case precision::fp64: return {element_type::f64, element_type::f64};
  case precision::fp32:
  case precision::tf32: return {element_type::f32, element_type::f32};
  case precision::fp16: return {element_type::f16, element_type::f16};
  case precision::bf16: return {element_type::bf16, element_type::bf16};
  case precision::fp8: return {element_type::e4m3, element_type::bf16};
  case precision::int8: return {element_type::i8, element_type::i32};
  case precision::fp4: break; // never run: the measurer skips fp4 ops
  }
  return {element_type::f32, element_type::f32};
}

namespace {

cudaDataType_t data_type(element_type t) {
  switch (t) {
  case element_type::f64: return CUDA_R_64F;
  case element_type::f32: return CUDA_R_32F;
  case element_type::f16: return CUDA_R_16F;
  case element_type::bf16: return CUDA_R_16BF;
  case element_type::e4m3: return CUDA_R_8F_E4M3;
  case element_type::i8: return CUDA_R_8I;
  case element_type::i32: return CUDA_R_32I;
  }
  return CUDA_R_32F;
}

struct compute_choice {
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

compute_choice compute_for(precision p) {
  switch (p) {
  case precision::fp64: return {CUBLAS_COMPUTE_64F, CUDA_R_64F};
  case precision::fp32: return {CUBLAS_COMPUTE_32F, CUDA_R_32F}; // plain fp32: tf32 is opt-in
  case precision::tf32: return {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
  case precision::int8: return {CUBLAS_COMPUTE_32I, CUDA_R_32I};
  default: return {CUBLAS_COMPUTE_32F, CUDA_R_32F};
  }
}

cublasLtMatrixLayout_t make_layout(element_type type, std::int64_t rows, std::int64_t cols,
                                   std::int64_t ld, std::int64_t batch_count) {
  cublasLtMatrixLayout_t layout = nullptr;
  ROOFLINE_CUDA_CHECK(cublasLtMatrixLayoutCreate(&layout, data_type(type),
                                                 static_cast<std::uint64_t>(rows),
                                                 static_cast<std::uint64_t>(cols), ld));
  if (batch_count > 1) {
    const std::int32_t count = static_cast<std::int32_t>(batch_count);
    const std::int64_t stride = rows * cols;
    ROOFLINE_CUDA_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &count, sizeof count));
    ROOFLINE_CUDA_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return layout;
}

} // namespace

lt_gemm::lt_gemm(cublasLtHandle_t handle, const gemm_shape &shape, precision p, void *workspace,
                 std::size_t workspace_bytes, int rank)
    : m_handle(handle), m_shape(shape), m_precision(p), m_workspace(workspace),
      m_workspace_bytes(workspace_bytes) {
  const gemm_types types = types_for(p);
  const compute_choice compute = compute_for(p);
  try {
    ROOFLINE_CUDA_CHECK(cublasLtMatmulDescCreate(&m_operation, compute.compute, compute.scale));
    // Column-major view of row-major C[M,N] = A[M,K]·B[N,K]ᵀ: C' (N×M) = op(B') (N×K) · A' (K×M),
    // where B' is B's buffer read as K×N (transposed) and A' is A's buffer read as K×M.
    const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
    ROOFLINE_CUDA_CHECK(cublasLtMatmulDescSetAttribute(m_operation, CUBLASLT_MATMUL_DESC_TRANSA,
                                                       &transpose, sizeof transpose));
    ROOFLINE_CUDA_CHECK(cublasLtMatmulDescSetAttribute(m_operation, CUBLASLT_MATMUL_DESC_TRANSB,
                                                       &keep, sizeof keep));
    m_first = make_layout(types.input, shape.k, shape.n, shape.k, shape.batch_count);
    m_second = make_layout(types.input, shape.k, shape.m, shape.k, shape.batch_count);
    m_c = make_layout(types.output, shape.n, shape.m, shape.n, shape.batch_count);

    cublasLtMatmulPreference_t preference = nullptr;
    ROOFLINE_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const std::uint64_t limit = workspace_bytes;
    cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit);
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(rank) + 1);
    int found = 0;
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulAlgoGetHeuristic(handle, m_operation, m_first, m_second, m_c, m_c,
                                              preference, rank + 1, results.data(), &found);
    cublasLtMatmulPreferenceDestroy(preference);
    ROOFLINE_CUDA_CHECK(status);
    if (found <= rank)
      throw cuda_error("cuBLAS", CUBLAS_STATUS_NOT_SUPPORTED,
                       "cuBLASLt has no algorithm of rank " + std::to_string(rank) + " for " +
                           std::string(to_string(p)) + " " + std::to_string(shape.m) + "x" +
                           std::to_string(shape.n) + "x" + std::to_string(shape.k));
    const cublasLtMatmulHeuristicResult_t &best = results[static_cast<std::size_t>(rank)];
    m_algo = best.algo;
    m_algorithm.waves = best.wavesCount;
    m_algorithm.workspace_bytes = best.workspaceSize;
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_ID, &m_algorithm.algo_id,
                                         sizeof m_algorithm.algo_id, &written);
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                         &m_algorithm.tile_id, sizeof m_algorithm.tile_id,
                                         &written);
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                         &m_algorithm.stages_id, sizeof m_algorithm.stages_id,
                                         &written);
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                         &m_algorithm.split_k, sizeof m_algorithm.split_k,
                                         &written);
  } catch (...) {
    release();
    throw;
  }
}

lt_gemm::~lt_gemm() {
  release();
}

void lt_gemm::release() noexcept {
  if (m_c)
    cublasLtMatrixLayoutDestroy(m_c);
  if (m_second)
    cublasLtMatrixLayoutDestroy(m_second);
  if (m_first)
    cublasLtMatrixLayoutDestroy(m_first);
  if (m_operation)
    cublasLtMatmulDescDestroy(m_operation);
  m_first = m_second = m_c = nullptr;
  m_operation = nullptr;
}

std::size_t lt_gemm::a_elements() const {
  return static_cast<std::size_t>(m_shape.m * m_shape.k * m_shape.batch_count);
}
std::size_t lt_gemm::b_elements() const {
  return static_cast<std::size_t>(m_shape.n * m_shape.k * m_shape.batch_count);
}
std::size_t lt_gemm::c_elements() const {
  return static_cast<std::size_t>(m_shape.m * m_shape.n * m_shape.batch_count);
}

void lt_gemm::run(const void *a, const void *b, void *c, cudaStream_t stream) const {
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const std::int32_t one_i = 1, zero_i = 0;
  const void *alpha = &one_f;
  const void *beta = &zero_f;
  if (m_precision == precision::fp64) {
    alpha = &one_d;
    beta = &zero_d;
  } else if (m_precision == precision::int8) {
    alpha = &one_i;
    beta = &zero_i;
  }
  // C' = B'ᵀ·A': the first operand is B's buffer, the second A's.
  ROOFLINE_CUDA_CHECK(cublasLtMatmul(m_handle, m_operation, alpha, b, m_first, a, m_second, beta, c,
                                     m_c, c, m_c, &m_algo, m_workspace, m_workspace_bytes, stream));
}

} // namespace roofline::cuda::detail
