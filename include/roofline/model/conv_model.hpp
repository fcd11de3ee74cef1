// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/conv_shape.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/precision.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// How the model sees one convolution pass on one GPU.
struct conv_estimate {
  /// The GPU's time per call with no host gap.
  double device_time_s = 0;
  conv_variant variant = conv_variant::pointwise;
  /// The GEMM model's view of the implicit GEMM (none for grouped convolutions).
  std::optional<gemm_estimate> gemm;
  std::vector<std::string> factors; ///< the effects above, in words
};

/// Device time of one pass of a convolution as cuDNN runs it (NHWC, implicit GEMM) on `gpu` (the
/// model's basis: model_basis()). `implicit` is the pass's implicit GEMM (M = batch·P·Q, N = out
/// channels, K = C·R·S for the forward; data_grad_shape and weight_grad_shape of it for the
/// gradients); `bytes` the pass's minimum DRAM traffic (the op's).
/// - variants costed as an implicit GEMM (conv_variant below grouped): the GEMM model's time for
///   `implicit` streaming `bytes` (estimate_gemm, with `operands` where they are; small-channel
///   ones with their channels padded to 16-byte loads), times `conv_slowdown` of the variant
///   (times `conv_small_channel_bf16_slowdown` for a bf16 small-channel forward), times the
///   variant's `conv_data_grad_slowdown` or `conv_weight_grad_slowdown` for a gradient, plus
///   `conv_overhead_s`;
/// - grouped: `conv_grouped_floor_s` plus the longer of its FLOPs at `conv_grouped_efficiency` of
///   the fp32 CUDA-core peak and its bytes at `conv_grouped_dram_efficiency` of
///   memory_bytes_per_s() (cuDNN's depthwise kernels use no tensor cores).
conv_estimate estimate_conv(const conv_shape &shape, const gemm_shape &implicit, precision p,
                            std::int64_t bytes, const gpu_spec &gpu, const model_parameters &params,
                            cache_state operands = cache_state::warm, reasons why = reasons::with);

} // namespace roofline
