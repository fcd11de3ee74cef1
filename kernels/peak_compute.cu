// SPDX-License-Identifier: Apache-2.0
// Arithmetic ceilings: many independent dependency chains per thread so that every issue slot of
// the unit under test is busy; operands come from random seeds and results reach memory, so the
// compiler can neither fold nor drop the work.
#include "kernels.hpp"

#include <cstdint>

namespace roofline::kernels {

namespace {

constexpr int threads = 256;
constexpr int blocks_per_sm = 8;
constexpr int chains = 8;

template <class T> __global__ void fma_kernel(const T *seeds, T *sink, int iterations) {
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  T acc[chains];
#pragma unroll
  for (int c = 0; c < chains; ++c)
    acc[c] = seeds[(id + c) % 1024];
  // Close to 1 and 0, so the chains neither overflow nor go subnormal over many iterations.
  const T multiplier = static_cast<T>(0.999) + seeds[id % 1024] * static_cast<T>(1e-4);
  const T addend = seeds[(id + 7) % 1024] * static_cast<T>(1e-3);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < chains; ++c)
      acc[c] = fma(acc[c], multiplier, addend);
  }
  T sum = 0;
#pragma unroll
  for (int c = 0; c < chains; ++c)
    sum += acc[c];
  sink[id] = sum;
}

constexpr int accumulators = 8;

// One warp-wide mma.sync per accumulator per iteration, on fixed register fragments.
template <element_type Type>
__global__ void mma_kernel(const std::uint32_t *seeds, float *sink, int iterations) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t a[4], b[2];
#pragma unroll
  for (int r = 0; r < 4; ++r)
    a[r] = seeds[(id + r) % 1024];
#pragma unroll
  for (int r = 0; r < 2; ++r)
    b[r] = seeds[(id + 4 + r) % 1024];
  float acc[accumulators][4] = {};
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < accumulators; ++j) {
      float *d = acc[j];
      if constexpr (Type == element_type::f16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      } else if constexpr (Type == element_type::bf16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      } else if constexpr (Type == element_type::f32) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      } else if constexpr (Type == element_type::e4m3) {
#if __CUDA_ARCH__ >= 890
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
      } else if constexpr (Type == element_type::i8) {
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+r"(*reinterpret_cast<int *>(&d[0])), "+r"(*reinterpret_cast<int *>(&d[1])),
              "+r"(*reinterpret_cast<int *>(&d[2])), "+r"(*reinterpret_cast<int *>(&d[3]))
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
    }
  }
  float sum = 0;
#pragma unroll
  for (int j = 0; j < accumulators; ++j)
    sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  sink[id] = sum;
#endif
}

/// FLOPs of one mma.sync of the type (2·M·N·K of its shape), per warp.
double mma_flops(element_type type) {
  switch (type) {
  case element_type::f16:
  case element_type::bf16: return 2.0 * 16 * 8 * 16;
  case element_type::f32: return 2.0 * 16 * 8 * 8;
  case element_type::e4m3:
  case element_type::i8: return 2.0 * 16 * 8 * 32;
  default: return 0;
  }
}

} // namespace

std::size_t peak_sink_elements(int sm_count) {
  return static_cast<std::size_t>(sm_count) * blocks_per_sm * threads;
}

cudaError_t fma_peak_f32(const float *seeds, float *sink, int sm_count, int iterations,
                         double *flops, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(sm_count * blocks_per_sm);
  *flops = 2.0 * chains * iterations * blocks * threads;
  fma_kernel<float><<<blocks, threads, 0, stream>>>(seeds, sink, iterations);
  return cudaGetLastError();
}

cudaError_t fma_peak_f64(const double *seeds, double *sink, int sm_count, int iterations,
                         double *flops, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(sm_count * blocks_per_sm);
  *flops = 2.0 * chains * iterations * blocks * threads;
  fma_kernel<double><<<blocks, threads, 0, stream>>>(seeds, sink, iterations);
  return cudaGetLastError();
}

cudaError_t mma_peak(element_type type, const void *seeds, float *sink, int sm_count,
                     int iterations, double *flops, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(sm_count * 4);
  const auto *words = static_cast<const std::uint32_t *>(seeds);
  *flops = mma_flops(type) * accumulators * iterations * blocks * (threads / 32);
  switch (type) {
  case element_type::f16:
    mma_kernel<element_type::f16><<<blocks, threads, 0, stream>>>(words, sink, iterations);
    break;
  case element_type::bf16:
    mma_kernel<element_type::bf16><<<blocks, threads, 0, stream>>>(words, sink, iterations);
    break;
  case element_type::f32:
    mma_kernel<element_type::f32><<<blocks, threads, 0, stream>>>(words, sink, iterations);
    break;
  case element_type::e4m3:
    mma_kernel<element_type::e4m3><<<blocks, threads, 0, stream>>>(words, sink, iterations);
    break;
  case element_type::i8:
    mma_kernel<element_type::i8><<<blocks, threads, 0, stream>>>(words, sink, iterations);
    break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

} // namespace roofline::kernels
