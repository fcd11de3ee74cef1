// SPDX-License-Identifier: Apache-2.0
// Memory-bound ops as a framework's eager kernels run them: elementwise ops in 16-byte packs over
// a grid-stride loop, row reductions one block a row (re-reads of the row hit L1/L2, so DRAM sees
// it once), pools one thread an output, copies and gathers in 16-byte packs where the rows
// allow. fp32 arithmetic whatever the storage type.
#include "memory_ops.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

namespace roofline::kernels {

namespace {

template <class T> __device__ float to_float(T v) {
  return static_cast<float>(v);
}
template <> __device__ float to_float<__half>(__half v) {
  return __half2float(v);
}
template <> __device__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T> __device__ T from_float(float v);
template <> __device__ float from_float<float>(float v) {
  return v;
}
template <> __device__ __half from_float<__half>(float v) {
  return __float2half(v);
}
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

/// One thread's 16 bytes of consecutive elements, loaded and stored at once.
template <class T> struct alignas(16) pack {
  static constexpr int size = 16 / sizeof(T);
  T v[size];
};

// ---------------------------------------------------------------- elementwise

/// The elementwise ops: out[i] = f(i, x[i], y[i]) (y only where `binary`).
struct elementwise_op {
  memory_kernel kernel;
  const float *scale, *shift;
  std::int64_t channels;

  __device__ float operator()(std::int64_t i, float x, float y) const {
    switch (kernel) {
    case memory_kernel::relu: return fmaxf(x, 0.0f);
    case memory_kernel::gelu:
      return 0.5f * x *
             (1.0f + tanhf(static_cast<float>(gelu_tanh_scale) *
                           (x + static_cast<float>(gelu_tanh_cube) * x * x * x)));
    case memory_kernel::silu: return x / (1.0f + expf(-x));
    case memory_kernel::add: return x + y;
    case memory_kernel::mul: return x * y;
    case memory_kernel::batchnorm: {
      const auto c = static_cast<int>(i % channels);
      return fmaf(x, scale[c], shift[c]);
    }
    default: return 0;
    }
  }
};

template <class T, bool Binary>
__global__ void elementwise_kernel(const T *x, const T *y, T *out, std::int64_t n,
                                   elementwise_op f) {
  constexpr int width = pack<T>::size;
  const std::int64_t packs = n / width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t p = first; p < packs; p += stride) {
    const pack<T> a = reinterpret_cast<const pack<T> *>(x)[p];
    pack<T> b{};
    if constexpr (Binary)
      b = reinterpret_cast<const pack<T> *>(y)[p];
    pack<T> result;
#pragma unroll
    for (int j = 0; j < width; ++j)
      result.v[j] =
          from_float<T>(f(p * width + j, to_float(a.v[j]), Binary ? to_float(b.v[j]) : 0));
    reinterpret_cast<pack<T> *>(out)[p] = result;
  }
  for (std::int64_t i = packs * width + first; i < n; i += stride) // the tail after the packs
    out[i] = from_float<T>(f(i, to_float(x[i]), Binary ? to_float(y[i]) : 0));
}

// ---------------------------------------------------------------- rows

/// The sum (or max) over the block of each thread's `value`; every thread gets it.
template <bool Max> __device__ float block_reduce(float value, float *shared) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = Max ? fmaxf(value, other) : value + other;
  }
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int warps = static_cast<int>(blockDim.x) / 32;
  __syncthreads(); // `shared` may still be read from the previous reduction
  if (lane == 0)
    shared[warp] = value;
  __syncthreads();
  value = lane < warps ? shared[lane] : (Max ? -INFINITY : 0.0f);
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = Max ? fmaxf(value, other) : value + other;
  }
  return value;
}

template <class T>
__global__ void row_kernel(memory_kernel kernel, const T *x, const float *scale, const float *shift,
                           T *out, std::int64_t rows, std::int64_t width) {
  __shared__ float shared[32];
  const auto count = static_cast<float>(width);
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *in = x + r * width;
    T *o = out + r * width;
    if (kernel == memory_kernel::softmax) {
      float peak = -INFINITY;
      for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x)
        peak = fmaxf(peak, to_float(in[j]));
      peak = block_reduce<true>(peak, shared);
      float sum = 0;
      for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x)
        sum += expf(to_float(in[j]) - peak);
      const float inverse = 1.0f / block_reduce<false>(sum, shared);
      for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x)
        o[j] = from_float<T>(expf(to_float(in[j]) - peak) * inverse);
      continue;
    }
    float mean = 0;
    if (kernel == memory_kernel::layernorm) { // two passes: no cancellation in the variance
      float sum = 0;
      for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x)
        sum += to_float(in[j]);
      mean = block_reduce<false>(sum, shared) / count;
    }
    float squares = 0;
    for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float d = to_float(in[j]) - mean;
      squares += d * d;
    }
    const float inverse =
        rsqrtf(block_reduce<false>(squares, shared) / count + static_cast<float>(norm_epsilon));
    for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x) {
      const float normalised = (to_float(in[j]) - mean) * inverse * scale[j];
      o[j] = from_float<T>(kernel == memory_kernel::layernorm ? normalised + shift[j] : normalised);
    }
  }
}

