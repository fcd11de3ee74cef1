// SPDX-License-Identifier: Apache-2.0
// The textbook GEMM: one thread per output element, the K loop straight from global memory. It is
// the baseline the tiled and tensor-core kernels are measured against, so it stays simple on
// purpose.
#include "gemm_common.cuh"
#include "gemm_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

namespace roofline::kernels::detail {

namespace {

using detail::narrow;
using detail::widen;

template <class T> struct accumulator { using type = float; };
template <> struct accumulator<double> { using type = double; };

// A block computes a 8×32 patch of C: threadIdx.x / 32 its row, threadIdx.x % 32 its column, so
// that a warp writes 32 neighbours of a row (and reads B's rows K apart: no coalescing there, as
// expected of this kernel).
constexpr int patch_rows = 8;
constexpr int patch_columns = 32;
constexpr int threads = patch_rows * patch_columns;

template <class T>
__global__ void __launch_bounds__(threads)
    gemm_naive_kernel(const T *a, const T *b, T *c, int m, int n, int k, std::int64_t patches_m,
                      std::int64_t patches_n, std::int64_t patches) {
  using acc_t = typename accumulator<T>::type;
  for (std::int64_t patch = blockIdx.x; patch < patches; patch += gridDim.x) {
    const std::int64_t per_batch = patches_m * patches_n;
    const std::int64_t batch = patch / per_batch;
    const std::int64_t in_batch = patch - batch * per_batch;
    const int row = static_cast<int>(in_batch / patches_n) * patch_rows +
                    static_cast<int>(threadIdx.x) / patch_columns;
    const int column = static_cast<int>(in_batch % patches_n) * patch_columns +
                       static_cast<int>(threadIdx.x) % patch_columns;
    if (row >= m || column >= n)
      continue;
    const T *a_row = a + (batch * m + row) * static_cast<std::int64_t>(k);
    const T *b_row = b + (batch * n + column) * static_cast<std::int64_t>(k);
    acc_t sum = 0;
    for (int i = 0; i < k; ++i)
      sum += widen<acc_t>(a_row[i]) * widen<acc_t>(b_row[i]);
    c[(batch * m + row) * static_cast<std::int64_t>(n) + column] = narrow<T>(sum);
  }
}

template <class T>
cudaError_t launch(const void *a, const void *b, void *c, int m, int n, int k,
                   std::int64_t batch_count, cudaStream_t stream) {
  const std::int64_t patches_m = (m + patch_rows - 1) / patch_rows;
  const std::int64_t patches_n = (n + patch_columns - 1) / patch_columns;
  const std::int64_t patches = patches_m * patches_n * batch_count;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(patches, 0x7fffffff));
  gemm_naive_kernel<T>
      <<<blocks, threads, 0, stream>>>(static_cast<const T *>(a), static_cast<const T *>(b),
                                       static_cast<T *>(c), m, n, k, patches_m, patches_n, patches);
  return cudaGetLastError();
}

} // namespace

cudaError_t gemm_naive(element_type input, const void *a, const void *b, void *c, int m, int n,
                       int k, std::int64_t batch_count, cudaStream_t stream) {
  switch (input) {
  case element_type::f64: return launch<double>(a, b, c, m, n, k, batch_count, stream);
  case element_type::f32: return launch<float>(a, b, c, m, n, k, batch_count, stream);
  case element_type::f16: return launch<__half>(a, b, c, m, n, k, batch_count, stream);
  case element_type::bf16: return launch<__nv_bfloat16>(a, b, c, m, n, k, batch_count, stream);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace roofline::kernels::detail
