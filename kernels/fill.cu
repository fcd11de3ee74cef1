// SPDX-License-Identifier: Apache-2.0
#include "kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace roofline::kernels {

std::size_t element_size(element_type type) {
  switch (type) {
  case element_type::f64: return 8;
  case element_type::f32:
  case element_type::i32: return 4;
  case element_type::f16:
  case element_type::bf16: return 2;
  case element_type::e4m3:
  case element_type::i8: return 1;
  }
  return 0;
}

namespace {

// splitmix64: a counter-based generator, so that any element can be drawn independently.
__device__ std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T> __device__ T convert(double value);
template <> __device__ double convert<double>(double v) {
  return v;
}
template <> __device__ float convert<float>(double v) {
  return static_cast<float>(v);
}
template <> __device__ __half convert<__half>(double v) {
  return __float2half(static_cast<float>(v));
}
template <> __device__ __nv_bfloat16 convert<__nv_bfloat16>(double v) {
  return __float2bfloat16(static_cast<float>(v));
}
template <> __device__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(double v) {
  return __nv_fp8_e4m3(static_cast<float>(v));
}
template <> __device__ std::int8_t convert<std::int8_t>(double v) {
  return static_cast<std::int8_t>(v);
}
template <> __device__ std::int32_t convert<std::int32_t>(double v) {
  return static_cast<std::int32_t>(v);
}

template <class T>
__global__ void fill_random_kernel(T *data, std::size_t count, std::uint64_t seed, float scale,
                                   bool integer) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const double unit = static_cast<double>(mix(seed ^ mix(i)) >> 11) * 0x1.0p-53; // [0, 1)
    data[i] = integer ? convert<T>(static_cast<double>(static_cast<int>(unit * 9.0) - 4))
                      : convert<T>((2.0 * unit - 1.0) * scale);
  }
}

template <class T> __global__ void fill_constant_kernel(T *data, std::size_t count, double value) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = convert<T>(value);
}

constexpr int fill_threads = 256;

unsigned fill_blocks(std::size_t count) {
  const std::size_t blocks = (count + fill_threads - 1) / fill_threads;
  return static_cast<unsigned>(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

template <class Visitor> cudaError_t dispatch(element_type type, Visitor &&visit) {
  switch (type) {
  case element_type::f64: return visit(double{});
  case element_type::f32: return visit(float{});
  case element_type::f16: return visit(__half{});
  case element_type::bf16: return visit(__nv_bfloat16{});
  case element_type::e4m3: return visit(__nv_fp8_e4m3{});
  case element_type::i8: return visit(std::int8_t{});
  case element_type::i32: return visit(std::int32_t{});
  }
  return cudaErrorInvalidValue;
}

} // namespace

cudaError_t fill_random(void *data, std::size_t count, element_type type, std::uint64_t seed,
                        float scale, cudaStream_t stream) {
  const bool integer = type == element_type::i8 || type == element_type::i32;
  return dispatch(type, [&](auto tag) {
    using T = decltype(tag);
    fill_random_kernel<T><<<fill_blocks(count), fill_threads, 0, stream>>>(
        static_cast<T *>(data), count, seed, scale, integer);
    return cudaGetLastError();
  });
}

cudaError_t fill_constant(void *data, std::size_t count, element_type type, double value,
                          cudaStream_t stream) {
  return dispatch(type, [&](auto tag) {
    using T = decltype(tag);
    fill_constant_kernel<T>
        <<<fill_blocks(count), fill_threads, 0, stream>>>(static_cast<T *>(data), count, value);
    return cudaGetLastError();
  });
}

} // namespace roofline::kernels
