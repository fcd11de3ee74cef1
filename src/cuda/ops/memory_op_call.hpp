// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "op_call.hpp"
#include "roofline/model/op.hpp"

#include <memory>

namespace roofline::cuda::detail {

/// The engine name measurements of our memory-bound op kernels carry.
inline constexpr const char *memory_op_engine = "roofline-kernels";

/// A forward memory-bound op (relu, layernorm, softmax, maxpool, …: o.kind) made ready to run
/// through our own kernel (kernels/memory_ops.cu) on `o.elements` outputs of its precision's
/// storage type (fp16, bf16; fp32 for fp32 and tf32), its rows (o.row) and pool window (o.pool)
/// as the op says. Throws op_skipped when no kernel runs it (a kind without one, a backward pass,
/// another precision, a row or map the op does not give), or when `sets` does; cuda_error when
/// allocating or filling fails.
std::unique_ptr<op_call> make_memory_op_call(const op &o, const operand_sets &sets,
                                             cudaStream_t stream);

} // namespace roofline::cuda::detail
