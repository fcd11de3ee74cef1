// SPDX-License-Identifier: Apache-2.0
// GEMM on the CUDA cores with shared-memory tiling: each block stages a BM×BK slice of A and a
// BN×BK slice of B in shared memory, transposed to k-major so that a thread reads its rows (and
// columns) of one k as 16-byte vectors, and each thread accumulates a TM×TN micro-tile in
// registers. Shared memory is double-buffered and the next slice is fetched into registers while
// the current one is used: one barrier per slice. 16-bit inputs are widened to float when they are
// loaded.
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

/// Four consecutive elements from global memory, aligned to four elements.
template <class A> __device__ void load4(const double *p, A out[4]) {
  const double2 x = reinterpret_cast<const double2 *>(p)[0],
                y = reinterpret_cast<const double2 *>(p)[1];
  out[0] = x.x, out[1] = x.y, out[2] = y.x, out[3] = y.y;
}
template <class A> __device__ void load4(const float *p, A out[4]) {
  const float4 x = *reinterpret_cast<const float4 *>(p);
  out[0] = x.x, out[1] = x.y, out[2] = x.z, out[3] = x.w;
}
template <class A> __device__ void load4(const __half *p, A out[4]) {
  const uint2 raw = *reinterpret_cast<const uint2 *>(p);
  const float2 lo = __half22float2(*reinterpret_cast<const __half2 *>(&raw.x));
  const float2 hi = __half22float2(*reinterpret_cast<const __half2 *>(&raw.y));
  out[0] = lo.x, out[1] = lo.y, out[2] = hi.x, out[3] = hi.y;
}
template <class A> __device__ void load4(const __nv_bfloat16 *p, A out[4]) {
  const uint2 raw = *reinterpret_cast<const uint2 *>(p);
  const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&raw.x));
  const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&raw.y));
  out[0] = lo.x, out[1] = lo.y, out[2] = hi.x, out[3] = hi.y;
}

