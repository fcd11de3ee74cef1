// SPDX-License-Identifier: Apache-2.0
#pragma once

// Host entry point of the memory-bound op kernels (memory_ops.cu): one straightforward kernel per
// op, as a framework's eager op runs it, fp32 arithmetic on fp16, bf16 or fp32 tensors.
#include "kernels.hpp"

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
  avgpool    ///< NHWC, the mean of the window's positions inside the input
};

/// GELU's tanh approximation: 0.5·x·(1 + tanh(scale·(x + cube·x³))) (Hendrycks and Gimpel).
inline constexpr double gelu_tanh_scale = 0.7978845608028654; // √(2/π)
inline constexpr double gelu_tanh_cube = 0.044715;
/// The norms' ε under the square root.
inline constexpr double norm_epsilon = 1e-5;

/// What a memory kernel runs over.
struct memory_kernel_shape {
  std::int64_t elements = 0; ///< outputs
  /// The innermost extent: the row a norm or softmax reduces over (elements / row rows), a
  /// batchnorm's channels; the length of `scale` and `shift`.
  std::int64_t row = 0;
  /// Pools: the NHWC input map, its window and the output positions (channels = row).
  std::int64_t batch = 0, input_h = 0, input_w = 0, output_h = 0, output_w = 0;
  std::int64_t window = 0, stride = 0, padding = 0;
};

/// A memory kernel's tensors: `x` (a pool's input map, else `elements` long), `y` (add and mul's
/// second input), `scale` and `shift` (fp32, `row` long: the norms' and batchnorm's parameters)
/// and `out` (`elements` long). What a kernel does not read may be null.
struct memory_kernel_operands {
  const void *x = nullptr;
  const void *y = nullptr;
  const float *scale = nullptr;
  const float *shift = nullptr;
  void *out = nullptr;
};

/// Elements of `x` a kernel reads: a pool's input map, else its outputs.
std::int64_t memory_kernel_inputs(memory_kernel kernel, const memory_kernel_shape &shape);

/// Runs `kernel` on `type` (f16, bf16 or f32) tensors. Returns cudaErrorInvalidValue for another
/// type or a shape the kernel cannot run (a row that does not divide the elements, a pool map
/// whose sizes disagree), else the launch's status.
cudaError_t memory_op(memory_kernel kernel, element_type type, const memory_kernel_shape &shape,
                      const memory_kernel_operands &operands, cudaStream_t stream);

} // namespace roofline::kernels
