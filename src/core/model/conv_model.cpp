// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/conv_model.hpp"

#include "roofline/model/gemm.hpp"
#include "roofline/model/memory_op_model.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace roofline {

conv_estimate estimate_conv(const conv_shape &shape, const gemm_shape &implicit, precision p,
                            std::int64_t bytes, const gpu_spec &gpu, const model_parameters &params,
                            cache_state operands, reasons why) {
  conv_estimate result;
  result.variant = variant_of(shape);
  if (result.variant == conv_variant::grouped) {
    // Few products per output (C/groups · R·S): no GEMM worth tensor cores, so cuDNN runs direct
    // kernels whose FMAs (7×7 depthwise) or bytes (3×3) bind.
    const double flops = static_cast<double>(gemm_flops(implicit).value_or(0));
    const double compute_s =
        flops / (params[parameter::conv_grouped_efficiency] * gpu.peak_flop_per_s(precision::fp32));
    const double stream_s =
        static_cast<double>(bytes) /
        (params[parameter::conv_grouped_dram_efficiency] * memory_bytes_per_s(bytes, gpu, params));
    result.device_time_s = params[parameter::conv_grouped_floor_s] + std::max(compute_s, stream_s);
    if (why == reasons::with)
      result.factors.push_back(fmt::format(
          "grouped convolution ({} groups): a direct kernel on the CUDA cores, {}-bound "
          "({:.1f} µs of FMAs at {:.0f}% of the fp32 peak, {:.1f} µs of streaming) plus {:.1f} µs",
          shape.groups, compute_s >= stream_s ? "FMA" : "bandwidth", compute_s * 1e6,
          100 * params[parameter::conv_grouped_efficiency], stream_s * 1e6,
          params[parameter::conv_grouped_floor_s] * 1e6));
    return result;
  }
  // A channel count the 16-byte loads do not divide is padded to one they do (8 for fp16): the
  // C·R·S side of the pass's GEMM (forward K, data-grad N, weight-grad M) grows with it.
  gemm_shape padded = implicit;
  if (result.variant == conv_variant::small_channel) {
    const std::int64_t channels = shape.in_channels / shape.groups;
    const std::int64_t unit = alignment_elements(p);
    const auto pad = [&](std::int64_t &side) {
      side = side / channels * ((channels + unit - 1) / unit * unit);
    };
    pad(shape.pass == pass::forward     ? padded.k
        : shape.pass == pass::data_grad ? padded.n
                                        : padded.m);
  }
  // The implicit GEMM streams the real tensors (`bytes`), not the im2col matrix.
  result.gemm = estimate_gemm(padded, p, gpu.peak_flop_per_s(p), gpu, params, operands, why,
                              static_cast<double>(bytes));
  // cuDNN's forward kernels for C = 3 stems run fp16 2-3x faster than bf16 (their gradients do
  // not): conv_slowdown's small_channel is fp16's.
  const double variant_slowdown = params[conv_slowdown_at(result.variant)] *
                                  (result.variant == conv_variant::small_channel &&
                                           shape.pass == pass::forward && p == precision::bf16
                                       ? params[parameter::conv_small_channel_bf16_slowdown]
                                       : 1.0);
  const double pass_slowdown =
      shape.pass == pass::data_grad
          ? params[conv_slowdown_at(result.variant, parameter::conv_data_grad_slowdown)]
      : shape.pass == pass::weight_grad
          ? params[conv_slowdown_at(result.variant, parameter::conv_weight_grad_slowdown)]
          : 1.0;
  // A slowdown below 1 (cuDNN's kernel beating cuBLAS's on the same GEMM) never takes the
  // convolution past its roofline: its FLOPs at the peak, its bytes at DRAM's bandwidth (unless
  // they stay in L2).
  const double roofline_s =
      std::max(static_cast<double>(gemm_flops(implicit).value_or(0)) / gpu.peak_flop_per_s(p),
               result.gemm->l2_resident ? 0.0 : static_cast<double>(bytes) / gpu.dram_bytes_per_s);
  result.device_time_s =
      std::max(result.gemm->device_time_s * variant_slowdown * pass_slowdown, roofline_s) +
      params[parameter::conv_overhead_s];
  if (why == reasons::with) {
    result.factors = std::move(result.gemm->factors);
    result.gemm->factors.clear();
    result.factors.push_back(
        fmt::format("implicit-GEMM convolution ({}{}): {:.2f}x the GEMM's time, plus {:.1f} µs",
                    to_string(result.variant),
                    shape.pass == pass::forward ? "" : fmt::format(", {}", to_string(shape.pass)),
                    variant_slowdown * pass_slowdown, params[parameter::conv_overhead_s] * 1e6));
  }
  return result;
}

} // namespace roofline
