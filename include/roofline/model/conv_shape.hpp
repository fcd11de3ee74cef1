// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/pass.hpp"
#include "roofline/model/precision.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace roofline {

/// One pass of a 2-D convolution as cuDNN runs it (NHWC): `batch` images of `in_channels` ×
/// `input_h` × `input_w` into `out_channels` × `out_h` × `out_w` through `kernel_h` × `kernel_w`
/// filters at the strides given, over the input padded by `padding_*` on each side; `groups`
/// split both channel counts (depthwise: as many groups as channels). The op that carries it is
/// the convolution lowered to its implicit GEMM (op::gemm); this keeps what the GEMM shape
/// forgets, for its cost and to run the convolution itself.
struct conv_shape {
  std::int64_t batch = 1, in_channels = 1, out_channels = 1;
  std::int64_t input_h = 1, input_w = 1, out_h = 1, out_w = 1;
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  std::int64_t groups = 1;
  roofline::pass pass = pass::forward;
  std::int64_t padding_h = 0, padding_w = 0;

  friend bool operator==(const conv_shape &a, const conv_shape &b) {
    return a.batch == b.batch && a.in_channels == b.in_channels &&
           a.out_channels == b.out_channels && a.input_h == b.input_h && a.input_w == b.input_w &&
           a.out_h == b.out_h && a.out_w == b.out_w && a.kernel_h == b.kernel_h &&
           a.kernel_w == b.kernel_w && a.stride_h == b.stride_h && a.stride_w == b.stride_w &&
           a.groups == b.groups && a.pass == b.pass && a.padding_h == b.padding_h &&
           a.padding_w == b.padding_w;
  }
};

/// The DRAM bytes one pass of `shape` moves at `p`: the implicit GEMM reads the real input
/// tensor, not the R·S-times larger im2col matrix, and of it only the elements some window covers
/// (a strided 1×1 conv reads M·K of them); every pass touches the input (or its gradient), the
/// filters and the output once, and the data-grad pass writes the whole input gradient, zeros
/// where no window reads. nullopt where a count overflows 64 bits.
std::optional<std::int64_t> conv_bytes(const conv_shape &shape, precision p);

/// One pooling window sliding over `batch` samples of a `channels` × `input_h` × `input_w` map
/// (NHWC): `kernel` × `kernel`, by `stride`, over the input padded by `padding` on each side,
/// into `output_h` × `output_w` positions.
struct pool_shape {
  std::int64_t batch = 1, channels = 1, input_h = 1, input_w = 1, output_h = 1, output_w = 1;
  std::int64_t kernel = 1, stride = 1, padding = 0;

  friend bool operator==(const pool_shape &a, const pool_shape &b) {
    return a.batch == b.batch && a.channels == b.channels && a.input_h == b.input_h &&
           a.input_w == b.input_w && a.output_h == b.output_h && a.output_w == b.output_w &&
           a.kernel == b.kernel && a.stride == b.stride && a.padding == b.padding;
  }
};

/// How cuDNN runs a convolution, as far as its time goes: the first four as an implicit GEMM
/// (each with a rate of its own against the GEMM model's), grouped ones as a kernel of their own.
enum class conv_variant {
  pointwise,         ///< 1×1, stride 1: a plain GEMM over the NHWC rows
  strided_pointwise, ///< 1×1, stride > 1: a GEMM over every stride-th row
  spatial,           ///< R×S > 1: the implicit GEMM gathers its K from the filter window
  small_channel,     ///< channels per group not a multiple of 8 (an RGB stem): padded loads
  grouped            ///< groups > 1 (depthwise): direct kernels on the CUDA cores
};
/// The variants costed as an implicit GEMM (the first ones of conv_variant).
inline constexpr int conv_gemm_variant_count = static_cast<int>(conv_variant::grouped);

/// The variant cuDNN's kernels for `shape` behave as (the first that applies: grouped, small
/// channel, then by the filter).
conv_variant variant_of(const conv_shape &shape);
/// "pointwise", "strided_pointwise", "spatial", "small_channel", "grouped".
std::string_view to_string(conv_variant v);
/// The names of the implicit-GEMM variants, in enum order.
std::vector<std::string_view> conv_gemm_variant_names();

} // namespace roofline
