// SPDX-License-Identifier: Apache-2.0
#pragma once

// Host entry point of the memory-bound op kernels (memory_ops.cu): one straightforward kernel per
// op, as a framework's eager op runs it, fp32 arithmetic on fp16, bf16 or fp32 tensors.
#include "kernels.hpp"

#include <cmath>
#include <cstdint>

namespace roofline::kernels {

/// The memory-bound ops the kernels run.
enum class memory_kernel {
  relu,
  gelu, ///< the tanh approximation (gelu_tanh_* below)
  silu,
  add,
  mul,
  layernorm, ///< over each row, then × scale + shift per column
  rmsnorm,   ///< over each row, then × scale per column
  batchnorm, ///< inference: × scale + shift per channel (the innermost extent, NHWC)
  softmax,   ///< over each row
  maxpool,   ///< NHWC, padding never wins
  avgpool,   ///< NHWC, the mean of the window's positions inside the input
  rope,      ///< rotary position embedding of each row's heads, the row index as position
  kv_append, ///< each row copied into a cache of `cache_slots` rows per row (a strided write)
  embedding, ///< row `ids[t]` of the table `x` gathered for each token t
  transpose  ///< [tokens, heads, head_dim] → [heads, tokens, head_dim]; one head: a plain copy
};

/// GELU's tanh approximation: 0.5·x·(1 + tanh(scale·(x + cube·x³))) (Hendrycks and Gimpel).
inline constexpr double gelu_tanh_scale = 0.7978845608028654; // √(2/π)
inline constexpr double gelu_tanh_cube = 0.044715;
/// The norms' ε under the square root.
inline constexpr double norm_epsilon = 1e-5;

/// RoPE's frequency base (Su et al.; Llama's and most models' `rope_theta`).
inline constexpr double rope_base = 10000.0;

/// RoPE's inverse frequency of pair `pair` of a `head_dim`-wide head: base^(−2·pair / head_dim),
/// rounded to fp32 as transformers stores it (computed in double: both sides round alike).
__host__ __device__ inline float rope_inverse_frequency(std::int64_t pair, std::int64_t head_dim) {
  return static_cast<float>(
      pow(rope_base, -2.0 * static_cast<double>(pair) / static_cast<double>(head_dim)));
}

/// RoPE's angle at `position`, in fp32 as transformers computes it. One definition for the kernel
/// and the host reference: at positions in the thousands the fp32 angle is off the exact one by
/// more than fp32 outputs round, so the reference must start from the same angle.
__host__ __device__ inline float rope_angle(std::int64_t position, float inverse_frequency) {
  return static_cast<float>(position) * inverse_frequency;
}

/// What a memory kernel runs over.
struct memory_kernel_shape {
  std::int64_t elements = 0; ///< outputs
  /// The innermost extent: the row a norm or softmax reduces over (elements / row rows), a
  /// batchnorm's channels; the length of `scale` and `shift`.
  std::int64_t row = 0;
  /// Pools: the NHWC input map, its window and the output positions (channels = row).
  std::int64_t batch = 0, input_h = 0, input_w = 0, output_h = 0, output_w = 0;
  std::int64_t window = 0, stride = 0, padding = 0;
  /// rope: a head's width (row = heads × head_dim, head_dim even); transpose: the width moved
  /// whole (row = heads × head_dim).
  std::int64_t head_dim = 0;
  /// kv_append: cache rows per input row, and which of them input row r is written to: cache row
  /// r · cache_slots + cache_position (the new token of each sequence, at its position).
  std::int64_t cache_slots = 0, cache_position = 0;
  /// embedding: rows of the table `x` (each `row` wide); ids are below it.
  std::int64_t table_rows = 0;
};

/// A memory kernel's tensors: `x` (a pool's input map, else `elements` long), `y` (add and mul's
/// second input), `scale` and `shift` (fp32, `row` long: the norms' and batchnorm's parameters)
/// and `out` (`elements` long). What a kernel does not read may be null.
struct memory_kernel_operands {
  const void *x = nullptr;
  const void *y = nullptr;
  const float *scale = nullptr;
  const float *shift = nullptr;
  const std::int32_t *ids = nullptr; ///< embedding: the tokens' table rows, elements / row long
  void *out = nullptr;               ///< kv_append: the cache, memory_kernel_outputs() long
};

/// Elements of `x` a kernel reads: a pool's input map, an embedding's table, else its outputs.
std::int64_t memory_kernel_inputs(memory_kernel kernel, const memory_kernel_shape &shape);

/// Elements of `out`: kv_append's cache, else `elements`.
std::int64_t memory_kernel_outputs(memory_kernel kernel, const memory_kernel_shape &shape);

/// Where in `out` a kernel writes its `i`-th result (i below `elements`, in the order of `x`'s
/// elements for kv_append, of `out`'s otherwise): the destination a reference checks.
__host__ __device__ inline std::int64_t
memory_kernel_output_index(memory_kernel kernel, const memory_kernel_shape &shape, std::int64_t i) {
  if (kernel != memory_kernel::kv_append)
    return i;
  const std::int64_t r = i / shape.row;
  return (r * shape.cache_slots + shape.cache_position) * shape.row + i % shape.row;
}

/// transpose: the element of `x` that output `i` copies.
__host__ __device__ inline std::int64_t transpose_source(const memory_kernel_shape &shape,
                                                         std::int64_t i) {
  const std::int64_t heads = shape.row / shape.head_dim, tokens = shape.elements / shape.row;
  const std::int64_t h = i / (tokens * shape.head_dim), t = i / shape.head_dim % tokens;
  return (t * heads + h) * shape.head_dim + i % shape.head_dim;
}

/// Runs `kernel` on `type` (f16, bf16 or f32) tensors. Returns cudaErrorInvalidValue for another
/// type or a shape the kernel cannot run (a row that does not divide the elements, a pool map
/// whose sizes disagree), else the launch's status.
cudaError_t memory_op(memory_kernel kernel, element_type type, const memory_kernel_shape &shape,
                      const memory_kernel_operands &operands, cudaStream_t stream);

} // namespace roofline::kernels
