// SPDX-License-Identifier: Apache-2.0
// GEMM on the tensor cores with warp-wide mma.sync (sm_80 and later, Hopper included; no wgmma): a
// block of 8 warps computes a 128×128 tile of C, each warp a 64×32 part of it as 4×4 m16n8
// accumulators in registers. A and B slices 128 bytes deep (64 elements of f16/bf16, 32 of f32) go
// to shared memory through a 3-stage cp.async pipeline (96 KiB, two blocks per SM), in an
// XOR-swizzled layout that both the 16-byte copies and the ldmatrix fragment loads use without bank
// conflicts. B is stored [N,K], K-contiguous like A, which is exactly the "col" operand of
// mma.row.col: both operands load with plain (non-transposing) ldmatrix. f32 input runs as tf32
// (m16n8k8, inputs rounded to nearest tf32); everything accumulates in fp32.
//
// Edges: rows past M or N and columns past K are zero-filled by the copies (cp.async's src-size)
// and stores are guarded. 16-byte copies need K to be a multiple of 16 bytes of elements; other K
// take a slower path that loads element by element and stores to shared memory synchronously,
// through the same pipeline.
//
// The shape constants below were chosen on an H200 (8192³ f16): 64-byte slices or 4 stages were
// slower, 128×256 tiles (one block per SM) about as fast for 16-bit and slower for tf32.
#include "gemm_common.cuh"
#include "gemm_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

namespace roofline::kernels::detail {

namespace {

constexpr int block_m = 128;
constexpr int block_n = 128;
constexpr int slice_bytes = 128; ///< K-depth of a stage, in bytes of input (a row of the slice)
constexpr int stages = 3;
constexpr int warps_m = 2, warps_n = 4;
constexpr int min_blocks = 2; ///< resident blocks per SM the registers are budgeted for
constexpr int threads = 32 * warps_m * warps_n;
constexpr int warp_m = block_m / warps_m; // 64
constexpr int warp_n = block_n / warps_n; // 32
constexpr int m_tiles = warp_m / 16;      // m16 fragments per warp
constexpr int n_tiles = warp_n / 8;       // n8 fragments per warp
constexpr int chunks = slice_bytes / 16;  // 16-byte chunks per slice row
constexpr int k_steps =
    slice_bytes / 32; // one mma k-step is 32 bytes deep (k16 of 16-bit, k8 of tf32)
constexpr int a_stage_bytes = block_m * slice_bytes;
constexpr int b_stage_bytes = block_n * slice_bytes;
constexpr int stage_bytes = a_stage_bytes + b_stage_bytes;
constexpr int shared_bytes = stages * stage_bytes;
constexpr int a_copies = block_m * chunks / threads; // 16-byte chunks each thread copies per stage
constexpr int b_copies = block_n * chunks / threads;
constexpr int group_m = 8; // tile rows swept together, for L2 reuse
static_assert(slice_bytes % 32 == 0 && slice_bytes <= 128, "the swizzle covers one 128-byte line");
static_assert(a_copies * threads == block_m * chunks && b_copies * threads == block_n * chunks, "");

/// Byte offset of 16-byte chunk `chunk` of slice row `row`: the chunk index is XORed with the row's
/// position in its 8-row, 128-byte-per-line group, so that any 8 rows' same chunk (an ldmatrix
/// phase) and any full line (a warp's copies) fall into distinct bank groups.
__device__ __forceinline__ std::uint32_t swizzle(int row, int chunk) {
  constexpr int rows_per_line = 128 / slice_bytes;
  return static_cast<std::uint32_t>(row * slice_bytes +
                                    ((chunk ^ (row / rows_per_line % chunks)) << 4));
}

template <class T> struct mma_type;
template <> struct mma_type<__half> {
  static __device__ __forceinline__ void run(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  static __device__ __forceinline__ std::uint32_t operand(std::uint32_t x) { return x; }
  static __device__ __forceinline__ void store2(__half *p, float x, float y) {
    *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(x, y);
  }
  static __device__ __forceinline__ void store1(__half *p, float x) { *p = __float2half_rn(x); }
};
template <> struct mma_type<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  static __device__ __forceinline__ std::uint32_t operand(std::uint32_t x) { return x; }
  static __device__ __forceinline__ void store2(__nv_bfloat16 *p, float x, float y) {
    *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(x, y);
  }
  static __device__ __forceinline__ void store1(__nv_bfloat16 *p, float x) {
    *p = __float2bfloat16_rn(x);
  }
};
template <> struct mma_type<float> { // tf32
  static __device__ __forceinline__ void run(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  /// fp32 bits → tf32, rounded to nearest (the tensor core would truncate the low mantissa bits).
  static __device__ __forceinline__ std::uint32_t operand(std::uint32_t x) {
    std::uint32_t y;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(y) : "f"(__uint_as_float(x)));
    return y;
  }
  static __device__ __forceinline__ void store2(float *p, float x, float y) {
    *reinterpret_cast<float2 *>(p) = make_float2(x, y);
  }
  static __device__ __forceinline__ void store1(float *p, float x) { *p = x; }
};

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

/// 16 bytes global → shared, asynchronously; the `bytes` (0 or 16) read, the rest zero-filled.
__device__ __forceinline__ void copy16(std::uint32_t destination, const void *source, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(destination), "l"(source),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void copy_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int Pending> __device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}
__device__ __forceinline__ void store_shared16(std::uint32_t destination,
                                               const std::uint32_t (&v)[4]) {
  asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};" ::"r"(destination), "r"(v[0]), "r"(v[1]),
               "r"(v[2]), "r"(v[3])
               : "memory");
}

