// SPDX-License-Identifier: Apache-2.0
#pragma once

// Device helpers the GEMM kernels share: element conversions and the grouped tile order.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace roofline::kernels::detail {

/// An input element in the accumulator's type.
template <class A> __device__ A widen(double v) {
  return v;
}
template <class A> __device__ A widen(float v) {
  return v;
}
template <class A> __device__ A widen(__half v) {
  return __half2float(v);
}
template <class A> __device__ A widen(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

/// An accumulator rounded to the output type.
template <class T> __device__ T narrow(float v) {
  return v;
}
template <> __device__ inline __half narrow<__half>(float v) {
  return __float2half_rn(v);
}
template <> __device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <class T> __device__ T narrow(double v) {
  return v;
}

/// Where output tile `tile` of a (batched) grid of tiles_m × tiles_n tiles starts. Tiles run in
/// groups of `group_m` tile rows, so that neighbouring blocks share rows of A and columns of B in
/// L2.
struct tile_origin {
  std::int64_t batch;
  int m0, n0;
};

__device__ inline tile_origin grouped_tile(std::int64_t tile, int tiles_m, int tiles_n, int group_m,
                                           int block_m, int block_n) {
  const std::int64_t per_batch = static_cast<std::int64_t>(tiles_m) * tiles_n;
  const std::int64_t batch = tile / per_batch;
  const int in_batch = static_cast<int>(tile - batch * per_batch);
  const int group_size = group_m * tiles_n;
  const int first_m = in_batch / group_size * group_m;
  const int group_rows = min(tiles_m - first_m, group_m);
  return {batch, (first_m + in_batch % group_size % group_rows) * block_m,
          in_batch % group_size / group_rows * block_n};
}

} // namespace roofline::kernels::detail