// ---------------------------------------------------------------- pools

template <class T>
__global__ void pool_kernel(bool average, const T *x, T *out, memory_kernel_shape s) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < s.elements; i += stride) {
    const std::int64_t c = i % s.row, q = i / s.row % s.output_w,
                       p = i / (s.row * s.output_w) % s.output_h,
                       n = i / (s.row * s.output_w * s.output_h);
    float best = -INFINITY, sum = 0;
    int inside = 0;
    for (std::int64_t dy = 0; dy < s.window; ++dy) {
      const std::int64_t h = p * s.stride - s.padding + dy;
      if (h < 0 || h >= s.input_h)
        continue;
      for (std::int64_t dx = 0; dx < s.window; ++dx) {
        const std::int64_t w = q * s.stride - s.padding + dx;
        if (w < 0 || w >= s.input_w)
          continue;
        const float v = to_float(x[((n * s.input_h + h) * s.input_w + w) * s.row + c]);
        best = fmaxf(best, v);
        sum += v;
        ++inside;
      }
    }
    out[i] = from_float<T>(average ? (inside > 0 ? sum / static_cast<float>(inside) : 0.0f)
                                   : (inside > 0 ? best : 0.0f));
  }
}

// ---------------------------------------------------------------- rope

// One thread a pair (x[i], x[i + head_dim/2]): each element read once, written once.
template <class T> __global__ void rope_kernel(const T *x, T *out, memory_kernel_shape s) {
  extern __shared__ float inverse_frequency[]; // one head's, once a block: pow is costly
  const std::int64_t half = s.head_dim / 2;
  for (std::int64_t p = threadIdx.x; p < half; p += blockDim.x)
    inverse_frequency[p] = rope_inverse_frequency(p, s.head_dim);
  __syncthreads();
  const std::int64_t pairs = s.elements / 2, row_pairs = s.row / 2;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < pairs;
       q += stride) {
    const std::int64_t r = q / row_pairs, c = q % row_pairs, p = c % half;
    const std::int64_t i = r * s.row + c / half * s.head_dim + p;
    float sine, cosine;
    sincosf(rope_angle(r, inverse_frequency[p]), &sine, &cosine);
    const float a = to_float(x[i]), b = to_float(x[i + half]);
    // rotate_half(x) = (−second half, first half)
    out[i] = from_float<T>(a * cosine - b * sine);
    out[i + half] = from_float<T>(b * cosine + a * sine);
  }
}

// ---------------------------------------------------------------- copies and gathers

/// kv_append, embedding and transpose: element runs moved unchanged, `Packed`: 16 bytes at a time
/// (the run a kernel keeps together, a row or a head, is a whole number of packs).
template <class T, bool Packed>
__global__ void move_kernel(memory_kernel kernel, const T *x, const std::int32_t *ids, T *out,
                            memory_kernel_shape s) {
  using unit = std::conditional_t<Packed, pack<T>, T>;
  constexpr std::int64_t width = Packed ? pack<T>::size : 1;
  const std::int64_t units = s.elements / width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t u = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units;
       u += stride) {
    const std::int64_t i = u * width;
    std::int64_t from = i, to = i;
    if (kernel == memory_kernel::kv_append)
      to = memory_kernel_output_index(kernel, s, i);
    else if (kernel == memory_kernel::embedding)
      from = ids[i / s.row] * s.row + i % s.row;
    else
      from = transpose_source(s, i);
    reinterpret_cast<unit *>(out)[to / width] = reinterpret_cast<const unit *>(x)[from / width];
  }
}

// ---------------------------------------------------------------- launch

constexpr int threads = 256;

unsigned grid_for(std::int64_t work) {
  // Enough blocks to fill any GPU several times over; the loops stride over the rest.
  const std::int64_t blocks = (work + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 1 << 16));
}

