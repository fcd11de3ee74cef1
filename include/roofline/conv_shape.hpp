// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace roofline {

/// One 2-D convolution as a library runs it (cuDNN, NHWC): `batch` samples of a
/// `channels` × `input_h` × `input_w` map, `out_channels` filters of `kernel_h` × `kernel_w`,
/// sliding by `stride_*` over the input padded by `padding_*` on each side. The op that carries it
/// is the same convolution lowered to its implicit GEMM (op::gemm); this keeps what the GEMM
/// shape forgets, so that the convolution itself can be run.
struct conv_shape {
  std::int64_t batch = 1, channels = 1, input_h = 1, input_w = 1, out_channels = 1;
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, padding_h = 0, padding_w = 0;

  friend bool operator==(const conv_shape &a, const conv_shape &b) {
    return a.batch == b.batch && a.channels == b.channels && a.input_h == b.input_h &&
           a.input_w == b.input_w && a.out_channels == b.out_channels && a.kernel_h == b.kernel_h &&
           a.kernel_w == b.kernel_w && a.stride_h == b.stride_h && a.stride_w == b.stride_w &&
           a.padding_h == b.padding_h && a.padding_w == b.padding_w;
  }
};

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

} // namespace roofline