/// Four consecutive elements to global memory, aligned to four elements.
__device__ void store4(double *p, const double v[4]) {
  reinterpret_cast<double2 *>(p)[0] = make_double2(v[0], v[1]);
  reinterpret_cast<double2 *>(p)[1] = make_double2(v[2], v[3]);
}
__device__ void store4(float *p, const float v[4]) {
  *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ void store4(__half *p, const float v[4]) {
  const __half2 lo = __floats2half2_rn(v[0], v[1]), hi = __floats2half2_rn(v[2], v[3]);
  *reinterpret_cast<uint2 *>(p) = make_uint2(*reinterpret_cast<const unsigned *>(&lo),
                                             *reinterpret_cast<const unsigned *>(&hi));
}
__device__ void store4(__nv_bfloat16 *p, const float v[4]) {
  const __nv_bfloat162 lo = __floats2bfloat162_rn(v[0], v[1]),
                       hi = __floats2bfloat162_rn(v[2], v[3]);
  *reinterpret_cast<uint2 *>(p) = make_uint2(*reinterpret_cast<const unsigned *>(&lo),
                                             *reinterpret_cast<const unsigned *>(&hi));
}

/// Four consecutive accumulator-type values from shared memory (16-byte aligned).
__device__ void shared4(const float *p, float out[4]) {
  const float4 x = *reinterpret_cast<const float4 *>(p);
  out[0] = x.x, out[1] = x.y, out[2] = x.z, out[3] = x.w;
}
__device__ void shared4(const double *p, double out[4]) {
  const double2 x = reinterpret_cast<const double2 *>(p)[0],
                y = reinterpret_cast<const double2 *>(p)[1];
  out[0] = x.x, out[1] = x.y, out[2] = y.x, out[3] = y.y;
}

// ------------------------------------------------------------------ the kernel

/// A block tile of BM×BN outputs, BK deep per shared-memory slice, a TM×TN micro-tile per thread.
template <class Acc, int BM_, int BN_, int BK_, int TM_, int TN_> struct tile_config {
  using acc_t = Acc;
  static constexpr int bm = BM_, bn = BN_, bk = BK_, tm = TM_, tn = TN_;
  static constexpr int threads_m = bm / tm, threads_n = bn / tn, threads = threads_m * threads_n;
  // Rows of the k-major shared slices are padded by 16 bytes: the transposing stores of a warp then
  // spread over twice as many banks, and every row stays 16-byte aligned for the vector reads.
  static constexpr int pad = 16 / static_cast<int>(sizeof(Acc));
  static constexpr int a_groups = bm * bk / 4 / threads; // 4-element groups each thread fetches
  static constexpr int b_groups = bn * bk / 4 / threads;
  static_assert(tm % 4 == 0 && tn % 4 == 0 && bk % 4 == 0,
                "micro-tiles and slices go by 4 elements");
  static_assert(a_groups * threads * 4 == bm * bk && b_groups * threads * 4 == bn * bk,
                "whole groups per thread");
};

/// fp32 accumulate (f32, f16, bf16 inputs): 128×128 tiles, 8×8 per thread, 256 threads.
using float_tiles = tile_config<float, 128, 128, 16, 8, 8>;
/// fp64: 64×64 tiles, 4×4 per thread (64 doubles of accumulators would crowd the registers), 256
/// threads.
using double_tiles = tile_config<double, 64, 64, 16, 4, 4>;

/// Grouped tile order: GROUP_M tile rows are swept together, so that the blocks resident at once
/// share slices of A and B in L2.
constexpr int group_m = 8;

/// Global → registers: this thread's 4-element groups of the slice rows [row0, row0 +
/// Groups·threads·4/bk) × columns [k0, k0 + bk) of a K-contiguous matrix, zeros outside it (edge
/// tiles need no other care).
template <class Cfg, bool VectorK, class T, class Acc, int Groups>
__device__ void fetch(const T *matrix, int rows, int k, int row0, int k0, Acc (&out)[Groups][4]) {
  constexpr int groups_per_row = Cfg::bk / 4;
#pragma unroll
  for (int i = 0; i < Groups; ++i) {
    const int g = static_cast<int>(threadIdx.x) + i * Cfg::threads;
    const int row = row0 + g / groups_per_row, column = k0 + g % groups_per_row * 4;
    const T *p = matrix + static_cast<std::int64_t>(row) * k + column;
    if constexpr (VectorK) { // k % 4 == 0: a group is wholly inside or wholly outside, and aligned
      if (row < rows && column < k) {
        load4(p, out[i]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          out[i][j] = 0;
      }
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        out[i][j] = row < rows && column + j < k ? widen<Acc>(p[j]) : Acc(0);
    }
  }
}

template <class T, class Cfg, bool VectorK>
__global__ void __launch_bounds__(Cfg::threads, 2)
    gemm_tiled_kernel(const T *a, const T *b, T *c, int m, int n, int k, int tiles_m, int tiles_n,
                      std::int64_t tiles) {
  using acc_t = typename Cfg::acc_t;
  constexpr int bm = Cfg::bm, bn = Cfg::bn, bk = Cfg::bk, tm = Cfg::tm, tn = Cfg::tn;
  constexpr int groups_per_row = bk / 4;
  __shared__ __align__(16) acc_t a_slice[2][bk][bm + Cfg::pad];
  __shared__ __align__(16) acc_t b_slice[2][bk][bn + Cfg::pad];

  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % Cfg::threads_n, ty = tid / Cfg::threads_n;
  const int slices = (k + bk - 1) / bk;

  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const auto [batch, m0, n0] = detail::grouped_tile(tile, tiles_m, tiles_n, group_m, bm, bn);
    const T *a_tile = a + batch * m * static_cast<std::int64_t>(k);
    const T *b_tile = b + batch * n * static_cast<std::int64_t>(k);

    acc_t a_next[Cfg::a_groups][4], b_next[Cfg::b_groups][4];
    // Registers → shared, transposed to k-major.
    const auto stash = [&](int buffer) {
#pragma unroll
      for (int i = 0; i < Cfg::a_groups; ++i) {
        const int g = tid + i * Cfg::threads;
#pragma unroll
        for (int j = 0; j < 4; ++j)
          a_slice[buffer][g % groups_per_row * 4 + j][g / groups_per_row] = a_next[i][j];
      }
#pragma unroll
      for (int i = 0; i < Cfg::b_groups; ++i) {
        const int g = tid + i * Cfg::threads;
#pragma unroll
        for (int j = 0; j < 4; ++j)
          b_slice[buffer][g % groups_per_row * 4 + j][g / groups_per_row] = b_next[i][j];
      }
    };

    acc_t sum[tm][tn] = {};
    fetch<Cfg, VectorK>(a_tile, m, k, m0, 0, a_next);
    fetch<Cfg, VectorK>(b_tile, n, k, n0, 0, b_next);
    stash(0);
    __syncthreads();
    for (int slice = 0; slice < slices; ++slice) {
      const int buffer = slice & 1;
      const bool more = slice + 1 < slices;
      if (more) { // in flight while this slice is multiplied
        fetch<Cfg, VectorK>(a_tile, m, k, m0, (slice + 1) * bk, a_next);
        fetch<Cfg, VectorK>(b_tile, n, k, n0, (slice + 1) * bk, b_next);
      }
#pragma unroll
      for (int kk = 0; kk < bk; ++kk) {
        // A thread's rows are ty·4 + {0..3} plus multiples of threads_m·4 (columns likewise): the
        // 16 threads of a half-warp read 256 contiguous bytes, conflict-free.
        acc_t x[tm], y[tn];
#pragma unroll
        for (int g = 0; g < tm / 4; ++g)
          shared4(&a_slice[buffer][kk][g * Cfg::threads_m * 4 + ty * 4], &x[g * 4]);
#pragma unroll
        for (int g = 0; g < tn / 4; ++g)
          shared4(&b_slice[buffer][kk][g * Cfg::threads_n * 4 + tx * 4], &y[g * 4]);
#pragma unroll
        for (int i = 0; i < tm; ++i)
#pragma unroll
          for (int j = 0; j < tn; ++j)
            sum[i][j] = fma(x[i], y[j], sum[i][j]);
      }
      if (more)
        stash(buffer ^ 1);
      __syncthreads();
    }

    T *c_tile = c + batch * m * static_cast<std::int64_t>(n);
    const bool vector_n = n % 4 == 0;
#pragma unroll
    for (int i = 0; i < tm; ++i) {
      const int row = m0 + i / 4 * Cfg::threads_m * 4 + ty * 4 + i % 4;
      if (row >= m)
        continue;
#pragma unroll
      for (int g = 0; g < tn / 4; ++g) {
        const int column = n0 + g * Cfg::threads_n * 4 + tx * 4;
        T *p = c_tile + static_cast<std::int64_t>(row) * n + column;
        if (vector_n && column < n) {
          store4(p, &sum[i][g * 4]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (column + j < n)
              p[j] = narrow<T>(sum[i][g * 4 + j]);
        }
      }
    }
  }
}

template <class T, class Cfg>
cudaError_t launch(const void *a, const void *b, void *c, int m, int n, int k,
                   std::int64_t batch_count, cudaStream_t stream) {
  const int tiles_m = (m + Cfg::bm - 1) / Cfg::bm, tiles_n = (n + Cfg::bn - 1) / Cfg::bn;
  const std::int64_t tiles = static_cast<std::int64_t>(tiles_m) * tiles_n * batch_count;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(tiles, 0x7fffffff));
  const auto *x = static_cast<const T *>(a);
  const auto *y = static_cast<const T *>(b);
  auto *z = static_cast<T *>(c);
  if (k % 4 == 0)
    gemm_tiled_kernel<T, Cfg, true>
        <<<blocks, Cfg::threads, 0, stream>>>(x, y, z, m, n, k, tiles_m, tiles_n, tiles);
  else
    gemm_tiled_kernel<T, Cfg, false>
        <<<blocks, Cfg::threads, 0, stream>>>(x, y, z, m, n, k, tiles_m, tiles_n, tiles);
  return cudaGetLastError();
}

} // namespace

cudaError_t gemm_tiled(element_type input, const void *a, const void *b, void *c, int m, int n,
                       int k, std::int64_t batch_count, cudaStream_t stream) {
  switch (input) {
  case element_type::f64:
    return launch<double, double_tiles>(a, b, c, m, n, k, batch_count, stream);
  case element_type::f32: return launch<float, float_tiles>(a, b, c, m, n, k, batch_count, stream);
  case element_type::f16: return launch<__half, float_tiles>(a, b, c, m, n, k, batch_count, stream);
  case element_type::bf16:
    return launch<__nv_bfloat16, float_tiles>(a, b, c, m, n, k, batch_count, stream);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace roofline::kernels::detail