/// The 16-byte chunks this thread copies into every stage for one operand: since `threads` is a
/// multiple of `chunks`, always the same chunk column, in rows r0, r0 + row_step, r0 + 2·row_step,
/// ... of the tile (row_step is a multiple of 8, so those rows share one swizzle pattern).
constexpr int row_step = threads / chunks;
static_assert(threads % chunks == 0 && row_step % 8 == 0, "one chunk column per thread");

template <class T, int Copies> struct copy_plan {
  static constexpr int per_chunk = 16 / static_cast<int>(sizeof(T)); ///< elements in 16 bytes
  static constexpr int slice_k = slice_bytes / static_cast<int>(sizeof(T));

  const T *first;       ///< row r0 of the tile (dereferenced only where that row exists)
  const T *matrix;      ///< a valid address for the zero-byte copies of missing rows and columns
  std::int64_t step;    ///< elements from one of this thread's rows to the next: row_step·K
  unsigned inside = 0;  ///< bit i: row r0 + i·row_step lies inside the matrix
  int column;           ///< this thread's first element within a slice
  std::uint32_t offset; ///< where row r0's chunk lands within a stage

  __device__ copy_plan(const T *matrix_, int rows, int k, int row0) : matrix(matrix_) {
    const int r0 = static_cast<int>(threadIdx.x) / chunks,
              chunk = static_cast<int>(threadIdx.x) % chunks;
    first = matrix + static_cast<std::int64_t>(row0 + r0) * k;
    step = static_cast<std::int64_t>(row_step) * k;
    column = chunk * per_chunk;
    offset = swizzle(r0, chunk);
#pragma unroll
    for (int i = 0; i < Copies; ++i)
      inside |= (row0 + r0 + i * row_step < rows ? 1u : 0u) << i;
  }

  /// Issues (or, unaligned, performs) this thread's copies of slice `slice` into the stage at
  /// `base`.
  template <bool Aligned> __device__ void copy(std::uint32_t base, int slice, int k) const {
    const int col = slice * slice_k + column;
    const T *p = first + col;
#pragma unroll
    for (int i = 0; i < Copies; ++i, p += step) {
      const bool row_inside = (inside >> i & 1u) != 0;
      const std::uint32_t destination =
          base + offset + static_cast<std::uint32_t>(i * row_step * slice_bytes);
      if constexpr (Aligned) { // k % per_chunk == 0: a chunk is wholly inside or outside, and
                               // aligned
        const bool ok = row_inside && col < k;
        copy16(destination, ok ? p : matrix, ok ? 16 : 0);
      } else {
        // Element by element, as raw bits (zero bits are +0 in every type); no aliasing through the
        // stack.
        std::uint32_t words[4];
        if constexpr (sizeof(T) == 2) {
          const auto *q = reinterpret_cast<const unsigned short *>(p);
#pragma unroll
          for (int w = 0; w < 4; ++w) {
            const std::uint32_t lo = row_inside && col + 2 * w < k ? q[2 * w] : 0u;
            const std::uint32_t hi = row_inside && col + 2 * w + 1 < k ? q[2 * w + 1] : 0u;
            words[w] = lo | hi << 16;
          }
        } else {
          const auto *q = reinterpret_cast<const std::uint32_t *>(p);
#pragma unroll
          for (int w = 0; w < 4; ++w)
            words[w] = row_inside && col + w < k ? q[w] : 0u;
        }
        store_shared16(destination, words);
      }
    }
  }
};

