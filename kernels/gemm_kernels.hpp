// SPDX-License-Identifier: Apache-2.0
#pragma once

// Our own GEMM kernels, with the contract of the cuBLASLt runner (roofline/cuda/detail/lt_gemm.hpp)
// so that the measurement layer can swap engines: row-major C[M,N] = A[M,K]·B[N,K]ᵀ, A stored
// [M,K], B stored [N,K] (the "TN"/weight layout), C stored [M,N]; `batch_count` GEMMs with dense
// strides (A: M·K elements apart, B: N·K, C: M·N); alpha = 1, beta = 0. C has the input's type (f16
// → f16, bf16 → bf16, f32 → f32, f64 → f64); products accumulate in fp32 (fp64 for f64).
#include "kernels.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace roofline::kernels {

enum class gemm_engine {
  naive, ///< one thread per output element, the K loop from global memory: the textbook baseline
  tiled, ///< shared-memory block tiles and register micro-tiles on the CUDA cores
  tensorcore ///< mma.sync tensor-core tiles fed by a cp.async pipeline (f32 input runs as tf32)
};

namespace detail {
// One launcher per engine (gemm_naive.cu, gemm_tiled.cu, gemm_tensorcore.cu); gemm() has checked
// the arguments and the type before calling them.
cudaError_t gemm_naive(element_type input, const void *a, const void *b, void *c, int m, int n,
                       int k, std::int64_t batch_count, cudaStream_t stream);
cudaError_t gemm_tiled(element_type input, const void *a, const void *b, void *c, int m, int n,
                       int k, std::int64_t batch_count, cudaStream_t stream);
cudaError_t gemm_tensorcore(element_type input, const void *a, const void *b, void *c, int m, int n,
                            int k, std::int64_t batch_count, cudaStream_t stream);
} // namespace detail

/// True when `engine` runs this input type: naive and tiled take f64, f32, f16 and bf16;
/// tensorcore takes f16, bf16 and f32 (as tf32: inputs rounded to tf32, fp32 accumulate and
/// output).
inline bool gemm_engine_supports(gemm_engine engine, element_type input) {
  switch (input) {
  case element_type::f64: return engine != gemm_engine::tensorcore;
  case element_type::f32:
  case element_type::f16:
  case element_type::bf16: return true;
  default: return false;
  }
}

/// Enqueues C = A·Bᵀ on `stream` as above; `a`, `b` and `c` are device pointers as cudaMalloc
/// returns them (any M, N, K: no row needs more alignment than its element's). Returns
/// cudaErrorInvalidValue for a type the engine does not run, a size ≤ 0 (M, N, K above 2³¹ − 1 too)
/// or a null pointer; otherwise the launch's status (faults of the kernel itself surface at the
/// next synchronization).
inline cudaError_t gemm(gemm_engine engine, element_type input, const void *a, const void *b,
                        void *c, std::int64_t m, std::int64_t n, std::int64_t k,
                        std::int64_t batch_count, cudaStream_t stream) {
  constexpr std::int64_t largest = 0x7fffffff; // the kernels index rows and columns with int
  const auto in_range = [](std::int64_t v) { return v >= 1 && v <= largest; };
  if (!gemm_engine_supports(engine, input) || !in_range(m) || !in_range(n) || !in_range(k) ||
      batch_count < 1 || !a || !b || !c)
    return cudaErrorInvalidValue;
  const int rows = static_cast<int>(m), columns = static_cast<int>(n), depth = static_cast<int>(k);
  switch (engine) {
  case gemm_engine::naive:
    return detail::gemm_naive(input, a, b, c, rows, columns, depth, batch_count, stream);
  case gemm_engine::tiled:
    return detail::gemm_tiled(input, a, b, c, rows, columns, depth, batch_count, stream);
  case gemm_engine::tensorcore:
    return detail::gemm_tensorcore(input, a, b, c, rows, columns, depth, batch_count, stream);
  }
  return cudaErrorInvalidValue;
}

} // namespace roofline::kernels