template <class T>
cudaError_t launch(memory_kernel kernel, const memory_kernel_shape &s,
                   const memory_kernel_operands &o, cudaStream_t stream) {
  const auto *x = static_cast<const T *>(o.x);
  const auto *y = static_cast<const T *>(o.y);
  auto *out = static_cast<T *>(o.out);
  switch (kernel) {
  case memory_kernel::relu:
  case memory_kernel::gelu:
  case memory_kernel::silu:
  case memory_kernel::batchnorm:
  case memory_kernel::add:
  case memory_kernel::mul: {
    const bool binary = kernel == memory_kernel::add || kernel == memory_kernel::mul;
    if ((binary && !y) || (kernel == memory_kernel::batchnorm && (!o.scale || !o.shift)))
      return cudaErrorInvalidValue;
    const elementwise_op f{kernel, o.scale, o.shift, std::max<std::int64_t>(s.row, 1)};
    const unsigned grid = grid_for(s.elements / pack<T>::size + 1);
    if (binary)
      elementwise_kernel<T, true><<<grid, threads, 0, stream>>>(x, y, out, s.elements, f);
    else
      elementwise_kernel<T, false><<<grid, threads, 0, stream>>>(x, y, out, s.elements, f);
    return cudaGetLastError();
  }
  case memory_kernel::layernorm:
  case memory_kernel::rmsnorm:
  case memory_kernel::softmax: {
    if (kernel != memory_kernel::softmax && !o.scale)
      return cudaErrorInvalidValue;
    if (kernel == memory_kernel::layernorm && !o.shift)
      return cudaErrorInvalidValue;
    // About 8 elements a thread, a whole number of warps, at most 1024.
    int block = 32;
    while (block < 1024 && block * 8 < s.row)
      block *= 2;
    const std::int64_t rows = s.elements / s.row;
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>(rows, 1 << 20));
    row_kernel<T><<<grid, block, 0, stream>>>(kernel, x, o.scale, o.shift, out, rows, s.row);
    return cudaGetLastError();
  }
  case memory_kernel::maxpool:
  case memory_kernel::avgpool:
    pool_kernel<T>
        <<<grid_for(s.elements), threads, 0, stream>>>(kernel == memory_kernel::avgpool, x, out, s);
    return cudaGetLastError();
  case memory_kernel::rope:
    rope_kernel<T><<<grid_for(s.elements / 2), threads,
                     static_cast<std::size_t>(s.head_dim / 2) * sizeof(float), stream>>>(x, out, s);
    return cudaGetLastError();
  case memory_kernel::kv_append:
  case memory_kernel::embedding:
  case memory_kernel::transpose: {
    if (kernel == memory_kernel::embedding && !o.ids)
      return cudaErrorInvalidValue;
    const std::int64_t run = kernel == memory_kernel::transpose ? s.head_dim : s.row;
    if (run % pack<T>::size == 0)
      move_kernel<T, true>
          <<<grid_for(s.elements / pack<T>::size), threads, 0, stream>>>(kernel, x, o.ids, out, s);
    else
      move_kernel<T, false><<<grid_for(s.elements), threads, 0, stream>>>(kernel, x, o.ids, out, s);
    return cudaGetLastError();
  }
  }
  return cudaErrorInvalidValue;
}

bool is_pool(memory_kernel kernel) {
  return kernel == memory_kernel::maxpool || kernel == memory_kernel::avgpool;
}

// The most shared memory a block gets without opting in: rope's table of inverse frequencies.
constexpr std::int64_t default_shared_bytes = 48 * 1024;

} // namespace

std::int64_t memory_kernel_inputs(memory_kernel kernel, const memory_kernel_shape &shape) {
  if (kernel == memory_kernel::embedding)
    return shape.table_rows * shape.row;
  return is_pool(kernel) ? shape.batch * shape.input_h * shape.input_w * shape.row : shape.elements;
}

std::int64_t memory_kernel_outputs(memory_kernel kernel, const memory_kernel_shape &shape) {
  return kernel == memory_kernel::kv_append ? shape.elements * shape.cache_slots : shape.elements;
}

cudaError_t memory_op(memory_kernel kernel, element_type type, const memory_kernel_shape &shape,
                      const memory_kernel_operands &operands, cudaStream_t stream) {
  if (shape.elements <= 0 || !operands.x || !operands.out)
    return cudaErrorInvalidValue;
  const bool rows = !is_pool(kernel) && kernel != memory_kernel::relu &&
                    kernel != memory_kernel::gelu && kernel != memory_kernel::silu &&
                    kernel != memory_kernel::add && kernel != memory_kernel::mul;
  if (rows && (shape.row <= 0 || shape.elements % shape.row != 0))
    return cudaErrorInvalidValue;
  const bool heads = kernel == memory_kernel::rope || kernel == memory_kernel::transpose;
  if (heads && (shape.head_dim <= 0 || shape.row % shape.head_dim != 0))
    return cudaErrorInvalidValue;
  if (kernel == memory_kernel::rope &&
      (shape.head_dim % 2 != 0 ||
       shape.head_dim / 2 * static_cast<std::int64_t>(sizeof(float)) > default_shared_bytes))
    return cudaErrorInvalidValue;
  if (kernel == memory_kernel::kv_append && (shape.cache_slots <= 0 || shape.cache_position < 0 ||
                                             shape.cache_position >= shape.cache_slots))
    return cudaErrorInvalidValue;
  if (kernel == memory_kernel::embedding && shape.table_rows <= 0)
    return cudaErrorInvalidValue;
  if (is_pool(kernel) &&
      (shape.row <= 0 || shape.window <= 0 || shape.stride <= 0 ||
       shape.elements != shape.batch * shape.output_h * shape.output_w * shape.row))
    return cudaErrorInvalidValue;
  switch (type) {
  case element_type::f32: return launch<float>(kernel, shape, operands, stream);
  case element_type::f16: return launch<__half>(kernel, shape, operands, stream);
  case element_type::bf16: return launch<__nv_bfloat16>(kernel, shape, operands, stream);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace roofline::kernels