/// One stage's k_steps of mma into `acc`: the warp's A and B fragments loaded from the stage at
/// `stage` (ldmatrix, the lane's swizzled offsets `a_lane` and `b_lane`), converted, multiplied.
template <class T>
__device__ __forceinline__ void mma_stage(float (&acc)[m_tiles][n_tiles][4], std::uint32_t stage,
                                          std::uint32_t a_lane, std::uint32_t b_lane) {
  using op = mma_type<T>;
#pragma unroll
  for (int s = 0; s < k_steps; ++s) {
    std::uint32_t af[m_tiles][4], bf[n_tiles][2];
#pragma unroll
    for (int i = 0; i < m_tiles; ++i)
      ldmatrix_x4(af[i],
                  stage + (a_lane ^ (32u * s)) + static_cast<std::uint32_t>(i * 16 * slice_bytes));
#pragma unroll
    for (int j = 0; j < n_tiles / 2; ++j) {
      std::uint32_t r[4];
      ldmatrix_x4(r,
                  stage + (b_lane ^ (32u * s)) + static_cast<std::uint32_t>(j * 16 * slice_bytes));
      bf[2 * j][0] = r[0], bf[2 * j][1] = r[1], bf[2 * j + 1][0] = r[2], bf[2 * j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < m_tiles; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        af[i][r] = op::operand(af[i][r]);
#pragma unroll
    for (int j = 0; j < n_tiles; ++j)
#pragma unroll
      for (int r = 0; r < 2; ++r)
        bf[j][r] = op::operand(bf[j][r]);
#pragma unroll
    for (int i = 0; i < m_tiles; ++i)
#pragma unroll
      for (int j = 0; j < n_tiles; ++j)
        op::run(acc[i][j], af[i], bf[j]);
  }
}

template <class T, bool Aligned>
__global__ void __launch_bounds__(threads, min_blocks)
    gemm_tensorcore_kernel(const T *a, const T *b, T *c, int m, int n, int k, int tiles_m,
                           int tiles_n, std::int64_t tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using op = mma_type<T>;
  extern __shared__ __align__(128) unsigned char shared[];
  const std::uint32_t shared_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int warp_row = warp / warps_n * warp_m, warp_column = warp % warps_n * warp_n;
  constexpr int slice_k = slice_bytes / static_cast<int>(sizeof(T));
  const int slices = (k + slice_k - 1) / slice_k;

  // ldmatrix.x4 lane addresses (see the fragment layouts of mma.m16n8k16 / m16n8k8 in the PTX ISA):
  // A: matrices (rows 0-7, k-chunk 0), (rows 8-15, chunk 0), (rows 0-7, chunk 1), (rows 8-15, chunk
  // 1)
  //    give a0..a3; B: (n 0-7, chunk 0), (n 0-7, chunk 1), (n 8-15, chunk 0), (n 8-15, chunk 1)
  //    give b0, b1 of two n8 fragments. Every fragment row starts at a multiple of 8, so the
  //    swizzle of a lane's row depends on lane % 8 alone; the chunk of k-step s is lane_chunk + 2s,
  //    and as lane_chunk is 0 or 1, (lane_chunk + 2s) ^ x = (lane_chunk ^ x) ^ 2s.
  const int a_lane_row = lane % 8 + (lane / 8 % 2) * 8, a_lane_chunk = lane / 16;
  const int b_lane_row = lane % 8 + (lane / 16) * 8, b_lane_chunk = lane / 8 % 2;
  const std::uint32_t a_lane =
      swizzle(warp_row + a_lane_row, a_lane_chunk); // byte offsets, k-step 0
  const std::uint32_t b_lane = a_stage_bytes + swizzle(warp_column + b_lane_row, b_lane_chunk);

  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const auto [batch, m0, n0] =
        detail::grouped_tile(tile, tiles_m, tiles_n, group_m, block_m, block_n);

    const copy_plan<T, a_copies> a_plan(a + batch * m * static_cast<std::int64_t>(k), m, k, m0);
    const copy_plan<T, b_copies> b_plan(b + batch * n * static_cast<std::int64_t>(k), n, k, n0);
    const auto fill = [&](int slice) {
      const std::uint32_t stage =
          shared_base + static_cast<std::uint32_t>(slice % stages * stage_bytes);
      a_plan.template copy<Aligned>(stage, slice, k);
      b_plan.template copy<Aligned>(stage + a_stage_bytes, slice, k);
    };

    float acc[m_tiles][n_tiles][4] = {};
#pragma unroll
    for (int s = 0; s < stages - 1; ++s) {
      if (s < slices)
        fill(s);
      copy_commit();
    }
    for (int slice = 0; slice < slices; ++slice) {
      copy_wait<stages - 2>(); // this slice's copies are done (this thread's) ...
      __syncthreads();         // ... everyone's, and everyone is done with the stage refilled next
      if (slice + stages - 1 < slices)
        fill(slice + stages - 1);
      copy_commit();

      const std::uint32_t stage =
          shared_base + static_cast<std::uint32_t>(slice % stages * stage_bytes);
      mma_stage<T>(acc, stage, a_lane, b_lane);
    }
    __syncthreads(); // the next tile's copies overwrite stages still being read

    // Accumulator layout: c0, c1 at (row lane/4, columns 2·(lane%4) + {0,1}); c2, c3 eight rows
    // down.
    T *c_tile = c + batch * m * static_cast<std::int64_t>(n);
    const bool pairs =
        n % 2 == 0; // then an even column's pair is aligned and wholly inside or outside
#pragma unroll
    for (int i = 0; i < m_tiles; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_row + i * 16 + lane / 4 + h * 8;
        if (row >= m)
          continue;
        T *c_row = c_tile + static_cast<std::int64_t>(row) * n;
#pragma unroll
        for (int j = 0; j < n_tiles; ++j) {
          const int column = n0 + warp_column + j * 8 + lane % 4 * 2;
          const float x = acc[i][j][2 * h], y = acc[i][j][2 * h + 1];
          if (pairs) {
            if (column < n)
              op::store2(c_row + column, x, y);
          } else {
            if (column < n)
              op::store1(c_row + column, x);
            if (column + 1 < n)
              op::store1(c_row + column + 1, y);
          }
        }
      }
  }
#endif
}

template <class T>
cudaError_t launch(const void *a, const void *b, void *c, int m, int n, int k,
                   std::int64_t batch_count, cudaStream_t stream) {
  const int tiles_m = (m + block_m - 1) / block_m, tiles_n = (n + block_n - 1) / block_n;
  const std::int64_t tiles = static_cast<std::int64_t>(tiles_m) * tiles_n * batch_count;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(tiles, 0x7fffffff));
  const auto *x = static_cast<const T *>(a);
  const auto *y = static_cast<const T *>(b);
  auto *z = static_cast<T *>(c);
  const auto run = [&](auto kernel) {
    if constexpr (shared_bytes > 48 * 1024) { // above the default: the block must opt in
      const cudaError_t status =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes);
      if (status != cudaSuccess)
        return status;
    }
    kernel<<<blocks, threads, shared_bytes, stream>>>(x, y, z, m, n, k, tiles_m, tiles_n, tiles);
    return cudaGetLastError();
  };
  constexpr int per_chunk = 16 / static_cast<int>(sizeof(T));
  return k % per_chunk == 0 ? run(gemm_tensorcore_kernel<T, true>)
                            : run(gemm_tensorcore_kernel<T, false>);
}

} // namespace

cudaError_t gemm_tensorcore(element_type input, const void *a, const void *b, void *c, int m, int n,
                            int k, std::int64_t batch_count, cudaStream_t stream) {
  switch (input) {
  case element_type::f16: return launch<__half>(a, b, c, m, n, k, batch_count, stream);
  case element_type::bf16: return launch<__nv_bfloat16>(a, b, c, m, n, k, batch_count, stream);
  case element_type::f32: return launch<float>(a, b, c, m, n, k, batch_count, stream);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace roofline::kernels::detail
