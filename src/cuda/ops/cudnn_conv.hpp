// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "cudnn_handle.hpp"
#include "op_call.hpp"
#include "roofline/model/conv_shape.hpp"
#include "roofline/model/precision.hpp"

#include <memory>

namespace roofline::cuda::detail {

/// A convolution's forward pass made ready to run through cuDNN's legacy API
/// (cudnnConvolutionForward, NHWC input and output, KRSC filters, fp32 accumulation, the
/// algorithm cuDNN's heuristics rank first, as PyTorch picks it by default), on random operands.
/// Its check computes sampled outputs on the host in double. Throws op_skipped for a precision
/// cuDNN does not convolve here (fp16, bf16, tf32 and fp32 only) or when `sets` does; cuda_error
/// when a cuDNN or CUDA call fails.
std::unique_ptr<op_call> make_conv_call(const cudnn_handle &cudnn, const conv_shape &shape,
                                        precision p, const operand_sets &sets, cudaStream_t stream);

} // namespace roofline::cuda::detail
